//! Whether a report answers its question: some statement it cites states a value of the kind
//! asked ([`asked`]) about the subject asked. Real pages around a question's story say much
//! that is near the answer and is not it: a date for "how much will it cost", the other
//! goalie's saves for "how many saves did Murray make", the page's own masthead for "in which
//! mall". A report made of such statements answers nothing, and says so instead. Both writers
//! are judged by their claims after attribution, so they abstain the same way.

use trawl_messages::AnalysedDoc;
use trawl_text::asked::{asked, Kind, MEASURES, NUMBER_NOUNS};
use trawl_text::entities::{entities_in, named_in, Entity};
use trawl_text::points::markers;
use trawl_text::{is_digit, terms_in, Lang, MONTHS};

use crate::attribution::Claim;

/// The verdict on a report, for `job.json` and the report's opening.
#[derive(Clone, Debug, PartialEq)]
pub struct Answerability {
    pub answerable: bool,
    /// Why: the statement that answers, or what no statement states.
    pub reason: String,
    /// What the question asks for, as a report says it is missing ("the starting price (an
    /// amount of money)"); empty when the question's form does not say.
    pub wanted: String,
    /// How many statements of the report cite a source: none, and there was nothing to judge.
    pub statements: usize,
}

/// The form a value takes in a sentence, where the question's words say it: an amount of
/// money for a price, a share for a percentage. A sentence holding only another number (a
/// date for "how much will it cost") states no such value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Any,
    Money,
    Share,
    Year,
    /// A time or a distance: "how long" asks for either.
    Span,
    /// A speed, in a unit per time.
    Speed,
}

/// Words of a question phrase asking for an amount of money.
const MONEY_WORDS: &[&str] = &[
    "price",
    "cost",
    "costs",
    "pay",
    "paid",
    "spend",
    "spent",
    "fine",
    "fines",
    "bond",
    "money",
    "compensation",
    "fee",
    "fees",
    "salary",
    "wage",
    "budget",
    "euros",
    "dollars",
    "pounds",
    "worth",
    "revenue",
    "profit",
];

/// Words and signs that give an amount in a currency.
const CURRENCIES: &[&str] = &[
    "dollar", "dollars", "euro", "euros", "pound", "pounds", "yen", "yuan", "rupee", "rupees",
    "rs", "usd", "eur", "gbp", "franc", "francs", "cents", "bn", "crore", "lakh",
];

/// Units of a time or a distance.
const SPANS: &[&str] = &[
    "second",
    "seconds",
    "minute",
    "minutes",
    "hour",
    "hours",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "decade",
    "decades",
    "night",
    "nights",
    "km",
    "miles",
    "mile",
    "metres",
    "meters",
    "metre",
    "meter",
    "feet",
    "foot",
    "ft",
    "kilometres",
    "kilometers",
    "yards",
    "inches",
    "cm",
    "mm",
];

/// Units of a speed.
const SPEEDS: &[&str] = &["mph", "kph", "knots", "mbps", "kbps", "gbps", "mb", "gb"];

/// What a question asks for, as the check reads it.
pub(crate) struct Wanted {
    kind: Kind,
    form: Form,
    /// For a count of something the question names ("how many saves", "what was the
    /// attendance"), the stems of its words: a number in a sentence that does not say what
    /// it counts ("2:55 into overtime") is a count of something else.
    counted: Vec<String>,
    /// What the question names: a number stated of someone else is not the answer.
    entities: Vec<Entity>,
    /// The question's words, lower-cased: its own values are no answer.
    question_words: Vec<String>,
    described: String,
}

impl Wanted {
    pub(crate) fn of(question: &str, lang: Lang) -> Option<Wanted> {
        let a = asked(question, lang);
        let kind = a.kind?;
        let question_words: Vec<String> = (question.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let has =
            |words: &[&str], among: &[String]| among.iter().any(|w| words.contains(&w.as_str()));
        // "How much is it expected to cost?" says what is asked after its phrase.
        let how_much = question_words.windows(2).any(|w| w == ["how", "much"]);
        let form = match kind {
            Kind::Number if has(&["percentage", "percent"], &a.focus) => Form::Share,
            Kind::Number if has(MONEY_WORDS, &a.focus) => Form::Money,
            Kind::Number if a.focus.is_empty() && how_much && has(MONEY_WORDS, &question_words) => {
                Form::Money
            }
            Kind::Number if a.focus == ["year"] => Form::Year,
            Kind::Number if a.focus == ["long"] => Form::Span,
            Kind::Number if has(&["speed", "fast"], &a.focus) => Form::Speed,
            _ => Form::Any,
        };
        let generic = |w: &String| {
            (NUMBER_NOUNS.iter().chain(MEASURES))
                .filter(|n| !matches!(**n, "attendance" | "population" | "capacity"))
                .any(|n| n == w)
                || matches!(w.as_str(), "people" | "persons" | "times")
        };
        // "How many people were arrested": people are counted whatever a page calls them, so
        // the count is of those the question's participle names.
        let own: Vec<String> = (a.focus.iter()).filter(|w| !generic(w)).cloned().collect();
        let counted: Vec<String> = match (kind, form) {
            (Kind::Number, Form::Any) if own.is_empty() => participle(&question_words, &a.focus)
                .into_iter()
                .map(|w| lang.stem(&w).into_owned())
                .collect(),
            // "Frame rate", "interest rate": the noun qualifies a measure, given in its unit
            // ("30fps").
            (Kind::Number, Form::Any) if own.len() < a.focus.len() => Vec::new(),
            (Kind::Number, Form::Any) => (own.iter())
                .flat_map(|w| std::iter::once(w.clone()).chain(markers(w)))
                .map(|w| lang.stem(&w).into_owned())
                .collect(),
            _ => Vec::new(),
        };
        let noun = match (kind, form) {
            (_, Form::Money) => "an amount of money",
            (_, Form::Share) => "a percentage",
            (_, Form::Year) => "a year",
            (_, Form::Speed) => "a speed",
            (_, Form::Span) => "a duration or a length",
            (Kind::Number, _) => "a number",
            (Kind::Date, _) => "a date",
            (Kind::Name, _) => "a name",
            (Kind::Place, _) => "a place",
        };
        let described = match a.focus.is_empty() || a.focus == ["long"] {
            true => noun.to_owned(),
            false => format!("the {} ({noun})", a.focus.join(" ")),
        };
        Some(Wanted {
            kind,
            form,
            counted,
            entities: entities_in(question, lang),
            question_words,
            described,
        })
    }

    /// Whether `statement` states a value of the form asked that the question does not hold.
    pub(crate) fn stated_in(&self, statement: &str, site: &[String], lang: Lang) -> bool {
        let words: Vec<String> = (statement.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let new = |w: &String| !self.question_words.contains(w);
        let numbers = || words.iter().filter(|w| w.chars().any(is_digit) && new(w));
        match (self.kind, self.form) {
            // A name past the sentence's first word that the question does not hold, and
            // not the page's own masthead ("News Nation tried to find out …").
            (Kind::Name | Kind::Place, _) => (statement.split_whitespace().skip(1))
                .filter_map(|w| {
                    w.split(|c: char| !c.is_alphanumeric())
                        .find(|p| !p.is_empty())
                })
                .filter(|w| w.starts_with(char::is_uppercase))
                .map(str::to_lowercase)
                // "Rs 299" names a currency, not a place.
                .any(|w| new(&w) && !site.contains(&w) && !CURRENCIES.contains(&w.as_str())),
            (Kind::Date, _) => {
                numbers().any(|w| is_year(w))
                    || words.iter().any(|w| MONTHS.contains(&w.as_str()) && new(w))
                    || (words.iter().any(|w| {
                        ["day", "days", "week", "weeks", "month", "months"].contains(&w.as_str())
                    }) && numbers().next().is_some())
            }
            (_, Form::Money) => {
                numbers().next().is_some()
                    && (statement.contains(['$', '€', '£', '¥', '₹'])
                        || words.iter().any(|w| CURRENCIES.contains(&w.as_str())))
            }
            (_, Form::Share) => {
                numbers().next().is_some()
                    && (statement.contains('%') || words.iter().any(|w| w == "percent"))
            }
            (_, Form::Year) => numbers().any(|w| is_year(w)),
            (_, Form::Span) => {
                self.kind.stated_in(statement, &self.question_words)
                    && words.iter().any(|w| SPANS.contains(&w.as_str()))
            }
            (_, Form::Speed) => {
                numbers().next().is_some()
                    && (words.iter().any(|w| SPEEDS.contains(&w.as_str()))
                        || statement.contains("km/h")
                        || statement.contains("per hour"))
            }
            (_, Form::Any) => {
                let says_what = self.counted.is_empty()
                    || (terms_in(statement, lang).iter())
                        .any(|t| self.counted.contains(&lang.stem(t).into_owned()));
                says_what && self.kind.stated_in(statement, &self.question_words)
            }
        }
    }
}

/// The participle after a counted noun of people ("arrested" of "how many people were
/// arrested"), if the question has one.
fn participle(question_words: &[String], focus: &[String]) -> Option<String> {
    let at = question_words.iter().position(|w| focus.contains(w))?;
    let rest = &question_words[at + 1..];
    let auxiliaries = (rest.iter())
        .take_while(|w| {
            matches!(
                w.as_str(),
                "were" | "was" | "are" | "is" | "had" | "have" | "been" | "be"
            )
        })
        .count();
    let next = rest.get(auxiliaries)?;
    (auxiliaries > 0 && (next.ends_with("ed") || next.ends_with("en"))).then(|| next.clone())
}

/// Whether `statement` speaks of someone else: it names a person or a place of two words or
/// more that is not its page's masthead, nor any of the question's `entities`. "Tuukka Rask
/// made 25 saves" in a round-up gives no count of Matt Murray's.
fn of_someone_else(statement: &str, entities: &[Entity], site: &[String], lang: Lang) -> bool {
    // Another's name shares no word with the question's ("Hong Kong Polytechnic" is the
    // question's "Hong Kong Polytechnic University") and is not the page's masthead.
    let asked: Vec<&String> = entities.iter().flat_map(|e| &e.words).collect();
    let own = |words: &[String]| {
        words.iter().all(|w| site.contains(w)) || words.iter().any(|w| asked.contains(&w))
    };
    // A sentence's first word is capitalised anyway, but two capitalised words opening it
    // ("Tuukka Rask made 25 saves") are a name.
    let opening: Vec<String> = (statement.split_whitespace())
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .take_while(|w| w.chars().next().is_some_and(char::is_uppercase))
        .map(str::to_lowercase)
        .collect();
    let opens_with_name = opening.len() > 1 && !lang.is_stop_word(&opening[0]) && !own(&opening);
    !entities.is_empty()
        && !named_in(entities, &[statement], lang).contains(&true)
        && (opens_with_name
            || (entities_in(statement, lang).iter()).any(|e| e.words.len() > 1 && !own(&e.words)))
}

impl Wanted {
    /// Whether `statement` may be about the question's subject: a name asked for is a new
    /// name, but a number or a date stated of someone else is theirs.
    pub(crate) fn about(&self, statement: &str, site: &[String], lang: Lang) -> bool {
        matches!(self.kind, Kind::Name | Kind::Place)
            || !of_someone_else(statement, &self.entities, site, lang)
    }
}

fn is_year(w: &str) -> bool {
    w.len() == 4 && w.parse::<u32>().is_ok_and(|y| (1000..=2199).contains(&y))
}

/// The words of a page's host name: a page's masthead is spelt with them ("newsnation" for
/// News Nation), so its capitalised words are the site's, not an answer.
pub(crate) fn site_words(doc: Option<&AnalysedDoc>) -> Vec<String> {
    let Some(host) = doc.and_then(|d| {
        url::Url::parse(&d.final_url)
            .ok()?
            .host_str()
            .map(str::to_owned)
    }) else {
        return Vec::new();
    };
    let label = (host.split('.'))
        .filter(|l| !matches!(*l, "www" | "com" | "org" | "net" | "co" | "uk" | "in"))
        .max_by_key(|l| l.len())
        .unwrap_or("")
        .to_lowercase();
    // Every word that is a piece of the label: "news" and "nation" of "newsnation".
    let mut out = vec![label.clone()];
    for i in 3..label.len().saturating_sub(2) {
        if label.is_char_boundary(i) {
            out.push(label[..i].to_owned());
            out.push(label[i..].to_owned());
        }
    }
    out
}

/// A statement of a report: its text and the source it cites first.
pub type Statement<'a> = (&'a str, u32);

/// The statements of a report that cite a source: its supported claims, and its heading lines
/// that cite one or head a list whose items do (a writer that puts a sentence of its answer in
/// a heading, "# … each post $100,000 bond [1]", still states it; so does a count above the
/// items it counted). A heading is taken as the first cited source's.
pub fn statements<'a>(claims: &'a [Claim], body: &'a str, cited: &[u32]) -> Vec<Statement<'a>> {
    let lines: Vec<&str> = (body.lines()).filter(|l| !l.trim().is_empty()).collect();
    let heads_cited = |i: usize| {
        cites(lines[i])
            || (lines.get(i + 1))
                .is_some_and(|next| next.trim_start().starts_with("- ") && cites(next))
    };
    let headings = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with('#') && heads_cited(i))
        .filter_map(|i| Some((lines[i].trim_start_matches(['#', ' ']), *cited.first()?)));
    (claims.iter())
        .filter_map(|c| Some((c.text.as_str(), *c.sources.first()?)))
        .chain(headings)
        .collect()
}

/// Whether `line` holds a citation marker, `[n]`.
fn cites(line: &str) -> bool {
    (line.split('[').skip(1)).any(|rest| {
        rest.split_once(']')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Judges a report of `question` (in `lang`) by its `statements` from `docs`: answerable when
/// one states a value of what the question asks. A question whose form does not say what
/// kind of value answers it ("What is the melting point …", or a language without question
/// phrases here) is answered by any statement.
pub fn judge(
    question: &str,
    lang: Lang,
    statements: &[Statement<'_>],
    docs: &[&AnalysedDoc],
) -> Answerability {
    let wanted = Wanted::of(question, lang);
    let described = wanted.as_ref().map(|w| w.described.clone());
    let verdict = |answerable: bool, reason: String| Answerability {
        answerable,
        reason,
        wanted: described.clone().unwrap_or_default(),
        statements: statements.len(),
    };
    if statements.is_empty() {
        return verdict(
            false,
            "no statement of the report is supported by a source read".into(),
        );
    }
    let Some(wanted) = wanted else {
        return verdict(
            true,
            format!(
                "the question's form does not say what kind of value answers it; {} statement(s) cite a source",
                statements.len()
            ),
        );
    };
    let answers = |(text, idx): &&Statement<'_>| {
        let site = site_words(docs.iter().find(|d| d.source.idx == *idx).copied());
        wanted.stated_in(text, &site, lang) && wanted.about(text, &site, lang)
    };
    match statements.iter().find(answers) {
        Some((text, _)) => verdict(
            true,
            format!("\"{}\" states {}", text.trim(), wanted.described),
        ),
        None => verdict(
            false,
            format!(
                "none of the {} statement(s) the sources support states {}",
                statements.len(),
                wanted.described
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(idx: u32, url: &str) -> AnalysedDoc {
        AnalysedDoc {
            final_url: url.into(),
            ..crate::report::testing::doc(idx, true, &[])
        }
    }

    /// The verdict on `question` of statements each cited from source 0, a page of `url`.
    fn verdict(question: &str, said: &[&str], url: &str) -> Answerability {
        let statements: Vec<Statement> = said.iter().map(|s| (*s, 0)).collect();
        judge(question, Lang::EN, &statements, &[&doc(0, url)])
    }

    #[test]
    fn a_cost_is_an_amount_of_money_not_another_number() {
        // Europa Clipper's pages give its launch and its flybys, not its cost.
        let q = "How much is NASA's Europa Clipper mission, which will make 45 flybys of \
                 Jupiter's moon Europa, expected to cost?";
        let near = [
            "NASA's upcoming Europa Clipper mission will get a much closer look at the icy \
             moon's surface as soon as 2023.",
            "The spacecraft will make 45 flybys of Europa.",
        ];
        let v = verdict(q, &near, "http://www.space.com/x");
        assert!(!v.answerable, "{v:?}");
        assert!(v.reason.contains("an amount of money"), "{v:?}");
        let mut answered = near.to_vec();
        answered.push("The mission is expected to cost $4.25 billion.");
        assert!(verdict(q, &answered, "http://www.space.com/x").answerable);
        // "Rs 299" is money too, and a percentage needs its sign.
        let q = "How much does the Delhi oxygen bar charge for fifteen minutes of pure air?";
        let said = ["The oxygen bar charges Rs 299 for fifteen minutes of pure air."];
        assert!(verdict(q, &said, "http://x.in/").answerable);
        let q = "By what percentage was Home Depot stock down after its report?";
        assert!(
            verdict(
                q,
                &["The stock was down 5% in recent trading."],
                "http://b.com/"
            )
            .answerable
        );
        assert!(!verdict(q, &["Home Depot reported $2.53 a share."], "http://b.com/").answerable);
    }

    #[test]
    fn a_count_says_what_it_counts() {
        // An NHL round-up: numbers of the game, none of them Murray's saves.
        let q = "How many saves did Penguins goaltender Matt Murray make in Pittsburgh's 5-4 \
                 overtime loss to the New York Islanders?";
        let near = [
            "Brock Nelson's second goal of the game 2:55 into overtime capped a frantic \
                     comeback to extend their unbeaten streak to 15 games.",
        ];
        assert!(!verdict(q, &near, "http://www.timesunion.com/x").answerable);
        assert!(verdict(q, &["Murray made 30 saves."], "http://www.timesunion.com/x").answerable);
        // Another goalie's saves are his.
        let other = ["Tuukka Rask made 25 saves as the Bruins beat the Devils."];
        assert!(!verdict(q, &other, "http://www.timesunion.com/x").answerable);
        // People are counted by what the question says befell them.
        let q = "How many people were arrested during the police siege of Hong Kong Polytechnic \
                 University in November 2019?";
        let near =
            ["Hong Kong police have laid siege to a university, pinning 800 students inside."];
        assert!(!verdict(q, &near, "http://www.express.co.uk/x").answerable);
        let said =
            ["Police said 1,100 people were arrested in the siege of Hong Kong Polytechnic."];
        assert!(verdict(q, &said, "http://www.express.co.uk/x").answerable);
        // A noun qualifying a measure is given in its unit.
        let q = "At what frame rate does Red Dead Redemption 2 run on Google Stadia?";
        let said = ["Chromecast Ultra players get a 30fps experience in Red Dead Redemption 2."];
        assert!(verdict(q, &said, "http://www.eurogamer.net/x").answerable);
        // "People" counts anyone: the injured are people whatever the page calls them.
        let q = "How many people were injured in the clashes at the Bolivian fuel plant?";
        let said = ["The public defender's office said another 30 had been injured."];
        assert!(verdict(q, &said, "http://www.rt.com/x").answerable);
    }

    #[test]
    fn a_pages_masthead_is_no_answer_to_which() {
        let q = "In which shopping mall in Delhi's Saket area is the Oxy Pure oxygen bar located?";
        let near = [
            "News Nation tried to find out about this initiative and landed up on the \
                     webpage of the mall located in Delhi's Saket area.",
        ];
        let url = "http://www.newsnation.in/fact-check/x.html";
        assert!(!verdict(q, &near, url).answerable);
        // Nor is a currency's abbreviation.
        let price = ["The oxygen bar charges Rs 299 for fifteen minutes of pure air."];
        assert!(!verdict(q, &price, url).answerable);
        let said = ["The oxygen bar opened this month in the Select Citywalk mall in Saket."];
        assert!(verdict(q, &said, url).answerable);
    }

    #[test]
    fn a_date_is_a_day_a_month_or_a_year_not_any_number() {
        let q = "When is Emirates due to take delivery of the first of the 30 Boeing 787-9 \
                 Dreamliners it ordered at the 2019 Dubai Air Show?";
        let near = ["It comes in addition to five 787 Dreamliner sales earlier this week."];
        assert!(!verdict(q, &near, "http://www.cnbc.com/x").answerable);
        let said = ["The first aircraft will be delivered in May 2023."];
        assert!(verdict(q, &said, "http://www.cnbc.com/x").answerable);
    }

    #[test]
    fn a_cited_heading_or_a_count_over_cited_items_is_a_statement() {
        let body = "# Two officers charged 1] Each must post $100,000 bond within a week. [1]\n\n\
                    ### 5 isotopes, counted\n\n- Zorbium-101 [1]\n\n## Answer\n\nText.";
        let said = statements(&[], body, &[7]);
        assert_eq!(
            said,
            vec![
                (
                    "Two officers charged 1] Each must post $100,000 bond within a week. [1]",
                    7
                ),
                ("5 isotopes, counted", 7),
            ]
        );
        let q = "How much bond did each of the prison guards have to post?";
        let v = judge(q, Lang::EN, &said, &[]);
        assert!(v.answerable, "{v:?}");
        // Nothing cited: nothing to judge.
        let v = judge(q, Lang::EN, &[], &[]);
        assert!(!v.answerable && v.statements == 0, "{v:?}");
    }

    #[test]
    fn a_question_without_a_form_is_answered_by_any_statement() {
        let v = verdict(
            "What is the melting point of zorbium?",
            &["It melts at 3 C."],
            "http://z/",
        );
        assert!(v.answerable && v.wanted.is_empty(), "{v:?}");
    }
}

//! What form of value answers a question, and whether a sentence states one: an amount of
//! money for a price, a percentage with its sign, a year, a span, a speed, a count of what the
//! question counts, a date, a name other than the page's masthead. Real pages around a
//! question's story say much that is near the answer and is not it (a launch year for "how
//! much will it cost", the other goalie's saves): the form tells them apart. The report's
//! answerability, the extractive writer's ranking and clean's key points read it alike.

use crate::asked::{asked, Kind, CODE_NOUNS, MEASURES, NUMBER_NOUNS};
use crate::entities::{entities_in, named_in, Entity};
use crate::points::markers;
use crate::{is_digit, terms_in, Lang, MONTHS};

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
    /// How often: "every fortnight", "twice a year", "weekly", "3 times a day".
    Frequency,
    /// A code a register gives ("the stock code 9988"), stated beside the word for it.
    Code,
}

impl Form {
    /// The form of a value of `kind` asked by the question phrase's `focus`, in a question of
    /// `question_words` (lower-cased).
    fn of(kind: Kind, focus: &[String], question_words: &[String]) -> Form {
        let has =
            |words: &[&str], among: &[String]| among.iter().any(|w| words.contains(&w.as_str()));
        // "How much is it expected to cost?" says what is asked after its phrase.
        let how_much = question_words.windows(2).any(|w| w == ["how", "much"]);
        match kind {
            Kind::Number if has(&["percentage", "percent"], focus) => Form::Share,
            Kind::Number if has(MONEY_WORDS, focus) => Form::Money,
            Kind::Number if focus.is_empty() && how_much && has(MONEY_WORDS, question_words) => {
                Form::Money
            }
            Kind::Number if focus == ["year"] => Form::Year,
            Kind::Number if focus == ["long"] => Form::Span,
            Kind::Number if has(&["speed", "fast"], focus) => Form::Speed,
            Kind::Number if focus == ["often"] => Form::Frequency,
            Kind::Name if has(CODE_NOUNS, focus) => Form::Code,
            _ => Form::Any,
        }
    }
}

/// Words that say how often on their own.
const FREQUENCIES: &[&str] = &[
    "hourly",
    "daily",
    "nightly",
    "weekly",
    "fortnightly",
    "biweekly",
    "monthly",
    "quarterly",
    "yearly",
    "annually",
    "biannually",
    "once",
    "twice",
    "thrice",
];

/// Units of time an "every" or "each" makes a frequency of ("every fortnight").
const PERIODS: &[&str] = &[
    "minute",
    "hour",
    "day",
    "night",
    "week",
    "fortnight",
    "month",
    "quarter",
    "season",
    "year",
    "spring",
    "summer",
    "autumn",
    "winter",
    "morning",
    "evening",
    "weekend",
];

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

/// The words of one dimension of a size, any of which says it: a question asking "how many
/// miles across" is answered by "the 1,900-mile-wide moon" or "a diameter of 3,100 km".
const DIMENSIONS: &[&[&str]] = &[
    &["across", "wide", "width", "diameter", "breadth", "radius"],
    &["tall", "high", "height", "elevation", "altitude"],
    &["deep", "depth"],
    &["away", "far", "distance", "distant"],
];

/// Units of a speed.
const SPEEDS: &[&str] = &["mph", "kph", "knots", "mbps", "kbps", "gbps", "mb", "gb"];

/// What a question asks for, as the check reads it.
pub struct Wanted {
    kind: Kind,
    form: Form,
    /// For a count of something the question names ("how many saves", "what was the
    /// attendance"), the stems of its words: a number in a sentence that does not say what
    /// it counts ("2:55 into overtime") is a count of something else.
    counted: Vec<String>,
    /// For a size asked in a unit ("how many miles across"), the words of that dimension
    /// ([`DIMENSIONS`]): "390 million miles away" is a distance, not the width asked.
    dimension: &'static [&'static str],
    /// The stems of the words the question asks by ("people" of "how many people …"): the
    /// number they follow is the one asked.
    focus: Vec<String>,
    /// For a date, the words of what happens then ([`event_words`]): a date in a statement
    /// that says none of them dates something else.
    event: Vec<String>,
    /// For a name, the stems of the noun it is asked by ("hotel" of "In which hotel …").
    noun: Vec<String>,
    /// What the question names: a number stated of someone else is not the answer.
    entities: Vec<Entity>,
    /// The question's words, lower-cased: its own values are no answer.
    question_words: Vec<String>,
    described: String,
}

impl Wanted {
    /// What `question` (in `lang`) asks for; `None` when its form does not say.
    pub fn of(question: &str, lang: Lang) -> Option<Wanted> {
        let a = asked(question, lang);
        let kind = a.kind?;
        let question_words: Vec<String> = (question.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let form = Form::of(kind, &a.focus, &question_words);
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
            (_, Form::Frequency) => "how often",
            (_, Form::Code) => "a code",
            (Kind::Number, _) => "a number",
            (Kind::Date, _) => "a date",
            (Kind::Name, _) => "a name",
            (Kind::Place, _) => "a place",
        };
        let described = match a.focus.is_empty() || a.focus == ["long"] || a.focus == ["often"] {
            true => noun.to_owned(),
            false => format!("the {} ({noun})", a.focus.join(" ")),
        };
        let event = match kind {
            Kind::Date => event_words(question, &a.focus, lang),
            _ => Vec::new(),
        };
        // Only beside a unit: "how tall is it" is answered by "it stands 300 metres".
        let dimension = match (kind, form) {
            (Kind::Number, Form::Any) if a.focus.len() > 1 => (DIMENSIONS.iter())
                .find(|d| a.focus.iter().any(|w| d.contains(&w.as_str())))
                .copied()
                .unwrap_or(&[]),
            _ => &[],
        };
        Some(Wanted {
            kind,
            form,
            dimension,
            focus: (a.focus.iter())
                .map(|w| lang.stem(w).into_owned())
                .collect(),
            counted,
            event,
            noun: name_noun(kind, &a.focus, lang),
            // An adjective describing the subject ("the Jovian moon") is no name a statement
            // about it must give.
            entities: entities_in(question, lang)
                .into_iter()
                .filter(|e| !e.describes(question))
                .collect(),
            question_words,
            described,
        })
    }

    /// Whether `statement` states a value of the form asked that the question does not hold.
    pub fn stated_in(&self, statement: &str, site: &[String], lang: Lang) -> bool {
        let words: Vec<String> = (statement.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let new = |w: &String| !self.question_words.contains(w);
        let numbers = || words.iter().filter(|w| w.chars().any(is_digit) && new(w));
        match (self.kind, self.form) {
            // A page's other numbers and names are no code ("priced at HK$176"): a code is
            // stated beside the word for it, "trades under the stock code 9988".
            (_, Form::Code) => {
                let said = stems(statement, lang);
                let code = (CODE_NOUNS.iter()).any(|c| {
                    let stem = lang.stem(c);
                    self.question_words.iter().any(|w| w == c) && said.iter().any(|s| *s == stem)
                });
                code && (words.iter()).any(|w| new(w) && !site.contains(w) && !lang.is_stop_word(w))
            }
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
                let dated = numbers().any(|w| is_year(w))
                    || words.iter().any(|w| MONTHS.contains(&w.as_str()) && new(w))
                    || (words.iter().any(|w| {
                        ["day", "days", "week", "weeks", "month", "months"].contains(&w.as_str())
                    }) && numbers().next().is_some());
                let said = stems(statement, lang);
                dated
                    && (self.event.is_empty()
                        || (self.event.iter()).any(|e| said.iter().any(|w| same_stem(e, w))))
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
            (_, Form::Frequency) => {
                let period = |w: &String| PERIODS.contains(&w.trim_end_matches('s'));
                words.iter().any(|w| FREQUENCIES.contains(&w.as_str()))
                    || (words.windows(2))
                        .any(|p| matches!(p[0].as_str(), "every" | "each" | "per") && period(&p[1]))
                    || (words.iter().any(|w| w == "times") && numbers().next().is_some())
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
                let sized = self.dimension.is_empty()
                    || words.iter().any(|w| self.dimension.contains(&w.as_str()));
                says_what && sized && self.kind.stated_in(statement, &self.question_words)
            }
        }
    }

    /// Whether the question asks a number of one span ([`Wanted::number_in`] reads it).
    pub fn asks_a_number(&self) -> bool {
        self.kind == Kind::Number
            && matches!(
                self.form,
                Form::Money | Form::Share | Form::Year | Form::Any
            )
    }

    /// The words of `statement` that state the number asked, as the page writes them, with the
    /// word after (a scale or a unit): "$300M", "140 million monthly", "13,000 US", "2009".
    /// For a statement [`Wanted::stated_in`] holds, of a question asking a number of one
    /// span: an amount of money, a percentage, a year or a count. `None` for the rest (a
    /// duration, a speed, how often; a name, a place, a date).
    pub fn number_in(&self, statement: &str, lang: Lang) -> Option<String> {
        let words: Vec<&str> = statement.split_whitespace().collect();
        let bare = |w: &str| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        };
        // A number the question does not hold, read as `stated_in` reads words; not a range
        // ("$40-50 billion") nor a multiplier ("10 times more"), which state no one number.
        let new_number = |i: usize| {
            let range = (words[i]
                .split(['-', '–'])
                .filter(|p| p.chars().any(is_digit)))
            .count()
                > 1;
            let times = words
                .get(i + 1)
                .is_some_and(|w| matches!(bare(w).as_str(), "times" | "fold"));
            !range
                && !times
                && (words[i].split(|c: char| !c.is_alphanumeric()))
                    .filter(|p| p.chars().any(is_digit))
                    .any(|p| !self.question_words.contains(&p.to_lowercase()))
        };
        let span = |i: usize| words[i..(i + 2).min(words.len())].join(" ");
        let mut numbers = (0..words.len()).filter(|&i| new_number(i));
        let at = match (self.kind, self.form) {
            (Kind::Number, Form::Money) => {
                let currency = |j: Option<usize>| {
                    j.and_then(|j| words.get(j))
                        .is_some_and(|w| CURRENCIES.contains(&bare(w).as_str()))
                };
                let amounts: Vec<usize> = (numbers)
                    .filter(|&i| {
                        words[i].contains(['$', '€', '£', '¥', '₹'])
                            || currency(i.checked_sub(1))
                            || currency(Some(i + 1))
                            || currency(Some(i + 2))
                    })
                    .collect();
                // Of two amounts, the one nearer what the question asks about ("a lifeline
                // worth up to $8 billion … Meetup, which it acquired for $200 million" for
                // "How much did WeWork pay to acquire Meetup?"); of equals, the first.
                (amounts.iter().copied()).min_by_key(|&i| self.distance_to_asked(&words, i, lang))
            }
            (Kind::Number, Form::Share) => numbers.find(|&i| {
                words[i].contains('%') || words.get(i + 1).is_some_and(|w| bare(w) == "percent")
            }),
            (Kind::Number, Form::Year) => {
                return numbers.map(|i| bare(words[i])).find(|w| is_year(w));
            }
            (Kind::Number, Form::Any) => {
                // The number that what is counted follows within three words ("13,000 US
                // troops", "25 million people"): a sentence's other numbers count other things.
                // Of two, the one more of the question's words follow ("30 Boeing jets" and
                // "50 Airbus A350-900 jets" for "How many Airbus A350-900 jets …"); of equals,
                // the first.
                let named = |w: &&str| {
                    let stem = lang.stem(&bare(w)).into_owned();
                    self.counted.contains(&stem) || self.focus.contains(&stem)
                };
                let followed =
                    |i: usize| words[i + 1..].iter().take(3).filter(|w| named(w)).count();
                match self.counted.is_empty() && self.focus.is_empty() {
                    true => numbers.next(),
                    false => (numbers.map(|i| (followed(i), i)))
                        .filter(|&(n, _)| n > 0)
                        .min_by_key(|&(n, i)| (std::cmp::Reverse(n), i))
                        .map(|(_, i)| i),
                }
            }
            _ => None,
        };
        at.map(span)
    }

    /// How many words lie between `words[at]` and the nearest word of the question that is
    /// neither one of its names nor a stop word ("acquired" for "… pay to acquire Meetup?");
    /// `usize::MAX` when the statement has none.
    fn distance_to_asked(&self, words: &[&str], at: usize, lang: Lang) -> usize {
        let named = |w: &str| (self.entities.iter()).any(|e| e.words.iter().any(|n| n == w));
        let asked: Vec<String> = (self.question_words.iter())
            .filter(|w| !w.chars().any(is_digit) && !named(w) && !lang.is_stop_word(w))
            .map(|w| lang.stem(w).into_owned())
            .collect();
        (words.iter().enumerate())
            .filter(|(_, w)| {
                let stem = lang
                    .stem(
                        &w.trim_matches(|c: char| !c.is_alphanumeric())
                            .to_lowercase(),
                    )
                    .into_owned();
                asked.iter().any(|a| same_stem(a, &stem))
            })
            .map(|(i, _)| i.abs_diff(at))
            .min()
            .unwrap_or(usize::MAX)
    }

    /// Whether `statement` may be about the question's subject: a name asked for is a new
    /// name, but a number or a date stated of someone else is theirs.
    pub fn about(&self, statement: &str, site: &[String], lang: Lang) -> bool {
        matches!(self.kind, Kind::Name | Kind::Place)
            || !of_someone_else(statement, &self.entities, site, lang)
    }

    /// Whether `statement` says the noun a name is asked by ("… took the child to Forest Hill's
    /// WoodSpring Suites hotel" for "In which hotel …"): of the sentences stating a name, those
    /// that say of what kind it is come first. True when the question gives no such noun.
    pub fn says_noun(&self, statement: &str, lang: Lang) -> bool {
        if self.noun.is_empty() {
            return true;
        }
        let said = stems(statement, lang);
        (self.noun.iter()).any(|n| said.iter().any(|w| same_stem(n, w)))
    }

    /// What is asked as a report says it is missing: "the starting price (an amount of money)".
    pub fn described(&self) -> &str {
        &self.described
    }
}

/// For a name or a place, the stems of the noun the question asks it by ("hotel" of "In
/// which hotel …"); nothing for other kinds.
fn name_noun(kind: Kind, focus: &[String], lang: Lang) -> Vec<String> {
    match kind {
        Kind::Name | Kind::Place => focus.iter().map(|w| lang.stem(w).into_owned()).collect(),
        _ => Vec::new(),
    }
}

/// The words of `text` by their stems, its language's stop words left out.
fn stems(text: &str, lang: Lang) -> Vec<String> {
    (terms_in(text, lang).iter())
        .map(|w| lang.stem(w).into_owned())
        .collect()
}

/// Stems of one word may differ by their suffix ("deliv" of delivered, "deliveri" of
/// delivery): one that begins the other, five letters or more, is the same word.
fn same_stem(a: &str, b: &str) -> bool {
    let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    a == b || (shared >= 5 && shared == a.chars().count().min(b.chars().count()))
}

/// What happens at the date a question asks for ("take", "delivery", "order" of "When is
/// Emirates due to take delivery of the first of the 30 Boeing 787-9 Dreamliners it ordered
/// …"), by their stems, with the words marking such a value: the question's words beyond its
/// subject. Not its names nor the nouns introducing them, its own numbers, nor a common noun
/// next to one of its names ("the Europa Clipper mission", "Jupiter's moon Europa") unless the
/// question phrase (`focus`) asks for it. Stories are full of dates, and a date tells nothing
/// of what it dates: "plans to expand the fleet by the end of 2025" is no delivery date.
fn event_words(question: &str, focus: &[String], lang: Lang) -> Vec<String> {
    let stem = |w: &str| lang.stem(&w.to_lowercase()).into_owned();
    let focus: Vec<String> = focus.iter().map(|w| stem(w)).collect();
    let subject: Vec<String> = (crate::names_in(question, lang).into_iter())
        .chain(crate::head_nouns(question, lang))
        .map(|w| stem(&w))
        .collect();
    // Next to a name within a phrase: "Europa, expected to cost" is not the name's.
    let describing: Vec<String> = (question.split([',', ';', ':', '(', ')', '?']))
        .enumerate()
        .flat_map(|(p, phrase)| {
            let tokens: Vec<&str> = (phrase.split(|c: char| !c.is_alphanumeric() && c != '-'))
                .filter(|w| !w.is_empty() && *w != "s")
                .collect();
            // A question's first word is capitalised anyway.
            let capital = |i: usize| (p > 0 || i > 0) && tokens[i].starts_with(char::is_uppercase);
            (0..tokens.len())
                .filter(|&i| !tokens[i].starts_with(char::is_uppercase))
                .filter(|&i| (i > 0 && capital(i - 1)) || (i + 1 < tokens.len() && capital(i + 1)))
                .map(|i| stem(tokens[i]))
                .collect::<Vec<_>>()
        })
        .filter(|w| !focus.contains(w))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let words = (stems(question, lang).into_iter())
        .filter(|t| t.chars().count() > 2 && !t.chars().any(|c| c.is_ascii_digit()))
        .filter(|t| !subject.contains(t) && !describing.contains(t));
    for w in words {
        let marked = markers(&w).into_iter().map(|m| lang.stem(&m).into_owned());
        for m in std::iter::once(w.clone()).chain(marked) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
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

fn is_year(w: &str) -> bool {
    w.len() == 4 && w.parse::<u32>().is_ok_and(|y| (1000..=2199).contains(&y))
}

/// The words of a page's host name (`www.newsnation.in`): a page's masthead is spelt with
/// them ("newsnation" for News Nation), so its capitalised words are the site's, not an answer.
pub fn site_words(host: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sentences of real pages (the research benchmark's) and the span each states.
    #[test]
    fn the_number_asked_is_read_from_its_statement() {
        let cases = [
            (
                "How much did Scooter Braun's company pay for Big Machine?",
                "Braun's Ithaca Holdings purchased Big Machine for $300M in a deal backed by The Carlyle Group.",
                Some("$300M in"),
            ),
            (
                "How many US troops remained in Afghanistan?",
                "Roughly 13,000 US troops remain in Afghanistan, 18 years after Washington invaded.",
                Some("13,000 US"),
            ),
            (
                "In what year was Patrick Carlineo convicted of criminal mischief?",
                "He was convicted of criminal mischief in 1998 and was barred from owning a gun.",
                Some("1998"),
            ),
            (
                "What percentage of Titan's surface is covered by plains?",
                "Plains cover 65 percent of the surface of Titan, the map shows.",
                Some("65 percent"),
            ),
            (
                "How many people did the Black Death kill in Europe in the 14th century?",
                "The Black Death killed an estimated 25 million people in Europe in the 14th Century.",
                Some("25 million"),
            ),
            // A number of something else: the valuation is no count of employees.
            (
                "How many employees did WeWork have before the layoffs?",
                "WeWork employees waited as its valuation was slashed from $47 billion.",
                None,
            ),
            (
                "How much did WeWork pay to acquire Meetup in 2017?",
                "After a lifeline worth up to $8 billion, WeWork cut staff at Meetup, which it acquired for $200 million in 2017.",
                Some("$200 million"),
            ),
            (
                "How many Airbus A350-900 jets did Emirates order at the Dubai Air Show?",
                "Besides its order of 30 Boeing jets, it ordered 50 Airbus A350-900 jets on Monday.",
                Some("50 Airbus"),
            ),
            // A range and a multiplier state no one number.
            (
                "How much in annual farm purchases did Trump want from China?",
                "To achieve the $40-50 billion in annual purchases, tariffs would have to go.",
                None,
            ),
            (
                "How many calories per tablespoon does salsa have?",
                "Salsa has four calories per tablespoon; dips can pack 10 times more calories.",
                None,
            ),
            // Neither a number of one span nor one the question does not hold.
            ("How long did the man take steroids?", "He took them for 12 months.", None),
            ("How many saves did Rask make in 2019?", "In 2019 he was injured.", None),
        ];
        for (question, statement, span) in cases {
            let wanted = Wanted::of(question, Lang::EN).unwrap();
            assert_eq!(
                wanted.number_in(statement, Lang::EN).as_deref(),
                span,
                "{question}"
            );
        }
    }

    #[test]
    fn a_masthead_is_spelt_with_its_hosts_words() {
        let site = site_words("www.newsnation.in");
        assert!(["newsnation", "news", "nation"]
            .iter()
            .all(|w| site.contains(&w.to_string())));
        // The page's own name is no answer to "which mall"; another name is.
        let q = "In which shopping mall in Delhi's Saket area is the oxygen bar located?";
        let w = Wanted::of(q, Lang::EN).unwrap();
        assert!(!w.stated_in(
            "News Nation found the mall in Delhi's Saket area.",
            &site,
            Lang::EN
        ));
        assert!(w.stated_in("The bar is in Select Citywalk.", &site, Lang::EN));
        assert_eq!(w.described(), "the shopping mall (a name)");
    }

    #[test]
    fn a_year_a_span_and_a_speed_each_have_their_form() {
        let states =
            |q: &str, s: &str| Wanted::of(q, Lang::EN).unwrap().stated_in(s, &[], Lang::EN);
        let q = "In what year was Patrick Carlineo convicted of criminal mischief?";
        assert!(states(q, "He was convicted of criminal mischief in 1998."));
        assert!(!states(q, "He faces up to 10 years in prison."));
        let q = "How long did the man with feather duvet lung take steroids?";
        assert!(states(q, "The course of steroids continued for 12 months."));
        assert!(!states(q, "He took 40 mg of steroids."));
        let q = "What minimum internet connection speed does Google recommend for Stadia in 4K?";
        assert!(states(q, "Google recommends at least 35 Mbps for 4K."));
        assert!(!states(q, "Stadia streams 4K at 60 frames per second."));
        let q = "How often did observers walk the fixed transects?";
        assert_eq!(Wanted::of(q, Lang::EN).unwrap().described, "how often");
        for said in [
            "Observers walked fixed transects every fortnight from March to July.",
            "The transects were walked twice a month.",
            "Observers walked them weekly.",
            "They walked each transect 3 times a season.",
        ] {
            assert!(states(q, said), "{said}");
        }
        assert!(!states(q, "Observers walked 12 transects in 2023."));
    }

    #[test]
    fn a_size_in_a_unit_is_stated_with_its_dimension() {
        let q = "How many miles across is the Jovian moon where astronomers reported detecting \
                 water vapour in November 2019?";
        let w = Wanted::of(q, Lang::EN).unwrap();
        let away = "Europa ― located some 390 million miles away ― is slightly smaller than \
                    Earth's Moon.";
        let wide = "The team used the Keck Observatory in Hawaii to study the 1,900-mile-wide \
                    (3,100 kilometers) Europa.";
        assert!(!w.stated_in(away, &[], Lang::EN), "a distance is no width");
        assert!(w.stated_in(wide, &[], Lang::EN));
        // Nor does the observatory's name make it someone else's: the question names nothing.
        assert!(w.about(wide, &[], Lang::EN));
        assert!(w.stated_in("Titan has a diameter of 3,200 miles.", &[], Lang::EN));
        // Without a unit, a measure word alone asks for any number of it.
        let tall = Wanted::of("How tall is the Velsor tower?", Lang::EN).unwrap();
        assert!(tall.stated_in("The Velsor tower stands 300 metres.", &[], Lang::EN));
    }

    #[test]
    fn a_code_is_stated_beside_the_word_for_it() {
        // u008 of the real-page set: the pages on Alibaba's listing give its price, its
        // proceeds and its date, and no stock code.
        let q = "Under what stock code will Alibaba's shares trade on the Hong Kong Stock \
                 Exchange after its secondary listing?";
        let wanted = Wanted::of(q, Lang::EN).unwrap();
        assert_eq!(wanted.described(), "the stock code (a code)");
        let states = |s: &str| wanted.stated_in(s, &[], Lang::EN);
        assert!(states(
            "Alibaba's shares will trade under the stock code 9988."
        ));
        assert!(!states(
            "At the reported pricing, Alibaba's secondary listing would raise at least 88 \
             billion Hong Kong dollars – a symbolic total."
        ));
        assert!(!states("Alibaba priced its shares at HK$176 each."));
        // A code the question already holds is not stated again.
        let q = "Which company trades under the ticker BABA?";
        assert!(!Wanted::of(q, Lang::EN)
            .unwrap()
            .stated_in("BABA is the ticker.", &[], Lang::EN));
    }

    /// A date answers "when" in a statement that says what happens then; the question's
    /// subject, its numbers and the nouns describing it are not that.
    #[test]
    fn a_date_dates_what_is_asked() {
        let q = "When is Emirates due to take delivery of the first of the 30 Boeing 787-9 \
                 Dreamliners it ordered at the 2019 Dubai Air Show?";
        let w = Wanted::of(q, Lang::EN).unwrap();
        assert!(w.stated_in(
            "The first aircraft will be delivered in May 2023.",
            &[],
            Lang::EN
        ));
        let other = "Clark revealed plans to expand the Emirates fleet by the end of 2025.";
        assert!(!w.stated_in(other, &[], Lang::EN));
        let q = "When was NASA's Europa Clipper mission, which will fly past Jupiter's moon \
                 Europa, launched?";
        let words = event_words(q, &[], Lang::EN);
        assert!(words.contains(&"launch".to_owned()), "{words:?}");
        for subject in ["mission", "moon", "europa", "s"] {
            assert!(
                !words.contains(&subject.to_owned()),
                "{subject} in {words:?}"
            );
        }
        let q = "How much is NASA's Europa Clipper mission, which will make 45 flybys of \
                 Jupiter's moon Europa, expected to cost?";
        assert_eq!(
            event_words(q, &[], Lang::EN),
            ["mak", "flyby", "expect", "cost"]
        );
        // Unless the question phrase asks for it.
        let q = "Which BBC journalist interviewed Prince Andrew?";
        let focus = asked(q, Lang::EN).focus;
        assert!(event_words(q, &focus, Lang::EN).contains(&"journalist".to_owned()));
    }
}

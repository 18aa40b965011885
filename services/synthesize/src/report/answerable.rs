//! Whether a report answers its question: some statement it cites states a value of the form
//! asked ([`Wanted`]) about the subject asked. A report made of statements near the answer
//! (the story's other numbers, another person's) answers nothing, and says so instead. Both
//! writers are judged by their claims after attribution, so they abstain the same way.

use trawl_messages::AnalysedDoc;
use trawl_text::wanted::{site_words, Wanted};
use trawl_text::Lang;

use crate::attribution::{split_markers, Claim};

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

/// The words of `doc`'s site, its masthead's ([`site_words`]).
pub(crate) fn site_of(doc: Option<&AnalysedDoc>) -> Vec<String> {
    (doc.and_then(|d| url::Url::parse(&d.final_url).ok()))
        .and_then(|u| u.host_str().map(site_words))
        .unwrap_or_default()
}

/// The statements of a report that cite a source: its supported claims, and its heading lines
/// that cite one or head a list whose first item does (a writer that puts a sentence of its
/// answer in a heading, "# … each post $100,000 bond [1]", still states it; so does a count
/// above the items it counted). A heading's `[n]` names the source `cited[n - 1]`.
pub fn statements(claims: &[Claim], body: &str, cited: &[u32]) -> Vec<(String, u32)> {
    let lines: Vec<&str> = (body.lines()).filter(|l| !l.trim().is_empty()).collect();
    let source = |line: &str| {
        let n = *split_markers(line).1.first()?;
        cited.get((n as usize).checked_sub(1)?).copied()
    };
    let headings = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with('#'))
        .filter_map(|i| {
            let item = (lines.get(i + 1)).filter(|next| next.trim_start().starts_with("- "));
            let idx = source(lines[i]).or_else(|| source(item?))?;
            Some((
                split_markers(lines[i].trim_start_matches(['#', ' '])).0,
                idx,
            ))
        });
    (claims.iter())
        .filter_map(|c| Some((c.text.clone(), *c.sources.first()?)))
        .chain(headings)
        .collect()
}

/// Judges a report of `question` (in `lang`) by its `statements` from `docs`: answerable when
/// one states a value of what the question asks. A question whose form does not say what
/// kind of value answers it ("What is the melting point …", or a language without question
/// phrases here) is answered by any statement.
pub fn judge(
    question: &str,
    lang: Lang,
    statements: &[(String, u32)],
    docs: &[&AnalysedDoc],
) -> Answerability {
    let wanted = Wanted::of(question, lang);
    let described = wanted.as_ref().map(|w| w.described().to_owned());
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
    match statements.iter().find(|s| answers(&wanted, lang, s, docs)) {
        Some((text, _)) => verdict(
            true,
            format!("\"{}\" states {}", text.trim(), wanted.described()),
        ),
        None => verdict(
            false,
            format!(
                "none of the {} statement(s) the sources support states {}",
                statements.len(),
                wanted.described()
            ),
        ),
    }
}

/// Whether `statement` (its text and the source it cites, of `docs`) states a value of what
/// is `wanted` about the subject asked.
fn answers(wanted: &Wanted, lang: Lang, statement: &(String, u32), docs: &[&AnalysedDoc]) -> bool {
    let (text, idx) = statement;
    let site = site_of(docs.iter().find(|d| d.source.idx == *idx).copied());
    wanted.stated_in(text, &site, lang) && wanted.about(text, &site, lang)
}

/// Those of `statements` that answer `question` by [`judge`]'s test; `None` when the
/// question's form does not say what kind of value answers it.
pub fn answering<'s>(
    question: &str,
    lang: Lang,
    statements: &'s [(String, u32)],
    docs: &[&AnalysedDoc],
) -> Option<Vec<&'s (String, u32)>> {
    let wanted = Wanted::of(question, lang)?;
    Some(
        (statements.iter())
            .filter(|s| answers(&wanted, lang, s, docs))
            .collect(),
    )
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
        let statements: Vec<(String, u32)> = said.iter().map(|s| (s.to_string(), 0)).collect();
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
        // A date of the story's other plans says nothing of the delivery asked about.
        let other = ["Clark revealed plans to expand the Emirates fleet by the end of 2025."];
        assert!(!verdict(q, &other, "http://www.cnbc.com/x").answerable);
    }

    #[test]
    fn a_cited_heading_or_a_count_over_cited_items_is_a_statement() {
        let body = "# Two officers charged 1] Each must post $100,000 bond within a week. [1]\n\n\
                    ### 5 isotopes, counted\n\n- Zorbium-101 [2]\n\n## Answer\n\nText.";
        let said = statements(&[], body, &[7, 9]);
        let text = |s: &str| s.to_string();
        assert_eq!(
            said,
            vec![
                (
                    text("Two officers charged 1] Each must post $100,000 bond within a week."),
                    7
                ),
                (text("5 isotopes, counted"), 9),
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

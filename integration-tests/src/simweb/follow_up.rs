//! The follow-up family (opt in with [`Corpus::generate_with_follow_ups`]): questions asking for
//! two data points of one invented entity, where the pages a first research round reads state
//! only the first, so a second round must search for the other.
//!
//! Per topic:
//! * three answer pages state data point 1 and never name data point 2: two reference pages,
//!   data point 1 in their titles, and a long reader mailbag naming it once;
//! * one buried page states data point 2 (twice, same value) in a long report that names the
//!   entity but never uses the question's chatty opening;
//! * twenty decoys, reader-question threads about the entity, repeat that opening ("Could you
//!   tell me …") and state neither data point.
//!
//! The opening is what buries the buried page. Its words ("could", "you", "tell", "me") are
//! stop words to trawl but not to simweb's search, so for the question itself every page that
//! repeats them gains on the buried page: the answer pages (which carry reader questions too)
//! rank 1 to 3, the decoys 4 to 23, the buried page 24th. trawl's follow-up query (the
//! question's terms, then the missing data point's words: [`follow_up_query`]) has none of
//! them, so pages rank by entity and data points alone: the two reference pages, then the
//! buried page, whose data point 2 no other page names, then the mailbag. Some answer page
//! has to fall behind the buried page there, since a page without the opening scores the same
//! for both queries and would stay ahead of it in both.
//!
//! The data point names are chosen for clean's extractor (services/clean/src/datapoints.rs),
//! which reads a value by the kind the name suggests. Data point 2 is a plain property
//! ("albedo"), read only from sentences that name it: a measure ("boiling point") would be
//! taken from any number with a unit on an answer page, so round 1 would think it answered.
//! Its words share no stem with another page's words ("limiting" would match "limited").
//! Neither name ends like an agent noun ("diameter" reads as a person) or a plural.
//!
//! The two asks are joined by ", along with", not "and": simweb's scripted LLM searches each
//! "and"-clause of a question separately, and a clause naming data point 2 alone would find
//! the buried page in the first round.
//!
//! [`Corpus::generate_with_follow_ups`]: super::Corpus::generate_with_follow_ups

use super::corpus::PageKind;
use super::render::{Block, Doc};
use super::rng::Rng;
use super::topics::Topic;
use super::words::slug;

/// Decoy pages per topic: with the three answer pages, more than enough to fill the question's
/// top 20 above the buried page.
pub const DECOYS: usize = 20;

/// One topic of the family, written out by hand: the sentences must keep the shapes clean's
/// extractor reads, which generated wording would not guarantee. A key's id must not make
/// [`Topic::disagrees`] true: these answer pages agree.
pub struct Spec {
    /// Title form, e.g. "Kelsholm Telescope".
    pub name: &'static str,
    /// The invented token unique to this topic.
    pub key: &'static str,
    /// Running-text form, e.g. "the Kelsholm Telescope".
    pub the_name: &'static str,
    /// The question's opening, which the decoys repeat.
    pub opening: &'static str,
    pub question: &'static str,
    /// Data point 1, as trawl's heuristic analysis names it, and its value.
    pub answered: &'static str,
    pub answered_value: &'static str,
    /// How each answer page states data point 1; the third page is a reader question.
    pub answers: [&'static str; 3],
    /// The reader question the third answer page answers, in words other than data point 1's
    /// (completing `opening`).
    pub answered_ask: &'static str,
    /// Data point 2 and its value.
    pub wanted: &'static str,
    pub wanted_value: &'static str,
    /// The buried page's two statements of data point 2. Between them they hold its words
    /// twice (the second leaves out a two-word name), which ranks the page high enough for the
    /// follow-up query and low enough under the question: see the module comment.
    pub buried: [&'static str; 2],
    pub buried_title: &'static str,
    /// Report sentences for the buried page: the entity, never either data point.
    pub report: &'static [&'static str],
    /// Sentences about the entity that state neither data point.
    pub filler: &'static [&'static str],
    /// What readers ask about the entity in the decoys (completing `opening`).
    pub asks: &'static [&'static str],
}

pub const SPECS: &[Spec] = &[
    Spec {
        name: "Velmorite",
        key: "Velmorite",
        the_name: "Velmorite",
        opening: "Could you tell me",
        question: "Could you tell me the density of Velmorite, along with the birefringence of Velmorite?",
        answered: "density",
        answered_value: "7.41 g/cm3",
        answers: [
            "The density of Velmorite is 7.41 g/cm3, heavier than most minerals of its colour.",
            "Velmorite has a density of 7.41 g/cm3.",
            "With a density of 7.41 g/cm3, Velmorite feels surprisingly heavy in the hand.",
        ],
        answered_ask: "how heavy Velmorite is",
        wanted: "birefringence",
        wanted_value: "0.018",
        buried: [
            "The birefringence of Velmorite is 0.018, strong enough to double a pencil line seen through it.",
            "A second specimen gave the same birefringence, 0.018.",
        ],
        buried_title: "Velmorite: laboratory notes from the spring survey",
        report: &[
            "Three Velmorite specimens were cut and polished before testing.",
            "The Velmorite specimens came from the old quarry on the eastern ridge.",
            "Each Velmorite specimen was photographed under white light.",
            "Polishing Velmorite took most of an afternoon per specimen.",
            "Velmorite scratches glass but not quartz.",
        ],
        filler: &[
            "Velmorite forms small green crystals in cracks of old basalt.",
            "Collectors prize Velmorite for its glassy lustre.",
            "Velmorite was named after the valley where the earliest specimens turned up.",
            "Museums keep their Velmorite in dry cabinets away from sunlight.",
            "Velmorite crystals are rarely longer than a thumbnail.",
            "Prospectors once mistook Velmorite for emerald.",
        ],
        asks: &[
            "where Velmorite is mined",
            "whether Velmorite is safe to keep on a desk",
            "how Velmorite got its name",
            "if Velmorite glows under ultraviolet light",
            "who sells Velmorite specimens",
            "why Velmorite crystals crack in winter",
            "what Velmorite looks like before polishing",
            "whether Velmorite can be cut into gems",
        ],
    },
    Spec {
        name: "Kelsholm Telescope",
        key: "Kelsholm",
        the_name: "the Kelsholm Telescope",
        opening: "Would you also tell me",
        question: "Would you also tell me the aperture of the Kelsholm Telescope, along with the angular resolution of the Kelsholm Telescope?",
        answered: "aperture",
        answered_value: "4.2 metres",
        answers: [
            "The aperture of the Kelsholm Telescope is 4.2 metres, large for a university instrument.",
            "The Kelsholm Telescope has an aperture of 4.2 metres.",
            "With an aperture of 4.2 metres, the Kelsholm Telescope needs the large dome visitors see from the road.",
        ],
        answered_ask: "how big the main mirror of the Kelsholm Telescope is",
        wanted: "angular resolution",
        wanted_value: "0.4 arcseconds",
        buried: [
            "The angular resolution of the Kelsholm Telescope is 0.4 arcseconds on a still night.",
            "Later runs confirmed the same figure, 0.4 arcseconds.",
        ],
        buried_title: "Kelsholm Telescope: commissioning report",
        report: &[
            "The Kelsholm Telescope was pointed at standard fields on twelve nights.",
            "Engineers balanced the Kelsholm Telescope twice during the run.",
            "The Kelsholm Telescope tracked smoothly through the meridian.",
            "Wind shook the Kelsholm Telescope on two nights, which were discarded.",
            "The camera of the Kelsholm Telescope was cooled with liquid nitrogen.",
        ],
        filler: &[
            "The Kelsholm Telescope stands on a bare hill above the forest.",
            "Students from three universities share time on the Kelsholm Telescope.",
            "The dome of the Kelsholm Telescope was painted white to keep it cool.",
            "The Kelsholm Telescope sees its best skies in late autumn.",
            "A small museum at the foot of the hill tells the story of the Kelsholm Telescope.",
            "Snow closes the road to the Kelsholm Telescope for weeks at a time.",
        ],
        asks: &[
            "when the Kelsholm Telescope is open to visitors",
            "whether amateurs can book time on the Kelsholm Telescope",
            "who built the dome of the Kelsholm Telescope",
            "why the Kelsholm Telescope sits so far from town",
            "if the Kelsholm Telescope has a webcam",
            "what the Kelsholm Telescope found last winter",
            "where to stay near the Kelsholm Telescope",
            "whether the Kelsholm Telescope is ever closed for repairs",
        ],
    },
    Spec {
        name: "Lake Harlowmere",
        key: "Harlowmere",
        the_name: "Lake Harlowmere",
        opening: "Can you tell me",
        question: "Can you tell me the depth of Lake Harlowmere, along with the salinity of Lake Harlowmere?",
        answered: "depth",
        answered_value: "212 metres",
        answers: [
            "The depth of Lake Harlowmere is 212 metres at its deepest.",
            "Lake Harlowmere reaches a depth of 212 metres.",
            "At a depth of 212 metres, Lake Harlowmere is deeper than any other lake in the region.",
        ],
        answered_ask: "how deep Lake Harlowmere is",
        wanted: "salinity",
        wanted_value: "3.8 g/L",
        buried: [
            "The salinity of Lake Harlowmere is 3.8 g/L, about a tenth of sea water.",
            "Samples from the north shore showed the same salinity, 3.8 g/L.",
        ],
        buried_title: "Lake Harlowmere: water survey logbook",
        report: &[
            "Bottles were filled at six stations across Lake Harlowmere.",
            "The survey boat crossed Lake Harlowmere at dawn to avoid wind.",
            "Lake Harlowmere was calm on every sampling day.",
            "The stations on Lake Harlowmere were marked with orange buoys.",
            "Ice had left Lake Harlowmere two weeks before the survey.",
        ],
        filler: &[
            "Lake Harlowmere lies in a long glacial valley.",
            "Pine forest runs down to the shore of Lake Harlowmere.",
            "Lake Harlowmere freezes over in most winters.",
            "A ferry crossed Lake Harlowmere until the road was built.",
            "Lake Harlowmere is fed by three mountain streams.",
            "Old maps spell the name of Lake Harlowmere in several ways.",
        ],
        asks: &[
            "whether Lake Harlowmere freezes every winter",
            "where to park near Lake Harlowmere",
            "if swimming is allowed in Lake Harlowmere",
            "who owns the boathouse on Lake Harlowmere",
            "why Lake Harlowmere looks green in summer",
            "what fish live in Lake Harlowmere",
            "when the ferry on Lake Harlowmere stopped running",
            "whether boats can be hired on Lake Harlowmere",
        ],
    },
    Spec {
        name: "Comet Tarnwick",
        key: "Tarnwick",
        the_name: "Comet Tarnwick",
        opening: "Could you also tell me",
        question: "Could you also tell me the size of Comet Tarnwick, along with the albedo of Comet Tarnwick?",
        answered: "size",
        answered_value: "11 kilometres",
        answers: [
            "The size of Comet Tarnwick is 11 kilometres, measured across its nucleus.",
            "Comet Tarnwick is 11 kilometres in size.",
            "At 11 kilometres across, Comet Tarnwick is small in size for so bright a comet.",
        ],
        answered_ask: "how big Comet Tarnwick is",
        wanted: "albedo",
        wanted_value: "0.04",
        buried: [
            "The albedo of Comet Tarnwick is 0.04, darker than fresh asphalt.",
            "Its measured albedo was 0.04.",
        ],
        buried_title: "Comet Tarnwick: observing campaign notes",
        report: &[
            "Comet Tarnwick was followed from four observatories for two months.",
            "Images of Comet Tarnwick were stacked to bring out the faint tail.",
            "Comet Tarnwick faded steadily after passing the sun.",
            "Clouds hid Comet Tarnwick from the northern sites for a week.",
            "The spectrum of Comet Tarnwick showed strong carbon bands.",
        ],
        filler: &[
            "Comet Tarnwick was spotted by a schoolteacher with binoculars.",
            "Comet Tarnwick grows two tails when it nears the sun.",
            "Photographs of Comet Tarnwick show a faint green glow.",
            "Comet Tarnwick last passed close to the Earth in a cold spring.",
            "Astronomers expect Comet Tarnwick to return well before the end of the century.",
            "Comet Tarnwick is named after the farm where it was spotted.",
        ],
        asks: &[
            "when Comet Tarnwick will be visible again",
            "whether Comet Tarnwick can be seen with binoculars",
            "who discovered Comet Tarnwick",
            "why Comet Tarnwick has two tails",
            "if Comet Tarnwick could ever hit the Earth",
            "what colour Comet Tarnwick is in photographs",
            "where in the sky to look for Comet Tarnwick",
            "whether Comet Tarnwick has a moon",
        ],
    },
];

/// What forum threads answer when they do not know; none names a data point.
const REPLIES: &[&str] = &[
    "Nobody in the thread had a firm answer.",
    "A member promised to check a museum catalogue and never came back.",
    "The moderators pinned the question, but it is still open.",
    "Two replies disagreed and the conversation drifted elsewhere.",
    "Someone posted a blurry photo instead of an answer.",
    "The best suggestion so far is to ask a local club.",
    "One reply linked to a page that no longer exists.",
    "We passed the question on to a specialist and are waiting to hear back.",
];

/// Report sentences any buried page may use: method talk without the entity or a number.
const METHOD: &[&str] = &[
    "Each reading was taken twice by different technicians.",
    "Instruments were calibrated against reference standards at the start of every session.",
    "The raw logs are kept in the department archive.",
    "Small deviations between runs stayed within the stated uncertainty.",
    "The work was funded by a regional science grant.",
    "Field notes were typed up the same evening.",
    "A summary was circulated to the partner institutes for comment.",
    "Equipment failures were rare and are listed in the appendix.",
];

const DECOY_PREFIXES: &[&str] = &["", "Forum: ", "Reader question: ", "Ask us: "];

/// trawl's follow-up query for `data_point` (services/search's follow-up round): the question's
/// terms, then the data point's words not among them. Its stop words are trawl_text's, not
/// simweb's search ones; `tests/end_to_end/follow_up_corpus.rs` checks these terms against trawl's own.
pub fn follow_up_query(question: &str, data_point: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for text in [question, data_point] {
        for w in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
        {
            if !TRAWL_STOP_WORDS.contains(&w.as_str()) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out.join(" ")
}

/// trawl_text's stop words (shared/text/src/lib.rs), copied: simweb depends on no trawl crate.
const TRAWL_STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if",
    "in", "into", "is", "it", "its", "many", "me", "more", "most", "much", "my", "no", "not", "of",
    "on", "or", "our", "out", "so", "some", "such", "tell", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "up", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you",
    "your", "first",
];

pub fn topic(spec: &Spec) -> Topic {
    let facts = vec![spec.answers[0].to_string(), spec.buried[0].to_string()];
    Topic {
        id: slug(spec.key),
        kind: "follow-up",
        name: spec.name.to_string(),
        key: spec.key.to_string(),
        // Only the buried page states the second fact, in one wording.
        variants: vec![
            spec.answers.map(str::to_string),
            [(); 3].map(|_| spec.buried[0].to_string()),
        ],
        facts,
        question: spec.question.to_string(),
        // Reference pages name the data point in their titles, as reference pages do; the
        // reader question does not, so the follow-up query ranks it below the buried page.
        titles: [
            format!("{}: {} and other essentials", spec.name, spec.answered),
            format!("The {} of {}, explained", spec.answered, spec.the_name),
            format!("From the mailbag: {}", spec.name),
        ],
        filler: spec.filler.iter().map(|s| s.to_string()).collect(),
        code: None,
    }
}

/// The topic's pages: three answers, the buried page, then the decoys.
pub fn docs(spec: &Spec, topic: &Topic, rng: &mut Rng) -> Vec<(PageKind, Doc)> {
    let id = &topic.id;
    let mut out: Vec<(PageKind, Doc)> = (0..3)
        .map(|variant| {
            (
                PageKind::Answer {
                    topic: id.clone(),
                    variant,
                },
                answer_doc(spec, topic, variant, rng),
            )
        })
        .collect();
    out.push((
        PageKind::Buried { topic: id.clone() },
        buried_doc(spec, rng),
    ));
    for i in 0..DECOYS {
        out.push((
            PageKind::Decoy { topic: id.clone() },
            decoy_doc(spec, i, rng),
        ));
    }
    out
}

fn pick_filler(spec: &Spec, rng: &mut Rng, n: usize) -> String {
    let mut f: Vec<&str> = spec.filler.to_vec();
    rng.shuffle(&mut f);
    f.into_iter().take(n).collect::<Vec<_>>().join(" ")
}

fn answer_doc(spec: &Spec, topic: &Topic, variant: usize, rng: &mut Rng) -> Doc {
    let stated = spec.answers[variant];
    let ask = |rng: &mut Rng, what: &str| {
        format!(
            "{} {what}? {} {}",
            spec.opening,
            rng.pick(REPLIES),
            pick_filler(spec, rng, 1)
        )
    };
    let mut blocks = Vec::new();
    if variant == 2 {
        // A mailbag: reader questions, one of them answered. Long, and naming data point 1
        // once, so the follow-up query ranks it below the buried page.
        blocks.push(Block::P(format!(
            "{} {}? {stated} {}",
            spec.opening,
            spec.answered_ask,
            pick_filler(spec, rng, 1)
        )));
        for k in 0..7 {
            if k == 3 {
                blocks.push(Block::H2("More from the mailbag".into()));
            }
            blocks.push(Block::P(ask(rng, spec.asks[k % spec.asks.len()])));
        }
    } else {
        blocks.push(Block::P(format!("{} {stated}", pick_filler(spec, rng, 2))));
        blocks.push(Block::P(pick_filler(spec, rng, 2)));
        blocks.push(Block::H2("Background".into()));
        blocks.push(Block::P(pick_filler(spec, rng, 2)));
        // What readers ask, as reference pages often add: the question's opening keeps the
        // page above the decoys for the question itself.
        blocks.push(Block::H2("Readers ask".into()));
        for k in 0..2 {
            let what = spec.asks[(variant * 2 + k + 3) % spec.asks.len()];
            blocks.push(Block::P(ask(rng, what)));
        }
    }
    Doc {
        title: topic.titles[variant].clone(),
        blocks,
    }
}

/// A long report that states data point 2 twice, far apart, among sentences that name the
/// entity; long, so that its few matching words weigh less in a length-normalised ranking.
fn buried_doc(spec: &Spec, rng: &mut Rng) -> Doc {
    let mut blocks = Vec::new();
    for i in 0..12 {
        match i {
            0 => blocks.push(Block::H2("Method".into())),
            5 => blocks.push(Block::H2("Results".into())),
            9 => blocks.push(Block::H2("Notes".into())),
            _ => {}
        }
        let mut p = vec![rng.pick(spec.report), rng.pick(METHOD), rng.pick(METHOD)];
        match i {
            6 => p.insert(1, spec.buried[0]),
            10 => p.insert(1, spec.buried[1]),
            _ => {}
        }
        blocks.push(Block::P(p.join(" ")));
    }
    Doc {
        title: spec.buried_title.to_string(),
        blocks,
    }
}

/// Reader question `i` about the entity, answered by nobody: repeats the question's opening and
/// the entity, never a data point.
fn decoy_doc(spec: &Spec, i: usize, rng: &mut Rng) -> Doc {
    let asks = spec.asks;
    let ask = asks[i % asks.len()];
    let prefix = DECOY_PREFIXES[(i / asks.len()) % DECOY_PREFIXES.len()];
    let others: Vec<String> = (1..4)
        .map(|k| format!("{} {}?", spec.opening, asks[(i + k) % asks.len()]))
        .collect();
    Doc {
        title: format!("{prefix}{} {ask}?", spec.opening),
        blocks: vec![
            Block::P(format!(
                "{} {ask}? {} {}",
                spec.opening,
                rng.pick(REPLIES),
                pick_filler(spec, rng, 1)
            )),
            Block::P(format!(
                "{} {}",
                rng.pick(REPLIES),
                pick_filler(spec, rng, 2)
            )),
            Block::H2("Related questions".into()),
            Block::Ul(others),
        ],
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::simweb::search::{searxng_json, tokenize, SearchIndex};
    use crate::simweb::{Corpus, Question, Robots};

    fn family(c: &Corpus) -> Vec<Question> {
        c.questions()
            .into_iter()
            .filter(|q| q.follow_up.is_some())
            .collect()
    }

    /// 1-based rank of `url` among the hits for `query`.
    fn rank(c: &Corpus, index: &SearchIndex, query: &str, url: &str) -> Option<usize> {
        index
            .search(query)
            .iter()
            .position(|h| c.pages()[h.page].url == url)
            .map(|r| r + 1)
    }

    #[test]
    fn only_the_opt_in_corpus_has_the_family_and_it_only_adds() {
        let base = Corpus::generate();
        let c = Corpus::generate_with_follow_ups();
        assert!(base.questions().iter().all(|q| q.follow_up.is_none()));
        assert_eq!(c.pages()[..base.pages().len()], *base.pages());
        assert_eq!(c.topics()[..base.topics().len()], *base.topics());
        assert_eq!(c.host_info(), base.host_info());
        assert_eq!(
            c.pages().len(),
            base.pages().len() + SPECS.len() * (4 + DECOYS)
        );
        let questions = family(&c);
        assert_eq!(questions.len(), SPECS.len());
        assert_eq!(
            c.questions().len(),
            base.questions().len() + questions.len()
        );
        let json = serde_json::to_string(&questions).expect("questions serialise");
        let back: Vec<Question> = serde_json::from_str(&json).expect("and parse back");
        assert_eq!(back, questions);
    }

    #[test]
    fn questions_name_the_two_data_points_and_the_follow_up_query() {
        let c = Corpus::generate_with_follow_ups();
        for (spec, q) in SPECS.iter().zip(family(&c)) {
            let f = q.follow_up.as_ref().expect("a follow-up question");
            assert_eq!(q.query, spec.question);
            assert!(!q.disagrees, "{}", q.query);
            assert_eq!(q.answer_urls.len(), 3);
            assert_eq!(q.fetchable_answer_urls, q.answer_urls);
            assert!(!q.answer_urls.contains(&f.url));
        }
        let f = |i: usize| family(&c)[i].follow_up.clone().expect("follow-up");
        assert_eq!(f(0).query, "density velmorite along birefringence");
        assert_eq!(
            f(1).query,
            "aperture kelsholm telescope along angular resolution"
        );
        assert_eq!(
            follow_up_query("How many moons does Velmor have?", "orbit speed"),
            "moons velmor orbit speed"
        );
    }

    /// simweb's scripted LLM would search each " and "-clause of a question on its own, and a
    /// clause naming only data point 2 finds the buried page at once; ", along with" keeps the
    /// question one search while its commas still part the two data points.
    #[test]
    fn the_scripted_llm_analysis_searches_the_question_alone() {
        for spec in SPECS {
            let prompt = format!("Question: {}", spec.question);
            let analysis = crate::simweb::llm::tasks::query_analysis(&prompt);
            assert_eq!(analysis["sub_queries"], serde_json::json!([spec.question]));
            assert_eq!(
                analysis["target_data_points"],
                serde_json::json!([spec.answered, spec.wanted])
            );
        }
    }

    #[test]
    fn buried_page_ranks_below_20_for_the_question_and_top_3_for_the_follow_up() {
        let c = Corpus::generate_with_follow_ups();
        let index = SearchIndex::build(&c);
        for q in family(&c) {
            let f = q.follow_up.as_ref().expect("a follow-up question");
            let asked = rank(&c, &index, &q.query, &f.url);
            let followed = rank(&c, &index, &f.query, &f.url);
            assert!(asked.is_some_and(|r| r > 20), "{}: {asked:?}", q.query);
            assert!(
                followed.is_some_and(|r| r <= 3),
                "{}: {followed:?}",
                f.query
            );
            // As trawl sees it: not on round 1's two SearXNG pages, on the follow-up's first.
            let listed = |query: &str, pages: usize| {
                (1..=pages).any(|n| {
                    let body = searxng_json(&c, &index, query, n);
                    (body["results"].as_array().into_iter().flatten())
                        .any(|r| r["url"] == f.url.as_str())
                })
            };
            assert!(!listed(&q.query, 2) && listed(&f.query, 1), "{}", q.query);
            for url in &q.answer_urls {
                let r = rank(&c, &index, &q.query, url);
                assert!(r.is_some_and(|r| r <= 10), "{}: {url} {r:?}", q.query);
            }
        }
    }

    #[test]
    fn the_family_leaves_the_other_questions_ranked() {
        let c = Corpus::generate_with_follow_ups();
        let index = SearchIndex::build(&c);
        for q in c.questions().iter().filter(|q| q.follow_up.is_none()) {
            let top: Vec<&str> = (index.search(&q.query).iter().take(5))
                .map(|h| c.pages()[h.page].url.as_str())
                .collect();
            let good = (q.fetchable_answer_urls.iter())
                .filter(|u| top.contains(&u.as_str()))
                .count();
            assert!(good >= 2, "{}: {top:?}", q.query);
        }
    }

    #[test]
    fn pages_are_fetchable_spread_and_only_the_buried_one_names_data_point_2() {
        let base = Corpus::generate();
        let c = Corpus::generate_with_follow_ups();
        let urls: BTreeSet<&str> = c.pages().iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls.len(), c.pages().len(), "duplicate urls");
        let base_words: BTreeSet<String> = (base.pages().iter())
            .flat_map(|p| tokenize(&p.text))
            .collect();
        for (spec, q) in SPECS.iter().zip(family(&c)) {
            let f = q.follow_up.as_ref().expect("a follow-up question");
            assert!(
                !base_words.contains(&spec.key.to_lowercase()),
                "{}",
                spec.key
            );
            let pages: Vec<_> = (c.pages().iter())
                .filter(|p| match &p.kind {
                    PageKind::Answer { topic, .. }
                    | PageKind::Decoy { topic }
                    | PageKind::Buried { topic } => *topic == q.topic,
                    _ => false,
                })
                .collect();
            assert_eq!(pages.len(), 4 + DECOYS);
            let hosts: BTreeSet<&str> = pages.iter().map(|p| p.host.as_str()).collect();
            assert_eq!(hosts.len(), pages.len(), "one page per host");
            let wanted = tokenize(&f.data_point);
            for p in pages {
                assert!(p.allowed_for_trawl() && !p.path.starts_with("/private/"));
                assert_eq!(c.robots(&p.host), Some(Robots::AllowAll));
                assert!(p.text.contains(spec.key) && p.html.contains("<h1>"));
                let names = tokenize(&p.text).iter().any(|w| wanted.contains(w));
                assert_eq!(names, p.url == f.url, "{}", p.url);
            }
            let buried = c.page(&f.url).expect("the buried page exists");
            assert!(buried.text.contains(&f.value));
            for url in &q.answer_urls {
                let page = c.page(url).expect("answer page exists");
                assert!(page.text.contains(&f.answered_value), "{url}");
            }
        }
    }
}

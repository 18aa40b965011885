//! The extractive report: no LLM needed.
//!
//! Candidate sentences are the key points clean picked from each relevant source. For each
//! sub-query, sentences are scored by how much of it they cover, weighted by their source's
//! relevance. Words count by their rarity among the candidates (inverse document frequency)
//! and names in the question (capitalised words) count three times, so the name the question is
//! about outweighs "bridge" or "opened" and a sentence about a different bridge ranks low. The
//! best sentences go under the sub-query's heading (at most two per source, no near-duplicates,
//! none far below the best), each followed by `[n]`; citation numbers are given in order of
//! first use. Words are the question's language's: its stop words left out, each word by its
//! stem ([`Lang::stem`]), so a Russian sentence's "зорбия" answers the question's "зорбий".

use std::collections::BTreeMap;

use trawl_messages::{AnalysedDoc, ReportType, ReportWriter};
use trawl_text::asked::{asked, Kind};
use trawl_text::entities::{entities_in, named_in};
use trawl_text::points::markers;
use trawl_text::{coverage_of, head_nouns, names_in, terms, terms_in, unlink, Lang, MONTHS};

use trawl_text::wanted::Wanted;

use super::answerable::site_of;
use super::{lookup, Answering, Draft, Material};
use crate::context::FULL_MAX_CHARS;

struct Candidate<'a> {
    sentence: &'a str,
    doc: usize,
    score: f64,
}

/// The words of `text` that rank it: content words of `lang`, each by its stem. (For English,
/// comparing these is [`trawl_text::same_word`].)
fn stems(text: &str, lang: Lang) -> Vec<String> {
    (terms_in(text, lang).iter())
        .map(|w| lang.stem(w).into_owned())
        .collect()
}

/// Smoothed inverse document frequency of each query term over the candidate sentences.
fn idf<'a>(query: &[String], sentences: impl Iterator<Item = &'a [String]>) -> Vec<f64> {
    let mut df = vec![0usize; query.len()];
    let mut n = 0usize;
    for words in sentences {
        n += 1;
        for (i, t) in query.iter().enumerate() {
            if words.contains(t) {
                df[i] += 1;
            }
        }
    }
    df.iter()
        .map(|&d| (1.0 + (n as f64 + 1.0) / (d as f64 + 1.0)).ln())
        .collect()
}

/// Whether the shorter of `a` and `b` is mostly the other's words: the same sentence, said again.
pub(crate) fn near_duplicate(a: &str, b: &str) -> bool {
    let (ta, tb) = (terms(a), terms(b));
    let (short, long) = if ta.len() <= tb.len() {
        (&ta, &tb)
    } else {
        (&tb, &ta)
    };
    !short.is_empty() && coverage_of(short, long) >= 0.8
}

/// The question as ranking reads it, each word by its stem: its names and the nouns
/// introducing them ([`head_nouns`]), the words of its question phrase ("which hotel",
/// [`asked`]) and the kind of value asked, and the form of value that answers, as the report's
/// answerability is judged ([`Wanted`]).
struct Asks {
    wanted: Option<Wanted>,
    names: Vec<String>,
    heads: Vec<String>,
    focus: Vec<String>,
    kind: Option<Kind>,
}

impl Asks {
    fn of(question: &str, lang: Lang) -> Asks {
        let stemmed = |words: Vec<String>| -> Vec<String> {
            words.iter().map(|w| lang.stem(w).into_owned()).collect()
        };
        let a = asked(question, lang);
        // A month dates the story, and is no name of its subject (as for the question's
        // entities): "… in November 2019" does not make the page's sentences naming the
        // observatory that saw the moon about something else. (An adjective describing the
        // subject, "the Jovian moon", gives way in `write` when no source writes it.)
        let names = (names_in(question, lang).into_iter())
            .filter(|n| !MONTHS.contains(&n.as_str()))
            .collect();
        Asks {
            wanted: Wanted::of(question, lang),
            names: stemmed(names),
            heads: stemmed(head_nouns(question, lang)),
            focus: stemmed(a.focus),
            kind: a.kind,
        }
    }
}

/// How a sentence that leaves its subject unnamed ranks against one that names it.
const IMPLICIT: f64 = 0.8;

/// How a sentence stating a number of something other than what is asked ranks against one
/// stating the number asked.
const UNCOUNTED: f64 = 0.8;

/// The weight of each word of the query `q`: its rarity among the pool's sentences, three
/// times that for the question's names and the words of its question phrase ("which hotel"):
/// the name tells the subject's sentences from others', the phrase the answer from what else
/// is said of the subject.
fn weights(q: &[String], asks: &Asks, pool: &[(usize, &str, Vec<String>)]) -> Vec<f64> {
    (idf(q, pool.iter().map(|(_, _, w)| w.as_slice())).into_iter())
        .zip(q)
        .map(
            |(w, t)| match asks.names.contains(t) || asks.focus.contains(t) {
                true => 3.0 * w,
                false => w,
            },
        )
        .collect()
}

/// How far `sentence` (its `words`, on a source whose title has `title`) is about the subject
/// the question `names`: wholly when it or its title names it; `None` when it names something
/// else and not the subject ("Tharbelsaium is used in high-voltage insulators" for "How high is
/// Mount Velsor?": the rarer its word, the higher it would rank). A sentence naming nothing at
/// all speaks of its source's subject by a pronoun or a common noun ("He was convicted in
/// 1998", "the retailer's revenue rose"), as real pages mostly do: it ranks [`IMPLICIT`]. So
/// does one naming a new name when a name is what is asked ("research team head Jennifer
/// Ngo-Anh says" for "Who heads the ESA team studying hibernation?").
fn about(
    asks: &Asks,
    sentence: &str,
    words: &[String],
    title: &[String],
    lang: Lang,
) -> Option<f64> {
    let named = |words: &[String]| asks.names.iter().any(|n| words.contains(n));
    let name_asked = matches!(asks.kind, Some(Kind::Name | Kind::Place));
    if asks.names.is_empty() || named(words) || named(title) {
        Some(1.0)
    } else if name_asked || entities_in(sentence, lang).is_empty() {
        Some(IMPLICIT)
    } else {
        None
    }
}

/// Ranked candidates for one query over the pool.
fn rank<'a>(
    query: &str,
    lang: Lang,
    asks: &Asks,
    docs: &[AnalysedDoc],
    titles: &[Vec<String>],
    pool: &[(usize, &'a str, Vec<String>)],
) -> Vec<Candidate<'a>> {
    let (question_names, heads) = (&asks.names, &asks.heads);
    let sites: Vec<Vec<String>> = docs.iter().map(|d| site_of(Some(d))).collect();
    let q = stems(query, lang);
    let weights = weights(&q, asks, pool);
    let total: f64 = weights.iter().sum();
    // What is asked: each word of the query that is not a name nor the noun introducing one
    // ("pont" of "le pont de Tovmo"), with the words marking such a value ("rises" for "how
    // high").
    let asking: Vec<String> = (q.iter())
        .filter(|t| !question_names.contains(t) && !heads.contains(t))
        .flat_map(|t| {
            let marked = markers(t).into_iter().map(|m| lang.stem(&m).into_owned());
            std::iter::once(t.clone()).chain(marked)
        })
        .collect();
    let mut out: Vec<Candidate> = pool
        .iter()
        .filter_map(|(i, sentence, words)| {
            // A name its source's title holds is the sentence's too: "He was convicted in
            // 1998" on the page titled with Patrick Carlineo is about him, and ranks by what it
            // says of him, not below every sentence repeating his name.
            let covered: f64 = q
                .iter()
                .zip(&weights)
                .filter(|(t, _)| {
                    words.contains(t) || (question_names.contains(t) && titles[*i].contains(t))
                })
                .map(|(_, w)| w)
                .sum();
            // A sentence that only names the subject says nothing about what was asked (as a
            // word of it, or one marking such a value: "rises" for "how high").
            if !asking.is_empty() && !asking.iter().any(|t| words.contains(t)) {
                return None;
            }
            let about = about(asks, sentence, words, &titles[*i], lang)?;
            let share = if total > 0.0 { covered / total } else { 0.0 };
            // A sentence without a value of the form asked (an amount of money for a price, a
            // name the question does not hold for "which hotel") does not answer, however much
            // of the question it repeats.
            // Of those stating a number, one counting what is asked ("Stadia is launching with
            // 22 games" for "How many games …") states it of the thing counted; a number of
            // something else ("10.7 teraflop hardware, … play games at 4k") does not.
            let form = match &asks.wanted {
                None => 1.0,
                Some(w) if !w.stated_in(sentence, &sites[*i], lang) => 0.5,
                Some(w) if w.asks_a_number() && w.number_in(sentence, lang).is_none() => UNCOUNTED,
                Some(_) => 1.0,
            };
            let score = share * (0.5 + 0.5 * docs[*i].relevance) * form * about;
            (score > 0.0).then_some(Candidate {
                sentence,
                doc: *i,
                score,
            })
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    // Sentences far below the best answer are padding, not findings.
    let floor = out.first().map_or(0.0, |c| 0.6 * c.score);
    out.retain(|c| c.score >= floor);
    out
}

/// For each target data point, the sentence of the most relevant source that states the value
/// its analysis found, as (doc, sentence): what the question asked for, whichever sentences
/// rank best. Only the share of a source's text a writer is given is searched, which is the
/// share attribution checks claims against.
fn stated(material: &Material<'_>, answering: &Answering<'_>) -> Vec<(usize, String)> {
    // About the subject: the sentence or its source's title names one of the question's
    // entities, all of its words ("Crossing the Grimel River, the Velvelra Bridge is 3,339
    // metres long" states a length, not the Zornex Bridge's). A month or a second entity of the
    // question the sentence leaves out does not make it about something else.
    let entities = &answering.entities;
    let about = |i: usize, sentence: &str| {
        let d = &material.docs[i];
        let texts = [sentence, d.title.as_str(), d.source.title.as_str()];
        entities.is_empty() || named_in(entities, &texts, material.lang).contains(&true)
    };
    let mut out: Vec<(usize, String)> = Vec::new();
    for point in material.data_points {
        let found = (material.docs.iter().enumerate())
            .filter(|(_, d)| answering.holds(d))
            .find_map(|(i, d)| {
                let value = d.extracted_data.get(point)?.as_deref()?;
                let read: String = d.markdown.chars().take(FULL_MAX_CHARS).collect();
                let sentence = (d.key_points.iter().cloned())
                    .chain(trawl_text::sentences(&read))
                    .find(|s| s.contains(value))?;
                about(i, &sentence).then_some((i, sentence))
            });
        if let Some(found) = found.filter(|f| !out.contains(f)) {
            out.push(found);
        }
    }
    out
}

/// The sentences chosen for one section: the section's index and its candidates in order.
type Section<'c> = (usize, Vec<&'c Candidate<'c>>);

/// The extractive draft of `material` from the sources it may cite, `max_sentences` long at most.
pub fn write(material: &Material<'_>, answering: &Answering<'_>, max_sentences: usize) -> Draft {
    let Material {
        question,
        sub_queries,
        docs,
        shape,
        lang,
        ..
    } = *material;
    // An answer is a few sentences on the question itself; a detailed report twice the
    // sentences, three a source.
    let (max_sentences, per_source, sub_queries) = match shape {
        ReportType::Answer => (max_sentences.min(3), 2, &[][..]),
        ReportType::Brief => (max_sentences, 2, sub_queries),
        ReportType::Detailed => (2 * max_sentences, 3, sub_queries),
    };
    let pool: Vec<(usize, &str, Vec<String>)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| answering.holds(d))
        .flat_map(|(i, d)| (d.key_points.iter()).map(move |s| (i, s.as_str(), stems(s, lang))))
        .collect();
    // Each source's title words, for telling a sentence about the subject from one that is not.
    let titles: Vec<Vec<String>> = (docs.iter())
        .map(|d| stems(&format!("{} {}", d.title, d.source.title), lang))
        .collect();
    let parts = parts(question);
    let sections = sections(question, &parts, sub_queries);
    let per_section = (max_sentences / sections.len()).max(2);

    let gave_way: Vec<String> = (answering.elsewhere.gave_way.iter())
        .flat_map(|w| terms(w))
        .map(|w| lang.stem(&w).into_owned())
        .collect();
    let asks_of = |text: &str| {
        let mut asks = Asks::of(text, lang);
        asks.names.retain(|n| !gave_way.contains(n));
        asks
    };
    let asks = asks_of(question);
    let stated_sentences = stated(material, answering);
    let stated: Vec<Candidate> = (stated_sentences.iter())
        .map(|(doc, sentence)| Candidate {
            sentence,
            doc: *doc,
            score: 1.0,
        })
        .collect();
    // The best source's lookup, where the question's form asked for one, leads the answer; a
    // sentence it already says is not said again below it.
    let lead = (docs.iter().enumerate())
        .filter(|(_, d)| answering.holds(d))
        .find_map(|(i, d)| Some((i, lookup::answer_lead(d, 1)?)));
    // A part of the question (the first sections, [`sections`]) is ranked by what it asks
    // and names; a sub-query by the question's.
    let parts = if parts.len() > 1 { parts.len() } else { 0 };
    let ranked: Vec<Vec<Candidate>> = (sections.iter().enumerate())
        .map(|(i, s)| match i < parts {
            true => rank(s, lang, &asks_of(s), docs, &titles, &pool),
            false => rank(s, lang, &asks, docs, &titles, &pool),
        })
        .collect();
    let lead_sentence = lead.as_ref().map(|(_, l)| l.as_str());
    let chosen = pick(
        &ranked,
        &stated,
        lead_sentence,
        (per_section, per_source),
        parts,
    );
    let (number, cited) = number_sources(docs, lead.as_ref().map(|(doc, _)| *doc), &chosen);
    Draft {
        body: body(lead_sentence, &chosen, &sections, &number),
        cited,
        removed: 0,
        writer: ReportWriter::Extractive,
    }
}

/// One section per part of a question asking two things (its `parts`, [`parts`]), first,
/// then one per distinct sub-query; the question itself when there are neither.
fn sections<'a>(question: &'a str, parts: &[&'a str], sub_queries: &'a [String]) -> Vec<&'a str> {
    let mut sections: Vec<&str> = match parts.len() > 1 {
        true => parts.to_vec(),
        false => Vec::new(),
    };
    // A sub-query that is the question itself says again what its parts say.
    let whole = |s: &str| parts.len() > 1 && s.trim().eq_ignore_ascii_case(question.trim());
    sections.extend(
        (sub_queries.iter().map(String::as_str)).filter(|s| !s.trim().is_empty() && !whole(s)),
    );
    if sections.is_empty() {
        sections.push(question);
    }
    sections
}

/// Words opening the second question of "How many games did Stadia launch with, and in how
/// many countries did its editions launch?"
const QUESTION_WORDS: &[&str] = &[
    "how", "what", "which", "who", "whom", "whose", "when", "where", "why",
];

/// The questions `question` asks, split where ", and" or ";" opens another one with its
/// question word (after a preposition, "in how many countries"): each part's answer is its
/// own sentence, and ranking the whole question finds the first part's only.
fn parts(question: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut joins: Vec<(usize, &str)> = (question.match_indices(", and "))
        .chain(question.match_indices("; "))
        .collect();
    joins.sort_unstable();
    for (at, sep) in joins {
        let next: Vec<String> = (question[at + sep.len()..].split_whitespace())
            .take(2)
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .collect();
        let asks = |w: Option<&String>| w.is_some_and(|w| QUESTION_WORDS.contains(&w.as_str()));
        let preposition = next.first().is_some_and(|w| {
            matches!(
                w.as_str(),
                "in" | "at" | "on" | "for" | "by" | "from" | "to" | "and"
            )
        });
        if at > start && (asks(next.first()) || (preposition && asks(next.get(1)))) {
            out.push(question[start..at].trim());
            start = at + sep.len();
        }
    }
    out.push(question[start..].trim());
    out
}

/// The sentences of each section, from its `ranked` candidates: up to `per_section` of them,
/// at most `per_source` from one source over the whole report, none a near-duplicate of one
/// already said (the `lead` included). The first `parts` sections, when there are two or more,
/// are the questions the question asks: each gets its best sentence, whichever source said the
/// others.
fn pick<'c>(
    ranked: &'c [Vec<Candidate<'c>>],
    stated: &'c [Candidate<'c>],
    lead: Option<&'c str>,
    (per_section, per_source): (usize, usize),
    parts: usize,
) -> Vec<Section<'c>> {
    let mut chosen: Vec<Section> = Vec::new();
    let mut used_sentences: Vec<&str> = lead.into_iter().collect();
    let mut per_doc: BTreeMap<usize, usize> = BTreeMap::new();
    for (s, candidates) in ranked.iter().enumerate() {
        let mut picked: Vec<&Candidate> = Vec::new();
        // The sentences stating the data points open the first section, on top of its share.
        if s == 0 {
            for c in stated {
                if used_sentences.iter().any(|o| near_duplicate(o, c.sentence)) {
                    continue;
                }
                *per_doc.entry(c.doc).or_default() += 1;
                used_sentences.push(c.sentence);
                picked.push(c);
            }
        }
        let quota = picked.len() + per_section;
        for c in candidates {
            if picked.len() >= quota {
                break;
            }
            let used = per_doc.entry(c.doc).or_default();
            let full = *used >= per_source && !(s < parts && picked.is_empty());
            if full || used_sentences.iter().any(|o| near_duplicate(o, c.sentence)) {
                continue;
            }
            *used += 1;
            used_sentences.push(c.sentence);
            picked.push(c);
        }
        chosen.push((s, picked));
    }
    chosen
}

/// Citation numbers by source, given in order of first use (the lead's source first), and the
/// cited sources' indexes in that order.
fn number_sources(
    docs: &[AnalysedDoc],
    lead: Option<usize>,
    chosen: &[Section],
) -> (BTreeMap<usize, u32>, Vec<u32>) {
    let mut number: BTreeMap<usize, u32> = BTreeMap::new();
    let mut cited = Vec::new();
    if let Some(doc) = lead {
        number.insert(doc, 1);
        cited.push(docs[doc].source.idx);
    }
    for c in chosen.iter().flat_map(|(_, p)| p.iter()) {
        number.entry(c.doc).or_insert_with(|| {
            cited.push(docs[c.doc].source.idx);
            cited.len() as u32
        });
    }
    (number, cited)
}

/// The longest section heading, in characters.
const HEADING_CHARS: usize = 90;

/// The report's text: the lead under "Answer", then each section's sentences with their
/// citation numbers.
fn body(
    lead: Option<&str>,
    chosen: &[Section],
    sections: &[&str],
    number: &BTreeMap<usize, u32>,
) -> String {
    let mut body = String::new();
    // Only sources are links: a link inside a quoted sentence is kept as its text.
    if let Some(lead) = lead {
        body.push_str(&format!("## Answer\n\n{}\n\n", unlink(lead)));
    }
    for (s, picked) in chosen {
        if picked.is_empty() {
            continue;
        }
        let heading = if sections.len() == 1 {
            "Answer".to_owned()
        } else {
            // A part of the question ("in how many countries …") or a sub-query heads its
            // section as a heading does, capitalised, and a long one ends at a word.
            let mut chars = sections[*s].chars();
            let heading: String = (chars.next().into_iter().flat_map(char::to_uppercase))
                .chain(chars)
                .collect();
            match heading.char_indices().nth(HEADING_CHARS) {
                None => heading,
                Some((end, _)) => {
                    let cut = heading[..end].rfind(' ').unwrap_or(end);
                    format!("{} …", heading[..cut].trim_end_matches([',', ';', ':']))
                }
            }
        };
        if !(lead.is_some() && heading == "Answer") {
            body.push_str(&format!("## {heading}\n\n"));
        }
        let lines: Vec<String> = picked
            .iter()
            .map(|c| format!("{} [{}]", unlink(c.sentence), number[&c.doc]))
            .collect();
        body.push_str(&lines.join(" "));
        body.push_str("\n\n");
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conflicts::Conflict;
    use crate::report::testing::doc;
    use crate::report::{Gaps, Report};

    /// The extractive report, attributed and concluded as the stage writes it.
    fn write(
        question: &str,
        sub_queries: &[String],
        docs: &[AnalysedDoc],
        conflicts: &[Conflict],
        gaps: &Gaps,
        sentences: usize,
    ) -> Report {
        material(
            question,
            sub_queries,
            docs,
            conflicts,
            gaps,
            ReportType::Brief,
        )
        .extractive(sentences)
    }

    fn material<'a>(
        question: &'a str,
        sub_queries: &'a [String],
        docs: &'a [AnalysedDoc],
        conflicts: &'a [Conflict],
        gaps: &'a Gaps,
        shape: ReportType,
    ) -> Material<'a> {
        Material {
            findings: None,
            question,
            sub_queries,
            data_points: &[],
            docs,
            conflicts,
            gaps,
            unverified: trawl_config::Unverified::Drop,
            shape,
            lang: Lang::EN,
        }
    }

    /// Real pages say much of a question's subject besides the answer: the sentence holding
    /// what the question phrase asks for (a hotel's name, a year) answers, even where it names
    /// the subject only by "he" on a page titled with it.
    #[test]
    fn the_sentence_stating_what_is_asked_answers_over_those_repeating_the_question() {
        let answer = |question: &str, title: &str, points: &[&str]| {
            let mut page = doc(0, true, points);
            page.title = title.into();
            let gaps = Gaps::default();
            let docs = [page];
            let m = material(question, &[], &docs, &[], &gaps, ReportType::Answer);
            m.extractive(6).markdown
        };
        // As wfaa.com and ctvnews.ca tell it.
        let r = answer(
            "In which hotel was the kidnapped Fort Worth girl found?",
            "Video shows rescue of kidnapped Fort Worth girl",
            &[
                "A video showing the moment a kidnapped 8-year-old Fort Worth girl was rescued by police was released Monday.",
                "Police released video showing the rescue of an 8-year-old Fort Worth girl who was kidnapped in broad daylight.",
                "Later that evening, he admitted that he took the child to Forest Hill's WoodSpring Suites hotel.",
            ],
        );
        assert!(r.contains("WoodSpring Suites hotel"), "{r}");
        let r = answer(
            "In what year was Patrick Carlineo convicted of criminal mischief?",
            "Patrick Carlineo pleads guilty to threatening a congresswoman",
            &[
                "Patrick Carlineo Jr., 55, could face up to 10 years in prison after pleading guilty.",
                "Carlineo faces a maximum of 10 years in prison and a fine of $250,000.",
                "He was convicted of criminal mischief in 1998 and was barred from possessing a firearm.",
            ],
        );
        assert!(r.contains("in 1998"), "{r}");
    }

    /// Only sources are links: Barron's writes its peer as a link to a quote page, which the
    /// report keeps as text. A passage the lookup leads with is not said again below it.
    #[test]
    fn a_link_in_a_quoted_sentence_is_text_and_the_lead_is_said_once() {
        let passage = "The results look OK, but the stock was down 5% in recent trading.";
        let mut page = doc(
            0,
            true,
            &[
                passage,
                "Still, the stock has slid, and peer [Lowe’s](https://www.barrons.com/quote/LOW) \
                 stock is off too, down 1.8%.",
            ],
        );
        page.title = "Home Depot stock is falling after earnings".into();
        page.lookup = Some(trawl_messages::Lookup::Passage {
            text: passage.into(),
        });
        let gaps = Gaps::default();
        let docs = [page];
        let question = "By what percentage was Home Depot stock down in trading?";
        let r = material(question, &[], &docs, &[], &gaps, ReportType::Answer).extractive(6);
        let body = r.markdown.split("## Sources").next().unwrap();
        assert!(body.contains("peer Lowe’s stock"), "{}", r.markdown);
        assert!(!body.contains("barrons.com"), "{}", r.markdown);
        assert_eq!(
            body.matches("down 5% in recent trading").count(),
            1,
            "{}",
            r.markdown
        );
    }

    #[test]
    fn every_citation_resolves_and_sources_are_numbered_without_gaps() {
        let docs = vec![
            doc(
                0,
                false,
                &["Zorbium melts at 1,284 degrees Celsius, says an irrelevant page."],
            ),
            doc(1, true, &["Nothing about the topic here at all, really."]),
            doc(
                2,
                true,
                &[
                    "Zorbium melts at 1,284 degrees Celsius.",
                    "Zorbium was first isolated in 1931.",
                ],
            ),
            doc(3, true, &["The melting point of zorbium is 1,284 degrees."]),
        ];
        let r = write(
            "What is the melting point of zorbium?",
            &[],
            &docs,
            &[],
            &Gaps::default(),
            6,
        );
        let cited: Vec<u32> = r.citations.iter().map(|c| c.idx).collect();
        assert!(!cited.contains(&0) && !cited.contains(&1), "{cited:?}");
        assert_eq!(
            r.citations.iter().map(|c| c.n).collect::<Vec<_>>(),
            (1..=r.citations.len() as u32).collect::<Vec<_>>()
        );
        for n in 1..=r.citations.len() {
            assert!(r.markdown.contains(&format!("[{n}]")));
        }
        assert!(!r.markdown.contains(&format!("[{}]", r.citations.len() + 1)));
        assert!(!r.citations.is_empty() && r.markdown.contains("## Sources"));
        for c in &r.citations {
            assert!(
                r.markdown
                    .contains(&format!("{}. [Source {}]({})", c.n, c.idx, c.url)),
                "{}",
                r.markdown
            );
        }
    }

    #[test]
    fn the_named_subject_outweighs_common_words() {
        let docs = vec![
            doc(
                0,
                true,
                &["The Veldar Bridge is 798 metres long and opened in 1958."],
            ),
            doc(
                1,
                true,
                &[
                    "The Brimomir Bridge opened in 1903.",
                    "Brimomir is a small town.",
                ],
            ),
            doc(
                2,
                true,
                &["Another bridge, the Oskar Bridge, opened in 1920 and is long."],
            ),
        ];
        let r = write(
            "How long is the Brimomir Bridge and when did it open?",
            &[],
            &docs,
            &[],
            &Gaps::default(),
            1,
        );
        assert_eq!(r.citations[0].idx, 1, "{}", r.markdown);
    }

    #[test]
    fn a_sentence_about_something_else_is_not_cited_for_a_word_of_the_question() {
        // Among many sentences naming Mount Velsor, "high" is rare, so it outweighs the name;
        // the Velsor page answers in other words ("rises", which marks a height).
        let mut velsor = vec!["Mount Velsor rises to 3213 metres above sea level.".to_owned()];
        velsor.extend((1..40).map(|i| format!("Mount Velsor was climbed by party number {i}.")));
        let velsor: Vec<&str> = velsor.iter().map(String::as_str).collect();
        let mut docs = vec![
            doc(0, true, &velsor),
            doc(
                1,
                true,
                &[
                    "Tharbelsaium is used mainly in high-voltage insulators.",
                    "Most Tharbelsaium ends up in high-voltage insulators.",
                ],
            ),
        ];
        docs[0].title = "Mount Velsor: walking the northern peak".into();
        docs[1].title = "Everything about Tharbelsaium".into();
        let r = write(
            "How high is Mount Velsor?",
            &[],
            &docs,
            &[],
            &Gaps::default(),
            4,
        );
        let cited: Vec<u32> = r.citations.iter().map(|c| c.idx).collect();
        assert_eq!(cited, [0], "{}", r.markdown);
    }

    #[test]
    fn the_number_counting_what_is_asked_outranks_the_pages_other_numbers() {
        // A real review page: the sentence with more of the question's words states other
        // numbers of the games ("10.7 teraflop", "4k", "60fps"); the answer counts them.
        let other = "Prior to launch Google promised players would be able to tap into \
                     powerful 10.7 teraflop hardware, allowing anybody to play games at 4k and \
                     60fps on high settings.";
        let counted = "Stadia is launching with 22 games (the addition of 10 extra titles was \
                       announced over the weekend).";
        let docs = vec![doc(0, true, &[other]), doc(1, true, &[counted])];
        let q = "How many games did Google's Stadia launch with?";
        let r = write(q, &[], &docs, &[], &Gaps::default(), 2);
        let at = |s: &str| r.markdown.find(s).unwrap_or(usize::MAX);
        assert!(at("22 games") < at("teraflop"), "{}", r.markdown);
    }

    #[test]
    fn each_question_a_question_asks_is_answered() {
        let q = "How many games did Google's Stadia launch with, and in how many countries did \
                 its Founder's and Premiere Editions launch?";
        assert_eq!(
            parts(q),
            [
                "How many games did Google's Stadia launch with",
                "in how many countries did its Founder's and Premiere Editions launch?"
            ]
        );
        assert_eq!(parts("Who founded it, and when?").len(), 2);
        assert_eq!(parts("How did salt, and pepper, reach Europe?").len(), 1);
        assert_eq!(
            parts("Who won; when, and where was it held?"),
            ["Who won", "when", "where was it held?"]
        );
        let docs = vec![
            doc(
                0,
                true,
                &[
                    "The Google Stadia Founder's and Premiere Editions launch tomorrow in 14 \
                     countries, including the United States and Canada.",
                    "Google's Stadia Founder's Edition comes with a Chromecast Ultra.",
                ],
            ),
            doc(
                1,
                true,
                &[
                    "Stadia is launching with 22 games, after 10 extra titles were announced.",
                    "Google's Stadia Premiere Edition costs $129.",
                ],
            ),
        ];
        // Search's analysis gives the question itself as its sub-query: its parts say it.
        let r = write(q, &[q.to_owned()], &docs, &[], &Gaps::default(), 6);
        assert!(r.markdown.contains("22 games"), "{}", r.markdown);
        assert!(r.markdown.contains("14"), "{}", r.markdown);
        assert_eq!(r.markdown.matches("\n## ").count(), 3, "{}", r.markdown);
        assert!(!r
            .markdown
            .contains("## How many games did Google's Stadia launch with, and"));
        // One source answering both, and saying more of the first: the second part still
        // gets its sentence (a Houston Chronicle page gives the sales and the rate).
        let q = "How many new vehicles did Houston-area dealers sell in October 2019, and what \
                 was the average annual percentage rate on financed new vehicles that month?";
        let docs = vec![doc(
            0,
            true,
            &[
                "Houston-area dealers sold 30,154 new vehicles in October, down 10 percent.",
                "Fleet buyers took 4,402 new vehicles from Houston-area dealers in October \
                 2019, corporations and governments among them.",
                "In October 2019 Houston-area dealers sold new vehicles below last year's pace.",
                "The annual percentage rate on new financed vehicles averaged 5.7 percent in \
                 October.",
            ],
        )];
        let r = write(q, &[], &docs, &[], &Gaps::default(), 6);
        assert!(r.markdown.contains("30,154"), "{}", r.markdown);
        assert!(r.markdown.contains("5.7 percent"), "{}", r.markdown);
    }

    #[test]
    fn a_month_or_an_adjective_describing_the_subject_is_no_name_a_sentence_must_give() {
        // space.com's page on Europa never says "Jovian" nor "November": the sentence giving
        // the moon's size names the observatory that saw it, and is the answer all the same.
        let docs = vec![doc(
            0,
            true,
            &[
                "Europa ― located some 390 million miles away ― is slightly smaller than Earth's \
                 Moon.",
                "The team used the W. M. Keck Observatory in Hawaii to study the \
                 1,900-mile-wide (3,100 kilometers) Europa, a world astrobiologists regard as a \
                 best bet to host alien life.",
            ],
        )];
        let r = write(
            "How many miles across is the Jovian moon where astronomers reported detecting \
             water vapour in November 2019?",
            &[],
            &docs,
            &[],
            &Gaps::default(),
            4,
        );
        assert!(r.answerability.answerable, "{:?}", r.answerability);
        assert!(r.markdown.contains("1,900-mile-wide"), "{}", r.markdown);
        assert!(
            r.answerability.reason.contains("1,900"),
            "{:?}",
            r.answerability
        );
    }

    #[test]
    fn sentences_are_ranked_by_the_words_of_the_questions_language() {
        // The answer has the question's words in other forms; the other sentence shares a
        // word of the question as it is written, and nothing it asks about.
        let docs = vec![
            doc(0, true, &["Зорбий плавится при температуре 1234 градуса."]),
            doc(
                1,
                true,
                &["Какова роль металлов в промышленности региона, неизвестно."],
            ),
        ];
        let gaps = Gaps::default();
        let question = "Какова температура плавления зорбия?";
        let report = |lang: Lang| {
            Material {
                findings: None,
                lang,
                ..material(question, &[], &docs, &[], &gaps, ReportType::Answer)
            }
            .extractive(6)
        };
        let r = report(Lang::from_tag("ru").unwrap());
        assert!(
            r.markdown.contains("при температуре 1234 градуса"),
            "{}",
            r.markdown
        );
        assert!(!r.markdown.contains("промышленности"), "{}", r.markdown);
        // Read as English, the answer's words are all different from the question's.
        let r = report(Lang::EN);
        assert!(
            !r.markdown.contains("при температуре 1234"),
            "{}",
            r.markdown
        );
    }

    /// "pont" of "le pont de Tovmo" says what Tovmo is, as English's capital "Bridge" does: a
    /// sentence naming the bridge says nothing asked about it by that word alone.
    #[test]
    fn the_noun_introducing_the_subject_is_not_what_is_asked() {
        let docs = vec![
            doc(0, true, &["Le pont de Tovmo mesure 798 mètres de longueur."]),
            doc(
                1,
                true,
                &["Les automobilistes sont invités à anticiper leurs trajets sur le pont de Tovmo."],
            ),
        ];
        let gaps = Gaps::default();
        let r = Material {
            findings: None,
            lang: Lang::from_tag("fr").unwrap(),
            ..material(
                "Quelle est la longueur du pont de Tovmo ?",
                &[],
                &docs,
                &[],
                &gaps,
                ReportType::Answer,
            )
        }
        .extractive(6);
        let cited: Vec<u32> = r.citations.iter().map(|c| c.idx).collect();
        assert_eq!(cited, [0], "{}", r.markdown);
    }

    #[test]
    fn one_section_per_sub_query() {
        let docs = vec![
            doc(0, true, &["Zorbium melts at 1,284 degrees Celsius."]),
            doc(
                1,
                true,
                &["Zorbium was first isolated by Dr. Anika Strand in 1931."],
            ),
        ];
        let q = "What is the melting point of Zorbium and who isolated it?";
        let subs = vec![
            "zorbium melting point".to_string(),
            "who isolated zorbium".to_string(),
        ];
        let r = write(q, &subs, &docs, &[], &Gaps::default(), 6);
        assert!(
            r.markdown.contains("## Zorbium melting point")
                && r.markdown.contains("## Who isolated zorbium"),
            "{}",
            r.markdown
        );
        // A long sub-query heads its section cut at a word, not inside one.
        let long = "who isolated zorbium first, in which laboratory, in what year, and with \
                    which method of fractional crystallisation"
            .to_string();
        let subs = vec![subs[0].clone(), long];
        let r = write(q, &subs, &docs, &[], &Gaps::default(), 6);
        assert!(
            r.markdown.contains("## Who isolated zorbium first, in which laboratory, in what year, and with which method of …\n"),
            "{}",
            r.markdown
        );
    }

    #[test]
    fn an_answer_is_a_few_sentences_on_the_question_and_a_detailed_report_more() {
        let points: Vec<String> = (0..8)
            .map(|i| {
                format!(
                    "Zorbium melts at {} degrees Celsius in test number {i}.",
                    1284 + i
                )
            })
            .collect();
        let docs: Vec<AnalysedDoc> = (0..4)
            .map(|i| {
                let p: Vec<&str> = points[2 * i..2 * i + 2]
                    .iter()
                    .map(String::as_str)
                    .collect();
                doc(i as u32, true, &p)
            })
            .collect();
        let subs = vec![
            "zorbium melting point".to_string(),
            "zorbium melts".to_string(),
        ];
        let question = "What is the melting point of zorbium?";
        let gaps = Gaps::default();
        let count = |r: &Report| r.claims.len();
        let shaped = |shape| material(question, &subs, &docs, &[], &gaps, shape).extractive(6);
        let (answer, brief) = (shaped(ReportType::Answer), shaped(ReportType::Brief));
        let detailed = shaped(ReportType::Detailed);
        assert!(
            count(&answer) <= 3 && answer.markdown.contains("## Answer"),
            "{}",
            answer.markdown
        );
        assert!(count(&brief) > count(&answer), "{}", brief.markdown);
        assert!(count(&detailed) > count(&brief), "{}", detailed.markdown);
    }

    #[test]
    fn a_lookup_leads_the_answer_and_is_attributed_like_any_claim() {
        use trawl_messages::{Lookup, Table};
        let stated = "Zorbium has 14 known isotopes, more than any other element.";
        let mut counted = doc(0, true, &["Zorbium isotopes are listed here."]);
        counted.markdown = "- Zorbium-101\n- Zorbium-102\n- Zorbium-103".into();
        counted.lookup = Some(Lookup::Count {
            subject: "isotopes".into(),
            count: 5,
            method: "counted_list".into(),
            evidence: vec![
                "Zorbium-101".into(),
                "Zorbium-102".into(),
                "Zorbium-103".into(),
            ],
        });
        let mut table = doc(1, true, &["Zorbium isotope half-lives are tabulated."]);
        table.markdown = "| Isotope | Half-life |\n|---|---|\n| Zorbium-101 | 4 days |".into();
        table.tables = vec![Table {
            headers: vec!["Isotope".into(), "Half-life".into()],
            rows: vec![vec!["Zorbium-101".into(), "4 days".into()]],
        }];
        table.lookup = Some(Lookup::Table { index: 0 });
        let mut said = doc(2, true, &[stated]);
        said.lookup = Some(Lookup::Count {
            subject: "isotopes".into(),
            count: 14,
            method: "stated".into(),
            evidence: vec![stated.into()],
        });
        let question = "How many isotopes does zorbium have?";
        let gaps = Gaps::default();
        let lead = |docs: &[AnalysedDoc]| {
            let r = write(question, &[], docs, &[], &gaps, 6);
            let answer = r.markdown.split("## Answer\n\n").nth(1).unwrap().to_owned();
            (r, answer)
        };

        // A stated count is the source's own sentence, cited.
        let (r, answer) = lead(std::slice::from_ref(&said));
        assert!(
            answer.starts_with(&format!("{} [1]", stated.trim_end_matches('.'))),
            "{answer}"
        );
        assert_eq!(r.citations[0].idx, 2);
        // A counted one shows its count above the items it counted, each attributed.
        let (r, answer) = lead(std::slice::from_ref(&counted));
        assert!(
            answer.starts_with("### 5 isotopes, counted (the first 3)\n\n- Zorbium-101 [1]"),
            "{answer}"
        );
        assert!(
            r.claims.iter().any(|c| c.text == "Zorbium-103"),
            "{:?}",
            r.claims
        );
        // A table keeps its header and its rows, which are claims of their own.
        let (r, answer) = lead(&[table, said]);
        assert!(
            answer.starts_with(
                "| Isotope | Half-life |\n| --- | --- |\n| Zorbium-101 | 4 days [1] |"
            ),
            "{answer}"
        );
        assert!(r
            .claims
            .iter()
            .any(|c| c.text.contains("4 days") && !c.sources.is_empty()));
    }

    /// The extractive answer to `question` with `points` as its data points.
    fn answer_stating(question: &str, docs: &[AnalysedDoc], points: &[String]) -> Report {
        let gaps = Gaps::default();
        Material {
            findings: None,
            data_points: points,
            ..material(question, &[], docs, &[], &gaps, ReportType::Answer)
        }
        .extractive(6)
    }

    /// Real pages speak of their subject by a pronoun or a common noun, and a value the
    /// question holds is no answer (the bench's real-page set: Carlineo's conviction, the July
    /// 25 call).
    #[test]
    fn the_answer_may_leave_its_subject_unnamed_but_never_names_only_the_questions_values() {
        let answer = |question: &str, points: &[&str]| {
            let mut d = doc(0, true, points);
            d.title = "Man who threatened congresswoman pleads guilty".into();
            let r = answer_stating(question, &[d], &[]);
            r.markdown.split("## Answer\n\n").nth(1).unwrap().to_owned()
        };
        let first = answer(
            "In what year was Patrick Carlineo convicted of criminal mischief?",
            &[
                "Patrick Carlineo was charged by federal prosecutors in Buffalo in April.",
                "He was convicted of criminal mischief in 1998 and was barred from owning a gun.",
            ],
        );
        assert!(
            first.starts_with("He was convicted of criminal mischief in 1998"),
            "{first}"
        );
        assert!(!first.contains("Buffalo"), "{first}");
        // A "who" answer names someone the question does not: on a page about the subject it
        // answers, though no sentence picked from the page names the subject.
        let mut d = doc(
            0,
            true,
            &["Team head Jennifer Ngo-Anh says human hibernation is possible."],
        );
        d.title = "Snooze cruise: a study of hibernating astronauts".into();
        d.markdown = format!("The European Space Agency's study. {}", d.key_points[0]);
        let q = "Who heads the hibernation team at the European Space Agency?";
        let r = answer_stating(q, &[d], &[]);
        assert!(
            r.markdown.contains("Team head Jennifer Ngo-Anh says"),
            "{}",
            r.markdown
        );
        let first = answer(
            "When was the transcript of Trump's July 25 call with Zelensky released?",
            &[
                "Morrison listened in on President Trump's July 25 call with President Zelensky.",
                "Trump said the transcript of that call was released on September 25.",
            ],
        );
        assert!(first.starts_with("Trump said the transcript"), "{first}");
    }

    #[test]
    fn a_data_points_value_on_another_subjects_page_does_not_lead() {
        // The more relevant page states a length, of another bridge.
        let mut other = doc(
            0,
            true,
            &["Crossing the Ashmo River, the Veldar Bridge is 798 metres long from end to end."],
        );
        other.title = "Everything you wanted to know about the Veldar Bridge".into();
        other.relevance = 0.9;
        other
            .extracted_data
            .insert("long".into(), Some("798 metres".into()));
        let mut asked = doc(1, true, &["The Briosk Bridge is 1672 metres long."]);
        asked.title = "The Briosk Bridge: a century of crossings".into();
        asked
            .extracted_data
            .insert("long".into(), Some("1672 metres".into()));
        let r = answer_stating(
            "How long is the Briosk Bridge?",
            &[other, asked],
            &["long".into()],
        );
        let answer = r.markdown.split("## Answer\n\n").nth(1).unwrap();
        assert!(
            answer.starts_with("The Briosk Bridge is 1672 metres long [1]."),
            "{}",
            r.markdown
        );
    }

    #[test]
    fn the_sentence_stating_each_data_point_is_in_the_answer() {
        let stated = "Zorbium has a density of 7.2 g/cm3 in its pure form.";
        let mut d = doc(
            0,
            true,
            &["Zorbium melts at 1234 C, a melting point far above that of tin."],
        );
        d.markdown = format!("Zorbium is a metal.\n\n{stated} It is rare.");
        d.extracted_data
            .insert("density".into(), Some("7.2 g/cm3".into()));
        let r = answer_stating(
            "What is the melting point of zorbium and what is its density?",
            std::slice::from_ref(&d),
            &["density".into()],
        );
        let answer = r.markdown.split("## Answer\n\n").nth(1).unwrap();
        assert!(
            answer.starts_with("Zorbium has a density of 7.2 g/cm3 in its pure form [1]."),
            "{}",
            r.markdown
        );
        assert!(
            r.markdown.contains("Zorbium melts at 1234 C"),
            "{}",
            r.markdown
        );
    }

    #[test]
    fn says_so_when_nothing_answers() {
        let mut gaps = Gaps::default();
        gaps.outcomes.insert("failed".into(), 2);
        gaps.missing.push("http://late.test/".into());
        let r = write("What is zorbium?", &[], &[], &[], &gaps, 6);
        assert!(r.citations.is_empty());
        assert!(r.markdown.contains("No source could be read"));
        assert!(r.markdown.contains("2 failed") && r.markdown.contains("before 1 source(s)"));
        // Only sources are links: a URL that was never read is not in the report.
        assert!(!r.markdown.contains("http://late.test/"), "{}", r.markdown);
    }

    #[test]
    fn abstains_when_what_was_read_does_not_answer() {
        let docs = vec![
            doc(
                0,
                false,
                &["The harbour festival draws large crowds every summer."],
            ),
            doc(1, true, &["Nothing about the topic here at all, really."]),
        ];
        let r = write(
            "What is the melting point of zorbium?",
            &[],
            &docs,
            &[],
            &Gaps::default(),
            6,
        );
        assert!(
            r.citations.is_empty() && r.claims.is_empty(),
            "{}",
            r.markdown
        );
        assert!(
            r.markdown
                .contains("None of the 2 sources this job read answers this question")
                && r.markdown.contains("## What was read")
                && r.markdown
                    .contains("Source 0 (relevance 0.80): judged not relevant"),
            "{}",
            r.markdown
        );
        assert!(!r.markdown.contains("http"), "{}", r.markdown);
    }

    #[test]
    fn an_abstaining_report_does_not_deny_the_fields_it_found() {
        let docs = vec![doc(
            0,
            true,
            &["The harbour of Zorbia was built by Ada Marsh in the spring."],
        )];
        let schema =
            serde_json::json!({"type": "object", "properties": {"builder": {"type": "string"}}});
        let fields = trawl_messages::Fields::parse(schema).unwrap();
        let findings = crate::answer::Findings {
            fields: vec![(
                fields.fields[0].clone(),
                crate::answer::Finding {
                    groups: vec![crate::answer::Group {
                        value: serde_json::json!("Ada Marsh"),
                        idxs: vec![0],
                        quote: "The harbour of Zorbia was built by Ada Marsh in the spring.".into(),
                        as_of: None,
                    }],
                },
            )],
            by: "extractive",
            notes: Vec::new(),
        };
        let question = "What is the melting point of zorbium?";
        let gaps = Gaps::default();
        let mut m = material(question, &[], &docs, &[], &gaps, ReportType::Brief);
        m.findings = Some(&findings);
        let r = m.extractive(6);
        assert!(!r.answerability.answerable, "{}", r.markdown);
        assert!(r.markdown.contains("| Ada Marsh"), "{}", r.markdown);
        assert!(
            r.markdown
                .contains("so this report's prose gives no answer; each value in the table")
                && !r.markdown.contains("this report gives no answer"),
            "{}",
            r.markdown
        );
        // Without fields, the report says it gives no answer.
        let r = write(question, &[], &docs, &[], &gaps, 6);
        assert!(
            r.markdown.contains("so this report gives no answer."),
            "{}",
            r.markdown
        );
    }

    #[test]
    fn abstains_when_no_source_names_what_the_question_is_about() {
        // On the topic (melting points) and relevant, but about other metals: quoting them
        // would answer a question about Voquilix with another element's value.
        let docs = vec![
            doc(
                0,
                true,
                &["The melting point of Neoskium is 552 degrees Celsius."],
            ),
            doc(1, true, &["Brimium melts at 902 degrees Celsius."]),
        ];
        let q = "What is the melting point of Voquilix?";
        let r = write(q, &[], &docs, &[], &Gaps::default(), 6);
        assert!(
            r.citations.is_empty() && r.claims.is_empty(),
            "{}",
            r.markdown
        );
        assert!(
            r.markdown
                .contains("None of the 2 sources this job read names Voquilix")
                && r.markdown
                    .contains("on the topic, but it does not name Voquilix")
                && !r.markdown.contains("552"),
            "{}",
            r.markdown
        );
        // Named by one source: the sources answer, and the one naming it is cited.
        let mut named = docs.clone();
        named.push(doc(2, true, &["Voquilix melts at 1,310 degrees Celsius."]));
        let r = write(q, &[], &named, &[], &Gaps::default(), 6);
        assert!(r.markdown.contains("1,310"), "{}", r.markdown);
    }

    #[test]
    fn abstains_when_what_is_said_of_the_subject_is_not_what_is_asked() {
        // The Europa pages give the mission's launch and flybys, not its cost: quoting them
        // would answer "how much" with a year.
        let docs = vec![doc(
            0,
            true,
            &[
                "NASA's Europa Clipper mission will look at the icy moon as soon as 2023.",
                "Europa Clipper will make 45 flybys of the moon.",
            ],
        )];
        let q = "How much is NASA's Europa Clipper mission expected to cost?";
        let r = write(q, &[], &docs, &[], &Gaps::default(), 6);
        assert!(!r.answerability.answerable, "{:?}", r.answerability);
        assert!(r.citations.is_empty(), "{}", r.markdown);
        assert!(
            r.markdown.contains(
                "None of the 1 sources this job read answers this question: no statement they \
                 support gives an amount of money."
            ) && r.markdown.contains("## What was read")
                && !r.markdown.contains("2023"),
            "{}",
            r.markdown
        );
        // A page stating the cost answers, and is cited.
        let mut stated = docs.clone();
        stated.push(doc(
            1,
            true,
            &["Europa Clipper is expected to cost $4.25 billion."],
        ));
        let r = write(q, &[], &stated, &[], &Gaps::default(), 6);
        assert!(
            r.answerability.answerable && r.markdown.contains("$4.25 billion"),
            "{}",
            r.markdown
        );
        assert!(r.citations.iter().any(|c| c.idx == 1), "{}", r.markdown);
    }
}

//! Reports. Two writers draft a body:
//!
//! - [`extractive`]: no LLM needed; the best sentences per sub-query, each with its citation.
//! - [`llm`]: the LLM writes from the budgeted context; its citations are validated.
//!
//! Where the question's form asks for a count, a table or a passage, [`lookup`] puts the best
//! source's in the LLM's context and at the head of the extractive answer.
//!
//! and share one ending ([`Material::conclude`]): every claim of the body is checked against the
//! sources it may cite ([`crate::attribution`]), then come the numbered sources (exactly the
//! cited ones, numbered without gaps, every one fetched and read), the conflicts found between
//! sources, and notes on what could not be used.

use std::collections::BTreeMap;

use trawl_config::Unverified;
use trawl_messages::{AnalysedDoc, Citation, ReportType, ReportWriter, RoundRecord};
use trawl_text::entities::{entities_in, named_in, Entity};
use trawl_text::Lang;

use crate::attribution::{attribute, Attributed, Claim};
use crate::conflicts::Conflict;
use crate::context::FULL_MAX_CHARS;

pub mod answerable;
pub mod extractive;
pub mod llm;
pub mod lookup;

/// Why some selected sources are not in the report, and the follow-up rounds that looked for
/// more, for the notes section.
#[derive(Debug, Default)]
pub struct Gaps {
    /// Outcome name → count, for URLs that ended without a usable document.
    pub outcomes: BTreeMap<String, u32>,
    /// URLs that had not arrived when the deadline passed.
    pub missing: Vec<String>,
    /// The follow-up rounds the job ran.
    pub rounds: Vec<RoundRecord>,
}

/// What a report is written from: the question and its plan, the analysed sources (best
/// first), the conflicts among them, and what is missing.
#[derive(Clone, Copy)]
pub struct Material<'a> {
    pub question: &'a str,
    pub sub_queries: &'a [String],
    pub data_points: &'a [String],
    pub docs: &'a [AnalysedDoc],
    pub conflicts: &'a [Conflict],
    pub gaps: &'a Gaps,
    /// What becomes of a statement no source supports (`report.unverified`).
    pub unverified: Unverified,
    /// The report's shape (`report.type`, or the job's `report_type`).
    pub shape: ReportType,
    /// The question's language: its stop words and stems rank the extractive report's
    /// sentences.
    pub lang: Lang,
    /// The job's fields as found, when it asked for fields: the report shows them first.
    pub findings: Option<&'a crate::answer::Findings>,
}

/// What a report says when no source could be read.
const NOTHING_READ: &str = "No source could be read for this question, so there is nothing to \
report with a citation.";

/// A writer's report before attribution: its body, whose `[n]` citations name the source
/// `cited[n - 1]`.
#[derive(Clone)]
pub struct Draft {
    pub body: String,
    pub cited: Vec<u32>,
    /// Citations to sources the job did not read, removed from the text.
    pub removed: usize,
    pub writer: ReportWriter,
}

/// The sources a report may cite, and the question's entities no source names.
pub struct Answering<'a> {
    /// The relevant sources that name one of the question's entities ([`entities_in`]), in
    /// one of its forms, and those linked to one by a name they share with it (two hops: the
    /// page about WeWork's chair answers "the chair of the company that acquired Meetup" when a
    /// page naming Meetup says WeWork acquired it). When the question names something, a source
    /// naming none of it is about something else ("Die Stadt Kosamel wurde 1513 gegründet" for
    /// "Wann wurde die Stadt Fikodren gegründet?"), however many of its other words it shares.
    pub docs: Vec<&'a AnalysedDoc>,
    /// The question's entities, as it writes them, that no relevant source names (but those
    /// that gave way, [`Elsewhere::gave_way`]). When that is every one of them, the sources
    /// are about something else ("the melting point of Voquilix" read from pages about other
    /// metals) and none may be cited.
    pub unnamed: Vec<String>,
    /// The relevant sources left out for naming none of the question's entities.
    pub elsewhere: Elsewhere,
    /// The question's entities ([`entities_in`]) but those that gave way, for the writers'
    /// own checks.
    pub entities: Vec<Entity>,
}

/// How many relevant sources were left out for naming none of the question's entities, and
/// those entities as the question writes them: the report's notes say so.
#[derive(Debug, Default)]
pub struct Elsewhere {
    pub sources: usize,
    pub names: Vec<String>,
    /// Adjectives of names no source writes ("Jovian"), read as what they describe.
    pub gave_way: Vec<String>,
}

impl Answering<'_> {
    /// Whether the report may cite `doc`.
    pub fn holds(&self, doc: &AnalysedDoc) -> bool {
        self.docs.iter().any(|d| d.source.idx == doc.source.idx)
    }
}

/// What a writer reads of `doc`: its titles, key points and the share of its text a full
/// source is given. That bounds what a source costs to search: each word is stemmed, and one
/// lacking the names is read to its end (nine such of 20 KB each: 0.6 ms in English, 4.9 in
/// German, against 1.3 and 12.9 for their whole text).
fn read_of(d: &AnalysedDoc) -> Vec<&str> {
    let read = (d.markdown.char_indices().nth(FULL_MAX_CHARS))
        .map_or(d.markdown.as_str(), |(end, _)| &d.markdown[..end]);
    [d.title.as_str(), &d.source.title]
        .into_iter()
        .chain(d.key_points.iter().map(String::as_str))
        .chain([read])
        .collect()
}

/// The relevant sources of `docs` about the subject of `question` (in `lang`): what a report
/// may cite, and what follow-up rounds count as read.
pub fn answering<'a>(question: &str, lang: Lang, docs: &'a [AnalysedDoc]) -> Answering<'a> {
    let all = entities_in(question, lang);
    let relevant: Vec<(&AnalysedDoc, Vec<bool>)> = (docs.iter())
        .filter(|d| d.is_relevant)
        .map(|d| (d, named_in(&all, &read_of(d), lang)))
        .collect();
    let named_by_some = |i: usize| relevant.iter().any(|(_, holds)| holds[i]);
    // An adjective of a name that no source writes ("the Jovian moon") gives way: the pages
    // name what it describes in their own words ("Jupiter's moon Europa"). A name does not:
    // a page naming none of the question's names is about something else.
    let (kept, gave_way): (Vec<usize>, Vec<usize>) =
        (0..all.len()).partition(|&i| named_by_some(i) || !all[i].describes(question));
    let written = |i: &usize| all[*i].written.clone();
    let unnamed: Vec<String> = (kept.iter())
        .filter(|&&i| !named_by_some(i))
        .map(written)
        .collect();
    let gave_way: Vec<String> = gave_way.iter().map(written).collect();
    let entities: Vec<Entity> = kept.iter().map(|&i| all[i].clone()).collect();
    let relevant: Vec<(&AnalysedDoc, Vec<bool>)> = (relevant.iter())
        .map(|(d, holds)| (*d, kept.iter().map(|&i| holds[i]).collect()))
        .collect();
    if !entities.is_empty() && !relevant.iter().any(|(_, holds)| holds.contains(&true)) {
        return Answering {
            docs: Vec::new(),
            unnamed,
            elsewhere: Elsewhere::default(),
            entities,
        };
    }
    let (named, others): (Vec<_>, Vec<_>) =
        (relevant.into_iter()).partition(|(_, holds)| entities.is_empty() || holds.contains(&true));
    let named: Vec<&AnalysedDoc> = named.into_iter().map(|(d, _)| d).collect();
    let bridges = bridges(&named, &entities, lang);
    let (linked, others): (Vec<_>, Vec<_>) = (others.into_iter()).partition(|(d, _)| {
        let texts: Vec<&str> = [d.title.as_str(), &d.source.title]
            .into_iter()
            .chain(d.key_points.iter().map(String::as_str))
            .collect();
        named_in(&bridges, &texts, lang).contains(&true)
    });
    // In the order the sources came: best first.
    let kept = |d: &AnalysedDoc| {
        let idx = d.source.idx;
        named.iter().any(|n| n.source.idx == idx) || linked.iter().any(|(l, _)| l.source.idx == idx)
    };
    Answering {
        docs: docs.iter().filter(|d| d.is_relevant && kept(d)).collect(),
        unnamed,
        elsewhere: Elsewhere {
            sources: others.len(),
            names: entities.iter().map(|e| e.written.clone()).collect(),
            gave_way,
        },
        entities,
    }
}

/// Names that link a source to the question's subject: the entities named (past the first
/// word) in the key points of a source naming one of the question's, in a sentence that names
/// it ("Meetup, which WeWork acquired in 2017, …" links pages about WeWork to Meetup). At most
/// the [`MAX_BRIDGES`] most frequent, none sharing a word with the question's.
fn bridges(named: &[&AnalysedDoc], entities: &[Entity], lang: Lang) -> Vec<Entity> {
    let question_words: Vec<&str> = (entities.iter())
        .flat_map(|e| e.words.iter().map(String::as_str))
        .collect();
    let mut counts: Vec<(Entity, usize)> = Vec::new();
    for sentence in named.iter().flat_map(|d| &d.key_points) {
        if !named_in(entities, &[sentence], lang).contains(&true) {
            continue;
        }
        for e in entities_in(sentence, lang) {
            if e.words.iter().any(|w| question_words.contains(&w.as_str())) {
                continue;
            }
            match counts.iter_mut().find(|(c, _)| c.words == e.words) {
                Some((_, n)) => *n += 1,
                None => counts.push((e, 1)),
            }
        }
    }
    // Most frequent first; of equals, the first seen.
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    (counts.into_iter().take(MAX_BRIDGES))
        .map(|(e, _)| e)
        .collect()
}

/// How many names may link sources to the question's subject.
const MAX_BRIDGES: usize = 3;

impl<'a> Material<'a> {
    /// [`answering`] for this material.
    pub fn answering(&self) -> Answering<'a> {
        answering(self.question, self.lang, self.docs)
    }

    /// The extractive report of this material, `sentences` long at most.
    pub fn extractive(&self, sentences: usize) -> Report {
        let answering = self.answering();
        let draft = match answering.docs.is_empty() {
            true => Draft {
                body: String::new(),
                cited: Vec::new(),
                removed: 0,
                writer: ReportWriter::Extractive,
            },
            false => extractive::write(self, &answering, sentences),
        };
        self.conclude(draft, &answering.docs, &answering.elsewhere)
    }

    /// Says first that nothing read answers the question and what was missing, then what was
    /// read and why it does not answer; nothing in it is presented as the answer. When the
    /// fields table above it holds values (`fields_found`), it says that the prose gives no
    /// answer, not the report: each value there is stated by the source it cites.
    fn no_answer(&self, answerability: &answerable::Answerability, fields_found: bool) -> String {
        let unnamed = self.answering().unnamed.join(", ");
        let n = self.docs.len();
        let so = match fields_found {
            true => {
                "this report's prose gives no answer; each value in the table above is stated by \
                 the source it cites"
            }
            false => "this report gives no answer",
        };
        // The same, as a sentence of its own.
        let gives = format!("{}{}", so[..1].to_uppercase(), &so[1..]);
        let mut md = match (unnamed.is_empty(), answerability.wanted.is_empty()) {
            (false, _) => format!(
                "None of the {n} sources this job read names {unnamed}, which the question asks \
                 about, so {so}."
            ),
            (true, true) => {
                format!("None of the {n} sources this job read answers this question, so {so}.")
            }
            (true, false) => format!(
                "None of the {n} sources this job read answers this question: no statement \
                 they support gives {}. {gives}.",
                answerability.wanted
            ),
        };
        md.push_str("\n\n## What was read\n\n");
        for d in self.docs {
            let not_named = format!("on the topic, but it does not name {unnamed}");
            let why = match (d.is_relevant, unnamed.is_empty()) {
                (true, true) => "on the topic, but nothing it says answers what was asked",
                (true, false) => &not_named,
                (false, _) => "judged not relevant to the question",
            };
            let title = citation(d, 0).title;
            md.push_str(&format!(
                "- {} (relevance {:.2}): {why}\n",
                escape(&title),
                d.relevance
            ));
        }
        md.trim_end().to_owned()
    }

    /// The job's fields' answer, when it asked for fields, with their sources added to
    /// `citations` where the body does not cite them.
    fn answer(&self, citations: &mut Vec<Citation>) -> Option<trawl_messages::Answer> {
        let findings = self.findings?;
        for idx in findings.sources() {
            if !citations.iter().any(|c| c.idx == idx) {
                if let Some(d) = self.docs.iter().find(|d| d.source.idx == idx) {
                    citations.push(citation(d, citations.len() as u32 + 1));
                }
            }
        }
        Some(findings.answer(citations))
    }

    /// The sources the attributed body cites, in citation order, each document at the page
    /// its claims quote; then those a conflict names that the body does not cite (a conflict
    /// names its sources by number).
    fn citations(&self, attributed: &Attributed) -> Vec<Citation> {
        let mut citations: Vec<Citation> = (attributed.cited.iter())
            .filter_map(|idx| self.docs.iter().find(|d| d.source.idx == *idx))
            .enumerate()
            .map(|(i, d)| citation(d, i as u32 + 1))
            .collect();
        cite_pages(&mut citations, self.docs, &attributed.claims);
        if !citations.is_empty() {
            for idx in (self.conflicts.iter()).flat_map(|c| c.values.iter().flat_map(|v| &v.1)) {
                if !citations.iter().any(|c| c.idx == *idx) {
                    if let Some(d) = self.docs.iter().find(|d| d.source.idx == *idx) {
                        citations.push(citation(d, citations.len() as u32 + 1));
                    }
                }
            }
        }
        citations
    }

    /// The report of `draft`: each claim attributed to the `citable` documents (those whose
    /// text the writer was given), then the sources, conflicts and notes sections (saying what
    /// was left out as being about something `elsewhere`).
    pub fn conclude(
        &self,
        draft: Draft,
        citable: &[&AnalysedDoc],
        elsewhere: &Elsewhere,
    ) -> Report {
        let attributed = attribute(
            &draft.body,
            &draft.cited,
            citable,
            self.unverified,
            self.lang,
        );
        let mut citations = self.citations(&attributed);
        let statements =
            answerable::statements(&attributed.claims, &attributed.body, &attributed.cited);
        let answerability = answerable::judge(self.question, self.lang, &statements, citable);
        if !answerability.answerable {
            // What the sources say near the answer is not the answer: no statement of it is
            // presented as one, and nothing is cited.
            citations.clear();
        }
        let answer = self.answer(&mut citations);
        let mut md = format!("# {}\n\n", self.question.trim());
        if let (Some(f), Some(answer)) = (self.findings, &answer) {
            md.push_str(&f.table(answer));
            md.push('\n');
        }
        if self.docs.is_empty() {
            md.push_str(NOTHING_READ);
        } else if !answerability.answerable {
            let fields_found = (answer.iter().flat_map(|a| a.fields.iter()))
                .any(|(_, f)| f.status == trawl_messages::FieldStatus::Found);
            md.push_str(&self.no_answer(&answerability, fields_found));
        } else {
            md.push_str(&attributed.body);
        }
        md.push_str("\n\n");
        if answerability.answerable && !attributed.unverified.is_empty() {
            md.push_str("## Unverified\n\nNo source this job read supports these statements:\n\n");
            for claim in &attributed.unverified {
                md.push_str(&format!("- {claim}\n"));
            }
            md.push('\n');
        }
        finish(
            &mut md,
            self.docs,
            &citations,
            self.conflicts,
            self.gaps,
            draft.removed,
            elsewhere,
        );
        Report {
            markdown: md,
            citations,
            removed_citations: draft.removed,
            writer: draft.writer,
            claims: attributed.claims,
            answerability,
            answer,
        }
    }
}

pub struct Report {
    pub markdown: String,
    pub citations: Vec<Citation>,
    /// Citations the writer made to sources the job did not read, removed from the text.
    pub removed_citations: usize,
    /// Who wrote it, with the reason when the LLM path was configured but fell back.
    pub writer: ReportWriter,
    /// Every claim of the body and what attribution made of it (`claims.json`).
    pub claims: Vec<Claim>,
    /// Whether a statement of the body answers the question; when none does, the report
    /// abstains and cites nothing.
    pub answerability: answerable::Answerability,
    /// The job's fields (`answer.json`), when it asked for fields.
    pub answer: Option<trawl_messages::Answer>,
}

/// The citation entry for `doc` numbered `n`; a document with pages is cited at the page of
/// its best key point (see [`cite_pages`] for the page a report quotes).
pub fn citation(doc: &AnalysedDoc, n: u32) -> Citation {
    let mut c = Citation {
        n,
        idx: doc.source.idx,
        url: doc.final_url.clone(),
        title: if doc.title.is_empty() {
            doc.source.title.clone()
        } else {
            doc.title.clone()
        },
        relevance: doc.relevance,
        page: None,
    };
    if let Some(&page) = doc.key_point_pages.iter().find(|&&p| p > 0) {
        c.at_page(page);
    }
    c
}

/// Cites each document with pages at the page the report quotes: that of the first claim it
/// supports best — the claim's own sentence, else the sentence of its supporting passage
/// sharing most of its words (a passage may join sentences of two pages).
fn cite_pages(citations: &mut [Citation], docs: &[AnalysedDoc], claims: &[Claim]) {
    for c in citations.iter_mut() {
        let Some(doc) = docs.iter().find(|d| d.source.idx == c.idx) else {
            continue;
        };
        if doc.key_point_pages.is_empty() {
            continue;
        }
        let Some(claim) = claims.iter().find(|cl| cl.sources.first() == Some(&c.idx)) else {
            continue;
        };
        let words = trawl_text::terms(&claim.text);
        let shared = |s: &&str| {
            let t = trawl_text::terms(s);
            words.iter().filter(|w| t.contains(w)).count()
        };
        let mut said: Vec<&str> = (trawl_text::sentence_spans(&claim.passage).into_iter())
            .map(|(start, end)| claim.passage[start..end].trim())
            .collect();
        said.sort_by_key(|s| std::cmp::Reverse(shared(s)));
        let pages = trawl_text::pages::Pages::of(&doc.markdown);
        let page = (std::iter::once(claim.text.as_str()).chain(said))
            .find_map(|s| page_of(doc, pages.as_ref(), s));
        if let Some(page) = page {
            c.at_page(page);
        }
    }
}

/// The page of `doc` that `quoted` stands on: a key point's, else found in its `pages`.
fn page_of(
    doc: &AnalysedDoc,
    pages: Option<&trawl_text::pages::Pages>,
    quoted: &str,
) -> Option<u32> {
    let point = doc.key_points.iter().position(|k| k == quoted);
    (point.and_then(|i| doc.key_point_pages.get(i).copied()))
        .filter(|&p| p > 0)
        .or_else(|| pages?.page_of(quoted))
}

fn escape(title: &str) -> String {
    title.replace('[', "\\[").replace(']', "\\]")
}

/// Appends the sources, conflicts and notes sections.
pub fn finish(
    md: &mut String,
    docs: &[AnalysedDoc],
    citations: &[Citation],
    conflicts: &[Conflict],
    gaps: &Gaps,
    removed: usize,
    elsewhere: &Elsewhere,
) {
    if !citations.is_empty() {
        md.push_str("## Sources\n\n");
        for c in citations {
            md.push_str(&format!(
                "{}. [{}]({}) (relevance {:.2})\n",
                c.n,
                escape(&c.title),
                c.url,
                c.relevance
            ));
        }
        md.push('\n');
    }
    if !conflicts.is_empty() && !citations.is_empty() {
        let number: BTreeMap<u32, u32> = citations.iter().map(|c| (c.idx, c.n)).collect();
        md.push_str("## Conflicts\n\nThe sources disagree on:\n\n");
        for c in conflicts {
            let values: Vec<String> = c
                .values
                .iter()
                .map(|(value, idxs)| {
                    let by: Vec<String> = (idxs.iter())
                        .filter_map(|i| number.get(i).map(|n| format!("[{n}]")))
                        .collect();
                    format!("{value} ({})", by.join(", "))
                })
                .collect();
            md.push_str(&format!("- {}: {}\n", c.data_point, values.join(" vs ")));
        }
        md.push('\n');
    }
    let notes = notes(docs, gaps, citations.len(), removed, elsewhere);
    if !notes.is_empty() {
        md.push_str("## Notes\n\n");
        for n in notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
}

fn notes(
    docs: &[AnalysedDoc],
    gaps: &Gaps,
    cited: usize,
    removed: usize,
    elsewhere: &Elsewhere,
) -> Vec<String> {
    let mut notes = Vec::new();
    let read = docs.len();
    let passed_over = read.saturating_sub(cited + elsewhere.sources);
    if passed_over > 0 {
        notes.push(format!(
            "{passed_over} of {read} sources read were not cited (less relevant or repeating \
             others)."
        ));
    }
    if !elsewhere.gave_way.is_empty() {
        notes.push(format!(
            "No source read writes {}: the question's description was read as what it \
             describes, in the sources' words.",
            elsewhere.gave_way.join(" or ")
        ));
    }
    if elsewhere.sources > 0 {
        notes.push(format!(
            "{} of {read} sources read are on the topic but do not name {}, which the question \
             asks about, and were left out.",
            elsewhere.sources,
            elsewhere.names.join(" or ")
        ));
    }
    if removed > 0 {
        notes.push(format!(
            "{removed} citation(s) to sources this job did not read were removed."
        ));
    }
    for r in &gaps.rounds {
        notes.push(format!(
            "Follow-up round {} ({}) searched for {} and added {} source(s).",
            r.round.n,
            r.round.why.join("; "),
            (r.round.queries.iter().map(|q| format!("“{q}”")))
                .collect::<Vec<_>>()
                .join(", "),
            r.selected.len()
        ));
    }
    if !gaps.outcomes.is_empty() {
        let parts: Vec<String> = gaps
            .outcomes
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        notes.push(format!("Sources not usable: {}.", parts.join(", ")));
    }
    // Only sources are links: the ones that did not arrive are in sources.json and sources.md.
    if !gaps.missing.is_empty() {
        notes.push(format!(
            "The deadline passed before {} source(s) arrived.",
            gaps.missing.len()
        ));
    }
    notes
}

#[cfg(test)]
pub(crate) mod testing {
    use trawl_messages::{AnalysedDoc, Source, SourceKind};

    /// Source `idx`, a page at `http://s{idx}.test/`.
    pub fn source(idx: u32) -> Source {
        Source {
            idx,
            url: format!("http://s{idx}.test/"),
            title: format!("S{idx}"),
            snippet: String::new(),
            provider: "searxng".into(),
            position: idx + 1,
            score: 0.5,
            kind: SourceKind::Page,
            file_type: None,
        }
    }

    pub fn doc(idx: u32, relevant: bool, points: &[&str]) -> AnalysedDoc {
        let source = source(idx);
        AnalysedDoc {
            title: format!("Source {idx}"),
            key_points: points.iter().map(|s| s.to_string()).collect(),
            relevance: 0.8,
            is_relevant: relevant,
            bytes: 100,
            ..AnalysedDoc::new(source, points.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::doc;
    use super::*;

    fn material<'a>(
        question: &'a str,
        lang: Lang,
        docs: &'a [AnalysedDoc],
        gaps: &'a Gaps,
    ) -> Material<'a> {
        Material {
            findings: None,
            question,
            sub_queries: &[],
            data_points: &[],
            docs,
            conflicts: &[],
            gaps,
            unverified: Unverified::Drop,
            shape: ReportType::Answer,
            lang,
        }
    }

    /// The sources `question` in `lang` may cite, by index.
    fn answering(question: &str, lang: Lang, docs: &[AnalysedDoc]) -> (Vec<u32>, Vec<String>) {
        let gaps = Gaps::default();
        let a = material(question, lang, docs, &gaps).answering();
        (a.docs.iter().map(|d| d.source.idx).collect(), a.unnamed)
    }

    #[test]
    fn a_source_naming_none_of_the_question_s_names_is_not_cited() {
        let (de, ru) = (Lang::from_tag("de").unwrap(), Lang::from_tag("ru").unwrap());
        // Another town's page shares "Stadt" and "gegründet" with the question, and not the
        // town: a writer given it quotes "Die Stadt Kosamel wurde 1513 gegründet".
        let docs = [
            doc(
                0,
                true,
                &["Die Stadt Fikodren wurde im Jahr 1234 gegründet."],
            ),
            doc(
                1,
                true,
                &["Die Stadt Kosamel wurde im Jahr 1513 gegründet."],
            ),
            doc(2, false, &["Ein Wochenende in Fikodren."]),
        ];
        let q = "Wann wurde die Stadt Fikodren gegründet?";
        assert_eq!(answering(q, de, &docs), (vec![0], vec![]));
        // The notes say why the other town's page is not cited.
        let gaps = Gaps::default();
        let report = material(q, de, &docs, &gaps).extractive(6);
        assert_eq!(report.citations.len(), 1, "{}", report.markdown);
        assert!(
            report.markdown.contains(
                "- 1 of 3 sources read were not cited (less relevant or repeating others).\n\
                 - 1 of 3 sources read are on the topic but do not name Fikodren, which the \
                 question asks about, and were left out."
            ),
            "{}",
            report.markdown
        );
        // What a writer reads of a source is searched: its key points, and its text up to
        // where a full source's is cut.
        let filler = "Die Region ist für ihre Märkte bekannt. ".repeat(FULL_MAX_CHARS / 30);
        let mut late = [docs[0].clone(), doc(1, true, &[])];
        late[1].markdown = format!("{filler} Die Stadt Fikodren liegt am Meer.");
        assert_eq!(answering(q, de, &late), (vec![0], vec![]));
        late[1].key_points = vec!["Die Stadt Fikodren liegt am Meer.".into()];
        assert_eq!(answering(q, de, &late), (vec![0, 1], vec![]));
        // A name in another case is named by its stem.
        let russian = [
            doc(0, true, &["История города Фикодрена началась в 1234 году."]),
            doc(1, true, &["Город Косамел был основан в 1513 году."]),
        ];
        let q = "Когда был основан город Фикодрен?";
        assert_eq!(answering(q, ru, &russian), (vec![0], vec![]));
        // Of two things compared, a source about one of them answers.
        let en = [
            doc(0, true, &["Nomad schedules batch jobs."]),
            doc(1, true, &["Schedulers place jobs on nodes."]),
            doc(2, true, &["Kubernetes schedules pods."]),
        ];
        let q = "How does Kubernetes compare with Nomad for batch jobs?";
        assert_eq!(answering(q, Lang::EN, &en), (vec![0, 2], vec![]));
        // A question naming nothing keeps every relevant source.
        let q = "How do schedulers place batch jobs?";
        assert_eq!(answering(q, Lang::EN, &en), (vec![0, 1, 2], vec![]));
        // A name no source holds leaves none to cite, and is said as the question writes it.
        let q = "Wann wurde die Stadt Grizu gegründet?";
        assert_eq!(answering(q, de, &docs), (vec![], vec!["Grizu".into()]));
    }

    #[test]
    fn a_subject_is_found_in_the_forms_real_pages_write_it() {
        // phys.org writes "ESA's"; the question "the European Space Agency".
        let docs = [
            doc(
                0,
                true,
                &["Hibernation research within ESA's Basic Activities led to a Topical Team."],
            ),
            doc(1, true, &["Space tourism agencies sell trips."]),
        ];
        let q = "Who heads the European Space Agency team studying hibernation for astronauts?";
        assert_eq!(answering(q, Lang::EN, &docs), (vec![0], vec![]));
        // A page about Bolivia's clashes does not say "Bolivian", nor "November": the job
        // answers from the pages naming Morales, and says which name none holds.
        let docs = [doc(
            0,
            true,
            &["Three supporters of Evo Morales died at the Senkata plant; 30 were injured."],
        )];
        let q = "How many people were injured in November at the Bolivian fuel plant where \
                 three pro-Morales demonstrators died?";
        assert_eq!(
            answering(q, Lang::EN, &docs),
            (vec![0], vec!["Bolivian".into()])
        );
        // h010: no page says "Jovian"; they say "Jupiter's moon Europa". The adjective gives
        // way, the pages on the topic answer, and the notes say so. A name does not give way
        // (Grizu above).
        let docs = [doc(
            0,
            true,
            &["Keck Observatory studied the 1,900-mile-wide (3,100 kilometers) Europa."],
        )];
        let q = "How many miles across is the Jovian moon where astronomers detected water vapour?";
        assert_eq!(answering(q, Lang::EN, &docs), (vec![0], vec![]));
        let gaps = Gaps::default();
        let report = material(q, Lang::EN, &docs, &gaps).extractive(6);
        assert!(report.answerability.answerable, "{}", report.markdown);
        assert!(
            report.markdown.contains("1,900-mile-wide"),
            "{}",
            report.markdown
        );
        assert!(
            report.markdown.contains(
                "- No source read writes Jovian: the question's description was read as what \
                 it describes, in the sources' words."
            ),
            "{}",
            report.markdown
        );
    }

    #[test]
    fn a_page_linked_to_the_subject_by_another_name_answers_a_two_hop_question() {
        // The chair's page does not name Meetup; the page naming Meetup says WeWork bought it.
        let mut chair = doc(
            1,
            true,
            &["Marcelo Claure, SoftBank's operating chief, became the executive chairman."],
        );
        chair.title = "Attorney General investigating WeWork".into();
        let docs = [
            doc(
                0,
                true,
                &["In 2017, WeWork acquired Meetup for $200 million."],
            ),
            chair,
            doc(
                2,
                true,
                &["Executive chairs of companies earn more than their peers."],
            ),
        ];
        let q = "Who is the executive chair of the company that acquired Meetup for $200 million?";
        assert_eq!(answering(q, Lang::EN, &docs), (vec![0, 1], vec![]));
        // Without the page that makes the link, the chair's page is about something else.
        assert_eq!(
            answering(q, Lang::EN, &docs[1..]),
            (vec![], vec!["Meetup".into()])
        );
    }

    #[test]
    fn a_document_is_cited_at_the_page_its_claim_quotes() {
        use trawl_text::pages::marker;
        let mut d = doc(
            0,
            true,
            &["Revenue rose by a tenth.", "Staff numbered 18,420."],
        );
        d.markdown = format!(
            "{}\n\nRevenue rose by a tenth.\n\n{}\n\nThe year closed.\nStaff numbered 18,420.\n",
            marker(1),
            marker(240)
        );
        d.key_point_pages = vec![1, 0];
        // By default, the page of its best key point.
        let mut cited = vec![citation(&d, 1)];
        assert_eq!(cited[0].url, "http://s0.test/#page=1");
        // A claim whose passage joins sentences of two pages: the page of the sentence it says.
        let claim = Claim {
            text: "The staff numbered 18,420.".into(),
            verdict: crate::attribution::Verdict::Supported,
            sources: vec![0],
            dropped: vec![],
            support: 1.0,
            passage: "Revenue rose by a tenth. Staff numbered 18,420.".into(),
        };
        cite_pages(&mut cited, std::slice::from_ref(&d), &[claim]);
        assert_eq!(cited[0].url, "http://s0.test/#page=240");
        assert_eq!(cited[0].page, Some(240));
        // A document without pages is cited at its URL.
        let plain = doc(1, true, &["Staff numbered 18,420."]);
        assert_eq!(citation(&plain, 2).url, "http://s1.test/");
    }
}

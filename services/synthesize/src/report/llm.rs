//! The LLM report: the model writes from the budgeted context only, citing sources by their
//! numbered labels (`[3]`); the citations are then validated ([`crate::citations`]) so every `[n]`
//! in the report names a source the job fetched and analysed.

use trawl_llm::{ChatRequest, Llm, LlmError, Usage};
use trawl_messages::{AnalysedDoc, ReportType, ReportWriter};

use trawl_text::unlink;

use super::{Draft, Material, Report};
use crate::attribution::split_markers;
use crate::citations;
use crate::conflicts::Conflict;
use crate::context::{self, ContextSource, Level};
use crate::tokens::Tokenizer;

const SYSTEM: &str = "You write research reports from the sources you are given, and from nothing \
else. Cite every statement with the number of the source it comes from, exactly as given, for \
example [3] or [1][4]; never cite anything that is not in the sources. Where sources disagree, \
say so and cite each side. Do not add a list of sources at the end; it is added for you. Write in \
markdown, in the language of the question unless you are told otherwise.";

/// What the report is to look like, by its shape.
fn shape_instruction(shape: ReportType) -> &'static str {
    match shape {
        ReportType::Answer => " Answer the question in one short paragraph, without headings.",
        ReportType::Brief => {
            " Answer the question first, in a short paragraph; then give the details under short \
             headings, using the sources' summaries and data."
        }
        ReportType::Detailed => {
            " Answer the question first, in a short paragraph; then give a thorough account under \
             headings, covering every aspect the sources treat, with their data and figures."
        }
    }
}

/// What the LLM path produced, for the report and `job.json`.
pub struct LlmReport {
    pub report: Report,
    pub usage: Usage,
    pub context_tokens: usize,
    pub tokenizer: &'static str,
    pub levels: Vec<(u32, Level)>,
}

fn render_conflicts(conflicts: &[Conflict]) -> String {
    conflicts
        .iter()
        .map(|c| {
            let values: Vec<String> = c
                .values
                .iter()
                .map(|(v, idxs)| {
                    format!(
                        "{v} ({})",
                        idxs.iter()
                            .map(|i| format!("S{i}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect();
            format!("- {}: {}", c.data_point, values.join(" vs "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How the model writes a report: the prompt's token budget, the answer's, and the report's
/// language ("": the question's).
pub struct Style<'a> {
    pub context_tokens: usize,
    pub answer_tokens: u32,
    pub language: &'a str,
    /// How long the extractive report is: trawl's own reading, which backs the model's.
    pub sentences: usize,
}

/// A source as the prompt gives it: its best title, and its texts with links as their anchor
/// text (only sources are links).
fn context_source(d: &AnalysedDoc) -> ContextSource {
    ContextSource {
        idx: d.source.idx,
        title: if d.title.is_empty() {
            d.source.title.clone()
        } else {
            d.title.clone()
        },
        url: d.final_url.clone(),
        relevance: d.relevance,
        summary: unlink(&d.summary),
        key_points: d.key_points.iter().map(|k| unlink(k)).collect(),
        markdown: unlink(&d.markdown),
        data: (d.extracted_data.iter())
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect(),
        lookup: super::lookup::context_line(d).map(|l| unlink(&l)),
    }
}

/// The system prompt for a report of `shape` in `language` ("": the question's).
fn system_prompt(shape: ReportType, language: &str) -> String {
    let mut system = format!("{SYSTEM}{}", shape_instruction(shape));
    if !language.trim().is_empty() {
        system.push_str(&format!(" Write the report in {language}."));
    }
    system
}

/// What the user message says before the sources: the question, its aspects, the data points
/// and where the sources disagree.
fn prompt_head(
    question: &str,
    sub_queries: &[String],
    data_points: &[String],
    conflicts: &[Conflict],
) -> String {
    let mut head = format!("Question: {question}\n");
    if sub_queries.len() > 1 {
        head.push_str(&format!("Aspects to cover: {}\n", sub_queries.join("; ")));
    }
    if !data_points.is_empty() {
        head.push_str(&format!(
            "Data points to report: {}\n",
            data_points.join(", ")
        ));
    }
    if !conflicts.is_empty() {
        head.push_str(&format!(
            "The sources disagree on:\n{}\n",
            render_conflicts(conflicts)
        ));
    }
    head.push_str("Sources:\n");
    head
}

/// The sources a report may cite: those whose text the model was given, not those it saw as
/// a title and URL.
fn citable_idxs(levels: &[(u32, Level)]) -> Vec<u32> {
    (levels.iter())
        .filter(|(_, l)| matches!(l, Level::Full | Level::KeyPoints))
        .map(|(i, _)| *i)
        .collect()
}

/// Writes the report from `material` with `llm`, within `style`'s budgets.
pub async fn write(
    llm: &Llm,
    material: &Material<'_>,
    style: &Style<'_>,
) -> Result<LlmReport, LlmError> {
    let Material {
        question,
        sub_queries,
        data_points,
        docs,
        conflicts,
        ..
    } = *material;
    let (max_tokens, answer_tokens, language) =
        (style.context_tokens, style.answer_tokens, style.language);
    let tokenizer = Tokenizer::for_model(llm.model_of("report"));
    let answering = material.answering();
    let sources: Vec<ContextSource> = answering.docs.iter().map(|d| context_source(d)).collect();
    let system = system_prompt(material.shape, language);
    let head = prompt_head(question, sub_queries, data_points, conflicts);
    let mut request = ChatRequest::new("report", &system, String::new());
    // Everything but the sources counts against the budget too.
    let overhead = tokenizer.count(&request.system) + tokenizer.count(&head) + 16;
    let budget = max_tokens.saturating_sub(overhead);
    let ctx = context::build(&sources, budget, &tokenizer);
    let known = citable_idxs(&ctx.levels);
    if known.is_empty() {
        // Titles and URLs alone: the model could only answer from its own memory.
        return Err(llm.reject(
            "report",
            LlmError::Malformed("no source's text fits the context budget: nothing to cite".into()),
        ));
    }
    request.messages[0].1 = format!("{head}{}", ctx.text);
    request.max_tokens = answer_tokens;
    // Read sources and an answer that cites none of them is not a report to trust (a model
    // answering garbage, or from its own memory): the extractive report cites them.
    let response = llm
        .chat_checked(&request, |r| {
            match citations::check(&r.text, &known).cited.is_empty() {
                false => Ok(()),
                true => Err(LlmError::Malformed(format!(
                    "the report cites none of its {} sources",
                    known.len()
                ))),
            }
        })
        .await?;

    let checked = citations::check(&response.text, &known);
    let draft = Draft {
        body: without_chrome(&unlink(checked.text.trim()), question),
        cited: checked.cited,
        removed: checked.removed,
        writer: ReportWriter::Llm,
    };
    let citable: Vec<&AnalysedDoc> = (docs.iter())
        .filter(|d| known.contains(&d.source.idx))
        .collect();
    let report = material.conclude(draft.clone(), &citable, &answering.elsewhere);
    if let Some(why) = refusal(&report, known.len()) {
        return Err(llm.reject("report", why));
    }
    let report = backed(
        material,
        style.sentences,
        draft,
        citable,
        &answering.elsewhere,
        report,
    )
    .map_err(|why| llm.reject("report", why))?;
    Ok(LlmReport {
        report,
        usage: response.usage,
        context_tokens: ctx.tokens + overhead,
        tokenizer: tokenizer.name(),
        levels: ctx.levels,
    })
}

/// The model's `report` (of `draft`, from `citable` sources, `elsewhere` the sources left
/// out) backed by trawl's own reading, judged the same way (the extractive report of
/// `sentences`). When the sentences it ranks first state nothing of what is asked, the
/// model's statement that does is a neighbouring fact ("Oxy Pure was launched … in Delhi-NCR"
/// for which mall the bar is in), and the extractive report, which abstains, takes its place.
/// When they do, those the model left out are added in the sources' words: a small model often
/// misses the one sentence that answers.
fn backed<'d>(
    material: &Material<'d>,
    sentences: usize,
    mut draft: Draft,
    mut citable: Vec<&'d AnalysedDoc>,
    elsewhere: &super::Elsewhere,
    report: Report,
) -> Result<Report, LlmError> {
    let own = material.extractive(sentences);
    if !own.answerability.answerable {
        return Err(LlmError::Unanswered(format!(
            "the report's answer is not backed by the sentences the sources state it in: {}",
            own.answerability.reason
        )));
    }
    let evidence = evidence(material, &own, &report);
    if evidence.is_empty() {
        return Ok(report);
    }
    draft.body.push_str("\n\n## In the sources' words\n\n");
    for (text, idx) in evidence {
        let n = match draft.cited.iter().position(|i| *i == idx) {
            Some(at) => at + 1,
            None => {
                draft.cited.push(idx);
                draft.cited.len()
            }
        };
        if !citable.iter().any(|d| d.source.idx == idx) {
            citable.extend(material.docs.iter().find(|d| d.source.idx == idx));
        }
        draft.body.push_str(&format!("- {text} [{n}]\n"));
    }
    Ok(material.conclude(draft, &citable, elsewhere))
}

/// The statements of trawl's `own` (extractive) report that answer the question (its first,
/// when the question's form does not say what answers it) and that the model's `report` does
/// not say with a citation, as (text, source idx).
fn evidence(material: &Material<'_>, own: &Report, report: &Report) -> Vec<(String, u32)> {
    let statements = super::answerable::statements(&own.claims, "", &[]);
    let docs: Vec<&AnalysedDoc> = material.docs.iter().collect();
    // When the question's form does not say what answers it, the sentence ranked first does.
    let answering =
        super::answerable::answering(material.question, material.lang, &statements, &docs)
            .unwrap_or_else(|| statements.iter().take(1).collect());
    (answering.into_iter())
        .filter(|(text, _)| {
            !(report.claims.iter())
                .filter(|c| !c.sources.is_empty())
                .any(|c| super::extractive::near_duplicate(&c.text, text))
        })
        .take(MAX_EVIDENCE)
        .cloned()
        .collect()
}

/// How many sentences of the sources' own may be added to a model's report: the answer's
/// few, not a second report.
const MAX_EVIDENCE: usize = 3;

/// Why the model's concluded `report` (from `given` sources) is not taken: none of its
/// statements is supported by a source, or none states a value of what is asked. Either way the
/// extractive report takes over, judged the same way: it answers when a sentence read does, and
/// abstains otherwise.
fn refusal(report: &Report, given: usize) -> Option<LlmError> {
    let judged = &report.answerability;
    match (judged.statements, judged.answerable) {
        (0, _) => Some(LlmError::Malformed(format!(
            "no statement of the report is supported by the {given} sources it was given"
        ))),
        (_, false) => Some(LlmError::Unanswered(format!(
            "no statement of the report states {}",
            judged.wanted
        ))),
        (_, true) => None,
    }
}

/// Headings of the list of sources a model appends to its report.
const REFERENCE_HEADINGS: &[&str] = &[
    "references",
    "sources",
    "bibliography",
    "citations",
    "works cited",
];

/// `body` without what the report around it says already: a heading repeating the question
/// (the report opens with it), and the list of sources a model may end with ("## References",
/// "**Sources:**" and its items: the report's own list of the sources it cites follows, and the
/// model's, its links made text, would only say their names again).
fn without_chrome(body: &str, question: &str) -> String {
    let body = without_reference_list(body);
    let mut lines = body.lines();
    match lines.next() {
        Some(first)
            if first.starts_with('#')
                && super::extractive::near_duplicate(first.trim_start_matches('#'), question) =>
        {
            lines.collect::<Vec<_>>().join("\n").trim_start().to_owned()
        }
        _ => body,
    }
}

fn without_reference_list(body: &str) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let heading = |l: &str| {
        let t = (l.trim().trim_matches(['#', '*', '_', ' ', ':'])).to_lowercase();
        (l.trim_start().starts_with('#') || l.trim_start().starts_with("**"))
            && REFERENCE_HEADINGS.contains(&t.as_str())
    };
    // An item citing a source ("- The bridge is 3,339 m long [2]") is a finding, not a reference.
    let item = |l: &str| {
        let t = l.trim_start();
        t.is_empty()
            || (split_markers(t).1.is_empty()
                && (t.starts_with(['-', '*', '+']) || t.starts_with(|c: char| c.is_ascii_digit())))
    };
    match lines.iter().rposition(|l| heading(l)) {
        Some(at) if lines[at + 1..].iter().all(|l| item(l)) => {
            lines[..at].join("\n").trim_end().to_owned()
        }
        _ => body.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{without_chrome, without_reference_list};

    #[test]
    fn a_models_own_title_and_list_of_references_give_way_to_the_reports() {
        let q = "How many games did Google's Stadia launch with?";
        let body = "# How many games did Google's Stadia launch with\n\n## Key findings\n\nIt \
                    launched with 22 games [1].\n\n## References\n\n- The Hollywood Reporter.";
        assert_eq!(
            without_chrome(body, q),
            "## Key findings\n\nIt launched with 22 games [1]."
        );
        // A heading of its own is the model's to give.
        let titled = "# Stadia's launch line-up\n\nIt launched with 22 games [1].";
        assert_eq!(without_chrome(titled, q), titled);
        let body = "## Key findings\n\nIt was a sign [1].\n\n## References\n\n- Science.\n- NASA adds five companies.";
        assert_eq!(
            without_reference_list(body),
            "## Key findings\n\nIt was a sign [1]."
        );
        let bold = "It was a sign [1].\n\n**Sources:**\n1. Science";
        assert_eq!(without_reference_list(bold), "It was a sign [1].");
        // A section of prose under such a heading is the report's, and stays.
        let prose = "## Sources of the delay\n\nThe parts came late [1].";
        assert_eq!(without_reference_list(prose), prose);
        let cited = "## Sources\n\nThe survey of 2019 [1] says more.";
        assert_eq!(without_reference_list(cited), cited);
        let findings = "It was a sign [1].\n\n## Sources\n\n- The bridge is 3,339 m long [2].";
        assert_eq!(without_reference_list(findings), findings);
    }
}

//! The clean stage's handler.

use async_trait::async_trait;
use tracing::info;
use trawl_messages::{paths, AnalysedDoc, Envelope, FetchedDoc, Outcome};
use trawl_pipeline::fanin::{record_outcome, OutcomeRecord};
use trawl_pipeline::{Handled, Runtime, Stage, StageError};

use crate::analysis::analyse;
use crate::extract::extract;

/// Fewer characters of main content than this is not a source worth analysing.
const MIN_CONTENT_CHARS: usize = 80;

pub struct CleanStage;

fn is_html(content_type: &str) -> bool {
    matches!(content_type, "text/html" | "application/xhtml+xml") || content_type.is_empty()
}

/// Cuts `text` to at most `max` characters at a line break, never inside a character.
fn cap(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let cut = text[..cut].rfind('\n').unwrap_or(cut);
        text.truncate(cut);
    }
    text
}

#[async_trait]
impl Stage for CleanStage {
    type Input = FetchedDoc;

    async fn handle(&self, rt: &Runtime, msg: Envelope<FetchedDoc>) -> Result<Handled, StageError> {
        let doc = &msg.body;
        let (title, markdown) = if is_html(&doc.content_type) {
            // Parsing is CPU work: keep it off the threads that drive I/O.
            let (body, url) = (doc.body.clone(), doc.final_url.clone());
            let extracted = tokio::task::spawn_blocking(move || extract(&body, &url))
                .await
                .map_err(|e| StageError::permanent(format!("extraction panicked: {e}")))?;
            (extracted.title, extracted.markdown)
        } else {
            (doc.source.title.clone(), doc.body.clone())
        };
        let markdown = cap(markdown, rt.config.clean.max_chars);
        let mut record = OutcomeRecord {
            idx: doc.source.idx,
            url: doc.source.url.clone(),
            outcome: Outcome::Analysed,
            level: doc.level,
            doc: None,
        };
        if markdown.trim().chars().count() < MIN_CONTENT_CHARS {
            record.outcome = Outcome::Failed {
                reason: "no main content found".into(),
            };
        } else {
            let analysis = analyse(&doc.query, &title, &markdown, rt.config.clean.min_relevance);
            let key = paths::doc(msg.batch_id, msg.job_id, doc.source.idx);
            let analysed = AnalysedDoc {
                source: doc.source.clone(),
                final_url: doc.final_url.clone(),
                title: if title.is_empty() {
                    doc.source.title.clone()
                } else {
                    title
                },
                markdown,
                summary: analysis.summary,
                key_points: analysis.key_points,
                relevance: analysis.relevance,
                is_relevant: analysis.is_relevant,
                level: doc.level,
                bytes: doc.bytes,
            };
            // The document is on disk before its outcome counts, so synthesis can always read it.
            rt.put_json(&key, &analysed).await?;
            record.doc = Some(key);
            if !analysed.is_relevant {
                record.outcome = Outcome::Irrelevant;
            }
        }
        info!(url = %doc.source.url, outcome = record.outcome.name(), "cleaned");
        record_outcome(rt, &msg, &doc.query, record).await?;
        Ok(Handled::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_cuts_at_a_line_and_a_char_boundary() {
        assert_eq!(cap("ab\ncdé".into(), 6), "ab");
        assert_eq!(cap("short".into(), 100), "short");
        assert_eq!(cap("ééé".into(), 3), "é");
    }
}

//! The public record types of the corpus: pages and the questions they answer.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum PageKind {
    /// States the facts of topic `topic` (a topic id); `variant` is 0, 1 or 2.
    Answer { topic: String, variant: usize },
    /// Names topic `topic` once without any of its facts.
    Distractor { topic: String },
    /// Unrelated content.
    Generic,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// `http://host.test/path`
    pub url: String,
    pub host: String,
    pub path: String,
    pub title: String,
    pub kind: PageKind,
    /// The full HTML document served for this page.
    pub html: String,
    /// Title and article text, without boilerplate: what search indexes.
    pub text: String,
    pub(super) allowed: bool,
}

impl Page {
    /// Whether robots.txt lets agent "trawl" fetch this page.
    pub fn allowed_for_trawl(&self) -> bool {
        self.allowed
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub query: String,
    /// Topic id, e.g. "zorbium".
    pub topic: String,
    /// Every answer page, `http://host.test/path`.
    pub answer_urls: Vec<String>,
    /// The answer pages robots.txt lets trawl fetch (always at least two).
    pub fetchable_answer_urls: Vec<String>,
    /// Canonical fact sentences; each carries the entity name and its numbers/names.
    pub facts: Vec<String>,
    /// True when the third answer page states the first fact with a different number, so the
    /// sources disagree (for conflict detection).
    #[serde(default)]
    pub disagrees: bool,
}

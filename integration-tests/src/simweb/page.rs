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
    /// A follow-up topic's page (see [`FollowUp`]) that echoes its question's wording and
    /// names its entity throughout, with neither of its data points: what pushes the
    /// [`PageKind::Buried`] page down the question's results.
    Decoy { topic: String },
    /// The one page stating the data point of follow-up topic `topic` that its answer pages
    /// leave out.
    Buried { topic: String },
    /// States measured topic `topic`'s first fact beside other topics' values of the same
    /// kind (see `comparison`).
    Comparison { topic: String },
}

impl PageKind {
    /// The topic the page is about, if any.
    pub fn topic(&self) -> Option<&str> {
        match self {
            PageKind::Answer { topic, .. }
            | PageKind::Distractor { topic }
            | PageKind::Decoy { topic }
            | PageKind::Buried { topic }
            | PageKind::Comparison { topic } => Some(topic),
            PageKind::Generic => None,
        }
    }
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
    /// Set for the follow-up family only ([`Corpus::generate_with_follow_ups`]): the question
    /// asks for two data points and its answer pages (`answer_urls`) state only the first.
    /// Skipped when absent so the questions file of [`Corpus::generate`] keeps its bytes.
    ///
    /// [`Corpus::generate_with_follow_ups`]: super::Corpus::generate_with_follow_ups
    /// [`Corpus::generate`]: super::Corpus::generate
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<FollowUp>,
}

/// What a follow-up research round must find for a question: the second data point, which no
/// page ranking in the question's own top 20 states, and the one page that does, which ranks
/// in the top 3 for [`FollowUp::query`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowUp {
    /// The data point every answer page states, as trawl's heuristic analysis names it
    /// ("density").
    pub answered: String,
    /// Its value as the answer pages write it ("7.41 g/cm3").
    pub answered_value: String,
    /// The data point only the buried page states ("birefringence").
    pub data_point: String,
    /// The buried page, `http://host.test/path`.
    pub url: String,
    /// trawl's follow-up query for `data_point`: the question's terms (`trawl_text::terms`)
    /// joined by single spaces, then the words of `data_point` not among them.
    pub query: String,
    /// `data_point`'s value as the buried page writes it ("0.018").
    pub value: String,
}

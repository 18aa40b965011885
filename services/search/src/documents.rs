//! The provider `documents`: the job's documents root, searched beside the web chain. Each
//! sub-query asks the root's index ([`trawl_documents::Library`]) for its best files; a hit is
//! a result like any provider's, at `doc://<path>#page=N`, and goes through the same scoring
//! and selection. Its attempt is recorded like a provider's, so `search.md` says what the
//! documents gave, or why they gave nothing.

use std::sync::OnceLock;
use trawl_documents::{doc_url, Library, Root};
use trawl_messages::record::{Attempt, RawResult};
use trawl_messages::SearchTask;
use trawl_pipeline::Runtime;

/// The provider's name in a chain, a record and a result.
pub const NAME: &str = "documents";

/// The documents search of one stage: its library is made on first use, from the runtime's
/// stores.
#[derive(Default)]
pub struct Documents {
    library: OnceLock<Library>,
}

/// What one sub-query found in the documents.
pub struct Found {
    pub results: Vec<RawResult>,
    pub attempt: Attempt,
    /// The index answered (with nothing, perhaps).
    pub answered: bool,
}

/// The root a job searches when it names one (`documents`) or its chain holds `documents`:
/// its own, else `documents.url`; `Err` says why there is none it may read.
pub fn root_of(rt: &Runtime, task: &SearchTask, chain: &[String]) -> Option<Result<Root, String>> {
    let own = task.options.documents.as_deref();
    if own.is_none() && !chain.iter().any(|n| n == NAME) {
        return None;
    }
    let config = &rt.config.documents;
    let url = own.unwrap_or(&config.url);
    if url.trim().is_empty() {
        let why = "no documents root: the job names none and documents.url is empty";
        return Some(Err(why.into()));
    }
    Some(Root::allowed(url, &config.allow).map_err(|e| e.to_string()))
}

impl Documents {
    fn library(&self, rt: &Runtime) -> &Library {
        self.library.get_or_init(|| {
            let cache = std::env::temp_dir().join("trawl-documents").join(format!(
                "{:016x}",
                trawl_messages::documents::fnv1a(rt.objects.location().as_bytes())
            ));
            Library::new(
                rt.objects.clone(),
                rt.store.clone(),
                rt.config.output.clone(),
                rt.config.documents.clone(),
                cache,
            )
        })
    }

    /// `query`'s best files of `root`, at most `target`, as results.
    pub async fn search(
        &self,
        rt: &Runtime,
        root: &Result<Root, String>,
        query: &str,
        target: usize,
    ) -> Found {
        let mut attempt = Attempt {
            provider: NAME.into(),
            query: query.to_owned(),
            page: 1,
            outcome: "ok".into(),
            detail: String::new(),
        };
        let root = match root {
            Ok(root) => root,
            // A root the job may not read is an answer (nothing), not an outage to wait out.
            Err(why) => {
                attempt.outcome = "refused".into();
                attempt.detail = why.clone();
                let (results, answered) = (Vec::new(), true);
                return Found {
                    results,
                    attempt,
                    answered,
                };
            }
        };
        match self.library(rt).search(root, query, target).await {
            Ok(hits) => {
                if hits.is_empty() {
                    attempt.outcome = "empty".into();
                }
                let results = (hits.into_iter().enumerate())
                    .map(|(i, h)| RawResult {
                        url: doc_url(&h.name, h.page),
                        title: h.title,
                        snippet: h.snippet,
                        provider: NAME.into(),
                        position: i as u32 + 1,
                    })
                    .collect();
                Found {
                    results,
                    attempt,
                    answered: true,
                }
            }
            Err(e) => {
                tracing::warn!(root = %root, error = %e, "documents search failed");
                attempt.outcome = "error".into();
                attempt.detail = e.to_string();
                Found {
                    results: Vec::new(),
                    attempt,
                    answered: false,
                }
            }
        }
    }
}

//! The optional LLM steps of selection, each off by default:
//!
//! - [`relevance`]: ask the LLM whether a candidate answers the question (with the sub-query
//!   and target data points as context); decisions are cached per (question, URL) in the store.
//! - [`rerank`]: reorder candidates by embedding similarity between the question and each
//!   title and snippet.
//! - [`llm_select`]: let the LLM pick up to N URLs from the formatted result list.
//!
//! Each step fails open: if the LLM cannot answer, the formula's order and selection stand and
//! the work product says why.

use std::time::Duration;

use serde::Deserialize;
use tracing::warn;
use trawl_llm::{ChatRequest, Llm, LlmError};
use trawl_store::{Cache, Store};

use trawl_messages::record::QueryAnalysis;
use trawl_messages::record::Scored;

/// How long a relevance decision is reused.
const RELEVANCE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

use trawl_messages::record::Relevance;

const RELEVANCE_SYSTEM: &str = "You judge whether a web search result is likely to help answer a \
research question. Reply with one JSON object: {\"relevant\": true or false, \"reasoning\": one \
sentence, \"confidence\": a number from 0 to 1}.";

/// The LLM's relevance decision for one candidate, from the cache when it was asked before.
pub async fn relevance(
    llm: &Llm,
    store: &dyn Store,
    analysis: &QueryAnalysis,
    question: &str,
    s: &Scored,
) -> Result<Relevance, LlmError> {
    let key = format!("{:016x}|{}", trawl_llm::fnv1a(question.as_bytes()), s.url);
    match store.cache_get(Cache::Relevance, &key).await {
        Ok(Some(bytes)) => {
            if let Ok(r) = serde_json::from_slice::<Relevance>(&bytes) {
                return Ok(r);
            }
        }
        Ok(None) => {}
        Err(e) => warn!(error = %e, "relevance cache unavailable"),
    }
    let prompt = format!(
        "Question: {question}\nSub-queries: {}\nData points needed: {}\nTitle: {}\nURL: {}\nSnippet: {}",
        analysis.sub_queries.join(" | "),
        analysis.target_data_points.join(", "),
        s.result.title,
        s.url,
        s.result.snippet
    );
    let request = ChatRequest::new("relevance", RELEVANCE_SYSTEM, prompt);
    let validate = |r: &Relevance| {
        if (0.0..=1.0).contains(&r.confidence) {
            Ok(())
        } else {
            Err("confidence must be between 0 and 1")
        }
    };
    let (decision, _) = llm.json::<Relevance, _>(&request, validate).await?;
    if let Ok(bytes) = serde_json::to_vec(&decision) {
        if let Err(e) = store
            .cache_put(Cache::Relevance, &key, &bytes, RELEVANCE_TTL)
            .await
        {
            warn!(error = %e, "relevance cache unavailable");
        }
    }
    Ok(decision)
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let n = norm(a) * norm(b);
    if n == 0.0 {
        0.0
    } else {
        dot / n
    }
}

/// Why candidates could not be reranked.
#[derive(Debug, thiserror::Error)]
pub enum RerankError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The endpoint answered with another number of embeddings than texts sent.
    #[error("{got} embeddings for {texts} texts")]
    Count { got: usize, texts: usize },
}

/// Similarity of each candidate to the question, in candidate order.
pub async fn rerank(
    llm: &Llm,
    question: &str,
    candidates: &[Scored],
) -> Result<Vec<f64>, RerankError> {
    let mut texts = vec![question.to_owned()];
    texts.extend(
        candidates
            .iter()
            .map(|s| format!("{}. {}", s.result.title, s.result.snippet)),
    );
    let vectors = llm.embed(&texts).await?;
    if vectors.len() != texts.len() {
        return Err(RerankError::Count {
            got: vectors.len(),
            texts: texts.len(),
        });
    }
    Ok(vectors[1..]
        .iter()
        .map(|v| cosine(&vectors[0], v))
        .collect())
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Picked {
    /// The numbers of the chosen results, best first.
    selected: Vec<usize>,
}

const SELECT_SYSTEM: &str = "You choose which web search results to read to answer a research \
question. Reply with one JSON object: {\"selected\": [the numbers of the chosen results, best first]}.";

/// Indexes (into `candidates`) of the results the LLM picks, at most `n`.
pub(crate) async fn llm_select(
    llm: &Llm,
    question: &str,
    candidates: &[Scored],
    n: usize,
) -> Result<Vec<usize>, LlmError> {
    let mut prompt = format!("Question: {question}\nPick at most {n} results.\n");
    for (i, s) in candidates.iter().enumerate() {
        prompt.push_str(&format!(
            "{}. {} | {} | {}\n",
            i + 1,
            s.result.title,
            s.url,
            s.result.snippet
        ));
    }
    let count = candidates.len();
    let validate = move |p: &Picked| match p.selected.iter().find(|&&i| i == 0 || i > count) {
        Some(bad) => Err(format!("result {bad} does not exist (1 to {count})")),
        None => Ok(()),
    };
    let request = ChatRequest::new("select", SELECT_SYSTEM, prompt);
    let (picked, _) = llm.json::<Picked, _>(&request, validate).await?;
    let mut out: Vec<usize> = Vec::new();
    for i in picked.selected {
        if !out.contains(&(i - 1)) && out.len() < n {
            out.push(i - 1);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_is_bounded() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-9);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
    }
}

//! A real, slow model (a small one on a laptop's CPU writes 2–10 tokens a second) never costs
//! the answer: `trawl run` with every LLM step on, against simweb's LLM writing 5 tokens a
//! second and a message timeout far below what the steps would take, ends with a cited report
//! before its deadline. Each stage's LLM calls stop at its share of the message timeout and
//! the steps left take their non-LLM paths, recorded as fallbacks; no handler runs into its
//! message timeout and is retried from the start.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{self, Fleet};
use trawl_integration_tests::simweb::{Options, Simweb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_model_never_costs_the_answer() {
    let fleet = Fleet::start().await;
    let slow = Simweb::start_with(
        Arc::clone(&fleet.corpus),
        "127.0.0.1:0".parse().unwrap(),
        Options {
            llm_tokens_per_second: Some(5.0),
            ..Options::default()
        },
    )
    .await
    .unwrap();
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    let deadline = Duration::from_secs(180);
    let started = Instant::now();
    let out = (fleet.trawl_alone())
        .args(["run", &question.query])
        .env("TRAWL__LLM__PROVIDER", "openai")
        .env("TRAWL__LLM__BASE_URL", format!("{}/v1", slow.base_url()))
        .env("TRAWL__LLM__MODEL", "simweb-slow")
        .env("OPENAI_API_KEY", "sk-slow-test")
        .env("TRAWL__LLM__CACHE_TTL_SECS", "0")
        .env("TRAWL__SEARCH__LLM_RELEVANCE", "true")
        .env("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS", "12")
        .env("TRAWL__JOB__DEADLINE_SECS", deadline.as_secs().to_string())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let took = started.elapsed();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}\n{stdout}");
    assert!(took < deadline, "took {took:?}, past the deadline");
    common::assert_cites_answer(&stdout, &question);
    let products = (stderr.lines())
        .find_map(|l| l.strip_prefix("work products: "))
        .expect("the work products' place on stderr");
    let job = std::fs::read(std::path::Path::new(products.trim()).join("job.json")).unwrap();
    let record: serde_json::Value = serde_json::from_slice(&job).unwrap();
    assert_eq!(record["status"], "done", "{record:#}");
    // The model was asked, and what it could not answer in time fell back.
    let fallbacks = record["llm_fallbacks"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        fallbacks.keys().any(|k| k.ends_with(": out_of_time")),
        "{record:#}"
    );
    assert!(
        !stderr.contains("not handled within broker.message_timeout_secs"),
        "a handler ran into its message timeout: {stderr}"
    );
    fleet.cleanup().await;
}

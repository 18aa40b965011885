//! Chaos: a fetch worker is killed while it holds a page's fill lock, the single fetch that
//! other jobs wanting the same page wait for. The lock frees itself after `cache.wait_secs`;
//! the waiting jobs then fetch the page once and read it; the ledger loses and duplicates
//! nothing.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use trawl_integration_tests::simweb::guarded::{STALL_ONCE_HOST, STALL_SECONDS};

use crate::chaos_kit::run::*;
use crate::common::Fleet;

const JOBS: usize = 6;
const PATH: &str = "/p/7";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_fill_holder_killed() {
    let _serial = SERIAL.lock().await;
    let mut fleet = Fleet::start().await;
    fleet
        .env
        .push(("TRAWL__CACHE__WAIT_SECS".into(), "5".into()));
    fleet.spawn_all();
    let url = format!("http://{STALL_ONCE_HOST}{PATH}");
    let lines: Vec<serde_json::Value> = (0..JOBS)
        .map(|i| {
            json!({
                "query": format!("What does note {i} of the stall-once site say?"),
                "options": { "urls": [url], "search": false },
            })
        })
        .collect();
    let started = Instant::now();
    let batch = fleet.submit_jsonl("stall", &lines).await;

    // The first fetch has reached the page, which stalls: kill the worker that holds it.
    while fleet.simweb.path_hits(STALL_ONCE_HOST, PATH) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the page was never asked for"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    fleet.kill("trawl-fetch").await;
    fleet.spawn("trawl-fetch");

    let mut ledger = settle(
        &fleet,
        "page-fill-holder-killed",
        &batch,
        started,
        Effect::default(),
    )
    .await;
    let fetched = fleet.simweb.path_hits(STALL_ONCE_HOST, PATH);
    ledger.notes.push(format!(
        "{JOBS} jobs wanting one page: {fetched} requests for it (one killed midway, its \
         request stalled {STALL_SECONDS} s)"
    ));
    ledger.settle();
    assert_eq!(ledger.completed, JOBS as u64, "{ledger:?}");
    // The stalled request, then one fetch that every other job read from the cache. (How
    // long the batch took is the ledger's, not asserted: on a loaded machine the killed
    // message's redelivery alone can take longer than the stall.)
    assert_eq!(fetched, 2);
    for (job, _) in fleet.manifest(&batch) {
        let sources =
            std::fs::read_to_string(fleet.job_dir(&batch, &job).join("sources.json")).unwrap();
        assert!(
            sources.contains("\"analysed\"") || sources.contains("\"irrelevant\""),
            "job {job} did not read the page: {sources}"
        );
    }
    fleet.cleanup().await;
}

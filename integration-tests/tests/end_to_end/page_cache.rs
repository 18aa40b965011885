//! The fleet's page cache: a batch that asks about pages another batch read fetches none of
//! them and reports the same; a copy whose object was deleted is fetched again; past a job's
//! max age an unchanged page is revalidated (304) and a changed one read anew.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use trawl_integration_tests::simweb::revised_sentence;

use crate::common::Fleet;

/// Requests for pages of simweb's sites (robots.txt, search and the LLM apart).
fn pages_fetched(fleet: &Fleet) -> u64 {
    (fleet.simweb.stats()).count(|host, path| host.ends_with(".test") && path != "/robots.txt")
}

/// Submits `lines` (JSONL) and waits for the batch to end; returns its jobs' directories in
/// submission order.
async fn run_batch(fleet: &Fleet, name: &str, lines: &[Value]) -> Vec<std::path::PathBuf> {
    let batch = fleet.submit_jsonl(name, lines).await;
    fleet.wait_done(&batch, Duration::from_secs(180)).await;
    (fleet.manifest(&batch).into_iter())
        .map(|(job, _)| fleet.job_dir(&batch, &job))
        .collect()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The job's `sources.json` entries.
fn sources(job: &Path) -> Vec<Value> {
    read_json(&job.join("sources.json"))
        .as_array()
        .unwrap()
        .clone()
}

/// The URLs the job's report cites.
fn cited(job: &Path) -> BTreeSet<String> {
    (sources(job).into_iter())
        .filter(|s| !s["cited_as"].is_null())
        .map(|s| s["url"].as_str().unwrap().to_owned())
        .collect()
}

/// The job's sources that clean read (analysed or found irrelevant), by URL.
fn read_sources(job: &Path) -> Vec<Value> {
    (sources(job).into_iter())
        .filter(|s| {
            matches!(
                s["outcome"]["outcome"].as_str(),
                Some("analysed" | "irrelevant")
            )
        })
        .collect()
}

fn host_and_path(url: &str) -> (String, String) {
    let url = url::Url::parse(url).unwrap();
    (url.host_str().unwrap().to_owned(), url.path().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_share_the_pages_they_read() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let questions: Vec<String> = (fleet.corpus.questions().into_iter().take(3))
        .map(|q| q.query)
        .collect();
    let lines: Vec<Value> = (questions.iter())
        .map(|q| serde_json::json!({ "query": q }))
        .collect();

    // A first batch fetches its pages; a second asking the same fetches none, reads the
    // copies and cites what the first cited.
    let first = run_batch(&fleet, "first", &lines).await;
    let fetched = pages_fetched(&fleet);
    assert!(fetched > 0);
    // Each page read is kept; the text clean extracted from it only once a second job reads
    // it (most pages are read once).
    let urls = |job: &Path| -> Vec<String> {
        (read_sources(job).into_iter())
            .map(|s| s["url"].as_str().unwrap().to_owned())
            .collect()
    };
    let object = |url: &str, suffix: &str| {
        let key = trawl_fetch::pages::key_of(url);
        fleet.out_dir().join(format!("pages/{key}{suffix}"))
    };
    let read_by_first: Vec<String> = first.iter().flat_map(|job| urls(job)).collect();
    let once: Vec<&String> = (read_by_first.iter())
        .filter(|u| read_by_first.iter().filter(|v| v == u).count() == 1)
        .collect();
    assert!(!once.is_empty(), "{read_by_first:?}");
    for url in &read_by_first {
        assert!(object(url, ".json").is_file(), "{url}: no copy");
    }
    for url in once {
        assert!(!object(url, ".text.json").exists(), "{url}: text kept");
    }
    let second = run_batch(&fleet, "second", &lines).await;
    assert_eq!(
        pages_fetched(&fleet),
        fetched,
        "the second batch fetched pages"
    );
    for url in &read_by_first {
        assert!(object(url, ".text.json").is_file(), "{url}: no text kept");
    }
    for (a, b) in first.iter().zip(&second) {
        assert!(!cited(a).is_empty(), "{}", a.display());
        assert_eq!(cited(a), cited(b));
        let read = read_sources(b);
        assert!(!read.is_empty());
        assert!(
            read.iter().all(|s| s["cached_at"].is_string()),
            "sources.json does not say the pages came from the cache: {read:?}"
        );
        let sources_md = std::fs::read_to_string(b.join("sources.md")).unwrap();
        assert!(
            sources_md.contains("From the cache, fetched at "),
            "{sources_md}"
        );
    }

    // A copy whose object is gone is fetched again, and the job reads it.
    let read = read_sources(&first[0]);
    assert!(read.len() >= 2, "{read:?}");
    let (deleted, changed) = (
        read[0]["url"].as_str().unwrap().to_owned(),
        read[1]["url"].as_str().unwrap().to_owned(),
    );
    let key = trawl_fetch::pages::key_of(&deleted);
    std::fs::remove_file(fleet.out_dir().join(format!("pages/{key}.json"))).unwrap();
    let (host, path) = host_and_path(&deleted);
    let before = fleet.simweb.path_hits(&host, &path);
    let third = run_batch(&fleet, "third", &lines[..1]).await;
    assert_eq!(fleet.simweb.path_hits(&host, &path), before + 1);
    let again = (read_sources(&third[0]).into_iter()).find(|s| s["url"] == deleted.as_str());
    assert!(
        again.is_some_and(|s| s["cached_at"].is_null()),
        "{:?}",
        sources(&third[0])
    );

    // Past a job's max age: the changed page is read anew, the others revalidated.
    let (host, path) = host_and_path(&changed);
    fleet.simweb.stats().revise(&host, &path);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let line = serde_json::json!({ "query": questions[0], "options": { "cache_max_age_secs": 1 } });
    let fourth = run_batch(&fleet, "fourth", &[line]).await;
    assert!(
        fleet.simweb.stats().not_modified() > 0,
        "nothing revalidated"
    );
    let docs = fourth[0].join("docs");
    let revised = (std::fs::read_dir(&docs).unwrap().flatten())
        .map(|e| read_json(&e.path()))
        .find(|d| d["source"]["url"] == changed.as_str())
        .unwrap_or_else(|| panic!("{changed} was not read again"));
    assert!(
        revised["markdown"]
            .as_str()
            .unwrap()
            .contains(&revised_sentence(1)),
        "the changed page was read from the old copy"
    );

    // Operators see what it holds and can empty it, objects and all.
    let text = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let stats = text(fleet.trawl(&["cache", "stats"]).await);
    assert!(!stats.starts_with("0 pages"), "{stats}");
    let purged = text(fleet.trawl(&["cache", "purge"]).await);
    assert!(purged.starts_with("purged "), "{purged}");
    let stats = text(fleet.trawl(&["cache", "stats"]).await);
    assert!(stats.starts_with("0 pages, 0.0 MB"), "{stats}");
    let pages = fleet.out_dir().join("pages");
    let left = std::fs::read_dir(&pages).map_or(0, |d| d.count());
    assert_eq!(left, 0, "objects left in {}", pages.display());
    fleet.cleanup().await;
}

//! `trawl run` in embedded mode: every stage in one process, no broker or store, against simweb.

use crate::common;

use std::process::Stdio;

use common::Fleet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trawl_run_answers_with_citations() {
    let fleet = Fleet::start().await;
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    // No broker or store URL: embedded.
    let stdout = fleet.run_alone(&[&question.query]).await;
    common::assert_cites_answer(&stdout, &question);
    fleet.cleanup().await;
}

#[tokio::test]
async fn bad_batch_line_is_named_and_nothing_is_enqueued() {
    let fleet = Fleet::start().await;
    let file = fleet.dir.path().join("bad.jsonl");
    std::fs::write(
        &file,
        "{\"query\": \"fine\"}\n{\"query\": \"ok\", \"bogus\": 1}\n",
    )
    .unwrap();
    let out = fleet.trawl(&["submit", file.to_str().unwrap()]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("bogus"),
        "{stderr}"
    );
    use trawl_broker::Broker;
    assert_eq!(
        fleet
            .broker
            .depth(trawl_broker::Queue::Search)
            .await
            .unwrap(),
        0
    );
    fleet.cleanup().await;
}

#[tokio::test]
async fn unreachable_services_fail_fast_with_a_clear_error() {
    let fleet = Fleet::start().await;
    let file = fleet.dir.path().join("ok.txt");
    std::fs::write(&file, "What is zorbium?\n").unwrap();
    let mut submit = fleet.trawl_alone();
    submit
        .args(["submit", file.to_str().unwrap()])
        .env("TRAWL__BROKER__URL", "amqp://guest:guest@127.0.0.1:1/%2f")
        .env("TRAWL__STORE__URL", common::REDIS);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), submit.output())
        .await
        .expect("hung")
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot reach the broker") && !stderr.contains("guest:guest"),
        "{stderr}"
    );
    fleet.cleanup().await;
}

/// No provider answering: the run stops before starting the stages, in well under the half
/// minute that retrying would take, says what to set and how to try trawl offline, and prints
/// no report.
#[tokio::test]
async fn trawl_run_without_a_provider_fails_fast_and_says_what_to_set() {
    let fleet = Fleet::start().await;
    let started = std::time::Instant::now();
    let out = fleet
        .trawl_alone()
        .args(["run", "What is zorbium?"])
        .env("TRAWL__SEARCH__SEARXNG_URL", "http://127.0.0.1:1")
        .env("TRAWL__SEARCH__PROVIDERS", "[\"searxng\"]")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "no report: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    for expected in [
        "searxng: nothing answers at http://127.0.0.1:1",
        "TRAWL__SEARCH__SEARXNG_URL",
        "scripts/demo",
    ] {
        assert!(stderr.contains(expected), "{expected} in {stderr}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    fleet.cleanup().await;
}

/// The flags people reach for: JSON on stdout, work products where asked, no LLM, the provider
/// chosen; progress as plain lines on a stderr that is not a terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trawl_run_flags_choose_format_output_and_provider() {
    let fleet = Fleet::start().await;
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    let out_dir = fleet.dir.path().join("run-out");
    let out = fleet
        .trawl_alone()
        .args([
            "run",
            &question.query,
            "--format",
            "json",
            "--no-llm",
            "--max-level",
            "1",
        ])
        .args(["--provider", "searxng", "--max-urls", "4", "--out"])
        .arg(&out_dir)
        // An LLM that is configured but must not be called: --no-llm wins.
        .env("TRAWL__LLM__BASE_URL", "http://127.0.0.1:1/v1")
        .env("TRAWL__LLM__MODEL", "m")
        .env("TRAWL__LLM__PROVIDER", "openai-compatible")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "done", "{record}");
    assert_eq!(record["writer"], "extractive", "{record}");
    common::assert_cites_answer(record["report"].as_str().unwrap(), &question);
    let sources = record["sources"].as_array().unwrap();
    assert!(!sources.is_empty() && sources.len() <= 4, "{record}");
    let job = record["job_id"].as_str().unwrap();
    let reports: Vec<_> = common::files_under(&out_dir)
        .into_iter()
        .filter(|p| p.ends_with("report.md") && p.to_string_lossy().contains(job))
        .collect();
    assert_eq!(reports.len(), 1, "the work products are under --out");
    for expected in ["trawl: searching", "trawl: done in"] {
        assert!(stderr.contains(expected), "{expected} in {stderr}");
    }
    assert!(!stderr.contains("LLM"), "the LLM was not used: {stderr}");
    fleet.cleanup().await;
}

#[test]
fn config_show_redacts_and_config_check_names_every_problem() {
    let trawl = || {
        let mut c = std::process::Command::new(common::bin("trawl"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        c
    };
    let out = trawl()
        .args(["config", "show"])
        .env("TRAWL__STORE__URL", "redis://:s3cret-pw@cache:6379/")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        shown.contains("url = \"redis://:***@cache:6379/\"") && !shown.contains("s3cret-pw"),
        "{shown}"
    );

    let out = trawl().args(["config", "check"]).output().unwrap();
    assert!(out.status.success());
    let out = trawl()
        .args(["config", "check"])
        .env("TRAWL__FETCH__MAX_LEVEL", "9")
        .env("TRAWL__SEARCH__MIN_RELEVANCE", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("fetch.max_level") && stderr.contains("min_relevance"),
        "{stderr}"
    );
    // Each problem names the value it refuses.
    assert!(
        stderr.contains("fetch.max_level must be 0 to 3 (got 9)")
            && stderr.contains("search.min_relevance must be between 0 and 1 (got 2)"),
        "{stderr}"
    );

    // `config example` prints the checked-in reference; neither it nor `completions` needs a
    // valid configuration.
    let out = trawl()
        .args(["config", "example"])
        .env("TRAWL__FETCH__MAX_LEVEL", "9")
        .output()
        .unwrap();
    assert!(out.status.success());
    let example = std::fs::read(common::repo().join("trawl.example.toml")).unwrap();
    assert_eq!(out.stdout, example);
    let out = trawl()
        .args(["completions", "bash"])
        .env("TRAWL__FETCH__MAX_LEVEL", "9")
        .output()
        .unwrap();
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        script.contains("_trawl()") && script.contains("--max-urls"),
        "{script}"
    );
}

//! The HTTP API against its own OpenAPI document: schemathesis (PyPI) reads the document
//! `trawl serve` serves and sends what it describes, and much that it does not, to the real API
//! in front of the fleet on RabbitMQ and Redis. It must find no 5xx, no response outside the
//! document (status, content type, headers, body schema), no invalid input accepted and no valid
//! input refused, no operation served without a token, and no batch one token can read through
//! another. The run is bounded and seeded (integration-tests/schemathesis/schemathesis.toml), so
//! a failure reproduces; its output is printed when it fails.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Fleet;
use tokio::process::Command;

/// The run takes about 10 seconds; this only stops a hung one.
const RUN_LIMIT: Duration = Duration::from_secs(240);

/// schemathesis from the venv of scripts/ops-tools, which installs it when it is missing. A
/// missing tool fails the test: the API's promises are part of the suite.
async fn schemathesis() -> PathBuf {
    let out = Command::new(common::repo().join("scripts/ops-tools"))
        .arg("--env")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("scripts/ops-tools runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/ops-tools could not install schemathesis:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let venv = stdout
        .lines()
        .find_map(|line| line.strip_prefix("OPS_VENV="))
        .unwrap_or_else(|| panic!("scripts/ops-tools --env printed no OPS_VENV:\n{stdout}"));
    let bin = Path::new(venv).join("bin/schemathesis");
    assert!(bin.exists(), "{} is missing", bin.display());
    bin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_keeps_the_promises_of_its_openapi_document() {
    let schemathesis = schemathesis().await;
    let mut fleet = Fleet::start().await;
    let base = fleet
        .serve(&[
            // schemathesis sends far more than the default 20 a second; api.rs tests the limiter.
            ("TRAWL__API__RATE_PER_SEC", "1000000".into()),
            // Small enough that generated batches reach it: the served document's `maxItems`.
            ("TRAWL__API__MAX_QUESTIONS", "50".into()),
        ])
        .await;
    // Two tokens so schemathesis can check that one never reads the other's batches.
    let alice = fleet.create_token("schemathesis-alice").await;
    let bob = fleet.create_token("schemathesis-bob").await;
    let auth = serde_json::json!({"auth": [
        {"name": "alice", "fixedHeaders": [{"name": "Authorization", "value": format!("Bearer {alice}")}]},
        {"name": "bob", "fixedHeaders": [{"name": "Authorization", "value": format!("Bearer {bob}")}]},
    ]});
    let auth_file = fleet.dir.path().join("wfc-auth.json");
    std::fs::write(&auth_file, auth.to_string()).unwrap();

    let config = common::repo().join("integration-tests/schemathesis");
    let run = Command::new(&schemathesis)
        .arg("--config-file")
        .arg(config.join("schemathesis.toml"))
        .args(["run", &format!("{base}/openapi.json"), "--no-color"])
        .env("TRAWL_TEST_WFC_AUTH", &auth_file)
        .env("SCHEMATHESIS_HOOKS", config.join("hooks.py"))
        // Hypothesis and schemathesis keep state in the working directory: the test's own.
        .current_dir(fleet.dir.path())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let started = Instant::now();
    let finished = tokio::time::timeout(RUN_LIMIT, run).await;
    let took = started.elapsed();
    let Ok(out) = finished else {
        fleet.dump_logs();
        fleet.cleanup().await;
        panic!("schemathesis ran longer than {RUN_LIMIT:?}");
    };
    let out = out.expect("schemathesis starts");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        fleet.dump_logs();
        fleet.cleanup().await;
        panic!(
            "schemathesis found problems ({}) in {took:?}:\n{report}",
            out.status
        );
    }
    // Shown with --nocapture: schemathesis' own summary of what ran.
    let summary = report
        .find("SUMMARY")
        .map_or(report.as_str(), |at| &report[at..]);
    eprintln!("schemathesis passed in {took:?}:\n{summary}");
    fleet.cleanup().await;
}

//! A job's own sources and domain filters (`--url`, `--no-search`, `--include-domain`,
//! `--exclude-domain`): no page outside the filter is fetched, whatever the providers return and
//! wherever a redirect leads.

use serde_json::Value;
use trawl_integration_tests::simweb::guarded;

use crate::common::{self, Fleet};

/// `trawl run` with `args` and `--format json`: the job's record, whatever its exit code.
async fn run_json(fleet: &Fleet, args: &[&str]) -> Value {
    let out = (fleet
        .trawl_alone()
        .arg("run")
        .args(args)
        .args(["--format", "json"]))
    .stdin(std::process::Stdio::null())
    .output()
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "trawl run {args:?}: {e}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Requests that reached a page of any simweb site (the search and LLM endpoints are on the
/// server's own address).
fn pages_fetched(fleet: &Fleet) -> u64 {
    (fleet.simweb.stats()).count(|host, _| host.ends_with(".test"))
}

#[tokio::test]
async fn nothing_outside_the_jobs_domains_is_fetched() {
    let fleet = Fleet::start().await;
    let question = fleet.corpus.questions().remove(0);

    // Every provider's results lie outside the one domain allowed: none is fetched, and the
    // job says it found no source.
    let job = run_json(
        &fleet,
        &[&question.query, "--include-domain", "nowhere.test"],
    )
    .await;
    assert_eq!(job["status"], "no_sources", "{job}");
    assert_eq!(pages_fetched(&fleet), 0);

    // A listed page on an allowed site redirects to another site: not followed.
    let listed = format!(
        "http://{}{}",
        guarded::HOST,
        guarded::OFF_SITE_REDIRECT_PATH
    );
    let args = [&question.query, "--url", &listed, "--no-search"];
    let job = run_json(
        &fleet,
        &[&args[..], &["--include-domain", guarded::HOST]].concat(),
    )
    .await;
    let source = &job["sources"][0];
    assert_eq!(source["url"], listed.as_str(), "{job}");
    assert_eq!(source["outcome"]["outcome"], "failed", "{job}");
    let reason = source["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("outside the job's domains"), "{reason}");
    assert_eq!(fleet.simweb.hits(guarded::ELSEWHERE_HOST), 0);
    // Without the filter the same redirect is followed: the refusal above was the filter's.
    run_json(&fleet, &args).await;
    assert!(fleet.simweb.hits(guarded::ELSEWHERE_HOST) > 0);
    fleet.cleanup().await;
}

#[tokio::test]
async fn a_job_reads_its_own_urls_and_excluded_domains_stay_out() {
    let fleet = Fleet::start().await;
    let question = fleet.corpus.questions().remove(0);
    let answer = &question.answer_urls[0];
    let answer_host = url::Url::parse(answer)
        .unwrap()
        .host_str()
        .unwrap()
        .to_owned();

    // Only the listed page, no search: the report cites it.
    let job = run_json(&fleet, &[&question.query, "--url", answer, "--no-search"]).await;
    let sources = job["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{job}");
    assert_eq!(sources[0]["url"], answer.as_str());
    common::assert_cites_answer(job["report"].as_str().unwrap(), &question);
    let searched = (fleet.simweb.stats()).count(|_, path| path == "/search");
    assert_eq!(searched, 0, "a job that does not search asked a provider");

    // Searching with the answer's site excluded: sources come from elsewhere, never from it.
    let before = fleet.simweb.hits(&answer_host);
    let job = run_json(&fleet, &[&question.query, "--exclude-domain", &answer_host]).await;
    let sources = job["sources"].as_array().unwrap();
    assert!(!sources.is_empty(), "{job}");
    assert!(
        sources
            .iter()
            .all(|s| !s["url"].as_str().unwrap().contains(&answer_host)),
        "{job}"
    );
    assert_eq!(fleet.simweb.hits(&answer_host), before);
    fleet.cleanup().await;
}

//! The LLM providers' contract: `trawl run` with every LLM step on (query analysis, relevance,
//! selection, rerank embeddings, the clean stage's judge, cleaning and analysis, the report)
//! against simweb speaking each provider's wire format: OpenAI with a reasoning model it knows
//! and one it must learn from its 400s, Azure OpenAI, Anthropic, Gemini's OpenAI-compatible
//! endpoint, and a keyless server of one's own; then one run with a model per step across two
//! providers. Each run must answer with citations, every step's requests must reach the
//! provider's own route and succeed, the JSON steps must send their schema (OpenAI's
//! `json_schema` response format, Anthropic's forced tool), and only the learnt refusals may
//! fail, once each.

use crate::common;

use std::process::Stdio;

use common::Fleet;
use trawl_integration_tests::simweb::llm::{calls, Call};

/// The tasks every run must send through the provider (the judge and cleaning depend on the
/// pages, and the analysis task's name on the question).
const TASKS: [&str; 4] = ["query_analysis", "relevance", "select", "report"];

struct Case {
    name: &'static str,
    env: Vec<(&'static str, String)>,
    /// The simweb API the chat requests must arrive through.
    api: &'static str,
    model: &'static str,
    /// 400s the model answers before the client has learnt what it refuses.
    learnt: usize,
    /// How the JSON steps must ask for structured output.
    structured: &'static str,
}

/// The steps whose answer is JSON, parsed into a Rust type whose schema goes with the request.
const JSON_TASKS: [&str; 4] = ["query_analysis", "relevance", "select", "judge"];

async fn run(fleet: &Fleet, case: &Case) -> Vec<Call> {
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    let before = calls().len();
    let mut command = fleet.trawl_alone();
    command
        .args(["run", &question.query])
        .env("TRAWL__SEARCH__LLM_RELEVANCE", "true")
        .env("TRAWL__SEARCH__SELECTION", "llm")
        .env("TRAWL__SEARCH__RERANK", "true")
        .env("TRAWL__LLM__CACHE_TTL_SECS", "0")
        .envs(case.env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null());
    let out = command.output().await.unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{}: {stderr}\n{stdout}", case.name);
    common::assert_cites_answer(&stdout, &question);
    calls()[before..].to_vec()
}

fn check(case: &Case, seen: &[Call]) {
    let mine: Vec<&Call> = seen.iter().filter(|c| c.model == case.model).collect();
    for task in TASKS {
        assert!(
            (mine.iter()).any(|c| c.task == task && c.status == 200 && c.api == case.api),
            "{}: no successful {task} through {}: {seen:?}",
            case.name,
            case.api
        );
    }
    assert!(
        mine.iter()
            .any(|c| c.task.starts_with("analysis") && c.status == 200),
        "{}: no source analysis: {seen:?}",
        case.name
    );
    for call in mine
        .iter()
        .filter(|c| JSON_TASKS.contains(&c.task.as_str()) || c.task.starts_with("analysis"))
    {
        assert_eq!(
            call.format,
            Some(case.structured),
            "{}: {call:?}",
            case.name
        );
    }
    let failed: Vec<&&Call> = mine.iter().filter(|c| c.status != 200).collect();
    assert_eq!(failed.len(), case.learnt, "{}: {failed:?}", case.name);
    assert!(
        failed.iter().all(|c| c.status == 400),
        "{}: {failed:?}",
        case.name
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_llm_step_runs_through_every_provider() {
    let fleet = Fleet::start().await;
    let web = fleet.simweb.base_url();
    let key = |var: &'static str| (var, format!("{}-test-key", var.to_lowercase()));
    let embeddings = (
        "TRAWL__LLM__EMBEDDINGS",
        format!("{{ provider = \"openai\", base_url = \"{web}/v1\", model = \"simweb-embed\" }}"),
    );
    let chat = |provider: &str, url: String, model: &str| {
        vec![
            ("TRAWL__LLM__PROVIDER", provider.to_owned()),
            ("TRAWL__LLM__BASE_URL", url),
            ("TRAWL__LLM__MODEL", model.to_owned()),
        ]
    };
    let cases = vec![
        Case {
            name: "OpenAI, a reasoning model it knows",
            env: [
                chat("openai", format!("{web}/v1"), "gpt-5-mini"),
                vec![
                    key("OPENAI_API_KEY"),
                    ("TRAWL__LLM__EMBEDDING_MODEL", "simweb-embed".into()),
                ],
            ]
            .concat(),
            api: "openai",
            model: "gpt-5-mini",
            learnt: 0,
            structured: "json_schema",
        },
        Case {
            name: "OpenAI-compatible, a reasoning model it must learn",
            env: [
                chat("openai", format!("{web}/v1"), "simweb-reasoning"),
                vec![
                    key("OPENAI_API_KEY"),
                    ("TRAWL__LLM__EMBEDDING_MODEL", "simweb-embed".into()),
                ],
            ]
            .concat(),
            api: "openai",
            model: "simweb-reasoning",
            // max_tokens, then temperature: once each for the process.
            learnt: 2,
            structured: "json_schema",
        },
        Case {
            name: "Azure OpenAI",
            env: [
                chat("azure", web.clone(), "prod-gpt-4o"),
                vec![
                    key("AZURE_OPENAI_API_KEY"),
                    embeddings.clone(),
                    key("OPENAI_API_KEY"),
                ],
            ]
            .concat(),
            api: "azure",
            model: "prod-gpt-4o",
            learnt: 0,
            structured: "json_schema",
        },
        Case {
            name: "Anthropic",
            env: [
                chat("anthropic", web.clone(), "claude-3-5-haiku-latest"),
                vec![
                    key("ANTHROPIC_API_KEY"),
                    embeddings.clone(),
                    key("OPENAI_API_KEY"),
                ],
            ]
            .concat(),
            api: "anthropic",
            model: "claude-3-5-haiku-latest",
            learnt: 0,
            structured: "tool",
        },
        Case {
            name: "Gemini",
            env: [
                chat("gemini", format!("{web}/v1beta/openai"), "gemini-2.5-flash"),
                vec![
                    key("GEMINI_API_KEY"),
                    ("TRAWL__LLM__EMBEDDING_MODEL", "simweb-embed".into()),
                ],
            ]
            .concat(),
            api: "gemini",
            model: "gemini-2.5-flash",
            learnt: 0,
            structured: "json_schema",
        },
        Case {
            name: "a server of one's own, without a key",
            env: [
                chat(
                    "openai-compatible",
                    format!("{web}/local/v1"),
                    "llama3.1:8b",
                ),
                vec![embeddings.clone(), key("OPENAI_API_KEY")],
            ]
            .concat(),
            api: "local",
            model: "llama3.1:8b",
            learnt: 0,
            structured: "json_schema",
        },
    ];
    for case in &cases {
        let seen = run(&fleet, case).await;
        check(case, &seen);
    }

    // A model per step: the report on a strong model, relevance on another provider.
    let case = Case {
        name: "a model per step",
        env: [
            chat("openai", format!("{web}/v1"), "gpt-4o-mini"),
            vec![
                key("OPENAI_API_KEY"),
                key("ANTHROPIC_API_KEY"),
                ("TRAWL__LLM__EMBEDDING_MODEL", "simweb-embed".into()),
                (
                    "TRAWL__LLM__MODELS",
                    format!("{{ report = \"gpt-5\", relevance = {{ provider = \"anthropic\", base_url = \"{web}\", model = \"claude-3-5-haiku-latest\" }} }}"),
                ),
            ],
        ]
        .concat(),
        api: "openai",
        model: "gpt-4o-mini",
        learnt: 0,
        structured: "json_schema",
    };
    let seen = run(&fleet, &case).await;
    let by = |task: &str| -> Vec<(&str, &str)> {
        (seen.iter())
            .filter(|c| c.task == task && c.status == 200)
            .map(|c| (c.api, c.model.as_str()))
            .collect()
    };
    assert!(
        by("report").iter().all(|c| *c == ("openai", "gpt-5")),
        "{seen:?}"
    );
    assert!(!by("report").is_empty());
    assert!(
        by("relevance")
            .iter()
            .all(|c| *c == ("anthropic", "claude-3-5-haiku-latest")),
        "{seen:?}"
    );
    assert!(!by("relevance").is_empty());
    assert!(by("query_analysis")
        .iter()
        .all(|c| *c == ("openai", "gpt-4o-mini")));
    fleet.cleanup().await;
}

/// What config refuses at start-up, every problem at once.
#[tokio::test]
async fn bad_llm_settings_are_refused_together() {
    let fleet = Fleet::start().await;
    let mut command = fleet.trawl_alone();
    command
        .args(["run", "What is zorbium?"])
        .env("TRAWL__LLM__PROVIDER", "openai")
        .env("TRAWL__LLM__MODELS", "{ reprot = \"gpt-5\" }")
        .env(
            "TRAWL__LLM__PRICES",
            "{ \"gpt-5\" = { input = -1.0, output = 10.0 } }",
        )
        .env("TRAWL__LLM__REASONING_EFFORT", "extreme")
        .stdin(Stdio::null());
    let out = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    for needle in [
        "llm.models.reprot: not a step",
        "llm.prices.\"gpt-5\"",
        "llm.reasoning_effort",
    ] {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    // A hosted provider without its key, for a step of its own.
    let mut command = fleet.trawl_alone();
    command
        .args(["run", "What is zorbium?"])
        .env(
            "TRAWL__LLM__BASE_URL",
            format!("{}/v1", fleet.simweb.base_url()),
        )
        .env("OPENAI_API_KEY", "k")
        .env_remove("ANTHROPIC_API_KEY")
        .env(
            "TRAWL__LLM__MODELS",
            "{ report = { provider = \"anthropic\", model = \"claude-sonnet-4\" } }",
        )
        .stdin(Stdio::null());
    let out = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("llm.models.report") && stderr.contains("ANTHROPIC_API_KEY"),
        "{stderr}"
    );
    fleet.cleanup().await;
}

/// A report's token allowance: `report.max_tokens`, or the job's own
/// `report_max_tokens` option, across the fleet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_sets_its_report_length() {
    let mut fleet = Fleet::start().await;
    let web = fleet.simweb.base_url();
    let model = "report-length-test";
    for (k, v) in [
        ("TRAWL__LLM__PROVIDER", "openai".to_owned()),
        ("TRAWL__LLM__BASE_URL", format!("{web}/v1")),
        ("TRAWL__LLM__MODEL", model.to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
        ("TRAWL__REPORT__MAX_TOKENS", "1200".to_owned()),
    ] {
        fleet.env.push((k.to_owned(), v));
    }
    fleet.spawn_all();
    let questions = fleet.corpus.questions();
    let lines = [
        serde_json::json!({"query": questions[0].query, "options": {"report_max_tokens": 3000}}),
        serde_json::json!({"query": questions[1].query}),
    ];
    let batch = fleet.submit_jsonl("lengths", &lines).await;
    fleet
        .wait_done(&batch, std::time::Duration::from_secs(120))
        .await;
    let allowances: std::collections::BTreeSet<u64> = (calls().into_iter())
        .filter(|c| c.model == model && c.task == "report" && c.status == 200)
        .filter_map(|c| c.allowance)
        .collect();
    assert_eq!(allowances, [1200, 3000].into(), "{:?}", calls());
    fleet.cleanup().await;
}

/// An LLM that never answers (nothing listens at its URL): `trawl run` still answers with a
/// cited report and says on stderr that every LLM call failed; in the fleet, job.json lists
/// each step that fell back and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_llm_is_said_and_every_job_still_ends_with_a_cited_report() {
    let mut fleet = Fleet::start().await;
    let dead = format!("http://127.0.0.1:{}/v1", common::free_port());
    let env = [
        ("TRAWL__LLM__PROVIDER", "openai".to_owned()),
        ("TRAWL__LLM__BASE_URL", dead),
        ("TRAWL__LLM__MODEL", "gpt-4o-mini".to_owned()),
        ("TRAWL__LLM__MAX_RETRIES", "0".to_owned()),
        ("TRAWL__SEARCH__LLM_RELEVANCE", "true".to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
    ];
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    let out = fleet
        .trawl_alone()
        .args(["run", &question.query])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    common::assert_cites_answer(&stdout, &question);
    assert!(
        stderr.contains("warning: every LLM call failed (")
            && stderr.contains("analysis: request_error")
            && stderr.contains("report: request_error"),
        "{stderr}"
    );

    for (k, v) in env {
        fleet.env.push((k.to_owned(), v));
    }
    fleet.spawn_all();
    let batch = fleet.submit(std::slice::from_ref(&question.query)).await;
    fleet
        .wait_done(&batch, std::time::Duration::from_secs(120))
        .await;
    let (job, _) = fleet.manifest(&batch).remove(0);
    let record: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fleet.job_dir(&batch, &job).join("job.json")).unwrap(),
    )
    .unwrap();
    let fallbacks = &record["llm_fallbacks"];
    for step in ["analysis", "relevance", "analyse", "report"] {
        assert!(
            fallbacks[format!("{step}: request_error")].as_i64() > Some(0),
            "{step}: {record}"
        );
    }
    assert!(
        record["writer"].as_str().unwrap().starts_with("extractive"),
        "{record}"
    );
    fleet.cleanup().await;
}

/// An LLM in trouble for minutes, answering garbage and then 500s: every job still ends with a
/// cited report through the non-LLM paths, job.json names each step that fell back and why,
/// and once the model is well again the next job's steps and report are the LLM's (nothing
/// learnt or cached from the bad answers sticks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_in_trouble_leaves_cited_reports_and_names_the_steps_that_fell_back() {
    use trawl_integration_tests::simweb::llm::script::{set_trouble, Trouble};
    let mut fleet = Fleet::start().await;
    let model = "trouble-test";
    let web = fleet.simweb.base_url();
    for (k, v) in [
        ("TRAWL__LLM__PROVIDER", "openai".to_owned()),
        ("TRAWL__LLM__BASE_URL", format!("{web}/v1")),
        ("TRAWL__LLM__MODEL", model.to_owned()),
        ("TRAWL__LLM__MAX_RETRIES", "1".to_owned()),
        ("TRAWL__SEARCH__LLM_RELEVANCE", "true".to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
    ] {
        fleet.env.push((k.to_owned(), v));
    }
    fleet.spawn_all();
    let questions = fleet.corpus.questions();
    let phases: [(Option<Trouble>, &[&str]); 3] = [
        (
            Some(Trouble::Garbage),
            &[
                "analysis: invalid_json",
                "relevance: invalid_json",
                "analyse: invalid_json",
                "report: malformed",
            ],
        ),
        (
            Some(Trouble::Failing),
            &[
                "analysis: http_error",
                "relevance: http_error",
                "analyse: http_error",
                "report: http_error",
            ],
        ),
        (None, &[]),
    ];
    for (question, (trouble, reasons)) in questions.iter().zip(phases) {
        set_trouble(model, trouble);
        let batch = fleet.submit(std::slice::from_ref(&question.query)).await;
        fleet
            .wait_done(&batch, std::time::Duration::from_secs(180))
            .await;
        let (job, _) = fleet.manifest(&batch).remove(0);
        let dir = fleet.job_dir(&batch, &job);
        common::assert_cites_answer(
            &std::fs::read_to_string(dir.join("report.md")).unwrap(),
            question,
        );
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("job.json")).unwrap()).unwrap();
        let fallbacks = record["llm_fallbacks"].as_object().unwrap();
        let writer = record["writer"].as_str().unwrap();
        for reason in reasons {
            assert!(
                fallbacks.contains_key(*reason),
                "{trouble:?} {reason}: {record}"
            );
        }
        match trouble {
            Some(_) => assert!(writer.starts_with("extractive"), "{record}"),
            None => assert!(writer == "llm" && fallbacks.is_empty(), "{record}"),
        }
    }
    fleet.cleanup().await;
}

/// A provider that answers 429 for far longer than a message may run (issue 24's bad input,
/// shortened from minutes): the calls wait it out, a handler cut off while it waits goes back
/// without spending an attempt, and once the provider recovers every job ends with the model's
/// own report and no step fell back; nothing is dead-lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_storm_longer_than_a_message_may_run_delays_jobs_and_loses_none() {
    use trawl_broker::Broker;
    use trawl_integration_tests::simweb::llm::script::{set_trouble, Trouble};
    use trawl_store::prelude::*;
    const STORM: std::time::Duration = std::time::Duration::from_secs(15);
    let mut fleet = Fleet::start().await;
    let model = "storm-test";
    let web = fleet.simweb.base_url();
    for (k, v) in [
        ("TRAWL__LLM__PROVIDER", "openai".to_owned()),
        ("TRAWL__LLM__BASE_URL", format!("{web}/v1")),
        ("TRAWL__LLM__MODEL", model.to_owned()),
        ("TRAWL__LLM__MAX_RETRIES", "1".to_owned()),
        // The storm outlasts several message timeouts; were each cut-off an attempt, two
        // attempts would dead-letter the job's messages.
        ("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS", "4".to_owned()),
        ("TRAWL__BROKER__MAX_ATTEMPTS", "2".to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
    ] {
        fleet.env.push((k.to_owned(), v));
    }
    set_trouble(model, Some(Trouble::RateLimited));
    fleet.spawn_all();
    let questions: Vec<_> = fleet.corpus.questions().into_iter().take(2).collect();
    let queries: Vec<String> = questions.iter().map(|q| q.query.clone()).collect();
    let batch = fleet.submit(&queries).await;
    tokio::time::sleep(STORM).await;
    let during = fleet.store.batch_progress(&batch).await.unwrap().unwrap();
    assert_eq!(
        during.finished, 0,
        "no job can end while every call meets a 429"
    );
    set_trouble(model, None);
    fleet
        .wait_done(&batch, std::time::Duration::from_secs(180))
        .await;
    for (job, query) in fleet.manifest(&batch) {
        let dir = fleet.job_dir(&batch, &job);
        let question = questions.iter().find(|q| q.query == query).unwrap();
        common::assert_cites_answer(
            &std::fs::read_to_string(dir.join("report.md")).unwrap(),
            question,
        );
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("job.json")).unwrap()).unwrap();
        assert_eq!(record["status"], "done", "{record}");
        assert_eq!(record["writer"], "llm", "{record}");
        let fallbacks = record["llm_fallbacks"].as_object().unwrap();
        assert!(fallbacks.is_empty(), "{record}");
    }
    let dead = fleet.broker.depth(trawl_broker::Queue::Dead).await.unwrap();
    assert_eq!(dead, 0, "a rate limit dead-lettered a message");
    fleet.cleanup().await;
}

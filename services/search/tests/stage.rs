//! The search stage end to end over HTTP against simweb: the provider chain's fallback, caching
//! of provider answers, the LLM analysis path, and the work product.

use std::collections::BTreeMap;
use std::sync::Arc;

use trawl_config::{Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_messages::{paths, Envelope, JobOptions, Queue, SearchTask};
use trawl_pipeline::{Runtime, Stage};

/// simweb and a scratch output directory.
async fn setup() -> (Arc<Corpus>, Simweb, tempfile::TempDir) {
    let corpus = Arc::new(Corpus::generate());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    (corpus, web, tempfile::tempdir().unwrap())
}

fn config(web: &Simweb, dir: &std::path::Path) -> Config {
    let mut c = Config::default();
    c.output.url = format!("file://{}", dir.display());
    c.search.searxng_url = web.base_url();
    for (name, prefix) in [
        ("serper", "serper"),
        ("brave", "brave"),
        ("tavily", "tavily"),
    ] {
        c.search
            .endpoints
            .insert(name.into(), format!("{}/{prefix}", web.base_url()));
    }
    c
}

async fn run(stage: &trawl_search::SearchStage, rt: &Runtime, query: &str) -> serde_json::Value {
    let task = SearchTask::new(query.into(), JobOptions::default());
    let env = Envelope::new(
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
        chrono::Utc::now() + chrono::Duration::hours(1),
        task,
    );
    let (batch, job) = (env.batch_id, env.job_id);
    stage.handle(rt, env).await.expect("search handled");
    serde_json::from_slice(
        &rt.objects
            .get(&paths::search(batch, job))
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap()
}

fn outcomes(record: &serde_json::Value) -> Vec<(String, String)> {
    record["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["provider"].as_str().unwrap().to_owned(),
                a["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_chain_falls_back_and_a_repeat_is_served_from_the_cache() {
    let (corpus, web, dir) = setup().await;
    let mut c = config(&web, dir.path());
    // tavily has no key (skipped), serper points at a closed port (fails), brave answers.
    c.search.providers = vec!["tavily".into(), "serper".into(), "brave".into()];
    c.search
        .endpoints
        .insert("serper".into(), "http://127.0.0.1:1".into());
    let env: BTreeMap<String, String> = [("SERPER_API_KEY", "k1"), ("BRAVE_API_KEY", "k2")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stage = trawl_search::SearchStage::with_env(&c, &env).unwrap();
    let rt = Runtime::embedded(c).unwrap();
    let q = corpus.questions().remove(0);

    let record = run(&stage, &rt, &q.query).await;
    let seen = outcomes(&record);
    assert_eq!(seen[0], ("tavily".into(), "skipped".into()), "{seen:?}");
    assert_eq!(
        seen[1],
        ("serper".into(), "request_error".into()),
        "{seen:?}"
    );
    assert!(
        seen[2..].iter().all(|(p, o)| p == "brave" && o == "ok"),
        "{seen:?}"
    );
    let selected: Vec<&str> = record["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["selected"] == true)
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert!(
        selected
            .iter()
            .any(|u| q.answer_urls.iter().any(|a| a == u)),
        "{selected:?}"
    );
    assert!(rt.broker.depth(Queue::Fetch).await.unwrap() as usize >= selected.len());

    // The same question again: brave is not asked again.
    let brave_hits = web
        .stats()
        .snapshot()
        .iter()
        .filter(|(_, path, _)| path.starts_with("/brave/"))
        .map(|(_, _, n)| n)
        .sum::<u64>();
    let again = run(&stage, &rt, &q.query).await;
    assert!(outcomes(&again)
        .iter()
        .any(|(p, o)| p == "brave" && o == "cached"));
    let after = web
        .stats()
        .snapshot()
        .iter()
        .filter(|(_, path, _)| path.starts_with("/brave/"))
        .map(|(_, _, n)| n)
        .sum::<u64>();
    assert_eq!(
        brave_hits, after,
        "a repeated query called the provider again"
    );
}

#[tokio::test]
async fn llm_analysis_and_tavily_answers_reach_the_work_product() {
    let (corpus, web, dir) = setup().await;
    let mut c = config(&web, dir.path());
    c.search.providers = vec!["tavily".into()];
    c.search.llm_relevance = true;
    c.llm = Some(LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "simweb-1".into(),
        ..Default::default()
    });
    let env: BTreeMap<String, String> = [("TAVILY_API_KEY", "t"), ("OPENAI_API_KEY", "o")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stage = trawl_search::SearchStage::with_env(&c, &env).unwrap();
    let rt = Runtime::embedded(c).unwrap();
    let q = corpus.questions().remove(1);

    let record = run(&stage, &rt, &q.query).await;
    assert_eq!(record["analysis"]["path"], "llm", "{}", record["analysis"]);
    assert!(!record["analysis"]["target_data_points"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(
        !record["answers"].as_array().unwrap().is_empty(),
        "tavily's answer was dropped"
    );
    assert!(record["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["llm_relevance"].is_object()));

    // An LLM that answers nonsense twice falls back to the heuristic, and says so.
    let broken = run(&stage, &rt, &format!("{} simweb:badjson-always", q.query)).await;
    assert_eq!(broken["analysis"]["path"], "heuristic");
    assert!(
        broken["analysis"]["llm_error"]
            .as_str()
            .unwrap()
            .contains("not the JSON"),
        "{}",
        broken["analysis"]
    );
}

#[tokio::test]
async fn an_empty_question_ends_with_no_sources_and_no_provider_call() {
    let (_, web, dir) = setup().await;
    let c = config(&web, dir.path());
    let stage = trawl_search::SearchStage::with_env(&c, &BTreeMap::new()).unwrap();
    let rt = Runtime::embedded(c).unwrap();
    let record = run(&stage, &rt, "   ").await;
    assert!(record["attempts"].as_array().unwrap().is_empty());
    assert!(record["results"].as_array().unwrap().is_empty());
    // The job goes straight to synthesis (which says there was nothing to read).
    assert_eq!(rt.broker.depth(Queue::Synthesize).await.unwrap(), 1);
}

#[tokio::test]
async fn rerank_and_llm_selection_take_part_and_are_recorded() {
    let (corpus, web, dir) = setup().await;
    let mut c = config(&web, dir.path());
    c.search.providers = vec!["searxng".into()];
    c.search.rerank = true;
    c.search.selection = trawl_config::Selection::Llm;
    c.llm = Some(LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "simweb-1".into(),
        embedding_model: "simweb-embed".into(),
        ..Default::default()
    });
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "o".to_string())]
        .into_iter()
        .collect();
    let stage = trawl_search::SearchStage::with_env(&c, &env).unwrap();
    let rt = Runtime::embedded(c).unwrap();
    let q = corpus.questions().remove(2);

    let record = run(&stage, &rt, &q.query).await;
    let results = record["results"].as_array().unwrap();
    assert!(
        results.iter().any(|r| r["similarity"].is_number()),
        "rerank did not run"
    );
    let picked: Vec<&serde_json::Value> =
        results.iter().filter(|r| r["selected"] == true).collect();
    assert!(!picked.is_empty() && picked.iter().all(|r| r["reason"] == "picked by the LLM"));
    assert!(picked.iter().any(|r| q
        .answer_urls
        .iter()
        .any(|a| a == r["url"].as_str().unwrap())));
    assert!(record["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("reranked")));
}

/// Search providers and the LLM go through the proxy their config or the environment names,
/// and `NO_PROXY` exempts a host. simweb is the proxy here: it answers by path whatever host a
/// request names, and records that host. Nothing leaves loopback: the provider's `.invalid`
/// name is only ever sent to the proxy (never resolved), and the LLM's address is a closed
/// port on 127.0.0.2, reachable through the proxy alone.
#[tokio::test]
async fn providers_and_the_llm_go_through_their_proxy() {
    let (corpus, web, dir) = setup().await;
    let mut c = config(&web, dir.path());
    c.search.providers = vec!["tavily".into()];
    c.search
        .endpoints
        .insert("tavily".into(), "http://search.invalid/tavily".into());
    c.search.proxy = web.base_url();
    let closed = std::net::TcpListener::bind("127.0.0.2:0")
        .unwrap()
        .local_addr()
        .unwrap();
    c.llm = Some(LlmConfig {
        base_url: format!("http://{closed}/v1"),
        model: "simweb-1".into(),
        max_retries: 0,
        ..Default::default()
    });
    let env = |extra: &[(&str, &str)]| -> BTreeMap<String, String> {
        [("TAVILY_API_KEY", "t"), ("OPENAI_API_KEY", "o")]
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let proxy = web.base_url();
    let q = corpus.questions().remove(1);
    let stage =
        trawl_search::SearchStage::with_env(&c, &env(&[("HTTP_PROXY", proxy.as_str())])).unwrap();
    let rt = Runtime::embedded(c.clone()).unwrap();
    let record = run(&stage, &rt, &q.query).await;
    assert_eq!(record["analysis"]["path"], "llm", "{}", record["analysis"]);
    assert!(!record["results"].as_array().unwrap().is_empty());
    let hosts: Vec<String> = (web.stats().snapshot().into_iter())
        .map(|(host, _, _)| host)
        .collect();
    assert!(hosts.iter().any(|h| h == "search.invalid"), "{hosts:?}");
    assert!(hosts.iter().any(|h| h == "127.0.0.2"), "{hosts:?}");

    // NO_PROXY exempts the LLM's host: its closed port refuses, and analysis falls back.
    let stage = trawl_search::SearchStage::with_env(
        &c,
        &env(&[("HTTP_PROXY", proxy.as_str()), ("NO_PROXY", "127.0.0.2")]),
    )
    .unwrap();
    let rt = Runtime::embedded(c).unwrap();
    let record = run(&stage, &rt, &format!("{} again", q.query)).await;
    assert_ne!(record["analysis"]["path"], "llm", "{}", record["analysis"]);
}

#[tokio::test]
async fn a_follow_up_round_selects_only_untried_urls_and_records_why() {
    let (corpus, web, dir) = setup().await;
    let mut c = config(&web, dir.path());
    c.search.providers = vec!["searxng".into()];
    c.research.urls_per_round = 3;
    let stage = trawl_search::SearchStage::with_env(&c, &BTreeMap::new()).unwrap();
    let rt = Runtime::embedded(c).unwrap();
    let q = corpus.questions().remove(0);
    let deadline = chrono::Utc::now() + chrono::Duration::hours(1);
    let first = Envelope::new(
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
        deadline,
        SearchTask::new(q.query.clone(), JobOptions::default()),
    );
    let (batch, job) = (first.batch_id, first.job_id);
    stage.handle(&rt, first).await.expect("first round");
    let fetches = rt.broker.depth(Queue::Fetch).await.unwrap();
    let tried: Vec<String> = serde_json::from_slice::<trawl_messages::SearchRecord>(
        &rt.objects
            .get(&paths::search(batch, job))
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap()
    .results
    .into_iter()
    .filter(|s| s.selected)
    .map(|s| s.url)
    .collect();

    // Another question's search: pages the first round did not see.
    let other = corpus.questions().remove(1);
    let round = trawl_messages::Round {
        n: 2,
        why: vec!["no source read states the thing".into()],
        queries: vec![other.query.clone()],
    };
    let mut task = SearchTask::new(q.query.clone(), JobOptions::default());
    task.round = Some(round.clone());
    let env = Envelope::new(job, batch, deadline, task);
    // Handled twice, as a redelivery would: the job grows once.
    stage.handle(&rt, env.clone()).await.expect("round 2");
    stage.handle(&rt, env).await.expect("round 2 again");

    let record: trawl_messages::SearchRecord = serde_json::from_slice(
        &(rt.objects.get(&paths::search_round(batch, job, 2)).await)
            .unwrap()
            .expect("search-2.json"),
    )
    .unwrap();
    assert_eq!(record.round, Some(round.clone()));
    let picked: Vec<&str> = (record.results.iter())
        .filter(|s| s.selected)
        .map(|s| s.url.as_str())
        .collect();
    assert!(!picked.is_empty() && picked.len() <= 3, "{picked:?}");
    assert!(
        picked.iter().all(|u| !tried.iter().any(|t| t == u)),
        "{picked:?} {tried:?}"
    );
    let added = rt.broker.depth(Queue::Fetch).await.unwrap() - fetches;
    // Each of the round's sources went to fetch, once per handling.
    assert_eq!(added as usize, 2 * picked.len());
    let env = Envelope::new(
        job,
        batch,
        deadline,
        SearchTask::new(q.query, JobOptions::default()),
    );
    let job_ = trawl_pipeline::Job::new(&rt, &env);
    assert_eq!(job_.rounds().await.unwrap(), 2);
    let sources = job_.sources().await.unwrap().len();
    assert_eq!(sources, tried.len() + picked.len());

    // A job whose own max_urls is reached: round 3 asks no provider, adds nothing and sends
    // the job to synthesis.
    let asked = web.path_hits("127.0.0.1", "/search");
    let options = JobOptions {
        max_urls: Some(sources),
        ..JobOptions::default()
    };
    let mut task = SearchTask::new(other.query.clone(), options);
    task.round = Some(trawl_messages::Round { n: 3, ..round });
    let fetches = rt.broker.depth(Queue::Fetch).await.unwrap();
    stage
        .handle(&rt, Envelope::new(job, batch, deadline, task))
        .await
        .expect("round 3");
    assert_eq!(web.path_hits("127.0.0.1", "/search"), asked);
    assert_eq!(rt.broker.depth(Queue::Fetch).await.unwrap(), fetches);
    assert_eq!(rt.broker.depth(Queue::Synthesize).await.unwrap(), 1);
    assert!(rt
        .objects
        .get(&paths::search_round(batch, job, 3))
        .await
        .unwrap()
        .is_some());
    assert_eq!(job_.rounds().await.unwrap(), 3);
}

/// Two workers with their own store connections keep one provider's requests per second
/// together: in any stretch of time, simweb sees at most that stretch's share plus one.
#[tokio::test]
async fn workers_keep_a_providers_requests_per_second_together() {
    const RPS: f64 = 4.0;
    let (corpus, web, dir) = setup().await;
    let prefix = format!("search-rps-{}-{}", std::process::id(), uuid::Uuid::now_v7());
    let mut c = config(&web, dir.path());
    c.search.providers = vec!["searxng".into()];
    c.search.requests_per_second.insert("searxng".into(), RPS);
    c.store.url = Some(
        std::env::var("TRAWL_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into()),
    );
    c.store.prefix = prefix;
    let questions: Vec<String> = (corpus.questions().into_iter().take(6))
        .map(|q| q.query)
        .collect();
    let mut workers = Vec::new();
    for half in questions.chunks(3) {
        let rt = Runtime::connect(c.clone(), std::time::Duration::from_secs(5))
            .await
            .unwrap();
        let stage = trawl_search::SearchStage::with_env(&c, &BTreeMap::new()).unwrap();
        let half = half.to_vec();
        workers.push(tokio::spawn(async move {
            let searches = half.iter().map(|q| run(&stage, &rt, q));
            futures_util::future::join_all(searches).await;
            rt
        }));
    }
    let mut rts = Vec::new();
    for w in workers {
        rts.push(w.await.unwrap());
    }
    rts[0].store.delete_all().await.unwrap();

    let arrivals: Vec<std::time::Instant> = (web.stats().log("127.0.0.1").into_iter())
        .filter(|(path, _)| path.starts_with("/search"))
        .map(|(_, at)| at)
        .collect();
    assert!(arrivals.len() >= 6, "{} provider requests", arrivals.len());
    let interval = std::time::Duration::from_secs_f64(1.0 / RPS);
    for (i, first) in arrivals.iter().enumerate() {
        for (j, last) in arrivals.iter().enumerate().skip(i + 1) {
            // 50 ms for the trip from the store's grant to the server's arrival.
            let span = last.duration_since(*first) + std::time::Duration::from_millis(50);
            let allowed = (span.as_secs_f64() / interval.as_secs_f64()).floor() as usize + 1;
            assert!(
                j - i < allowed,
                "{} requests arrived within {span:?}; {RPS} a second allows {allowed}",
                j - i + 1
            );
        }
    }
    let metrics = trawl_telemetry::render();
    assert!(
        metrics
            .contains("trawl_search_provider_rate_limit_wait_seconds_total{provider=\"searxng\"}"),
        "the waits are counted: {metrics}"
    );
}

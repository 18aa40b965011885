//! The fleet end to end: simweb, the four worker binaries as separate processes on real
//! RabbitMQ and Redis, and the `trawl` CLI.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::Fleet;
use trawl_broker::{Broker, Queue};
use trawl_integration_tests::simweb::{Corpus, Question};
use trawl_messages::{Envelope, JobRecord, ResearchResult};

const BATCH: usize = 50;

fn questions(fleet: &Fleet) -> Vec<trawl_integration_tests::simweb::Question> {
    fleet.corpus.questions().into_iter().take(BATCH).collect()
}

/// Job id → question, from the batch manifest.
fn manifest(fleet: &Fleet, batch: &str) -> BTreeMap<String, String> {
    fleet.manifest(batch).into_iter().collect()
}

/// A job's report as synthesize stored it.
fn stored_report(fleet: &Fleet, batch: &str, job: &str) -> String {
    let path = fleet.job_dir(batch, job).join("report.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every result notification on the results queue, by job id.
async fn drain_results(fleet: &Fleet) -> Vec<String> {
    let mut jobs = Vec::new();
    let mut sub = fleet.broker.consume(Queue::Results, 100).await.unwrap();
    // Prefetched deliveries are not counted in the queue depth: drain until a quiet spell.
    while let Ok(Some(d)) = tokio::time::timeout(Duration::from_secs(3), sub.next()).await {
        let env =
            Envelope::<ResearchResult>::decode(&d.message.body).expect("results are decodable");
        jobs.push(env.job_id.to_string());
        d.ack().await.unwrap();
    }
    sub.cancel().await;
    jobs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_through_the_fleet_cites_answer_pages() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let qs = questions(&fleet);
    let batch = fleet
        .submit(&qs.iter().map(|q| q.query.clone()).collect::<Vec<_>>())
        .await;

    let args = ["status", batch.as_str(), "--wait"];
    let out = tokio::time::timeout(Duration::from_secs(300), fleet.trawl(&args))
        .await
        .unwrap_or_else(|_| {
            fleet.dump_logs();
            panic!("trawl status --wait did not finish");
        });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains(&format!("{BATCH}/{BATCH} jobs ended")),
        "{status}"
    );
    assert!(
        status.contains("queues (all batches): search 0")
            && status.contains("fetch_browser 0")
            && status.contains("cost so far: $0.0000"),
        "{status}"
    );

    let results_dir = fleet.dir.path().join("results");
    let out = fleet
        .trawl(&["results", &batch, "--out", results_dir.to_str().unwrap()])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let jobs = manifest(&fleet, &batch);
    assert_eq!(jobs.len(), BATCH);
    let by_query: BTreeMap<&str, &trawl_integration_tests::simweb::Question> =
        qs.iter().map(|q| (q.query.as_str(), q)).collect();
    for (job, query) in &jobs {
        let q = by_query[query.as_str()];
        let report = std::fs::read_to_string(results_dir.join(job).join("report.md")).unwrap();
        let sources: serde_json::Value = serde_json::from_slice(
            &std::fs::read(results_dir.join(job).join("sources.json")).unwrap(),
        )
        .unwrap();
        let cited: Vec<&serde_json::Value> = sources
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| !s["cited_as"].is_null())
            .collect();
        assert!(!cited.is_empty(), "{query}: nothing cited\n{report}");
        // Every citation is to a page that was fetched and analysed, and numbered 1..=n.
        for (i, s) in cited.iter().enumerate() {
            assert_eq!(s["outcome"]["outcome"], "analysed", "{query}: cited {s}");
            assert!(
                report.contains(&format!("[{}]", i + 1)),
                "{query}: [{}] missing\n{report}",
                i + 1
            );
        }
        assert!(
            !report.contains(&format!("[{}]", cited.len() + 1)),
            "{query}: dangling citation\n{report}"
        );
        for product in [
            "search.json",
            "search.md",
            "sources.md",
            "claims.json",
            "job.json",
        ] {
            assert!(
                results_dir.join(job).join(product).exists(),
                "{query}: no {product}"
            );
        }
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(results_dir.join(job).join("job.json")).unwrap())
                .unwrap();
        assert_eq!(record["status"], "done", "{record}");
        assert_eq!(record["answerable"], true, "{record}");
        assert!(
            record["answer_reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{record}"
        );
        // Every claim of an extractive report quotes its source: none is unsupported.
        assert!(record["claims"].as_u64() > Some(0), "{record}");
        assert_eq!(record["unsupported_claims"], 0, "{record}");
        assert!(
            record["stage_ms"]["fetch"].as_i64().is_some()
                && record["stage_ms"]["clean"].as_i64().is_some(),
            "{record}"
        );
        let answer_cited = cited.iter().any(|s| {
            q.answer_urls
                .iter()
                .any(|a| a == s["url"].as_str().unwrap())
        });
        assert!(
            answer_cited,
            "{query}: no cited page holds the answer ({:?})\n{report}",
            q.answer_urls
        );
    }

    let summary =
        std::fs::read_to_string(results_dir.join("summary.jsonl")).expect("summary.jsonl");
    let lines: Vec<serde_json::Value> = summary
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), BATCH);
    for line in &lines {
        assert!(jobs.contains_key(line["job_id"].as_str().unwrap()));
        assert_eq!(line["status"], "done", "{line}");
        assert!(line["sources_used"].as_u64().unwrap() >= 1, "{line}");
    }
    assert!(results_dir.join("summary.md").exists());
    let jsonl_dir = fleet.dir.path().join("jsonl");
    let out = fleet
        .trawl(&[
            "results",
            &batch,
            "--out",
            jsonl_dir.to_str().unwrap(),
            "--format",
            "jsonl",
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(jsonl_dir.join("results.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), BATCH);
    assert!(records
        .iter()
        .all(|r| r["status"] == "done" && r["report"].as_str().unwrap().contains("[1]")));

    // Politeness: nothing robots.txt disallows was fetched, and robots.txt once per host.
    for page in fleet.corpus.pages() {
        if !page.allowed_for_trawl() {
            assert_eq!(
                fleet.simweb.path_hits(&page.host, &page.path),
                0,
                "fetched disallowed {}",
                page.url
            );
        }
    }
    for host in fleet.corpus.hosts() {
        assert!(
            fleet.simweb.path_hits(&host, "/robots.txt") <= 1,
            "robots.txt of {host} fetched twice"
        );
    }
    assert_eq!(
        fleet.broker.depth(Queue::Dead).await.unwrap(),
        0,
        "messages were dead-lettered"
    );
    let notified: BTreeSet<String> = drain_results(&fleet).await.into_iter().collect();
    assert_eq!(notified, jobs.keys().cloned().collect());

    // SIGTERM: every worker stops consuming, drains and exits cleanly.
    for (name, clean) in fleet.terminate_all(Duration::from_secs(20)).await {
        assert!(clean, "{name} did not exit cleanly on SIGTERM");
    }
    fleet.cleanup().await;
}

/// Questions whose first search cannot find one of the two data points they ask for: a
/// follow-up round searches for it, fetches the one page that states it, and the report has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_round_finds_what_the_first_search_missed() {
    let mut fleet = Fleet::start_with(Corpus::generate_with_follow_ups()).await;
    fleet.spawn_all();
    let qs: Vec<Question> = (fleet.corpus.questions().into_iter())
        .filter(|q| q.follow_up.is_some())
        .collect();
    assert!(qs.len() >= 3);
    let batch = fleet
        .submit(&qs.iter().map(|q| q.query.clone()).collect::<Vec<_>>())
        .await;
    let progress = fleet.wait_done(&batch, Duration::from_secs(240)).await;
    assert_eq!(
        progress.by_status.get("done"),
        Some(&(qs.len() as u64)),
        "{progress:?}"
    );
    for (job, query) in manifest(&fleet, &batch) {
        let q = qs.iter().find(|q| q.query == query).unwrap();
        let missed = q.follow_up.as_ref().unwrap();
        let dir = fleet.job_dir(&batch, &job);
        let record: JobRecord =
            serde_json::from_slice(&std::fs::read(dir.join("job.json")).unwrap()).unwrap();
        // One follow-up round, for the data point the first round missed, with its own search.
        let [round] = &record.rounds[..] else {
            panic!("{query}: rounds {:?}", record.rounds);
        };
        assert_eq!(round.round.n, 2);
        assert_eq!(
            round.round.why,
            [format!("no source read states the {}", missed.data_point)],
            "{query}"
        );
        assert_eq!(round.round.queries, std::slice::from_ref(&missed.query));
        assert!(round.selected.contains(&missed.url), "{query}: {round:?}");
        assert!(dir.join("search-2.json").exists());
        // The page it found is read and cited, and its value is in the report.
        let report = stored_report(&fleet, &batch, &job);
        assert!(report.contains(&missed.value), "{query}:\n{report}");
        assert!(report.contains(&missed.url), "{query}:\n{report}");
        assert!(report.contains("Follow-up round 2"), "{query}:\n{report}");
        assert_eq!(record.unsupported_claims, 0, "{query}:\n{report}");
    }
    // Each job grew once: the buried page was fetched once per job that asked for it.
    for q in &qs {
        let url = &q.follow_up.as_ref().unwrap().url;
        let page = fleet.corpus.page(url).unwrap();
        assert_eq!(fleet.simweb.path_hits(&page.host, &page.path), 1, "{url}");
    }
    assert_eq!(fleet.broker.depth(Queue::Dead).await.unwrap(), 0);
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_synthesises_what_arrived() {
    let mut fleet = Fleet::start().await;
    // No fetch worker: no outcome ever arrives, so only the deadline can end these jobs.
    fleet.spawn("trawl-search");
    fleet.spawn("trawl-synthesize");
    let lines: Vec<String> = questions(&fleet)
        .iter()
        .take(2)
        .map(|q| serde_json::json!({"query": q.query, "options": {"deadline_secs": 2}}).to_string())
        .collect();
    let batch = fleet.submit(&lines).await;
    let progress = fleet.wait_done(&batch, Duration::from_secs(90)).await;
    assert_eq!(progress.by_status.get("partial"), Some(&2), "{progress:?}");
    for job in manifest(&fleet, &batch).keys() {
        let report = stored_report(&fleet, &batch, job);
        assert!(report.contains("The deadline passed before"), "{report}");
        assert!(report.contains("No source could be read"), "{report}");
    }
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_search_never_runs_fails_at_its_deadline() {
    let mut fleet = Fleet::start().await;
    fleet.spawn("trawl-synthesize"); // no search worker
    let line = serde_json::json!({"query": "What is zorbium?", "options": {"deadline_secs": 1}})
        .to_string();
    let batch = fleet.submit(&[line]).await;
    let progress = fleet.wait_done(&batch, Duration::from_secs(60)).await;
    assert_eq!(progress.by_status.get("failed"), Some(&1), "{progress:?}");
    let job = manifest(&fleet, &batch).into_keys().next().unwrap();
    let report = stored_report(&fleet, &batch, &job);
    assert!(
        report.contains("did not complete before the job's deadline"),
        "{report}"
    );
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_announce_jobs_and_the_batch_signed() {
    use std::sync::{Arc, Mutex};
    /// (event kind, timestamp, signature, body) of each delivery.
    type Delivery = (String, String, String, String);
    let received: Arc<Mutex<Vec<Delivery>>> = Arc::default();
    let sink = Arc::clone(&received);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let sink = Arc::clone(&sink);
            async move {
                let h = |k: &str| {
                    headers
                        .get(k)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned()
                };
                sink.lock().unwrap().push((
                    h("x-trawl-event"),
                    h("x-trawl-timestamp"),
                    h("x-trawl-signature"),
                    body,
                ));
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let mut fleet = Fleet::start().await;
    fleet
        .env
        .push(("TRAWL_WEBHOOK_SECRET".into(), "whsec-test".into()));
    fleet.spawn_all();
    // The first names itself, carries metadata and asks for a field; the second is known by
    // its line number.
    let qs = questions(&fleet);
    let fields =
        serde_json::json!({"type": "object", "properties": {"colour": {"type": "string"}}});
    let lines = [
        serde_json::json!({"query": qs[0].query, "id": "first", "metadata": {"ticket": 7}, "fields": fields})
            .to_string(),
        qs[1].query.clone(),
    ];
    let batch = fleet.submit_with(&lines, &["--webhook", &hook]).await;
    fleet.wait_done(&batch, Duration::from_secs(120)).await;

    let started = tokio::time::Instant::now();
    while received.lock().unwrap().len() < 3 && started.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let events = received.lock().unwrap().clone();
    let kinds: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "job.completed").count(),
        2,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "batch.completed").count(),
        1,
        "{kinds:?}"
    );
    for (_, timestamp, signature, body) in &events {
        let expected = trawl_synthesize::webhook::signature(
            b"whsec-test",
            timestamp.parse().unwrap(),
            body.as_bytes(),
        );
        assert_eq!(signature, &expected, "bad signature on {body}");
    }
    // Each job.completed carries the job's own id and metadata, and its answer when it asked
    // for fields.
    let mut announced: Vec<(String, serde_json::Value, serde_json::Value)> = (events.iter())
        .filter(|e| e.0 == "job.completed")
        .map(|e| {
            let event: serde_json::Value = serde_json::from_str(&e.3).unwrap();
            let id = event["data"]["id"].as_str().unwrap_or_default().to_owned();
            let colour = event["data"]["answer"]["fields"]["colour"]["status"].clone();
            (id, event["data"]["metadata"].clone(), colour)
        })
        .collect();
    announced.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        announced,
        [
            (
                "2".to_owned(),
                serde_json::json!({}),
                serde_json::Value::Null
            ),
            (
                "first".to_owned(),
                serde_json::json!({"ticket": 7}),
                serde_json::json!("not_found")
            ),
        ]
    );
    fleet.cleanup().await;
}

/// A worker's entry point runs in-process as well as in its own binary: it takes its stop as a
/// future (a process passes its signals), handles what it was given, and returns once the
/// future resolves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_in_process_stops_when_its_stop_resolves() {
    use trawl_messages::SearchTask;
    use trawl_pipeline::{Handled, Runtime, Stage, StageError};

    struct Seen(tokio::sync::mpsc::UnboundedSender<String>);
    #[async_trait::async_trait]
    impl Stage for Seen {
        type Input = SearchTask;
        async fn handle(
            &self,
            _rt: &Runtime,
            msg: Envelope<SearchTask>,
        ) -> Result<Handled, StageError> {
            let _ = self.0.send(msg.body.query.clone());
            Ok(Handled::Done)
        }
    }

    let fleet = Fleet::start().await;
    let env: BTreeMap<String, String> = fleet.fleet_env().into_iter().collect();
    let config = trawl_config::Config::load(None, &env).unwrap();
    let (seen, mut handled) = tokio::sync::mpsc::unbounded_channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(trawl_pipeline::serve::run(
        config.clone(),
        Queue::Search,
        Seen(seen),
        async {
            let _ = stopped.await;
        },
    ));
    let rt = Runtime::connect(config, Duration::from_secs(10))
        .await
        .unwrap();
    let task = SearchTask::new("in-process".into(), Default::default());
    let deadline = chrono::Utc::now() + chrono::Duration::minutes(5);
    let (job, batch) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    rt.publish(Queue::Search, &Envelope::new(job, batch, deadline, task))
        .await
        .unwrap();
    let query = tokio::time::timeout(Duration::from_secs(60), handled.recv())
        .await
        .expect("the in-process worker took no message")
        .unwrap();
    assert_eq!(query, "in-process");
    stop.send(()).unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), worker)
        .await
        .expect("the worker did not stop when its stop resolved")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    fleet.cleanup().await;
}

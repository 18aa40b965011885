//! The HTTP API over real HTTP, in front of the fleet on RabbitMQ and Redis: a batch submitted
//! through the API completes and its results are read back through it; retried submissions
//! with an Idempotency-Key create no second batch; bad requests get the right 4xx with a JSON
//! error and enqueue nothing; the CLI's batch commands work through the API (`--server`); the
//! results export pages by cursor, gzips, and shows a batch to its owner only; the user's own
//! ids and metadata come back in job.json, the summary, the job resources and every export.

use crate::common;

use std::collections::BTreeSet;
use std::io::Read;
use std::process::Output;
use std::time::Duration;

use common::Fleet;
use serde_json::{json, Value};
use trawl_broker::{Broker, Queue};
use trawl_store::prelude::*;

struct Api {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Api {
    /// Starts `trawl serve` on a free port beside the fleet, allowing each token `rate`
    /// requests per second, and creates a token.
    async fn start(fleet: &mut Fleet, rate: u32) -> Api {
        let base = fleet
            .serve(&[
                ("TRAWL__API__MAX_BODY_BYTES", "65536".into()),
                ("TRAWL__API__MAX_QUESTIONS", "50".into()),
                ("TRAWL__API__RATE_PER_SEC", rate.to_string()),
            ])
            .await;
        Api {
            base,
            token: fleet.create_token("api-test").await,
            http: reqwest::Client::new(),
        }
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    /// GET `path` with the token: (status, JSON body).
    async fn get_json(&self, path: &str) -> (u16, Value) {
        json_of(self.get(path).send().await.unwrap()).await
    }

    /// The server's `/metrics` exposition (no token needed).
    async fn metrics(&self) -> String {
        common::get_text(&format!("{}/metrics", self.base)).await
    }
}

async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    let value =
        serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON ({status}): {body}"));
    (status, value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_submitted_through_the_api_completes_and_is_read_back() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let api = Api::start(&mut fleet, 1000).await;
    let questions: Vec<Value> = fleet
        .corpus
        .questions()
        .into_iter()
        .take(3)
        .map(|q| json!({"query": q.query}))
        .collect();
    let body = json!({"questions": questions, "options": {"max_urls": 4}});

    let submit = || {
        api.post("/v1/batches")
            .header("Idempotency-Key", "batch-1")
            .json(&body)
    };
    let (status, created) = json_of(submit().send().await.unwrap()).await;
    assert_eq!(status, 201, "{created}");
    let batch = created["batch_id"].as_str().unwrap().to_owned();
    assert_eq!(created["jobs"].as_array().unwrap().len(), 3);

    // A retry with the same key and body is the same batch, not a second one.
    let replay = submit().send().await.unwrap();
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    let (status, again) = json_of(replay).await;
    assert_eq!(
        (status, again["batch_id"].as_str()),
        (200, Some(batch.as_str()))
    );
    let other = json!({"questions": [{"query": "something else"}]});
    let (status, conflict) = json_of(
        api.post("/v1/batches")
            .header("Idempotency-Key", "batch-1")
            .json(&other)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, conflict["error"]["code"].as_str()),
        (422, Some("idempotency_conflict"))
    );
    assert_eq!(
        fleet.store.batches_open().await.unwrap(),
        vec![batch.clone()]
    );

    // Server-sent events follow the batch to its end.
    let mut events = api
        .get(&format!("/v1/batches/{batch}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    let followed = tokio::time::timeout(Duration::from_secs(300), async {
        while let Some(chunk) = events.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("event: done") {
                return;
            }
        }
    })
    .await;
    if followed.is_err() {
        fleet.dump_logs();
        panic!("no done event; saw:\n{seen}");
    }
    assert!(seen.contains("event: progress"), "{seen}");

    let (status, state) = api.get_json(&format!("/v1/batches/{batch}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        (state["done"].as_bool(), state["finished"].as_u64()),
        (Some(true), Some(3)),
        "{state}"
    );

    // Pages of two: the cursor walks the jobs in submission order.
    let (_, first) = api
        .get_json(&format!("/v1/batches/{batch}/jobs?limit=2"))
        .await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (_, second) = api
        .get_json(&format!("/v1/batches/{batch}/jobs?limit=2&cursor={cursor}"))
        .await;
    assert!(second["next_cursor"].is_null());
    // A filter by state keeps the cursor a place in the batch.
    let by_status: Vec<(String, u64)> = (state["by_status"].as_object().unwrap().iter())
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    for (status, count) in &by_status {
        let (_, page) = api
            .get_json(&format!("/v1/batches/{batch}/jobs?status={status}&limit=1"))
            .await;
        let listed = page["jobs"].as_array().unwrap();
        assert!(
            listed.iter().all(|j| j["status"] == status.as_str()),
            "{page}"
        );
        assert_eq!(page["next_cursor"].is_string(), *count > 1, "{page}");
    }
    let (_, none) = api
        .get_json(&format!("/v1/batches/{batch}/jobs?status=pending"))
        .await;
    assert_eq!(none["jobs"], json!([]));
    for bad in [
        "cursor=zzz",
        "cursor=99",
        "limit=0",
        "limit=many",
        "status=finished",
    ] {
        let (status, body) = api
            .get_json(&format!("/v1/batches/{batch}/jobs?{bad}"))
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("bad_request")),
            "{bad}"
        );
    }
    let jobs: Vec<Value> = first["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["jobs"].as_array().unwrap())
        .cloned()
        .collect();
    let submitted: Vec<&Value> = created["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| &j["job_id"])
        .collect();
    assert_eq!(
        jobs.iter().map(|j| &j["job_id"]).collect::<Vec<_>>(),
        submitted
    );

    let cited = jobs
        .iter()
        .find(|j| j["status"] == "done")
        .expect("a job with sources");
    let job = cited["job_id"].as_str().unwrap();
    let (status, detail) = api.get_json(&format!("/v1/jobs/{job}")).await;
    assert_eq!(status, 200);
    assert!(
        detail["report"].as_str().unwrap().contains("[1]"),
        "{detail}"
    );
    let products: Vec<&str> = detail["work_products"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(products.contains(&"sources.json"), "{products:?}");
    let sources = api
        .get(&format!("/v1/jobs/{job}/work-products/sources.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(sources.headers()["content-type"], "application/json");
    let sources: Value = sources.json().await.unwrap();
    assert!(sources.is_array() || sources.is_object());
    let (status, _) = api
        .get_json(&format!(
            "/v1/jobs/{job}/work-products/..%2F..%2Fbatch.json"
        ))
        .await;
    assert_eq!(status, 404);

    // Another token sees none of it.
    let other = fleet.create_token("other").await;
    let response = api
        .http
        .get(format!("{}/v1/batches/{batch}", api.base))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_clear_4xx_and_enqueue_nothing() {
    let mut fleet = Fleet::start().await;
    let api = Api::start(&mut fleet, 1000).await;
    let url = format!("{}/v1/batches", api.base);
    let ok_body = json!({"questions": [{"query": "why is the sky blue"}]});

    let cases: Vec<(&str, reqwest::RequestBuilder, u16, &str)> = vec![
        (
            "no token",
            api.http.post(&url).json(&ok_body),
            401,
            "unauthorized",
        ),
        (
            "wrong token",
            api.http
                .post(&url)
                .bearer_auth(format!("trawl_{}", "ab".repeat(32)))
                .json(&ok_body),
            401,
            "unauthorized",
        ),
        (
            "not a bearer token",
            api.http
                .post(&url)
                .header("Authorization", "Basic Zm9vOmJhcg==")
                .json(&ok_body),
            401,
            "unauthorized",
        ),
        (
            "malformed JSON",
            api.post("/v1/batches")
                .header("Content-Type", "application/json")
                .body("{\"questions\": ["),
            400,
            "bad_request",
        ),
        (
            "not JSON",
            api.post("/v1/batches")
                .header("Content-Type", "text/plain")
                .body("why?"),
            415,
            "unsupported_media_type",
        ),
        (
            "oversized body",
            api.post("/v1/batches")
                .header("Content-Type", "application/json")
                .body(format!(
                    "{{\"questions\": [{{\"query\": \"{}\"}}]}}",
                    "x".repeat(100_000)
                )),
            413,
            "too_large",
        ),
        (
            "too many questions",
            api.post("/v1/batches").json(&json!({
                "questions": (0..51).map(|i| json!({"query": format!("q{i}")})).collect::<Vec<_>>()
            })),
            413,
            "too_large",
        ),
        (
            "no questions",
            api.post("/v1/batches").json(&json!({"questions": []})),
            422,
            "invalid_request",
        ),
        (
            "bad option",
            api.post("/v1/batches")
                .json(&json!({"questions": [{"query": "q", "options": {"max_level": 9}}]})),
            422,
            "invalid_request",
        ),
        (
            "unknown field",
            api.post("/v1/batches")
                .json(&json!({"questions": [{"query": "q"}], "priority": 1})),
            422,
            "invalid_request",
        ),
        (
            "bad webhook",
            api.post("/v1/batches")
                .json(&json!({"questions": [{"query": "q"}], "webhook": "ftp://x"})),
            422,
            "invalid_request",
        ),
        (
            "unknown batch",
            api.get("/v1/batches/0190c5a0-0000-7000-8000-000000000000"),
            404,
            "not_found",
        ),
        (
            "not an id",
            api.get("/v1/jobs/not-a-uuid"),
            404,
            "not_found",
        ),
        (
            "no such endpoint",
            api.get("/v2/anything"),
            404,
            "not_found",
        ),
        (
            "wrong method",
            api.http.put(&url).bearer_auth(&api.token),
            405,
            "method_not_allowed",
        ),
    ];
    for (what, request, want, code) in cases {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        if status == 401 {
            assert!(
                response.headers().contains_key("www-authenticate"),
                "{what}"
            );
        }
        let (_, body) = json_of(response).await;
        assert_eq!(status, want, "{what}: {body}");
        assert_eq!(body["error"]["code"].as_str(), Some(code), "{what}: {body}");
        assert!(
            !body["error"]["message"].as_str().unwrap().is_empty(),
            "{what}"
        );
    }

    // Health and metrics need no token; the document describes the API.
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        let response = api
            .http
            .get(format!("{}{path}", api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
    }
    let metrics = api.metrics().await;
    assert!(metrics.contains("route=\"/v1/batches\""), "{metrics}");
    assert!(!metrics.contains("0190c5a0"), "an id became a label");

    // A token past its rate is told when to come back; every replica counts in the store.
    let slow = Api::start(&mut fleet, 2).await;
    let mut limited = None;
    for _ in 0..5 {
        let response = slow
            .get("/v1/batches/0190c5a0-0000-7000-8000-000000000000")
            .send()
            .await
            .unwrap();
        if response.status().as_u16() == 429 {
            limited = Some(response);
            break;
        }
    }
    let response =
        limited.expect("5 requests in a row past a limit of 2 per second were all served");
    assert_eq!(response.headers()["retry-after"], "1");
    let (_, body) = json_of(response).await;
    assert_eq!(body["error"]["code"], "rate_limited");

    assert_eq!(fleet.broker.depth(Queue::Search).await.unwrap(), 0);
    assert!(fleet.store.batches_open().await.unwrap().is_empty());
    fleet.cleanup().await;
}

/// Runs the `trawl` CLI with the fleet's environment but without its broker and store URLs,
/// so the fleet is reachable only through the API, plus `env`.
async fn trawl_remote(fleet: &Fleet, args: &[&str], env: &[(&str, &str)]) -> Output {
    fleet
        .trawl_alone()
        .args(args)
        .env_remove("TRAWL__BROKER__URL")
        .env_remove("TRAWL__STORE__URL")
        .env_remove("TRAWL_SERVER")
        .env_remove("TRAWL_TOKEN")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &std::path::Path) -> BTreeSet<String> {
    common::files_under(dir)
        .iter()
        .map(|path| {
            let rel = path.strip_prefix(dir).unwrap();
            rel.to_string_lossy().into_owned()
        })
        .collect()
}

fn jsonl(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_drives_batches_through_the_api_with_server_and_token() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let api = Api::start(&mut fleet, 1000).await;
    let flags = ["--server", api.base.as_str(), "--token", api.token.as_str()];
    let from_env = [
        ("TRAWL_SERVER", api.base.as_str()),
        ("TRAWL_TOKEN", api.token.as_str()),
    ];
    let lines: Vec<String> = fleet
        .corpus
        .questions()
        .into_iter()
        .take(3)
        .map(|q| json!({"query": q.query, "options": {"max_urls": 4}}).to_string())
        .collect();
    let file = fleet.dir.path().join("remote.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let file = file.to_str().unwrap();

    // Without a server or a fleet, the batch commands say how to get either.
    let out = trawl_remote(&fleet, &["submit", file], &[]).await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--server URL --token T"),
        "{}",
        stderr(&out)
    );

    let out = trawl_remote(&fleet, &[&["submit", file][..], &flags].concat(), &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("enqueued 3 questions"),
        "{}",
        stderr(&out)
    );
    let batch = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    uuid::Uuid::parse_str(&batch).expect("submit prints the batch id");
    assert_eq!(
        fleet.store.batches_open().await.unwrap(),
        vec![batch.clone()]
    );

    // The server and token may come from the environment instead of the arguments.
    let waited = tokio::time::timeout(
        Duration::from_secs(300),
        trawl_remote(&fleet, &["status", &batch, "--wait"], &from_env),
    )
    .await;
    let Ok(out) = waited else {
        fleet.dump_logs();
        panic!("trawl status --wait --server did not finish");
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.starts_with(&format!("batch {batch}: 3/3 jobs ended"))
            && status.contains("cost so far: $"),
        "{status}"
    );

    // Results through the API are the files the local command writes, but for the batch
    // summary the API does not serve.
    let remote_dir = fleet.dir.path().join("remote-md");
    let out = trawl_remote(
        &fleet,
        &[
            &["results", &batch, "--out", remote_dir.to_str().unwrap()][..],
            &flags,
        ]
        .concat(),
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("wrote 3 reports"), "{}", stderr(&out));
    let local_dir = fleet.dir.path().join("local-md");
    let out = fleet
        .trawl(&["results", &batch, "--out", local_dir.to_str().unwrap()])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let remote_files = files_under(&remote_dir);
    let mut local_files = files_under(&local_dir);
    local_files.remove("summary.jsonl");
    local_files.remove("summary.md");
    assert_eq!(remote_files, local_files);
    let reports: Vec<&String> = remote_files
        .iter()
        .filter(|f| f.ends_with("/report.md"))
        .collect();
    assert_eq!(reports.len(), 3, "{remote_files:?}");
    for file in remote_files {
        let remote = std::fs::read(remote_dir.join(&file)).unwrap();
        assert_eq!(
            remote,
            std::fs::read(local_dir.join(&file)).unwrap(),
            "{file}"
        );
        if file.ends_with("report.md") {
            assert!(!remote.is_empty(), "{file} is empty");
        }
    }

    // A replica allowing the token 1 request per second answers the export's page, asked for
    // right after the batch's status, with 429: the CLI waits as told and gets every file all
    // the same.
    let slow = Api::start(&mut fleet, 1).await;
    let slow_dir = fleet.dir.path().join("slow-md");
    let out = trawl_remote(
        &fleet,
        &[
            "results",
            &batch,
            "--out",
            slow_dir.to_str().unwrap(),
            "--server",
            &slow.base,
            "--token",
            &api.token,
        ],
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files_under(&slow_dir), files_under(&remote_dir));
    let metrics = slow.metrics().await;
    let limited = metrics.lines().any(|l| {
        l.contains("route=\"/v1/batches/{id}/results\"")
            && l.contains("status_class=\"4xx\"")
            && !l.ends_with(" 0")
    });
    assert!(limited, "no request was rate-limited:\n{metrics}");

    for format in ["jsonl", "json"] {
        let dir = fleet.dir.path().join(format!("remote-{format}"));
        let out = trawl_remote(
            &fleet,
            &[
                "results",
                &batch,
                "--out",
                dir.to_str().unwrap(),
                "--format",
                format,
            ],
            &from_env,
        )
        .await;
        assert!(out.status.success(), "{}", stderr(&out));
        let local = fleet.dir.path().join(format!("local-{format}"));
        let out = fleet
            .trawl(&[
                "results",
                &batch,
                "--out",
                local.to_str().unwrap(),
                "--format",
                format,
            ])
            .await;
        assert!(out.status.success(), "{}", stderr(&out));
        if format == "jsonl" {
            let records = jsonl(&dir.join("results.jsonl"));
            assert_eq!(records.len(), 3);
            assert!(
                records
                    .iter()
                    .all(|r| r["status"].is_string() && r["job_id"].is_string()),
                "{records:?}"
            );
            assert_eq!(records, jsonl(&local.join("results.jsonl")));
        } else {
            let read = |p: std::path::PathBuf| -> Value {
                serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
            };
            assert_eq!(
                read(dir.join("results.json")),
                read(local.join("results.json"))
            );
        }
    }

    // Cancelling another batch through the API.
    let other = fleet.dir.path().join("other.txt");
    std::fs::write(&other, "what is a quorum queue\nwho wrote RFC 9309\n").unwrap();
    let out = trawl_remote(&fleet, &["submit", other.to_str().unwrap()], &from_env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let second = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let out = trawl_remote(&fleet, &[&["cancel", &second][..], &flags].concat(), &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("cancelled {second}\n")
    );
    let (_, state) = api.get_json(&format!("/v1/batches/{second}")).await;
    assert_eq!(state["cancelled"], true, "{state}");
    let out = trawl_remote(&fleet, &["status", &second], &from_env).await;
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(", cancelled"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Failures are explained on stderr, with a non-zero exit, and never show the token.
    let wrong = format!("trawl_{}", "0".repeat(64));
    let unknown = "0190c5a0-0000-7000-8000-000000000000";
    let too_many: String = (0..51).map(|i| format!("question {i}\n")).collect();
    let big = fleet.dir.path().join("big.txt");
    std::fs::write(&big, too_many).unwrap();
    type Env<'a> = Vec<(&'a str, &'a str)>;
    let cases: Vec<(Vec<&str>, Env, &str)> = vec![
        (
            vec!["status", &batch, "--server", &api.base, "--token", &wrong],
            vec![],
            "the server refused the token (401 unauthorized): unknown or revoked API token",
        ),
        (
            vec!["cancel", &batch],
            vec![("TRAWL_SERVER", &api.base), ("TRAWL_TOKEN", &wrong)],
            "(401 unauthorized)",
        ),
        (
            vec!["status", &batch, "--server", &api.base],
            vec![],
            "--server needs an API token",
        ),
        (
            vec!["status", unknown],
            from_env.to_vec(),
            "not found on the server (404 not_found): no batch",
        ),
        (
            vec!["submit", big.to_str().unwrap()],
            from_env.to_vec(),
            "(413 too_large): questions: 51 questions, more than the 50",
        ),
        (
            vec![
                "status",
                &batch,
                "--server",
                "http://127.0.0.1:1",
                "--token",
                &api.token,
            ],
            vec![],
            "is `trawl serve` running at http://127.0.0.1:1?",
        ),
    ];
    for (args, env, needle) in cases {
        let out = trawl_remote(&fleet, &args, &env).await;
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains(&api.token[6..]) && !err.contains(&wrong[6..]),
            "{args:?} printed a token: {err}"
        );
    }
    fleet.cleanup().await;
}

/// The export's pages as the API sends them: (lines of each page, in order).
async fn export_pages(api: &Api, batch: &str, query: &str) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/v1/batches/{batch}/results?{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let response = api.get(&path).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], "application/x-ndjson");
        let next =
            (response.headers().get("x-next-cursor")).map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        assert!(text.ends_with('\n'), "{text}");
        pages.push(
            text.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        );
        assert!(pages.len() < 100, "the cursors do not end");
        match next {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_pages_by_cursor_gzips_and_shows_a_batch_to_its_owner_only() {
    let mut fleet = Fleet::start().await;
    // No workers: the jobs stay pending, which is all the paging needs.
    let api = Api::start(&mut fleet, 1000).await;
    let questions: Vec<Value> = (0..5)
        .map(|i| match i {
            1 => json!({"query": format!("question {i}")}),
            _ => json!({"query": format!("question {i}"), "id": format!("q-{i}"), "metadata": {"n": i}}),
        })
        .collect();
    let (status, created) = json_of(
        api.post("/v1/batches")
            .json(&json!({"questions": questions}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let batch = created["batch_id"].as_str().unwrap().to_owned();
    let ids = ["q-0", "2", "q-2", "q-3", "q-4"];
    let created_ids: Vec<&str> = (created["jobs"].as_array().unwrap().iter())
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(created_ids, ids);

    // Pages of two: three requests, the cursor in a header, every job once in order.
    let pages = export_pages(&api, &batch, "limit=2").await;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 1]);
    let lines: Vec<Value> = pages.into_iter().flatten().collect();
    let job_ids: Vec<&Value> = created["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| &j["job_id"])
        .collect();
    assert_eq!(
        lines.iter().map(|l| &l["job_id"]).collect::<Vec<_>>(),
        job_ids
    );
    assert_eq!(
        lines
            .iter()
            .map(|l| l["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ids
    );
    assert_eq!(lines[0]["metadata"], json!({"n": 0}));
    assert_eq!(lines[1]["metadata"], json!({}));
    for line in &lines {
        assert_eq!(line["status"], "pending", "{line}");
        assert!(
            line["report"].is_null() && line["sources"].is_null(),
            "{line}"
        );
        assert!(line.get("work_products").is_none(), "{line}");
    }
    assert_eq!(lines[3]["query"], "question 3");

    // gzip when asked for, plain otherwise; the same lines either way.
    let raw = reqwest::Client::builder().no_gzip().build().unwrap();
    let url = format!("{}/v1/batches/{batch}/results", api.base);
    let gzipped = raw
        .get(&url)
        .bearer_auth(&api.token)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gzipped.status().as_u16(), 200);
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let bytes = gzipped.bytes().await.unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .unwrap();
    let unzipped: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(unzipped, lines);
    let plain = raw.get(&url).bearer_auth(&api.token).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    assert!(
        plain.headers().get("x-next-cursor").is_none(),
        "one page of 1000"
    );
    assert_eq!(plain.text().await.unwrap().lines().count(), 5);

    // The job list and the job say the question's id and metadata too.
    let (_, page) = api.get_json(&format!("/v1/batches/{batch}/jobs")).await;
    assert_eq!(
        (page["jobs"][0]["id"].as_str(), &page["jobs"][0]["metadata"]),
        (Some("q-0"), &json!({"n": 0}))
    );
    let second = lines[1]["job_id"].as_str().unwrap();
    let (status, job) = api.get_json(&format!("/v1/jobs/{second}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        (job["id"].as_str(), &job["metadata"]),
        (Some("2"), &json!({}))
    );

    // Cursors are the API's own, limits bounded.
    let stranger = "0190c5a0-0000-7000-8000-000000000000";
    for bad in [
        "cursor=zzz",
        &format!("cursor={stranger}"),
        "limit=0",
        "limit=5001",
        "work_products=maybe",
    ] {
        let (status, body) = api
            .get_json(&format!("/v1/batches/{batch}/results?{bad}"))
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("bad_request")),
            "{bad}: {body}"
        );
    }
    // Another token sees no such batch.
    let other = fleet.create_token("other").await;
    let response = api.http.get(&url).bearer_auth(&other).send().await.unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );

    // A repeated id is refused, naming both questions; nothing is enqueued.
    let depth = fleet.broker.depth(Queue::Search).await.unwrap();
    let (status, body) = json_of(
        api.post("/v1/batches")
            .json(&json!({"questions": [{"query": "a", "id": "x"}, {"query": "b"}, {"query": "c", "id": "x"}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("questions[2]") && message.contains("questions[0]"),
        "{message}"
    );
    assert_eq!(fleet.broker.depth(Queue::Search).await.unwrap(), depth);

    // The token's batches, newest first, two a page; the refused one is not among them.
    let mut submitted = vec![batch];
    for n in 0..2 {
        let (status, created) = json_of(
            api.post("/v1/batches")
                .json(&json!({"questions": [{"query": format!("more {n}")}]}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        submitted.push(created["batch_id"].as_str().unwrap().to_owned());
    }
    let newest: Vec<&str> = submitted.iter().rev().map(String::as_str).collect();
    let (status, first) = api.get_json("/v1/batches?limit=2").await;
    assert_eq!(status, 200, "{first}");
    let ids = |page: &Value| -> Vec<String> {
        (page["batches"].as_array().unwrap().iter())
            .map(|b| b["batch_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&first), newest[..2]);
    assert_eq!(first["batches"][0]["total"], 1, "{first}");
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, last) = api
        .get_json(&format!("/v1/batches?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(ids(&last), newest[2..]);
    assert!(last["next_cursor"].is_null(), "{last}");
    assert_eq!(last["batches"][0]["total"], 5, "{last}");
    let response = (api.http.get(format!("{}/v1/batches", api.base)))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    let (status, theirs) = json_of(response).await;
    assert_eq!((status, ids(&theirs).len()), (200, 0), "{theirs}");
    for bad in ["limit=0", "limit=101", "cursor=yesterday"] {
        let (status, body) = api.get_json(&format!("/v1/batches?{bad}")).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_and_metadata_come_back_with_every_result() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let api = Api::start(&mut fleet, 1000).await;
    let flags = ["--server", api.base.as_str(), "--token", api.token.as_str()];
    let qs = fleet.corpus.questions();
    // Line 1 names itself; line 3 (after a blank one) is known by its number.
    let text = format!(
        "{}\n\n{}\n",
        json!({"query": qs[0].query, "id": "alpha", "metadata": {"team": "search", "n": [1, 2]}, "options": {"max_urls": 2}}),
        json!({"query": qs[1].query, "options": {"max_urls": 2}}),
    );
    let file = fleet.dir.path().join("ids.jsonl");
    std::fs::write(&file, text).unwrap();
    let out = trawl_remote(
        &fleet,
        &[&["submit", file.to_str().unwrap()][..], &flags].concat(),
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let batch = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    fleet.wait_done(&batch, Duration::from_secs(300)).await;
    let want = [
        ("alpha", json!({"team": "search", "n": [1, 2]})),
        ("3", json!({})),
    ];

    // job.json, written by synthesize from the job's input.json.
    let jobs = fleet.manifest(&batch);
    for ((job, _), (id, metadata)) in jobs.iter().zip(&want) {
        let record: Value = serde_json::from_slice(
            &std::fs::read(fleet.job_dir(&batch, job).join("job.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (record["id"].as_str(), &record["metadata"]),
            (Some(*id), metadata),
            "{record}"
        );
    }
    // The batch summary, written once the last job has ended.
    let lines: Vec<Value> = (fleet.summary(&batch, "summary.jsonl").await.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for (line, (id, metadata)) in lines.iter().zip(&want) {
        assert_eq!(
            (line["id"].as_str(), &line["metadata"]),
            (Some(*id), metadata),
            "{line}"
        );
    }

    // The export, with the work products `trawl results` writes for md.
    let pages = export_pages(&api, &batch, "work_products=true").await;
    assert_eq!(pages.len(), 1);
    for (line, (id, metadata)) in pages[0].iter().zip(&want) {
        assert_eq!(
            (line["id"].as_str(), &line["metadata"]),
            (Some(*id), metadata)
        );
        let products = line["work_products"].as_object().unwrap();
        for name in ["report.md", "job.json", "sources.json", "input.json"] {
            assert!(products.contains_key(name), "{name}: {:?}", products.keys());
        }
        assert_eq!(products["report.md"], line["report"]);
    }

    // `trawl results` through the API and straight from the store write the same records.
    let remote_dir = fleet.dir.path().join("ids-remote");
    let local_dir = fleet.dir.path().join("ids-local");
    let args = |dir: &std::path::Path| {
        [
            "results",
            &batch,
            "--out",
            dir.to_str().unwrap(),
            "--format",
            "jsonl",
        ]
        .map(str::to_owned)
    };
    let remote_args = args(&remote_dir);
    let remote_args: Vec<&str> = remote_args
        .iter()
        .map(String::as_str)
        .chain(flags)
        .collect();
    let out = trawl_remote(&fleet, &remote_args, &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let local_args = args(&local_dir);
    let out = fleet
        .trawl(&local_args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let records = jsonl(&remote_dir.join("results.jsonl"));
    assert_eq!(records, jsonl(&local_dir.join("results.jsonl")));
    for (record, (id, metadata)) in records.iter().zip(&want) {
        assert_eq!(
            (record["id"].as_str(), &record["metadata"]),
            (Some(*id), metadata)
        );
        assert!(record["report"].is_string(), "{record}");
    }
    fleet.cleanup().await;
}

/// Per-token quotas: questions per UTC day and batches open at once, each refused with a 429
/// that names the quota and what to do; a cancelled batch frees its place; one token's use
/// never counts against another's. No worker runs, so every accepted batch stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_refuse_past_their_limit_and_free_with_the_batch() {
    let mut fleet = Fleet::start().await;
    let base = fleet
        .serve(&[
            ("TRAWL__API__RATE_PER_SEC", "1000".into()),
            ("TRAWL__API__QUESTIONS_PER_DAY", "6".into()),
            ("TRAWL__API__OPEN_BATCHES", "2".into()),
        ])
        .await;
    let http = reqwest::Client::new();
    let (a, b) = (
        fleet.create_token("quota-a").await,
        fleet.create_token("quota-b").await,
    );
    let submit = |token: &str, n: usize| {
        let questions: Vec<Value> = (0..n).map(|i| json!({"query": format!("q{i}")})).collect();
        http.post(format!("{base}/v1/batches"))
            .bearer_auth(token)
            .json(&json!({"questions": questions}))
            .send()
    };
    let refused = |answer: reqwest::Response, needle: &'static str, retry_after: bool| async move {
        assert_eq!(answer.status(), 429);
        assert_eq!(answer.headers().contains_key("retry-after"), retry_after);
        let (_, body) = json_of(answer).await;
        assert_eq!(body["error"]["code"], "quota_exceeded", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{needle:?} not in {message}");
    };
    let search_depth = || async { fleet.broker.depth(Queue::Search).await.unwrap() };

    // Daily questions: 4, then 3 (over 6) refused whole and nothing enqueued, then 2.
    assert_eq!(submit(&a, 4).await.unwrap().status(), 201);
    let depth = search_depth().await;
    refused(submit(&a, 3).await.unwrap(), "api.questions_per_day", true).await;
    assert_eq!(search_depth().await, depth, "a refused batch was enqueued");
    assert_eq!(submit(&a, 2).await.unwrap().status(), 201);
    refused(submit(&a, 1).await.unwrap(), "has submitted 6 today", true).await;

    // Open batches: b's use is its own; a third open batch is refused until one is cancelled.
    let first = json_of(submit(&b, 1).await.unwrap()).await.1["batch_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(submit(&b, 1).await.unwrap().status(), 201);
    refused(submit(&b, 1).await.unwrap(), "api.open_batches", false).await;
    let cancel = http
        .delete(format!("{base}/v1/batches/{first}"))
        .bearer_auth(&b)
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 200);
    assert_eq!(submit(&b, 1).await.unwrap().status(), 201);
    fleet.cleanup().await;
}

/// A batch's record leaves the store `store.batch_ttl_secs` after the batch ends (its last job,
/// or a cancellation); its status, job list and jobs still read the same through the API, from
/// the `final.json` saved beside its work products.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ended_batches_read_the_same_after_their_record_expires() {
    let mut fleet = Fleet::start().await;
    fleet
        .env
        .push(("TRAWL__STORE__BATCH_TTL_SECS".into(), "2".into()));
    let api = Api::start(&mut fleet, 1000).await;
    let corpus: Vec<Value> = (fleet.corpus.questions().into_iter())
        .map(|q| json!({"query": q.query}))
        .collect();
    let submit = |n: usize| {
        api.post("/v1/batches")
            .json(&json!({"questions": &corpus[..n]}))
            .send()
    };
    // Cancelled before any worker runs; then one that completes.
    let (_, cancelled) = json_of(submit(2).await.unwrap()).await;
    let cancelled = cancelled["batch_id"].as_str().unwrap().to_owned();
    let answer = api
        .http
        .delete(format!("{}/v1/batches/{cancelled}", api.base))
        .bearer_auth(&api.token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    fleet.spawn_all();
    let (_, done) = json_of(submit(2).await.unwrap()).await;
    let done = done["batch_id"].as_str().unwrap().to_owned();
    fleet.wait_done(&done, Duration::from_secs(120)).await;

    let read = |batch: String| {
        let api = &api;
        async move {
            let (status, state) = api.get_json(&format!("/v1/batches/{batch}")).await;
            assert_eq!(status, 200, "{state}");
            let (status, jobs) = api.get_json(&format!("/v1/batches/{batch}/jobs")).await;
            assert_eq!(status, 200, "{jobs}");
            let job = jobs["jobs"][0]["job_id"].as_str().unwrap().to_owned();
            let (status, job) = api.get_json(&format!("/v1/jobs/{job}")).await;
            assert_eq!(status, 200, "{job}");
            // The export's statuses (a cancelled job has no job.json: its status is the
            // batch record's, or the saved copy's).
            let lines = export_pages(api, &batch, "").await.concat();
            let exported: Vec<Value> = lines.iter().map(|l| l["status"].clone()).collect();
            (state, jobs, job["status"].clone(), exported)
        }
    };
    let before = (read(cancelled.clone()).await, read(done.clone()).await);
    assert_eq!(before.0 .3, [json!("cancelled"), json!("cancelled")]);
    assert_eq!(before.0 .0["cancelled"], true);
    assert_eq!(before.0 .2, "cancelled");
    assert_eq!(before.1 .0["done"], true);
    for batch in [&cancelled, &done] {
        let store = &fleet.store;
        let gone = async {
            while store.batch_progress(batch).await.unwrap().is_some() {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), gone)
            .await
            .unwrap_or_else(|_| panic!("batch {batch}'s record never expired"));
        assert!(store.batch_jobs(batch).await.unwrap().is_empty());
    }
    let after = (read(cancelled).await, read(done).await);
    assert_eq!(after, before);
    fleet.cleanup().await;
}

/// The Python client (`clients/python`) against this API over the real fleet: its live tests
/// submit, wait with progress, stream results, list batches, cancel and research, and its
/// offline tests hold its models to the OpenAPI document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_works_against_the_real_api() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let api = Api::start(&mut fleet, 1000).await;
    let questions: Vec<String> = (fleet.corpus.questions().into_iter())
        .take(2)
        .map(|q| q.query)
        .collect();
    let client = common::repo().join("clients/python");
    let out = tokio::process::Command::new("python3")
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(client.join("tests"))
        .current_dir(&client)
        .env("TRAWL_API_URL", &api.base)
        .env("TRAWL_API_TOKEN", &api.token)
        .env("TRAWL_TEST_QUESTIONS", questions.join("\n"))
        .env("TRAWL_TEST_TIMEOUT", "300")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        fleet.dump_logs();
    }
    assert!(out.status.success(), "{report}");
    // The live tests ran rather than skipped: the server was there.
    assert!(
        report.contains("test_results_stream_every_job")
            && !report.contains("skipped 'set TRAWL_API_URL"),
        "{report}"
    );
    fleet.cleanup().await;
}

/// A template over rows with fields, through the API: one job per row, the page exported as a
/// CSV table, and `trawl results --server URL --format csv` joining the export's pages; a
/// template naming a column no row has is a 422 naming the row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_batch_with_fields_is_exported_as_csv() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let api = Api::start(&mut fleet, 1000).await;
    let names: Vec<String> = (fleet.corpus.topics().iter())
        .filter(|t| t.kind == "bridge")
        .take(3)
        .map(|t| t.name.clone())
        .collect();
    let rows: Vec<Value> = (names.iter())
        .map(|n| json!({"bridge": n, "rank": 1}))
        .collect();
    let fields = r#"{"type": "object", "properties": {"opened": {"type": "integer"}, "length": {"type": "number", "unit": "m"}}}"#;
    let (status, bad) = json_of(
        api.post("/v1/batches")
            .json(&json!({"template": "Where is {river}?", "rows": rows}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 422, "{bad}");
    let message = bad["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("rows[0]: the template names {river}"),
        "{message}"
    );

    // As text: `json!` would sort the schema's fields, and their order is the table's.
    let body = format!(
        r#"{{"template": "How long is the {{bridge}} and when did it open?", "rows": {}, "options": {{"fields": {fields}}}}}"#,
        Value::Array(rows.clone())
    );
    let submit = api
        .post("/v1/batches")
        .header("content-type", "application/json")
        .body(body);
    let (status, created) = json_of(submit.send().await.unwrap()).await;
    assert_eq!(status, 201, "{created}");
    let batch = created["batch_id"].as_str().unwrap().to_owned();
    assert_eq!(created["jobs"][2]["id"], "3");
    fleet.wait_done(&batch, Duration::from_secs(240)).await;

    let page = api
        .get(&format!("/v1/batches/{batch}/results?format=csv&limit=2"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers().contains_key("x-next-cursor"));
    let text = page.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "id,query,status,bridge,rank,opened,opened_source,length,length_source",
        "{text}"
    );
    assert_eq!(lines.len(), 3, "a header and the page's two rows: {text}");
    assert!(
        lines[1].starts_with(&format!(
            "1,How long is the {} and when did it open?,",
            names[0]
        )),
        "{text}"
    );

    let dir = fleet.dir.path().join("remote-csv");
    let server = [
        ("TRAWL_SERVER", api.base.as_str()),
        ("TRAWL_TOKEN", api.token.as_str()),
    ];
    let out = trawl_remote(
        &fleet,
        &[
            "results",
            &batch,
            "--format",
            "csv",
            "--out",
            dir.to_str().unwrap(),
        ],
        &server,
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let joined = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(
        joined.lines().count(),
        4,
        "a header and every job: {joined}"
    );
    assert!(joined.starts_with(lines[0]), "{joined}");

    // The reports one after another, each under its question, for people.
    let page = api
        .get(&format!("/v1/batches/{batch}/results?format=md"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        page.headers()["content-type"],
        "text/markdown; charset=utf-8"
    );
    let markdown = page.text().await.unwrap();
    for (i, name) in names.iter().enumerate() {
        let heading = format!("## {}. How long is the {name} and when did it open?", i + 1);
        assert!(markdown.contains(&heading), "{heading} in {markdown}");
    }
    assert_eq!(markdown.matches("\n---\n").count(), 3, "{markdown}");
    fleet.cleanup().await;
}

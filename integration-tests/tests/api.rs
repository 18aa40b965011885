//! The HTTP API over real HTTP, in front of the fleet on RabbitMQ and Redis: a batch submitted
//! through the API completes and its results are read back through it; retried submissions
//! with an Idempotency-Key create no second batch; bad requests get the right 4xx with a JSON
//! error and enqueue nothing.

mod common;

use std::time::Duration;

use common::Fleet;
use serde_json::{json, Value};
use trawl_broker::{Broker, Queue};
use trawl_store::Store;

struct Api {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Api {
    /// Starts `trawl serve` on a free port beside the fleet, allowing each token `rate`
    /// requests per second, and creates a token.
    async fn start(fleet: &mut Fleet, rate: u32) -> Api {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        fleet.spawn_with(
            "trawl",
            &["serve", "--addr", &addr],
            &[
                ("TRAWL__API__MAX_BODY_BYTES", "65536".into()),
                ("TRAWL__API__MAX_QUESTIONS", "50".into()),
                ("TRAWL__API__RATE_PER_SEC", rate.to_string()),
            ],
        );
        let out = fleet
            .trawl(&["token", "create", "--name", "api-test"])
            .await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let api = Api {
            base: format!("http://{addr}"),
            token,
            http: reqwest::Client::new(),
        };
        for _ in 0..100 {
            if api
                .http
                .get(format!("{}/readyz", api.base))
                .send()
                .await
                .is_ok()
            {
                return api;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        fleet.dump_logs();
        panic!("trawl serve did not start");
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

    let (status, state) = json_of(
        api.get(&format!("/v1/batches/{batch}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (state["done"].as_bool(), state["finished"].as_u64()),
        (Some(true), Some(3)),
        "{state}"
    );

    // Pages of two: the cursor walks the jobs in submission order.
    let (_, first) = json_of(
        api.get(&format!("/v1/batches/{batch}/jobs?limit=2"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (_, second) = json_of(
        api.get(&format!("/v1/batches/{batch}/jobs?limit=2&cursor={cursor}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(second["next_cursor"].is_null());
    for bad in ["cursor=zzz", "cursor=99", "limit=0", "limit=many"] {
        let (status, body) = json_of(
            api.get(&format!("/v1/batches/{batch}/jobs?{bad}"))
                .send()
                .await
                .unwrap(),
        )
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
    let (status, detail) = json_of(api.get(&format!("/v1/jobs/{job}")).send().await.unwrap()).await;
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
    let (status, _) = json_of(
        api.get(&format!(
            "/v1/jobs/{job}/work-products/..%2F..%2Fbatch.json"
        ))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 404);

    // Another token sees none of it.
    let out = fleet.trawl(&["token", "create", "--name", "other"]).await;
    let other = String::from_utf8(out.stdout).unwrap().trim().to_owned();
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
    let metrics = api
        .http
        .get(format!("{}/metrics", api.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
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

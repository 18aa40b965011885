//! The LLM client against simweb's scripted OpenAI-compatible and Anthropic endpoints over real
//! HTTP: JSON extraction, the repair turn, retries on 429, timeouts, JSON-mode fallback, caching.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use trawl_config::{LlmConfig, LlmProvider};
use trawl_integration_tests::simweb::{Corpus, Options, Simweb};
use trawl_llm::{ChatRequest, Llm, LlmError};
use trawl_store::{MemoryStore, RedisStore, Store};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Analysis {
    sub_queries: Vec<String>,
    info_type: String,
}

async fn simweb() -> Simweb {
    Simweb::start(Arc::new(Corpus::generate()), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

fn env() -> BTreeMap<String, String> {
    [
        ("OPENAI_API_KEY", "sk-test-secret"),
        ("ANTHROPIC_API_KEY", "sk-ant-secret"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn llm(web: &Simweb, provider: &str, timeout_secs: u64) -> Llm {
    llm_of(web, provider, "simweb-1", timeout_secs)
}

/// A client of `model`: what the client learns about a model (a refused parameter) is kept
/// process-wide, so a test that teaches it one uses a model of its own.
fn llm_of(web: &Simweb, provider: &str, model: &str, timeout_secs: u64) -> Llm {
    let base_url = if provider == "anthropic" {
        web.base_url()
    } else {
        format!("{}/v1", web.base_url())
    };
    let config = LlmConfig {
        provider: match provider {
            "anthropic" => LlmProvider::Anthropic,
            _ => LlmProvider::Openai,
        },
        base_url,
        model: model.into(),
        timeout_secs,
        max_retries: 2,
        ..Default::default()
    };
    Llm::new(&config, &env()).unwrap()
}

fn analysis(question: &str) -> ChatRequest {
    ChatRequest::new(
        "query_analysis",
        "Plan the searches.",
        format!("Question: {question}"),
    )
}

fn valid(a: &Analysis) -> Result<(), String> {
    if a.sub_queries.is_empty() {
        Err("no sub_queries".into())
    } else {
        Ok(())
    }
}

#[tokio::test]
async fn json_answers_from_both_apis_and_wrappers() {
    let web = simweb().await;
    for provider in ["openai", "anthropic"] {
        let client = llm(&web, provider, 10);
        for question in [
            "What is zorbium?",
            "What is zorbium? simweb:fenced",
            "What is zorbium? simweb:think",
            "latest news on zorbium",
        ] {
            let (a, usage) = client
                .json::<Analysis, _>(&analysis(question), valid)
                .await
                .unwrap_or_else(|e| panic!("{provider} {question}: {e}"));
            assert!(!a.sub_queries.is_empty(), "{provider} {question}");
            assert!(
                usage.input_tokens > 0 && usage.output_tokens > 0,
                "{provider}: usage not recorded"
            );
            if question.contains("latest") {
                assert_eq!(a.info_type, "news");
            }
        }
    }
}

#[tokio::test]
async fn invalid_json_is_repaired_once_then_reported() {
    let web = simweb().await;
    let client = llm(&web, "openai", 10);
    let (a, _) = client
        .json::<Analysis, _>(&analysis("What is zorbium? simweb:badjson"), valid)
        .await
        .unwrap();
    assert!(!a.sub_queries.is_empty());
    let err = client
        .json::<Analysis, _>(&analysis("What is zorbium? simweb:badjson-always"), valid)
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::InvalidJson(_)), "{err}");
}

#[tokio::test]
async fn retries_rate_limits_and_reports_errors_without_the_key() {
    let web = simweb().await;
    let client = llm(&web, "openai", 10);
    let started = Instant::now();
    client
        .json::<Analysis, _>(&analysis("What is zorbium? simweb:llm-429"), valid)
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After was not honoured"
    );
    let err = client
        .chat(&analysis("What is zorbium? simweb:llm-500"))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Status { status: 500, .. }), "{err}");
    assert!(!err.to_string().contains("sk-test-secret"));
    let slow = llm(&web, "anthropic", 1);
    let slow_config_retries_and_times_out = slow
        .chat(&analysis("What is zorbium? simweb:llm-slow"))
        .await;
    assert!(matches!(
        slow_config_retries_and_times_out,
        Err(LlmError::Timeout)
    ));
}

#[tokio::test]
async fn endpoints_without_json_mode_are_asked_again_without_it() {
    let web = simweb().await;
    let client = llm(&web, "openai", 10);
    let (a, _) = client
        .json::<Analysis, _>(&analysis("What is zorbium? simweb:no-json-mode"), valid)
        .await
        .unwrap();
    assert!(!a.sub_queries.is_empty());
}

#[tokio::test]
async fn identical_requests_are_answered_from_the_cache() {
    let web = simweb().await;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let client = llm(&web, "openai", 10).with_store(store);
    let first = client.chat(&analysis("What is zorbium?")).await.unwrap();
    let second = client.chat(&analysis("What is zorbium?")).await.unwrap();
    assert!(!first.cached && second.cached);
    assert_eq!(first.text, second.text);
}

/// An answer that could not be used is not cached as an answer, and at temperature 0 the same
/// request is not paid for again (a retried message would only get the same garbage); a
/// request that may be answered otherwise reaches the model once it is well again.
#[tokio::test]
async fn answers_that_fail_their_check_are_not_cached_nor_asked_again() {
    use trawl_integration_tests::simweb::llm::script::{set_trouble, Trouble};
    let web = simweb().await;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "cache-garbage-test".into(),
        max_retries: 0,
        ..Default::default()
    };
    let client = Llm::new(&config, &env()).unwrap().with_store(store);
    let request = analysis("What is cached garbage?");
    set_trouble("cache-garbage-test", Some(Trouble::Garbage));
    let err = client
        .json::<Analysis, _>(&request, valid)
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::InvalidJson(_)), "{err}");
    let refused = client
        .chat_checked(&request, |_| Err(LlmError::Malformed("not this".into())))
        .await
        .unwrap_err();
    assert!(matches!(refused, LlmError::Malformed(_)), "{refused}");
    assert_eq!(
        client.spent().fallbacks,
        [
            ("analysis: invalid_json".to_owned(), 1),
            ("analysis: malformed".to_owned(), 1)
        ]
        .into()
    );

    set_trouble("cache-garbage-test", None);
    let asked = || {
        web.stats()
            .count(|_, path| path.ends_with("/chat/completions"))
    };
    let before = asked();
    let again = client
        .json::<Analysis, _>(&request, valid)
        .await
        .unwrap_err();
    assert!(matches!(again, LlmError::InvalidJson(_)), "{again}");
    let again = client
        .chat_checked(&request, |_| Err(LlmError::Malformed("not this".into())))
        .await
        .unwrap_err();
    assert!(matches!(again, LlmError::Malformed(_)), "{again}");
    assert_eq!(
        asked(),
        before,
        "a refused answer was asked for again unchanged"
    );
    let mut warmer = request.clone();
    warmer.temperature = 0.3;
    let (a, _) = client.json::<Analysis, _>(&warmer, valid).await.unwrap();
    assert!(!a.sub_queries.is_empty());
    let text = client.chat(&warmer).await.unwrap();
    assert!(!text.cached, "the refused answer was cached");
    assert!(client.chat(&warmer).await.unwrap().cached);
}

/// A slow model (simweb writing 5 tokens a second) never holds a message past its LLM time:
/// the call in flight is cut when that time is spent and a call that could not be answered in
/// what is left is not made; each is its step's fallback, and nothing waits for the answer.
#[tokio::test]
async fn a_slow_model_is_cut_at_the_message_s_llm_time() {
    let web = Simweb::start_with(
        Arc::new(Corpus::generate()),
        "127.0.0.1:0".parse().unwrap(),
        Options {
            llm_tokens_per_second: Some(5.0),
            ..Options::default()
        },
    )
    .await
    .unwrap();
    let client = llm(&web, "openai", 60);
    let request = analysis("What is a slow zorbium?");
    // Unlimited, the answer arrives at the model's speed.
    let started = Instant::now();
    client.chat(&request).await.unwrap();
    let whole = started.elapsed();
    assert!(whole >= Duration::from_secs(5), "{whole:?}");
    let message = trawl_store::outside::Waits::new().message();
    message.limit_llm(whole / 2);
    let other = analysis("What is another slow zorbium?");
    let started = Instant::now();
    let cut = message.scope(client.chat(&other)).await.unwrap_err();
    assert!(matches!(cut, LlmError::OutOfTime), "{cut}");
    assert!(
        started.elapsed() < whole,
        "{:?} against {whole:?}",
        started.elapsed()
    );
    let spent = message
        .scope(client.chat(&analysis("A third?")))
        .await
        .unwrap_err();
    assert!(matches!(spent, LlmError::OutOfTime), "{spent}");
    assert_eq!(
        client.spent().fallbacks,
        [("analysis: out_of_time".to_owned(), 2)].into()
    );
}

/// A handle bound to a batch charges the batch call by call: with a budget, each call holds a
/// reservation only while it runs; without one, it reserves nothing and spend still counts.
#[tokio::test]
async fn a_batch_handle_reserves_while_calling_and_charges_what_was_spent() {
    use trawl_store::budget::{BUDGET, REFUSED, RESERVED, SPENT};
    let web = simweb().await;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "gpt-4o-mini".into(),
        cache_ttl_secs: 0,
        ..Default::default()
    };
    let llm = Llm::new(&config, &env()).unwrap();
    store.batch_add("capped", BUDGET, 1_000_000).await.unwrap();
    for batch in ["free", "capped"] {
        let client = llm.for_batch(Arc::clone(&store), batch);
        client.chat(&analysis("What is spent?")).await.unwrap();
        let cost = client.spent().cost_microdollars as i64;
        assert!(cost > 0);
        assert_eq!(store.batch_counter(batch, SPENT).await.unwrap(), cost);
        assert_eq!(store.batch_counter(batch, RESERVED).await.unwrap(), 0);
    }
    // A budget smaller than a call's most cost: refused before anything is sent.
    store.batch_add("tiny", BUDGET, 1).await.unwrap();
    let client = llm.for_batch(Arc::clone(&store), "tiny");
    let err = client.chat(&analysis("What is spent?")).await.unwrap_err();
    assert!(matches!(err, LlmError::Budget(_)), "{err}");
    assert_eq!(store.batch_counter("tiny", REFUSED).await.unwrap(), 1);
    assert_eq!(client.spent().requests, 0);
    assert_eq!(
        client.spent().fallbacks,
        [("analysis: budget".to_owned(), 1)].into()
    );
}

#[tokio::test]
async fn embeddings_rank_related_text_higher() {
    let web = simweb().await;
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        embedding_model: "simweb-embed".into(),
        ..Default::default()
    };
    let client = Llm::new(&config, &env()).unwrap();
    let texts = [
        "zorbium melting point",
        "the melting point of zorbium",
        "gardening with tomatoes",
    ];
    let v = client.embed(&texts.map(String::from)).await.unwrap();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
}

/// An endpoint that reports no usage (some local servers): counts are estimated and marked.
#[tokio::test]
async fn missing_usage_is_estimated_and_marked() {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|| async {
            axum::Json(serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "{\"sub_queries\": [\"q\"], \"info_type\": \"facts\"}"}}]}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let config = LlmConfig {
        base_url: format!("http://{addr}/v1"),
        input_price_per_mtok: Some(1.0),
        ..Default::default()
    };
    let client = Llm::new(&config, &env()).unwrap();
    let (_, usage) = client
        .json::<Analysis, _>(&analysis("What is zorbium?"), valid)
        .await
        .unwrap();
    assert!(usage.input_tokens > 0 && usage.estimated);
    let spent = client.spent();
    assert_eq!((spent.requests, spent.estimated_requests), (1, 1));
    assert!(spent.cost_microdollars > 0);
}

/// Structured outputs: the answer's JSON Schema goes with the request (OpenAI's `json_schema`
/// response format, Anthropic's forced tool), and a server that refuses the schema gets plain
/// JSON mode instead, which the client remembers for the model.
#[tokio::test]
async fn json_steps_send_their_schema_and_fall_back_without_it() {
    use trawl_integration_tests::simweb::llm::calls;
    // Tests of one process share the call log and what the client learnt: this one's model
    // is its own.
    const MODEL: &str = "simweb-schema";
    let web = simweb().await;
    for provider in ["openai", "anthropic"] {
        let client = llm_of(&web, provider, MODEL, 10);
        let question = format!("What is zorbium? schema-{provider}");
        let (a, _) = client
            .json::<Analysis, _>(&analysis(&question), valid)
            .await
            .unwrap();
        assert!(!a.sub_queries.is_empty());
        let formats: Vec<_> = (calls().into_iter())
            .filter(|c| c.model == MODEL && c.api == provider && c.task == "query_analysis")
            .filter(|c| c.status == 200)
            .map(|c| c.format)
            .collect();
        let want = if provider == "anthropic" {
            "tool"
        } else {
            "json_schema"
        };
        assert!(formats.contains(&Some(want)), "{provider}: {formats:?}");
    }
    let client = llm_of(&web, "openai", MODEL, 10);
    let (a, _) = client
        .json::<Analysis, _>(&analysis("What is zorbium? simweb:no-json-schema"), valid)
        .await
        .unwrap();
    assert!(!a.sub_queries.is_empty());
    let refused: Vec<_> = (calls().into_iter())
        .filter(|c| c.model == MODEL && c.status == 400 && c.format == Some("json_schema"))
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    let (_, _) = client
        .json::<Analysis, _>(
            &analysis("What is zorbium? simweb:no-json-schema again"),
            valid,
        )
        .await
        .unwrap();
    let refused_again = (calls().into_iter())
        .filter(|c| c.model == MODEL && c.status == 400 && c.format == Some("json_schema"))
        .count();
    assert_eq!(refused_again, 1, "the refusal was not remembered");
}

/// A JSON step's answer may take what its schema can hold, not the default allowance: a model
/// that thinks aloud for 640 words before a 10-word verdict is cut where the verdict would have
/// ended, and the step takes its non-LLM path instead of waiting minutes on a slow model.
#[tokio::test]
async fn a_json_answer_is_allowed_what_its_schema_holds() {
    use trawl_integration_tests::simweb::llm::calls;
    const MODEL: &str = "simweb-allowance";
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Verdict {
        relevant: bool,
        reasoning: String,
        confidence: f64,
    }
    let web = simweb().await;
    let client = llm_of(&web, "openai", MODEL, 10);
    let request = |marker: &str| {
        ChatRequest::new(
            "relevance",
            "Judge the result.",
            format!(
                "Question: What is Zorbium?{marker}\nTitle: Zorbium\nSnippet: Zorbium is a metal."
            ),
        )
    };
    let ok = |_: &Verdict| Ok::<(), String>(());
    let (verdict, _) = client.json::<Verdict, _>(&request(""), ok).await.unwrap();
    assert!(verdict.relevant);
    let err = (client.json::<Verdict, _>(&request(" simweb:ramble"), ok))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::InvalidJson(_)), "{err}");
    assert_eq!(
        client.spent().fallbacks,
        [("relevance: invalid_json".to_owned(), 1)].into()
    );
    let allowances: Vec<_> = (calls().into_iter())
        .filter(|c| c.model == MODEL)
        .map(|c| c.allowance)
        .collect();
    assert_eq!(allowances.len(), 3, "{allowances:?}");
    assert!(allowances.iter().all(|a| *a == Some(130)), "{allowances:?}");
}

/// Three workers' clients, each with a connection of its own to one Redis (as three processes
/// have), under `llm.requests_per_minute` and `llm.tokens_per_minute`: together they keep to
/// the tighter of the two as the server sees the requests arrive, taking turns instead of
/// meeting the server's own limit (a 429).
#[tokio::test]
async fn workers_keep_the_fleet_wide_limits_together() {
    const RPM: u32 = 300; // a request every 200 ms
                          // Requests of one size, each counted as providers count it: the prompt at a token per
                          // three bytes, and the whole answer allowance.
    let request = |w: usize, i: usize| {
        let user = format!("worker {w:02} request {i:02}: {}", "word ".repeat(200));
        ChatRequest::new("report", "Write.", user)
    };
    let counted = {
        let r = request(0, 0);
        (r.system.len() + r.messages[0].1.len() + 16).div_ceil(3) as u64 + u64::from(r.max_tokens)
    };
    // A request's tokens every 300 ms: the tighter limit.
    let tpm = counted * 200;
    let web = Simweb::start_with(
        Arc::new(Corpus::generate()),
        "127.0.0.1:0".parse().unwrap(),
        Options {
            llm_requests_per_minute: Some(RPM),
            ..Options::default()
        },
    )
    .await
    .unwrap();
    let prefix = format!("llm-limits-{}-{}", std::process::id(), uuid::Uuid::now_v7());
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "simweb-limits".into(),
        requests_per_minute: Some(RPM),
        tokens_per_minute: Some(tpm),
        cache_ttl_secs: 0,
        ..Default::default()
    };
    let mut workers = Vec::new();
    for w in 0..3 {
        let store = RedisStore::connect(&redis_url(), &prefix, Duration::from_secs(5))
            .await
            .unwrap();
        let client = Llm::new(&config, &env())
            .unwrap()
            .with_store(Arc::new(store));
        workers.push(tokio::spawn(async move {
            for i in 0..6 {
                client.chat(&request(w, i)).await.unwrap();
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    RedisStore::connect(&redis_url(), &prefix, Duration::from_secs(5))
        .await
        .unwrap()
        .delete_all()
        .await
        .unwrap();

    let arrivals = chat_arrivals(&web);
    assert_eq!(arrivals.len(), 18, "every request once, none refused");
    let refused = web.stats().llm_rate_limited();
    assert_eq!(refused, 0, "requests met the server's limit");
    // The turns waited for are counted for the model.
    let series = "trawl_llm_rate_limit_wait_seconds_total{model=\"simweb-limits\"} ";
    let metrics = trawl_telemetry::render();
    let waited: f64 = (metrics.lines())
        .find_map(|l| l.strip_prefix(series))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series}in\n{metrics}"));
    assert!(waited > 1.0, "the workers waited {waited} s in all");
    // In any stretch of time, at most its share of requests plus the one that opened it,
    // allowing 50 ms for the trip from the store's grant to the server's arrival.
    let interval = Duration::from_millis(300);
    for (i, first) in arrivals.iter().enumerate() {
        for (j, last) in arrivals.iter().enumerate().skip(i + 1) {
            let span = last.duration_since(*first) + Duration::from_millis(50);
            let allowed = (span.as_secs_f64() / interval.as_secs_f64()).floor() as usize + 1;
            assert!(
                j - i < allowed,
                "{} requests arrived within {span:?}; the limit allows {allowed}",
                j - i + 1
            );
        }
    }
}

/// Arrivals of chat completions at `web`, in order.
fn chat_arrivals(web: &Simweb) -> Vec<Instant> {
    (web.stats().log("127.0.0.1").into_iter())
        .filter(|(path, _)| path == "/v1/chat/completions")
        .map(|(_, at)| at)
        .collect()
}

/// A 429 with Retry-After holds every worker's calls to that model, not only the one that met
/// it: a second client, asking after the first was refused, waits out the same second.
#[tokio::test]
async fn a_429_holds_every_worker() {
    let web = simweb().await;
    let prefix = format!("llm-hold-{}-{}", std::process::id(), uuid::Uuid::now_v7());
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "simweb-hold".into(),
        cache_ttl_secs: 0,
        ..Default::default()
    };
    let client = |store: RedisStore| {
        Llm::new(&config, &env())
            .unwrap()
            .with_store(Arc::new(store))
    };
    let url = redis_url();
    let connect = || RedisStore::connect(&url, &prefix, Duration::from_secs(5));
    let (first, second) = (
        client(connect().await.unwrap()),
        client(connect().await.unwrap()),
    );
    let refused = tokio::spawn(async move {
        first
            .chat(&analysis("What is zorbium? simweb:llm-429 hold"))
            .await
            .unwrap()
    });
    // The first request is refused at once with Retry-After: 1.
    while chat_arrivals(&web).is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    second.chat(&analysis("What is zorbium?")).await.unwrap();
    refused.await.unwrap();
    let arrivals = chat_arrivals(&web);
    assert_eq!(
        arrivals.len(),
        3,
        "the refusal, its retry and the other worker's"
    );
    let waited = arrivals[1].duration_since(arrivals[0]);
    assert!(
        waited >= Duration::from_millis(900),
        "a worker asked {waited:?} after another met a 429 with Retry-After: 1"
    );
    connect().await.unwrap().delete_all().await.unwrap();
}

#[tokio::test]
async fn a_provider_refusing_for_longer_than_the_retries_spends_none_of_them() {
    let web = refusing_for(Duration::from_secs(3)).await;
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "simweb-storm".into(),
        max_retries: 0,
        cache_ttl_secs: 0,
        ..Default::default()
    };
    let client = Llm::new(&config, &env()).unwrap();
    let answer = client.chat(&analysis("What is zorbium?")).await;
    assert!(answer.is_ok(), "{answer:?}");
    assert!(
        web.stats().llm_rate_limited() >= 2,
        "refused {} times, each one retry-after second apart",
        web.stats().llm_rate_limited()
    );
    let series = "trawl_llm_rate_limit_wait_seconds_total{model=\"simweb-storm\"} ";
    let metrics = trawl_telemetry::render();
    let waited: f64 = (metrics.lines())
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series}in\n{metrics}"));
    assert!(waited >= 2.0, "waited {waited} s through the 429s");
}

/// A simweb whose LLM answers every request with a provider's 429 for `how_long`.
async fn refusing_for(how_long: Duration) -> Simweb {
    Simweb::start_with(
        Arc::new(Corpus::generate()),
        "127.0.0.1:0".parse().unwrap(),
        Options {
            llm_rate_limited_for: how_long,
            ..Options::default()
        },
    )
    .await
    .unwrap()
}

/// A call cut off while it waits out a provider's 429s (its handler's message timeout) gives its
/// budget reservation back: nothing was spent.
#[tokio::test]
async fn a_call_abandoned_while_rate_limited_gives_its_reservation_back() {
    use trawl_store::budget::{BUDGET, RESERVED, SPENT};
    let web = refusing_for(Duration::from_secs(60)).await;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store.batch_add("storm", BUDGET, 1_000_000).await.unwrap();
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "gpt-4o-mini".into(),
        cache_ttl_secs: 0,
        ..Default::default()
    };
    let client = Llm::new(&config, &env())
        .unwrap()
        .for_batch(Arc::clone(&store), "storm");
    let cut = tokio::time::timeout(
        Duration::from_millis(1_500),
        client.chat(&analysis("What is zorbium?")),
    )
    .await;
    assert!(cut.is_err(), "the call should still be waiting: {cut:?}");
    assert!(web.stats().llm_rate_limited() >= 1);
    // The reservation is given back by a task of its own.
    let mut reserved = -1;
    for _ in 0..50 {
        reserved = store.batch_counter("storm", RESERVED).await.unwrap();
        if reserved == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(reserved, 0, "the abandoned call kept its reservation");
    assert_eq!(store.batch_counter("storm", SPENT).await.unwrap(), 0);
}

fn redis_url() -> String {
    std::env::var("TRAWL_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into())
}

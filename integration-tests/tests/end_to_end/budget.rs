//! A batch's LLM budget is a hard cap across the fleet: each LLM call reserves what it may
//! cost in Redis before it is sent and settles what it did cost after, so workers racing for
//! the last of a budget never spend past it; once a call finds no room, the batch's remaining
//! work goes without the LLM, and every job still ends with a cited report.

use crate::common;

use std::time::Duration;

use common::Fleet;
use trawl_config::{Config, LlmConfig};
use trawl_store::budget::{BUDGET, REFUSED, RESERVED, SPENT};
use trawl_store::prelude::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_workers_never_spend_past_the_budget() {
    let mut fleet = Fleet::start().await;
    let web = fleet.simweb.base_url();
    // $10 per million tokens: a page's analysis reserves up to about $0.06, so 30 cents pays
    // for part of the batch's calls (in one run: $0.21 spent, 8 of 10 jobs partly without).
    let model = "budget-race";
    for (k, v) in [
        ("TRAWL__LLM__PROVIDER", "openai".to_owned()),
        ("TRAWL__LLM__BASE_URL", format!("{web}/v1")),
        ("TRAWL__LLM__MODEL", model.to_owned()),
        (
            "TRAWL__LLM__PRICES",
            format!("{{ \"{model}\" = {{ input = 10.0, output = 10.0 }} }}"),
        ),
        ("TRAWL__LLM__CACHE_TTL_SECS", "0".to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
    ] {
        fleet.env.push((k.to_owned(), v));
    }
    // Two workers of each LLM stage, each with the default prefetch: calls race for the budget.
    for name in [
        "trawl-search",
        "trawl-search",
        "trawl-fetch",
        "trawl-clean",
        "trawl-clean",
        "trawl-synthesize",
        "trawl-synthesize",
    ] {
        fleet.spawn(name);
    }
    let questions: Vec<String> = (fleet.corpus.questions().into_iter())
        .take(10)
        .map(|q| q.query)
        .collect();
    let batch = fleet.submit_with(&questions, &["--budget", "0.3"]).await;
    fleet.wait_done(&batch, Duration::from_secs(240)).await;

    let counter = |name: &'static str| {
        let (store, batch) = (&fleet.store, batch.clone());
        async move { store.batch_counter(&batch, name).await.unwrap() }
    };
    let (budget, spent) = (counter(BUDGET).await, counter(SPENT).await);
    assert_eq!(budget, 300_000);
    assert!(spent > 0, "no LLM call was granted");
    assert!(spent <= budget, "spent {spent} of a {budget} budget");
    assert!(counter(REFUSED).await > 0, "the budget was never reached");
    assert_eq!(counter(RESERVED).await, 0, "a reservation was left behind");

    // Every job ended with a cited report; the jobs' own costs add up to the batch's spend.
    let mut charged = 0;
    let mut without_llm = 0;
    for (job, _) in fleet.manifest(&batch) {
        let dir = fleet.job_dir(&batch, &job);
        let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(report.contains("[1]"), "{report}");
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("job.json")).unwrap()).unwrap();
        charged += record["total_cost_microdollars"].as_i64().unwrap();
        let writer = record["writer"].as_str().unwrap();
        let refused =
            (record["llm_fallbacks"].as_object().unwrap().keys()).any(|k| k.ends_with(": budget"));
        without_llm += usize::from(writer.contains("budget spent") || refused);
    }
    eprintln!(
        "budget {budget} µ$, spent {spent} µ$, {} refusals, {without_llm} of {} jobs partly without the LLM",
        counter(REFUSED).await,
        questions.len()
    );
    assert_eq!(charged, spent, "jobs were charged other than the batch");
    assert!(without_llm > 0);
    let summary = fleet.summary(&batch, "summary.md").await;
    assert!(summary.contains("was reached"), "{summary}");
    fleet.cleanup().await;
}

/// A budget needs prices: a batch with one is refused, by `trawl submit` and by the API's
/// check, when a model in use has none (its spend would read 0 and the budget never trip).
#[test]
fn a_budget_without_prices_is_refused_with_the_setting_to_add() {
    let mut config = Config {
        llm: Some(LlmConfig {
            model: "gpt-4o-mini".into(),
            models: [(
                "report".to_owned(),
                trawl_config::StepModel::Name("house-model-7b".into()),
            )]
            .into(),
            ..Default::default()
        }),
        ..Config::default()
    };
    let err = (trawl_pipeline::batch::check_budget(&config, Some(5.0)).unwrap_err()).to_string();
    assert!(
        err.contains("house-model-7b") && err.contains("llm.prices.\"house-model-7b\""),
        "{err}"
    );
    assert!(
        !err.contains("gpt-4o-mini"),
        "a model of the built-in table: {err}"
    );
    // Without a budget, or with the price set, it goes through.
    assert!(trawl_pipeline::batch::check_budget(&config, None).is_ok());
    let llm = config.llm.as_mut().unwrap();
    llm.prices.insert(
        "house-model-7b".into(),
        trawl_config::ModelPrice {
            input: 0.2,
            cached_input: None,
            output: 0.2,
        },
    );
    assert!(trawl_pipeline::batch::check_budget(&config, Some(5.0)).is_ok());
}

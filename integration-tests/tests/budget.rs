//! A batch LLM budget: once a batch has spent it, its remaining jobs are written without the
//! LLM, and the summary says so. Every stage in this process (in-memory twins), LLM from simweb.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use trawl_config::{Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_messages::{JobOptions, SearchTask};
use trawl_pipeline::batch::{submit, BatchOptions, Question};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_budget_switches_jobs_to_the_extractive_path() {
    let corpus = Arc::new(Corpus::generate());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.output.url = format!("file://{}", dir.path().display());
    config.search.searxng_url = web.base_url();
    config.search.providers = vec!["searxng".into()];
    config
        .fetch
        .resolve
        .insert("*.test".into(), web.addr().to_string());
    config.fetch.allow_networks = vec!["127.0.0.0/8".into()];
    config.fetch.min_interval_ms = 20;
    config.broker.retry_delays_secs = vec![1];
    // A dollar per thousand tokens: the first LLM call spends the whole budget.
    config.llm = Some(LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "gpt-4o-mini".into(),
        input_price_per_mtok: Some(1000.0),
        output_price_per_mtok: Some(1000.0),
        ..Default::default()
    });
    // One message at a time per stage, so one job's spend is on the books before the next looks.
    config.broker.prefetch = 1;
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "k".to_string())]
        .into_iter()
        .collect();
    let embedded = trawl_cli::embedded::Embedded::start(config, &env).unwrap();
    let rt = embedded.rt.clone();

    let tasks = corpus
        .questions()
        .into_iter()
        .take(4)
        .map(|q| SearchTask {
            query: q.query,
            options: JobOptions::default(),
        })
        .collect();
    let options = BatchOptions {
        budget_usd: Some(0.000_001),
        ..Default::default()
    };
    let manifest = submit(&rt, Question::numbered(tasks), options, |_| {})
        .await
        .unwrap();
    let batch = manifest.batch_id;
    tokio::time::timeout(Duration::from_secs(120), async {
        while !rt
            .store
            .batch_progress(&batch.to_string())
            .await
            .unwrap()
            .unwrap()
            .is_done()
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("batch did not finish");
    embedded.stop().await;

    let mut writers = Vec::new();
    let mut total_cost = 0;
    for job in &manifest.jobs {
        let bytes = rt
            .objects
            .get(&format!("batches/{batch}/{}/job.json", job.job_id))
            .await
            .unwrap()
            .unwrap();
        let record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        writers.push(record["writer"].as_str().unwrap().to_owned());
        total_cost += record["total_cost_microdollars"].as_i64().unwrap();
    }
    assert!(total_cost > 0, "LLM spend was not recorded");
    assert!(
        writers.iter().any(|w| w.contains("budget spent")),
        "{writers:?}"
    );
    let summary = String::from_utf8(
        rt.objects
            .get(&format!("batches/{batch}/summary.md"))
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert!(
        summary.contains("budget of $0.0000 was reached"),
        "{summary}"
    );
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
    let err = trawl_pipeline::batch::check_budget(&config, Some(5.0)).unwrap_err();
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

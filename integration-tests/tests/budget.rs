//! A batch LLM budget: once a batch has spent it, its remaining jobs are written without the
//! LLM, and the summary says so. Every stage in this process (in-memory twins), LLM from simweb.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use trawl_config::{Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_messages::{JobOptions, Queue, SearchTask};
use trawl_pipeline::batch::{submit, BatchOptions};
use trawl_pipeline::serve::Shutdown;
use trawl_pipeline::{run_worker, Runtime};

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
        input_price_per_mtok: 1000.0,
        output_price_per_mtok: 1000.0,
        ..Default::default()
    });
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "k".to_string())]
        .into_iter()
        .collect();
    let search = trawl_search::SearchStage::with_env(&config, &env).unwrap();
    let fetch = trawl_fetch::FetchStage::new(&config).unwrap();
    let synthesize = trawl_synthesize::SynthesizeStage::with_env(&config, &env).unwrap();
    let rt = Runtime::embedded(config);
    // One search at a time, so the spend of one job is on the books before the next looks.
    let mut search_config = (*rt.config).clone();
    search_config.broker.prefetch = 1;
    let search_rt = Runtime {
        config: Arc::new(search_config),
        ..rt.clone()
    };

    let (stop, shutdown) = Shutdown::manual();
    let mut workers = tokio::task::JoinSet::new();
    workers.spawn(run_worker(
        Arc::new(search),
        search_rt,
        Queue::Search,
        shutdown.clone().wait(),
        Default::default(),
    ));
    workers.spawn(run_worker(
        Arc::new(fetch),
        rt.clone(),
        Queue::Fetch,
        shutdown.clone().wait(),
        Default::default(),
    ));
    workers.spawn(run_worker(
        Arc::new(trawl_clean::CleanStage),
        rt.clone(),
        Queue::Clean,
        shutdown.clone().wait(),
        Default::default(),
    ));
    workers.spawn(run_worker(
        Arc::new(synthesize),
        rt.clone(),
        Queue::Synthesize,
        shutdown.clone().wait(),
        Default::default(),
    ));

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
        webhook: None,
        budget_usd: Some(0.000_001),
    };
    let manifest = submit(&rt, tasks, options, |_| {}).await.unwrap();
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
    let _ = stop.send(true);
    while workers.join_next().await.is_some() {}

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

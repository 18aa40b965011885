//! Report quality on simweb's labelled questions, every stage in one process over the in-memory
//! twins: evidence recall (the share of jobs whose report cites a page that holds the answer)
//! and citation precision (the share of citations that point to a fetched and analysed source;
//! it must be 100 %), for the extractive writer and the LLM writer (simweb's scripted model).
//! Run it with `scripts/bench-reports`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use trawl_config::{Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_messages::{paths, JobOptions, SearchTask};
use trawl_pipeline::batch::{submit, Question};

async fn measure(name: &str, config: Config, corpus: &Corpus) {
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "simweb".to_string())]
        .into_iter()
        .collect();
    let embedded = trawl_cli::embedded::Embedded::start(config, &env).unwrap();
    let rt = embedded.rt.clone();

    let questions = corpus.questions();
    let tasks = questions
        .iter()
        .map(|q| SearchTask {
            query: q.query.clone(),
            options: JobOptions::default(),
        })
        .collect();
    let started = std::time::Instant::now();
    let manifest = submit(&rt, Question::numbered(tasks), Default::default(), |_| {})
        .await
        .unwrap();
    let batch = manifest.batch_id.to_string();
    loop {
        let p = rt.store.batch_progress(&batch).await.unwrap().unwrap();
        if p.is_done() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = started.elapsed();
    embedded.stop().await;

    let (mut with_evidence, mut citations, mut valid) = (0usize, 0usize, 0usize);
    for (job, q) in manifest.jobs.iter().zip(&questions) {
        let sources: serde_json::Value = serde_json::from_slice(
            &rt.objects
                .get(&paths::sources(manifest.batch_id, job.job_id))
                .await
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let cited: Vec<&serde_json::Value> = sources
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| !s["cited_as"].is_null())
            .collect();
        citations += cited.len();
        valid += cited
            .iter()
            .filter(|s| s["outcome"]["outcome"] == "analysed")
            .count();
        if cited.iter().any(|s| {
            q.answer_urls
                .iter()
                .any(|a| a == s["url"].as_str().unwrap_or(""))
        }) {
            with_evidence += 1;
        }
    }
    println!(
        "{name:<22} jobs {:>3}  evidence recall {:.3}  citation precision {:.3} ({valid}/{citations})  {:.1} s",
        questions.len(),
        with_evidence as f64 / questions.len() as f64,
        valid as f64 / citations.max(1) as f64,
        elapsed.as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let corpus = Arc::new(Corpus::generate());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = |llm: bool| {
        let mut c = Config::default();
        c.output.url = format!("file://{}", dir.path().display());
        c.search.searxng_url = web.base_url();
        c.search.providers = vec!["searxng".into()];
        c.fetch
            .resolve
            .insert("*.test".into(), web.addr().to_string());
        c.fetch.allow_networks = vec!["127.0.0.0/8".into()];
        c.fetch.min_interval_ms = 20;
        c.broker.retry_delays_secs = vec![1];
        if llm {
            c.llm = Some(LlmConfig {
                base_url: format!("{}/v1", web.base_url()),
                model: "gpt-4o-mini".into(),
                ..Default::default()
            });
        }
        c
    };
    println!(
        "simweb: {} questions, answers on {} pages",
        corpus.questions().len(),
        corpus
            .questions()
            .iter()
            .map(|q| q.answer_urls.len())
            .sum::<usize>()
    );
    measure("extractive writer", base(false), &corpus).await;
    measure("LLM writer (scripted)", base(true), &corpus).await;
}

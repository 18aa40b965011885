//! Selection quality on simweb's labelled questions: of the URLs the search stage selects, the
//! share that hold the answer (precision), and the share of answer-holding URLs it selects
//! (recall), for each selection strategy. Run it with `scripts/bench-search`.

use std::collections::BTreeMap;
use std::sync::Arc;

use trawl_config::{Config, LlmConfig, Selection};
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_messages::{paths, Envelope, JobOptions, SearchTask};
use trawl_pipeline::{Runtime, Stage};

async fn measure(name: &str, config: Config, corpus: &Corpus) {
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "simweb".to_string())]
        .into_iter()
        .collect();
    let stage = trawl_search::SearchStage::with_env(&config, &env).expect("stage");
    let rt = Runtime::embedded(config).unwrap();
    let (mut selected, mut hits, mut answers) = (0usize, 0usize, 0usize);
    let questions = corpus.questions();
    for q in &questions {
        let task = SearchTask::new(q.query.clone(), JobOptions::default());
        let env = Envelope::new(
            uuid::Uuid::now_v7(),
            uuid::Uuid::now_v7(),
            chrono::Utc::now() + chrono::Duration::hours(1),
            task,
        );
        let (batch, job) = (env.batch_id, env.job_id);
        stage.handle(&rt, env).await.expect("search");
        let record: serde_json::Value = serde_json::from_slice(
            &rt.objects
                .get(&paths::search(batch, job))
                .await
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let chosen: Vec<String> = record["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["selected"] == true)
            .map(|r| r["url"].as_str().unwrap().to_owned())
            .collect();
        selected += chosen.len();
        hits += chosen.iter().filter(|u| q.answer_urls.contains(u)).count();
        answers += q.answer_urls.len();
    }
    let precision = hits as f64 / selected.max(1) as f64;
    let recall = hits as f64 / answers.max(1) as f64;
    println!(
        "{name:<28} questions {:>3}  selected {:>4}  precision {precision:.3}  recall {recall:.3}",
        questions.len(),
        selected
    );
}

#[tokio::main]
async fn main() {
    let corpus = Arc::new(Corpus::generate());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = |selection: Selection, llm_relevance: bool| {
        let mut c = Config::default();
        c.output.url = format!("file://{}", dir.path().display());
        c.search.searxng_url = web.base_url();
        c.search.selection = selection;
        c.search.llm_relevance = llm_relevance;
        if selection == Selection::Llm || llm_relevance {
            c.llm = Some(LlmConfig {
                base_url: format!("{}/v1", web.base_url()),
                model: "simweb-1".into(),
                ..Default::default()
            });
        }
        c
    };
    println!(
        "simweb: {} questions, each with 3 answer pages among {} pages",
        corpus.questions().len(),
        corpus.pages().len()
    );
    measure("score (default)", base(Selection::Score, false), &corpus).await;
    measure(
        "score + LLM relevance check",
        base(Selection::Score, true),
        &corpus,
    )
    .await;
    measure("LLM selection", base(Selection::Llm, false), &corpus).await;
}

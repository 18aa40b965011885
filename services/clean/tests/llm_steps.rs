//! The clean stage's LLM steps against simweb's scripted model over HTTP: judge, cleaning with
//! its technical-content guard, validated analysis, and every fallback (invalid JSON, a slow
//! model, a spent budget); then the stage itself: job context, spend charged, analysis cache.

use std::collections::BTreeMap;
use std::sync::Arc;

use trawl_clean::analysis::Context;
use trawl_clean::steps::{process, LlmUse, Processed};
use trawl_clean::CleanStage;
use trawl_config::{CleanConfig, Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_llm::Llm;
use trawl_messages::{paths, AnalysedDoc, Envelope, FetchedDoc, Lookup, Source, SourceKind};
use trawl_pipeline::fanin::JobMeta;
use trawl_pipeline::runtime::{BUDGET, SPENT};
use trawl_pipeline::Job;
use trawl_pipeline::{Runtime, Stage};

/// A page with furniture around a technical article: code, a command, a table.
const PAGE: &str = "We use cookies to improve your experience. Accept all?\n\n\
Sign in | Subscribe to our newsletter\n\n\
Follow us on social media for more.\n\n\
# The Frell protocol\n\n\
The Frell protocol uses port 4410 for all of its traffic between clients and servers. \
It was designed by Ada Quist at Vantor Labs in 1987, after years of work on older protocols.\n\n\
Install the client with `pip install frell` and start it:\n\n\
```bash\n$ frell --port 4410 --retries 3\n```\n\n\
| Setting | Default |\n|---|---|\n| port | 4410 |\n| retries | 3 |\n\n\
Every Frell message is limited to 16,384 bytes, and a client retries three times before it gives up.\n\n\
Share on Twitter\n\nAdvertisement\n\nAll rights reserved.\n";

const QUESTION: &str = "Which port does the Frell protocol use and who designed it?";

async fn simweb() -> Simweb {
    Simweb::start(Arc::new(Corpus::generate()), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

fn llm_config(web: &Simweb) -> LlmConfig {
    LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "gpt-4o-mini".into(),
        // Each test sees the model's own answers, not an earlier test's cached ones.
        cache_ttl_secs: 0,
        ..Default::default()
    }
}

fn env() -> BTreeMap<String, String> {
    [("OPENAI_API_KEY".to_string(), "k".to_string())]
        .into_iter()
        .collect()
}

fn ctx(question: &str) -> Context {
    Context {
        question: question.into(),
        sub_queries: vec![question.into()],
        data_points: vec!["port".into(), "designer".into()],
        is_news: false,
        language: "en".into(),
    }
}

async fn run_with(llm: &Llm, cfg: &CleanConfig, question: &str, page: &str) -> Processed {
    process(LlmUse::Yes(llm), cfg, &ctx(question), "Frell", page.into()).await
}

#[tokio::test]
async fn a_dirty_page_is_judged_cleaned_and_analysed_by_the_llm() {
    let web = simweb().await;
    let llm = Llm::new(&llm_config(&web), &env()).unwrap();
    let p = run_with(&llm, &CleanConfig::default(), QUESTION, PAGE).await;

    assert_eq!(p.cleanliness.source, "llm");
    assert!(p.cleanliness.score < 0.7, "{:?}", p.cleanliness);
    assert!(p.cleanliness.heuristic < 0.7, "{:?}", p.cleanliness);
    assert!(p.cleaning.applied, "{:?}", p.cleaning);
    assert!(!p.markdown.contains("cookies") && !p.markdown.contains("Advertisement"));
    assert!(p.markdown.contains("frell --port 4410 --retries 3"));
    assert_eq!(p.analysed_by, "llm");
    assert!(p.analysis.is_relevant);
    assert_eq!(p.analysis.extracted_data["port"].as_deref(), Some("4410"));
    assert!(p.analysis.key_points[0].starts_with("The Frell protocol uses port 4410"));
    assert_eq!(p.analysis.tables.len(), 1);
    assert!(p.complete && p.notes.is_empty(), "{:?}", p.notes);
    assert!(llm.spent().requests >= 3, "{:?}", llm.spent());
}

#[tokio::test]
async fn a_cleaning_that_drops_code_keeps_the_original_and_says_why() {
    let web = simweb().await;
    let llm = Llm::new(&llm_config(&web), &env()).unwrap();
    let question = format!("{QUESTION} simweb:drop-code");
    let p = run_with(&llm, &CleanConfig::default(), &question, PAGE).await;
    assert!(!p.cleaning.applied);
    assert_eq!(
        p.cleaning.reason, "dropped 1 code block; dropped 1 shell command",
        "{:?}",
        p.cleaning
    );
    assert_eq!(p.markdown, PAGE);

    let short = format!("{QUESTION} simweb:clean-short");
    let p = run_with(&llm, &CleanConfig::default(), &short, PAGE).await;
    assert!(p.cleaning.reason.contains("too short"), "{:?}", p.cleaning);
    assert_eq!(p.markdown, PAGE);
}

#[tokio::test]
async fn a_clean_page_is_not_sent_for_cleaning_and_long_pages_are_bounded() {
    let web = simweb().await;
    let llm = Llm::new(&llm_config(&web), &env()).unwrap();
    let article = &PAGE[PAGE.find("# The Frell").unwrap()..PAGE.find("Share on").unwrap()];
    let p = run_with(&llm, &CleanConfig::default(), QUESTION, article).await;
    assert!(p.cleanliness.score >= 0.7, "{:?}", p.cleanliness);
    assert!(!p.cleaning.applied);
    assert!(
        p.cleaning.reason.starts_with("judged clean"),
        "{:?}",
        p.cleaning
    );

    let cfg = CleanConfig {
        llm_clean_max_chars: 300,
        llm_analysis_max_chars: 400,
        ..CleanConfig::default()
    };
    let p = run_with(&llm, &cfg, QUESTION, PAGE).await;
    assert!(
        p.cleaning.reason.starts_with("too long for LLM cleaning"),
        "{:?}",
        p.cleaning
    );
    assert_eq!(p.analysed_by, "llm");
    assert!(
        p.notes.iter().any(|n| n.contains("passages most relevant")),
        "{:?}",
        p.notes
    );
}

#[tokio::test]
async fn invalid_json_falls_back_to_the_extractive_analysis() {
    let web = simweb().await;
    let llm = Llm::new(&llm_config(&web), &env()).unwrap();
    // Prose on every turn, repair included: both the judge and the analysis fall back.
    let page = format!("{PAGE}\nsimweb:badjson-always\n");
    let p = run_with(&llm, &CleanConfig::default(), QUESTION, &page).await;
    assert_eq!(p.cleanliness.source, "heuristic");
    assert_eq!(p.analysed_by, "extractive");
    assert!(!p.complete);
    assert!(
        p.notes.iter().any(|n| n.starts_with("LLM judge failed")),
        "{:?}",
        p.notes
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("LLM analysis failed, extractive analysis used")),
        "{:?}",
        p.notes
    );
    // The extractive path still answers the data points.
    assert_eq!(p.analysis.extracted_data["port"].as_deref(), Some("4410"));
    assert_eq!(
        p.analysis.extracted_data["designer"].as_deref(),
        Some("Ada Quist")
    );

    // Prose once, then valid JSON after the repair turn: the LLM's answer stands.
    let once = format!("{PAGE}\nsimweb:badjson\n");
    let p = run_with(&llm, &CleanConfig::default(), QUESTION, &once).await;
    assert_eq!(p.analysed_by, "llm", "{:?}", p.notes);

    // Valid JSON with a data point nobody asked for fails validation on both turns.
    let extra = format!("{QUESTION} simweb:extra-key");
    let p = run_with(&llm, &CleanConfig::default(), &extra, PAGE).await;
    assert_eq!(p.analysed_by, "extractive");
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("not asked for: unrequested")),
        "{:?}",
        p.notes
    );
}

#[tokio::test]
async fn a_slow_llm_times_out_and_falls_back() {
    let web = simweb().await;
    let config = LlmConfig {
        timeout_secs: 1,
        max_retries: 0,
        ..llm_config(&web)
    };
    let llm = Llm::new(&config, &env()).unwrap();
    let question = format!("{QUESTION} simweb:llm-slow");
    let started = std::time::Instant::now();
    let p = run_with(&llm, &CleanConfig::default(), &question, PAGE).await;
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    // The judge's prompt has no question in it: it answered; cleaning and analysis timed out.
    assert_eq!(p.cleanliness.source, "llm");
    assert!(!p.cleaning.applied);
    assert!(p.cleaning.reason.contains("timed out"), "{:?}", p.cleaning);
    assert_eq!(p.markdown, PAGE);
    assert_eq!(p.analysed_by, "extractive");
    assert!(!p.complete);
}

#[tokio::test]
async fn news_questions_use_the_news_prompt() {
    let web = simweb().await;
    let llm = Llm::new(&llm_config(&web), &env()).unwrap();
    let mut news = ctx("What is the latest news on the Frell protocol?");
    news.is_news = true;
    let p = process(
        LlmUse::Yes(&llm),
        &CleanConfig::default(),
        &news,
        "Frell",
        PAGE.into(),
    )
    .await;
    assert!(
        p.analysis.summary.starts_with("Latest: "),
        "{}",
        p.analysis.summary
    );
}

// --- the stage ---

fn fetched(url: &str, body: &str, question: &str) -> FetchedDoc {
    FetchedDoc {
        query: question.into(),
        source: Source {
            idx: 0,
            url: url.into(),
            title: "Frell".into(),
            snippet: String::new(),
            provider: "searxng".into(),
            position: 1,
            score: 0.5,
            kind: SourceKind::Page,
            file_type: None,
        },
        final_url: url.into(),
        status: 200,
        content_type: "text/markdown".into(),
        level: 0,
        bytes: body.len() as u64,
        body: body.into(),
        cached: None,
    }
}

/// Runs the stage on one fetched page of a job opened with `data_points`; returns the stored
/// document and the job's counters.
async fn handle(
    stage: &CleanStage,
    rt: &Runtime,
    batch: uuid::Uuid,
    question: &str,
    data_points: &[&str],
) -> (AnalysedDoc, BTreeMap<String, i64>) {
    let doc = fetched("http://frell.test/", PAGE, question);
    let env = Envelope::new(
        uuid::Uuid::now_v7(),
        batch,
        chrono::Utc::now() + chrono::Duration::hours(1),
        doc.clone(),
    );
    let meta = JobMeta {
        query: question.into(),
        sources: vec![doc.source.clone()],
        sub_queries: vec![question.into()],
        data_points: data_points.iter().map(|s| s.to_string()).collect(),
        // What search would have judged: the test's news questions ask for the latest.
        is_news: question.contains("latest"),
        language: "en".into(),
    };
    Job::new(rt, &env).open(meta).await.unwrap();
    let job = env.job_id;
    stage.handle(rt, env).await.expect("clean handled");
    let bytes = rt
        .objects
        .get(&paths::doc(batch, job, 0))
        .await
        .unwrap()
        .unwrap();
    let counters = rt.store.job_counters(&job.to_string()).await.unwrap();
    (serde_json::from_slice(&bytes).unwrap(), counters)
}

fn stage_config(dir: &std::path::Path, llm: Option<LlmConfig>) -> Config {
    let mut c = Config::default();
    c.output.url = format!("file://{}", dir.display());
    c.llm = llm;
    c
}

#[tokio::test]
async fn a_spent_budget_means_no_llm_call() {
    let dir = tempfile::tempdir().unwrap();
    // An LLM on a closed port: any call would fail and leave a note saying so.
    let llm = LlmConfig {
        base_url: "http://127.0.0.1:9/v1".into(),
        max_retries: 0,
        ..Default::default()
    };
    let config = stage_config(dir.path(), Some(llm));
    let stage = CleanStage::with_env(&config, &env()).unwrap();
    let rt = Runtime::embedded(config).unwrap();
    let batch = uuid::Uuid::now_v7();
    rt.store
        .batch_add(&batch.to_string(), BUDGET, 100)
        .await
        .unwrap();
    rt.store
        .batch_add(&batch.to_string(), SPENT, 100)
        .await
        .unwrap();

    let (doc, counters) = handle(&stage, &rt, batch, QUESTION, &["port", "designer"]).await;
    // The stored document says what language the page is in.
    assert_eq!(doc.language, "en");
    assert_eq!(
        doc.notes,
        vec!["no LLM steps: the batch's LLM budget is spent"]
    );
    assert_eq!(doc.analysed_by, "extractive");
    let cleaning = doc.cleaning.unwrap();
    assert!(!cleaning.applied);
    assert_eq!(cleaning.reason, "the batch's LLM budget is spent");
    assert_eq!(doc.cleanliness.unwrap().source, "heuristic");
    assert_eq!(doc.extracted_data["port"].as_deref(), Some("4410"));
    assert!(
        !counters.keys().any(|k| k.ends_with(".clean")),
        "{counters:?}"
    );
}

#[tokio::test]
async fn the_stage_charges_its_spend_and_a_repeat_comes_from_the_cache() {
    let web = simweb().await;
    let dir = tempfile::tempdir().unwrap();
    let config = stage_config(dir.path(), Some(llm_config(&web)));
    let stage = CleanStage::with_env(&config, &env()).unwrap();
    let rt = Runtime::embedded(config).unwrap();
    let batch = uuid::Uuid::now_v7();

    let (doc, counters) = handle(&stage, &rt, batch, QUESTION, &["port", "designer"]).await;
    assert_eq!(doc.analysed_by, "llm");
    assert!(doc.cleaning.as_ref().unwrap().applied);
    assert_eq!(doc.extracted_data.len(), 2);
    assert!(
        counters.get("tokens_in.clean").is_some_and(|&t| t > 0),
        "{counters:?}"
    );

    // The same page and question in another job: the analysis cache answers, no LLM tokens.
    let (again, counters) = handle(&stage, &rt, batch, QUESTION, &["port", "designer"]).await;
    assert_eq!(again.summary, doc.summary);
    assert_eq!(again.markdown, doc.markdown);
    assert!(
        !counters.keys().any(|k| k.ends_with(".clean")),
        "{counters:?}"
    );

    // A news question, as the job's search judged it: the news prompt writes the summary.
    let news = "What is the latest news on the Frell protocol?";
    let (doc, _) = handle(&stage, &rt, batch, news, &[]).await;
    assert!(doc.summary.starts_with("Latest: "), "{}", doc.summary);

    // No LLM configured: the extractive path, and the reason on the document.
    let plain = stage_config(dir.path(), None);
    let stage = CleanStage::with_env(&plain, &env()).unwrap();
    let rt = Runtime::embedded(plain).unwrap();
    let (doc, _) = handle(
        &stage,
        &rt,
        batch,
        "How many settings does the Frell client have?",
        &[],
    )
    .await;
    assert_eq!(doc.analysed_by, "extractive");
    assert_eq!(doc.cleaning.unwrap().reason, "no LLM configured");
    assert!(doc.notes.is_empty(), "{:?}", doc.notes);
    assert!(
        matches!(doc.lookup, Some(Lookup::Count { count: 2, .. })),
        "{:?}",
        doc.lookup
    );
}

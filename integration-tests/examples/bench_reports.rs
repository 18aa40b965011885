//! Report quality on simweb's labelled questions (the follow-up and comparison families
//! included) and on questions nothing answers, every stage in one process over the in-memory
//! twins, for the extractive writer with one round of research (the baseline) and with follow-up
//! rounds, and for the LLM writer (simweb's scripted model):
//!
//! - evidence recall: the share of jobs whose report cites a page that holds the answer;
//! - answer recall: the share of the asked facts (a topic's first two; both values of the
//!   follow-up family) whose values, names and years all reach the report;
//! - citation precision: the share of citations that point to a fetched and analysed source
//!   (it must be 100 %), and URLs in reports that are not one of their sources (must be 0);
//! - supported claims: the share of the reports' claims a cited passage supports;
//! - uncited: reports that cite nothing although a relevant page was read (must be 0);
//! - follow-up recall: the share of the follow-up family's two values that reach the report;
//! - conflicts: reports listing a conflict, on the questions whose answer pages disagree (where
//!   trawl may fetch the page that disagrees), and on those whose pages agree (false conflicts,
//!   must be 0);
//! - answered anyway: unanswerable questions whose job ended `done` or `partial` rather than
//!   `no_answer` or `no_sources` (must be 0);
//! - rounds and pages fetched per question.
//!
//! Run it with `scripts/bench-reports`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use trawl_config::{Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, PageKind, Simweb};
use trawl_messages::{paths, JobOptions, JobRecord, JobStatus, SearchTask};
use trawl_pipeline::batch::{submit, Question};

/// What a fact's answer is: its numbers, and its capitalised words past the first that are not
/// the subject's name ("The Brimomir Bridge was designed by engineer Ilse Strand." → Ilse,
/// Strand).
fn answer_tokens(fact: &str, subject: &str) -> Vec<String> {
    let subject: Vec<&str> = subject.split_whitespace().collect();
    (fact.split_whitespace().enumerate())
        .map(|(i, w)| (i, w.trim_matches(|c: char| !c.is_alphanumeric())))
        .filter(|(i, w)| {
            w.starts_with(|c: char| c.is_ascii_digit())
                || (*i > 0 && w.starts_with(char::is_uppercase) && !subject.contains(w))
        })
        .map(|(_, w)| w.to_owned())
        .collect()
}

async fn measure(name: &str, config: Config, corpus: &Corpus) {
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "simweb".to_string())]
        .into_iter()
        .collect();
    let embedded = trawl_cli::embedded::Embedded::start(config, &env).unwrap();
    let rt = embedded.rt.clone();

    let questions = corpus.questions();
    let unanswerable = corpus.unanswerable();
    let tasks = (questions.iter().map(|q| &q.query))
        .chain(&unanswerable)
        .map(|q| SearchTask::new(q.clone(), JobOptions::default()))
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

    let mut m = Measures::default();
    let read = |key: String| {
        let objects = rt.objects.clone();
        async move { objects.get(&key).await.unwrap().unwrap() }
    };
    for job in &manifest.jobs[questions.len()..] {
        let record: JobRecord =
            serde_json::from_slice(&read(paths::job_record(manifest.batch_id, job.job_id)).await)
                .unwrap();
        m.answered_anyway += usize::from(matches!(
            record.status,
            JobStatus::Done | JobStatus::Partial
        ));
    }
    for (job, q) in manifest.jobs.iter().zip(&questions) {
        let (batch, job) = (manifest.batch_id, job.job_id);
        let sources: serde_json::Value =
            serde_json::from_slice(&read(paths::sources(batch, job)).await).unwrap();
        let record: JobRecord =
            serde_json::from_slice(&read(paths::job_record(batch, job)).await).unwrap();
        let report = String::from_utf8(read(paths::report(batch, job)).await).unwrap();
        let cited: Vec<&serde_json::Value> = (sources.as_array().unwrap().iter())
            .filter(|s| !s["cited_as"].is_null())
            .collect();
        let cited_urls: Vec<&str> = cited.iter().filter_map(|s| s["url"].as_str()).collect();
        m.citations += cited.len();
        m.valid += (cited.iter())
            .filter(|s| s["outcome"]["outcome"] == "analysed")
            .count();
        m.with_evidence += usize::from(
            cited_urls
                .iter()
                .any(|u| q.answer_urls.iter().any(|a| a == u)),
        );
        m.foreign_urls += (report.split(|c: char| c.is_whitespace() || "()<>[]".contains(c)))
            .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
            .filter(|w| !cited_urls.contains(w))
            .count();
        m.claims += record.claims;
        m.unsupported += record.unsupported_claims;
        m.uncited += usize::from(cited.is_empty() && record.outcomes.get("analysed") > Some(&0));
        m.rounds += 1 + record.rounds.len();
        m.fetched += record.sources_selected;
        // A conflict can only be found when trawl may fetch the page that disagrees.
        let disagreeing = q.disagrees && (corpus.pages().iter()).any(|p| {
            p.allowed_for_trawl()
                && matches!(&p.kind, PageKind::Answer { topic, variant: 2 } if *topic == q.topic)
        });
        if disagreeing {
            m.disagreeing += 1;
            m.conflicts_found += usize::from(record.conflicts > 0);
        } else if !q.disagrees {
            m.false_conflicts += usize::from(record.conflicts > 0);
        }
        let topic = corpus.topics().iter().find(|t| t.id == q.topic).unwrap();
        let asked: Vec<Vec<String>> = match &q.follow_up {
            Some(f) => vec![vec![f.answered_value.clone()], vec![f.value.clone()]],
            None => (q.facts.iter().take(2))
                .map(|f| answer_tokens(f, &topic.name))
                .collect(),
        };
        m.facts += asked.len();
        m.facts_found += (asked.iter())
            .filter(|tokens| tokens.iter().all(|t| report.contains(t.as_str())))
            .count();
        if let Some(f) = &q.follow_up {
            m.follow_up_values += 2;
            m.follow_up_found += [&f.answered_value, &f.value]
                .iter()
                .filter(|v| report.contains(v.as_str()))
                .count();
        }
    }
    let n = questions.len() as f64;
    let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    println!(
        "| {name} | {} | {:.3} | {:.3} | {:.3} | {} | {:.3} | {} | {:.3} | {}/{} | {} | {}/{} | {:.2} | {:.1} | {:.0} |",
        manifest.jobs.len(),
        m.with_evidence as f64 / n,
        share(m.facts_found, m.facts),
        m.valid as f64 / m.citations.max(1) as f64,
        m.foreign_urls,
        (m.claims - m.unsupported) as f64 / m.claims.max(1) as f64,
        m.uncited,
        m.follow_up_found as f64 / m.follow_up_values.max(1) as f64,
        m.conflicts_found,
        m.disagreeing,
        m.false_conflicts,
        m.answered_anyway,
        unanswerable.len(),
        m.rounds as f64 / n,
        m.fetched as f64 / n,
        elapsed.as_secs_f64()
    );
}

#[derive(Default)]
struct Measures {
    with_evidence: usize,
    citations: usize,
    valid: usize,
    foreign_urls: usize,
    claims: usize,
    unsupported: usize,
    uncited: usize,
    rounds: usize,
    fetched: usize,
    follow_up_values: usize,
    follow_up_found: usize,
    facts: usize,
    facts_found: usize,
    disagreeing: usize,
    conflicts_found: usize,
    false_conflicts: usize,
    answered_anyway: usize,
}

#[tokio::main]
async fn main() {
    let corpus = Arc::new(Corpus::generate_with_families());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = |llm: bool, rounds: u32| {
        let mut c = Config::default();
        c.research.max_rounds = rounds;
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
        "simweb: {} labelled questions, answers on {} pages; {} unanswerable questions",
        corpus.questions().len(),
        corpus
            .questions()
            .iter()
            .map(|q| q.answer_urls.len())
            .sum::<usize>(),
        corpus.unanswerable().len()
    );
    println!(
        "| | jobs | evidence | answer | citations | foreign | supported | uncited | follow-up \
         | conflicts found | false conflicts | answered anyway | rounds | pages | secs |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    measure("extractive, one round", base(false, 1), &corpus).await;
    measure("extractive, follow-up rounds", base(false, 2), &corpus).await;
    measure("LLM (scripted), one round", base(true, 1), &corpus).await;
    measure("LLM (scripted), follow-ups", base(true, 2), &corpus).await;
}

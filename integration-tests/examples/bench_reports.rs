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
//! Then the same measures by language, on simweb's multilingual family (the same 20 questions in
//! each of eight languages; see [`measure_languages`]), for the extractive and the LLM writer.
//!
//! Run it with `scripts/bench-reports` (`--languages` for the second table alone, `--misses` to
//! print its questions that miss something).

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

/// Runs `questions` through every stage in one process under `config`, waiting for the batch.
async fn run(config: Config, questions: Vec<String>) -> Run {
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "simweb".to_string())]
        .into_iter()
        .collect();
    let embedded = trawl_cli::embedded::Embedded::start(config, &env).unwrap();
    let rt = embedded.rt.clone();
    let tasks = (questions.into_iter())
        .map(|q| SearchTask::new(q, JobOptions::default()))
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
    Run {
        objects: rt.objects.clone(),
        manifest,
        elapsed,
    }
}

/// A finished batch and where its work products are.
struct Run {
    objects: trawl_store::Objects,
    manifest: trawl_pipeline::batch::Manifest,
    elapsed: Duration,
}

/// One job's work products.
struct Job {
    record: JobRecord,
    sources: Vec<serde_json::Value>,
    report: String,
}

impl Run {
    async fn job(&self, i: usize) -> Job {
        let (batch, job) = (self.manifest.batch_id, self.manifest.jobs[i].job_id);
        let read = |key: String| async move { self.objects.get(&key).await.unwrap().unwrap() };
        let sources: serde_json::Value =
            serde_json::from_slice(&read(paths::sources(batch, job)).await).unwrap();
        Job {
            record: serde_json::from_slice(&read(paths::job_record(batch, job)).await).unwrap(),
            sources: sources.as_array().unwrap().clone(),
            report: String::from_utf8(read(paths::report(batch, job)).await).unwrap(),
        }
    }
}

impl Job {
    fn cited(&self) -> Vec<&serde_json::Value> {
        (self.sources.iter())
            .filter(|s| !s["cited_as"].is_null())
            .collect()
    }
}

async fn measure(name: &str, config: Config, corpus: &Corpus) {
    let questions = corpus.questions();
    let unanswerable = corpus.unanswerable();
    let asked = (questions.iter().map(|q| q.query.clone()))
        .chain(unanswerable.iter().cloned())
        .collect();
    let run = run(config, asked).await;
    let (manifest, elapsed) = (&run.manifest, run.elapsed);

    let mut m = Measures::default();
    for i in questions.len()..manifest.jobs.len() {
        let record = run.job(i).await.record;
        m.answered_anyway += usize::from(matches!(
            record.status,
            JobStatus::Done | JobStatus::Partial
        ));
    }
    for (i, q) in questions.iter().enumerate() {
        let job = run.job(i).await;
        let (record, report) = (&job.record, &job.report);
        let cited = job.cited();
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

/// The multilingual family's questions, by language: evidence recall (the report cites an
/// answer page), answer recall (the value is in the report), citation precision (the share of
/// citations pointing to a page about the question's subject: one stating a value or one naming
/// the subject) and the share pointing to a page that states a value, the share of claims a cited
/// passage supports (attribution, in the language), conflicts found where a
/// page disagrees and false ones where none does, the share of jobs whose question's language
/// was detected right and of read pages about the subject whose own language was.
async fn measure_languages(name: &str, config: Config, corpus: &Corpus, show_misses: bool) {
    let questions = corpus.language_questions();
    let run = run(config, questions.iter().map(|q| q.query.clone()).collect()).await;
    let mut by_lang: Vec<(&str, LangMeasures)> = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        let job = run.job(i).await;
        if by_lang.last().is_none_or(|(l, _)| *l != q.lang) {
            by_lang.push((q.lang, LangMeasures::default()));
        }
        let m = &mut by_lang.last_mut().unwrap().1;
        let cited: Vec<&str> = (job.cited().iter())
            .filter_map(|s| s["url"].as_str())
            .collect();
        let is = |urls: &[String], u: &str| urls.iter().any(|a| a == u);
        m.questions += 1;
        m.with_evidence += usize::from(cited.iter().any(|u| is(&q.answer_urls, u)));
        m.answered += usize::from(job.report.contains(&q.value));
        m.citations += cited.len();
        m.on_answers += (cited.iter())
            .filter(|u| is(&q.answer_urls, u) || is(&q.disagreeing_urls, u))
            .count();
        m.off_subject += (cited.iter())
            .filter(|u| {
                !is(&q.answer_urls, u) && !is(&q.disagreeing_urls, u) && !is(&q.distractor_urls, u)
            })
            .count();
        if q.disagreeing_urls.is_empty() {
            m.false_conflicts += usize::from(job.record.conflicts > 0);
        } else {
            m.disagreeing += 1;
            m.conflicts_found += usize::from(job.record.conflicts > 0);
        }
        let detected = job.record.analysis.as_ref().map(|a| a.language.as_str());
        m.question_lang += usize::from(detected == Some(q.lang));
        for s in (job.sources.iter()).filter(|s| s["outcome"]["outcome"] == "analysed") {
            let url = s["url"].as_str().unwrap_or_default();
            if is(&q.answer_urls, url) || is(&q.distractor_urls, url) {
                m.sources_read += 1;
                m.source_lang += usize::from(s["language"] == q.lang);
            }
        }
        m.fetched += job.record.sources_selected;
        m.claims += job.record.claims;
        m.unsupported += job.record.unsupported_claims;
        if show_misses {
            let missed_conflict = !q.disagreeing_urls.is_empty() && job.record.conflicts == 0;
            let off: Vec<&&str> = (cited.iter())
                .filter(|u| {
                    !is(&q.answer_urls, u)
                        && !is(&q.disagreeing_urls, u)
                        && !is(&q.distractor_urls, u)
                })
                .collect();
            if !job.report.contains(&q.value) || missed_conflict || !off.is_empty() {
                println!(
                    "miss: {name} {} {:?} value {} answers {:?} disagreeing {:?} cited {cited:?} \
                     off {off:?} conflicts {}\n{}\n",
                    q.lang,
                    q.query,
                    q.value,
                    q.answer_urls,
                    q.disagreeing_urls,
                    job.record.conflicts,
                    job.report
                );
            }
        }
    }
    for (lang, m) in by_lang {
        let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        println!(
            "| {name} | {lang} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {}/{} | {} | {:.3} | {:.3} | {:.1} |",
            m.questions,
            share(m.with_evidence, m.questions),
            share(m.answered, m.questions),
            1.0 - share(m.off_subject, m.citations),
            share(m.on_answers, m.citations),
            share(m.claims - m.unsupported, m.claims),
            m.conflicts_found,
            m.disagreeing,
            m.false_conflicts,
            share(m.question_lang, m.questions),
            share(m.source_lang, m.sources_read),
            m.fetched as f64 / m.questions.max(1) as f64,
        );
    }
    println!("({name}: {:.0} s)", run.elapsed.as_secs_f64());
}

#[derive(Default)]
struct LangMeasures {
    questions: usize,
    with_evidence: usize,
    answered: usize,
    citations: usize,
    on_answers: usize,
    off_subject: usize,
    disagreeing: usize,
    conflicts_found: usize,
    false_conflicts: usize,
    question_lang: usize,
    sources_read: usize,
    source_lang: usize,
    fetched: usize,
    claims: usize,
    unsupported: usize,
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

fn config(dir: &std::path::Path, web: &Simweb, llm: bool, rounds: u32) -> Config {
    let mut c = Config::default();
    c.research.max_rounds = rounds;
    c.output.url = format!("file://{}", dir.display());
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
}

async fn english(dir: &std::path::Path) {
    let corpus = Arc::new(Corpus::generate_with_families());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    println!(
        "simweb: {} labelled questions, answers on {} pages; {} unanswerable questions",
        corpus.questions().len(),
        (corpus.questions().iter())
            .map(|q| q.answer_urls.len())
            .sum::<usize>(),
        corpus.unanswerable().len()
    );
    println!(
        "| | jobs | evidence | answer | citations | foreign | supported | uncited | follow-up \
         | conflicts found | false conflicts | answered anyway | rounds | pages | secs |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let config = |llm, rounds| config(dir, &web, llm, rounds);
    measure("extractive, one round", config(false, 1), &corpus).await;
    measure("extractive, follow-up rounds", config(false, 2), &corpus).await;
    measure("LLM (scripted), one round", config(true, 1), &corpus).await;
    measure("LLM (scripted), follow-ups", config(true, 2), &corpus).await;
}

async fn by_language(dir: &std::path::Path) {
    let corpus = Arc::new(Corpus::generate_multilingual());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    println!(
        "By language: simweb's multilingual family, the same {} questions in each of 8 languages",
        corpus.language_questions().len() / 8
    );
    println!(
        "| | language | questions | evidence | answer | citation precision | citing a value \
         | supported | conflicts found | false conflicts | question's language | sources' language | pages |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let misses = std::env::args().any(|a| a == "--misses");
    measure_languages("extractive", config(dir, &web, false, 1), &corpus, misses).await;
    measure_languages(
        "LLM (scripted)",
        config(dir, &web, true, 1),
        &corpus,
        misses,
    )
    .await;
}

/// `--languages` prints the by-language table alone; `--misses` also prints each of its questions
/// whose report misses the answer, cites a page off the subject or misses a conflict.
#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    if !std::env::args().any(|a| a == "--languages") {
        english(dir.path()).await;
        println!();
    }
    by_language(dir.path()).await;
}

//! Answers as data on simweb: a table of 50 entities (bridges, materials, fish, festivals,
//! vessels, mountains, languages) whose pages state numbers with units, years and names, each
//! asked for its kind's fields plus one no page states (`colour`), every stage in one process,
//! without and with the LLM (simweb's scripted model):
//!
//! - accuracy: the share of fields a page states whose answer is that value (for an entity
//!   whose pages disagree on its first fact, a conflict listing the value counts too);
//! - invalid: values the field's schema refuses (must be 0);
//! - unstated: values whose quote is not in the text of the page it cites (must be 0);
//! - not found where none is stated: the share of `colour` fields answered `not_found` (must be
//!   1.000).
//!
//! Run it with `scripts/bench-fields` (`--misses` prints every field answered wrong).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use trawl_config::{Config, LlmConfig};
use trawl_integration_tests::simweb::{Corpus, Simweb, Topic};
use trawl_messages::{paths, Answer, FieldStatus, Fields, JobOptions, SearchTask};
use trawl_pipeline::batch::{submit, Question};

const ROWS: usize = 50;

/// A field asked of an entity and the value its pages state, if they state one.
struct Asked {
    name: &'static str,
    spec: Value,
    stated: Option<Value>,
}

/// The words of `s` after `marker`, up to the next word that does not start upper-case (a
/// person's name after "by").
fn name_after(s: &str, marker: &str) -> Value {
    let rest = s.split(marker).nth(1).unwrap_or("");
    let words: Vec<&str> = (rest.split_whitespace())
        .map(|w| w.trim_end_matches(['.', ',']))
        .skip_while(|w| matches!(*w, "Dr." | "Dr" | "engineer"))
        .take_while(|w| w.starts_with(char::is_uppercase))
        .collect();
    json!(words.join(" "))
}

/// The first number of `s`, commas dropped.
fn number(s: &str) -> f64 {
    (s.split_whitespace())
        .map(|w| w.trim_end_matches(['.', ',']).replace(',', ""))
        .find_map(|w| w.parse().ok())
        .expect("a number")
}

/// The last four-digit year of `s`.
fn year(s: &str) -> Value {
    let y = (s.split(|c: char| !c.is_ascii_digit()))
        .rfind(|w| w.len() == 4)
        .expect("a year");
    json!(y.parse::<i64>().unwrap())
}

/// The fields asked of `topic`, with the values its facts state.
fn asked(topic: &Topic) -> Option<Vec<Asked>> {
    let f = &topic.facts;
    let field = |name, spec: Value, stated: Value| Asked {
        name,
        spec,
        stated: Some(stated),
    };
    let integer = || json!({"type": "integer"});
    let text = || json!({"type": "string"});
    let mut fields = match topic.kind {
        "material" => vec![
            field(
                "melting point",
                json!({"type": "number", "unit": "°C"}),
                json!(number(&f[0])),
            ),
            field("isolator", text(), name_after(&f[1], " by ")),
            field("year isolated", integer(), year(&f[1])),
        ],
        "bridge" => vec![
            field(
                "length",
                json!({"type": "number", "unit": "km"}),
                json!(number(&f[0]) / 1000.0),
            ),
            field("opened", integer(), year(&f[1])),
            field("designer", text(), name_after(&f[2], " engineer ")),
        ],
        "species" => vec![
            field(
                "average length",
                json!({"type": "number", "unit": "cm"}),
                json!(number(&f[0])),
            ),
            field("describer", text(), name_after(&f[2], " by ")),
            field("year described", integer(), year(&f[2])),
        ],
        "festival" => vec![
            field("founded", integer(), year(&f[1])),
            field("visitors", integer(), json!(number(&f[2]))),
        ],
        "ship" => vec![
            field("launched", integer(), year(&f[0])),
            field(
                "length",
                json!({"type": "number", "unit": "m"}),
                json!(number(&f[1])),
            ),
            field("captain", text(), name_after(&f[2], " by ")),
        ],
        "mountain" => vec![
            field(
                "height",
                json!({"type": "number", "unit": "m"}),
                json!(number(&f[0])),
            ),
            field("climber", text(), name_after(&f[1], " by ")),
            field("year first climbed", integer(), year(&f[1])),
        ],
        "language" => vec![
            field("creator", text(), name_after(&f[0], " by ")),
            field("year created", integer(), year(&f[0])),
        ],
        _ => return None,
    };
    fields.push(Asked {
        name: "colour",
        spec: json!({"type": "string", "description": "the colour it is painted or has"}),
        stated: None,
    });
    Some(fields)
}

fn schema(fields: &[Asked]) -> Fields {
    let properties: serde_json::Map<String, Value> = (fields.iter())
        .map(|a| (a.name.to_owned(), a.spec.clone()))
        .collect();
    Fields::parse(json!({"type": "object", "properties": properties})).unwrap()
}

/// Whether `given` is `stated`: numbers within 0.5 %, names without regard to case.
fn same(given: &Value, stated: &Value) -> bool {
    match (given.as_f64(), stated.as_f64()) {
        (Some(g), Some(s)) => (g - s).abs() <= 0.005 * s.abs().max(1e-9),
        _ => (given.as_str().map(str::to_lowercase)) == stated.as_str().map(str::to_lowercase),
    }
}

#[derive(Default)]
struct Measures {
    stated: usize,
    right: usize,
    invalid: usize,
    unstated: usize,
    unasked: usize,
    not_found: usize,
    misses: Vec<String>,
}

async fn measure(name: &str, config: Config, corpus: &Corpus, rows: &[(&Topic, Vec<Asked>)]) {
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "simweb".to_string())]
        .into_iter()
        .collect();
    let embedded = trawl_cli::embedded::Embedded::start(config, &env).unwrap();
    let rt = embedded.rt.clone();
    let tasks = (rows.iter())
        .map(|(topic, fields)| {
            let options = JobOptions {
                fields: Some(schema(fields)),
                ..Default::default()
            };
            SearchTask::new(topic.question.clone(), options)
        })
        .collect();
    let started = std::time::Instant::now();
    let manifest = submit(&rt, Question::numbered(tasks), Default::default(), |_| {})
        .await
        .unwrap();
    let batch = manifest.batch_id.to_string();
    while !rt
        .store
        .batch_progress(&batch)
        .await
        .unwrap()
        .unwrap()
        .is_done()
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = started.elapsed();
    embedded.stop().await;

    let mut m = Measures::default();
    for ((topic, fields), job) in rows.iter().zip(&manifest.jobs) {
        let key = paths::answer(manifest.batch_id, job.job_id);
        let bytes = rt.objects.get(&key).await.unwrap().expect("answer.json");
        let answer: Answer = serde_json::from_slice(&bytes).unwrap();
        let schema = schema(fields);
        for asked in fields {
            let got = answer
                .fields
                .get(asked.name)
                .expect("every field is answered");
            let field = schema.get(asked.name).unwrap();
            let values: Vec<&trawl_messages::fields::Stated> = got.values.iter().collect();
            for (value, url, quote) in (got.value.iter())
                .map(|v| (v, got.url.as_deref(), got.quote.as_deref()))
                .chain(
                    values
                        .iter()
                        .map(|s| (&s.value, Some(s.url.as_str()), Some(s.quote.as_str()))),
                )
            {
                m.invalid += usize::from(field.refuses(value).is_some());
                let page = url.and_then(|u| corpus.page(u));
                let quoted = page.zip(quote).is_some_and(|(p, q)| {
                    let text = p.text.split_whitespace().collect::<Vec<_>>().join(" ");
                    text.contains(q.trim_end_matches('.'))
                });
                m.unstated += usize::from(!quoted);
            }
            let Some(stated) = &asked.stated else {
                m.unasked += 1;
                m.not_found += usize::from(got.status == FieldStatus::NotFound);
                continue;
            };
            m.stated += 1;
            let right = match got.status {
                FieldStatus::Found => got.value.as_ref().is_some_and(|v| same(v, stated)),
                // Pages that disagree on the first fact: the disagreement is the answer.
                FieldStatus::Conflict => {
                    topic.disagrees() && values.iter().any(|s| same(&s.value, stated))
                }
                FieldStatus::NotFound => false,
            };
            m.right += usize::from(right);
            if !right {
                let given: Vec<String> = (got.value.iter())
                    .chain(values.iter().map(|s| &s.value))
                    .map(Value::to_string)
                    .collect();
                m.misses.push(format!(
                    "{} — {}: {} {}, stated {stated}",
                    topic.question,
                    asked.name,
                    got.status,
                    given.join(" / ")
                ));
            }
        }
    }
    let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    println!(
        "| {name} | {} | {} | {:.3} | {} | {} | {:.3} | {:.0} |",
        rows.len(),
        m.stated,
        share(m.right, m.stated),
        m.invalid,
        m.unstated,
        share(m.not_found, m.unasked),
        elapsed.as_secs_f64()
    );
    if std::env::args().any(|a| a == "--misses") {
        for miss in &m.misses {
            println!("  - {miss}");
        }
    }
}

fn config(dir: &std::path::Path, web: &Simweb, llm: bool) -> Config {
    let mut c = Config::default();
    c.research.max_rounds = 1;
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

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = Arc::new(Corpus::generate());
    let web = Simweb::start(Arc::clone(&corpus), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let rows: Vec<(&Topic, Vec<Asked>)> = (corpus.topics().iter())
        .filter_map(|t| asked(t).map(|a| (t, a)))
        .take(ROWS)
        .collect();
    println!(
        "simweb: {} entities, {} fields that a page states, one that none does (colour) each",
        rows.len(),
        rows.iter().map(|(_, a)| a.len() - 1).sum::<usize>()
    );
    println!("| | rows | fields stated | accuracy | invalid | unstated | not found where none is stated | secs |");
    println!("|---|--:|--:|--:|--:|--:|--:|--:|");
    measure(
        "extractive",
        config(dir.path(), &web, false),
        &corpus,
        &rows,
    )
    .await;
    measure(
        "LLM (scripted)",
        config(dir.path(), &web, true),
        &corpus,
        &rows,
    )
    .await;
}

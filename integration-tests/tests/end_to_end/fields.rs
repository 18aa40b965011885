//! Answers as data: `trawl run --fields` fills a schema's fields from simweb's pages, with and
//! without the LLM, each value typed, quoted from a page the job read, and `not_found` where no
//! page states one.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::Fleet;
use serde_json::{json, Value};

/// The bridges whose pages agree: each one's question, length in metres, opening year,
/// designer and name.
fn bridges(fleet: &Fleet) -> Vec<(String, f64, i64, String, String)> {
    (fleet.corpus.topics().iter())
        .filter(|t| t.kind == "bridge" && !t.disagrees())
        .map(facts)
        .collect()
}

/// A bridge whose pages agree, and its length in metres, opening year and designer.
fn bridge(fleet: &Fleet) -> (String, f64, i64, String) {
    let (question, metres, opened, designer, _) = bridges(fleet).remove(0);
    (question, metres, opened, designer)
}

fn facts(topic: &trawl_integration_tests::simweb::Topic) -> (String, f64, i64, String, String) {
    let number = |s: &str| -> String {
        (s.split_whitespace())
            .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .map(|w| w.trim_end_matches('.').replace(',', ""))
            .unwrap()
    };
    let length: f64 = number(&topic.facts[0]).parse().unwrap();
    let opened: i64 = number(&topic.facts[1]).parse().unwrap();
    let designer = (topic.facts[2].split("engineer ").nth(1).unwrap())
        .trim_end_matches('.')
        .to_owned();
    (
        topic.question.clone(),
        length,
        opened,
        designer,
        topic.name.clone(),
    )
}

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "length": {"type": "number", "unit": "km", "description": "how long the bridge is"},
    "opened": {"type": "integer", "minimum": 1000},
    "designer": {"type": "string"},
    "colour": {"type": "string", "enum": ["red", "grey"]}
  },
  "required": ["length"]
}"#;

async fn run_with_fields(fleet: &Fleet, question: &str, llm: bool) -> Value {
    let schema = fleet.dir.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    let mut command = fleet.trawl_alone();
    command
        .args([
            "run",
            question,
            "--format",
            "json",
            "--max-level",
            "1",
            "--fields",
        ])
        .arg(&schema);
    fleet.with_llm(&mut command, llm.then_some("fields-model"));
    let out = command.stdin(Stdio::null()).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every found value is quoted from a source the report lists, and that source says it.
fn assert_quoted(record: &Value) {
    let report = record["report"].as_str().unwrap();
    for (name, field) in record["answer"]["fields"].as_object().unwrap() {
        if field["status"] != "found" {
            continue;
        }
        let quote = field["quote"].as_str().unwrap();
        assert!(!quote.is_empty(), "{name}: {field}");
        for n in field["sources"].as_array().unwrap() {
            assert!(
                report.contains(&format!("\n{n}. [")),
                "{name}'s source [{n}] is listed: {report}"
            );
        }
        let url = field["url"].as_str().unwrap();
        assert!(report.contains(url), "{name}: {url} in {report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trawl_run_fills_typed_cited_fields_with_and_without_the_llm() {
    let fleet = Fleet::start().await;
    let (question, metres, opened, designer) = bridge(&fleet);
    for llm in [false, true] {
        let record = run_with_fields(&fleet, &question, llm).await;
        let answer = &record["answer"];
        assert_eq!(
            answer["by"],
            if llm { "llm" } else { "extractive" },
            "{answer}"
        );
        let fields = &answer["fields"];
        // In the schema's order, converted to the field's unit.
        let names: Vec<&String> = fields.as_object().unwrap().keys().collect();
        assert_eq!(names.len(), 4);
        assert_eq!(fields["length"]["status"], "found", "{answer}");
        let km = fields["length"]["value"].as_f64().unwrap();
        assert!(
            (km - metres / 1000.0).abs() < 1e-6,
            "{km} km for {metres} m: {answer}"
        );
        assert_eq!(fields["opened"]["value"], json!(opened), "{answer}");
        // A name is found or not, never another one.
        match fields["designer"]["status"].as_str() {
            Some("found") => assert_eq!(fields["designer"]["value"], json!(designer), "{answer}"),
            other => assert_eq!(other, Some("not_found"), "{answer}"),
        }
        assert_eq!(
            fields["colour"]["status"], "not_found",
            "no page states a colour: {answer}"
        );
        assert!(fields["colour"].get("value").is_none(), "{answer}");
        assert_quoted(&record);
        let report = record["report"].as_str().unwrap();
        let table = report
            .find("| Field | Value | Sources |")
            .expect("the fields table");
        assert!(
            table < report.find("## Sources").unwrap(),
            "the table comes first: {report}"
        );
    }
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_value_no_page_states_is_refused() {
    let fleet = Fleet::start().await;
    let (question, ..) = bridge(&fleet);
    let record = run_with_fields(&fleet, &format!("{question} simweb:fields-wrong"), true).await;
    let fields = &record["answer"]["fields"];
    for name in ["designer", "colour"] {
        assert_ne!(fields[name]["value"], "Nobody Anywhere", "{fields}");
    }
    let notes = record["answer"]["notes"].to_string();
    assert!(notes.contains("not stated by the source"), "{notes}");
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_with_an_unsupported_keyword_is_named_and_nothing_runs() {
    let fleet = Fleet::start().await;
    let schema = fleet.dir.path().join("bad.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"ceo": {"type": "string", "pattern": "^[A-Z]"}}}"#,
    )
    .unwrap();
    let out = (fleet
        .trawl_alone()
        .args(["run", "q", "--fields"])
        .arg(&schema))
    .stdin(Stdio::null())
    .output()
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("properties.ceo.pattern: unsupported keyword"),
        "{stderr}"
    );
    assert!(!stderr.contains("searching"), "nothing ran: {stderr}");
    fleet.cleanup().await;
}

/// A template over a table of bridges, with fields, through the fleet: one question per row,
/// each row's cells as its metadata, and `trawl results --format csv` a row per question with a
/// column per field and its source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_batch_with_fields_comes_back_as_a_table() {
    let mut fleet = Fleet::start().await;
    let bridges: Vec<_> = bridges(&fleet).into_iter().take(3).collect();
    assert_eq!(
        bridges.len(),
        3,
        "simweb has three bridges whose pages agree"
    );
    let template = "How long is the {bridge} and when did it open?";
    let mut rows = String::from("id,bridge,region\n");
    for (i, (question, _, _, _, name)) in bridges.iter().enumerate() {
        assert_eq!(*question, template.replace("{bridge}", name));
        rows.push_str(&format!("b{i},{name},north\n"));
    }
    let table = fleet.dir.path().join("bridges.csv");
    std::fs::write(&table, rows).unwrap();
    let schema = fleet.dir.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();

    // A template naming a column the table lacks is refused, and nothing is enqueued.
    let out = fleet
        .trawl(&[
            "submit",
            table.to_str().unwrap(),
            "--template",
            "Where is {river}?",
        ])
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{stderr}");
    assert!(
        stderr.contains("the template names {river}, which is not a column"),
        "{stderr}"
    );

    fleet.spawn_all();
    let args = ["--template", template, "--fields", schema.to_str().unwrap()];
    let out = fleet
        .trawl(&[&["submit", table.to_str().unwrap()][..], &args].concat())
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let batch = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    fleet.wait_done(&batch, Duration::from_secs(240)).await;

    let text = fleet.results(&batch, "csv").await;
    assert_eq!(
        text.lines().next(),
        Some("id,query,status,bridge,region,length,length_source,opened,opened_source,designer,designer_source,colour,colour_source")
    );
    let rows: Vec<Vec<String>> = (csv::Reader::from_reader(text.as_bytes()).records())
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    for (row, (_, metres, opened, _, name)) in rows.iter().zip(&bridges) {
        assert_eq!(row[3], *name, "{text}");
        let km: f64 = row[5]
            .parse()
            .unwrap_or_else(|_| panic!("a length: {text}"));
        assert!((km - metres / 1000.0).abs() < 1e-6, "{text}");
        assert!(row[6].starts_with("http://"), "the length's source: {text}");
        assert_eq!(row[7], opened.to_string(), "{text}");
        assert_eq!(
            (row[11].as_str(), row[12].as_str()),
            ("", ""),
            "no colour: {text}"
        );
    }

    // Through `trawl serve`, the table goes as it is (with the schema once, not once a row),
    // and the server reads it as the CLI did: the same questions, the fields in their order.
    let base = fleet.serve(&[]).await;
    let token = fleet.create_token("fields").await;
    let remote = [&args[..], &["--server", &base, "--token", &token]].concat();
    let out = fleet
        .trawl(&[&["submit", table.to_str().unwrap()][..], &remote].concat())
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let remote_batch = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let queries: Vec<String> = (fleet.manifest(&remote_batch).into_iter())
        .map(|(_, query)| query)
        .collect();
    let local: Vec<String> = (fleet.manifest(&batch).into_iter())
        .map(|(_, query)| query)
        .collect();
    assert_eq!(queries, local);
    let (job, _) = fleet.manifest(&remote_batch).remove(0);
    let input =
        std::fs::read_to_string(fleet.job_dir(&remote_batch, &job).join("input.json")).unwrap();
    let at = |name: &str| input.find(&format!("\"{name}\":")).unwrap_or(usize::MAX);
    assert!(
        at("length") < at("opened")
            && at("opened") < at("designer")
            && at("designer") < at("colour"),
        "{input}"
    );
    fleet.cleanup().await;
}

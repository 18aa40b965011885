//! Your own documents as sources (`trawl run --documents DIR`): a folder of a PDF, a DOCX and
//! a Markdown file that answer what no page of the web does, indexed and searched as the
//! provider `documents`, read as `doc://` sources and cited at their page; and long documents
//! read by passage: a 300-page filing whose answer stands on page 240 alone, as a web PDF too.

use serde_json::Value;
use std::process::Stdio;
use trawl_integration_tests::simweb::files;

use crate::common::Fleet;

/// `trawl run QUESTION ARGS… --format json`, with simweb's LLM or none: the job's record.
async fn run(fleet: &Fleet, question: &str, args: &[&str], llm: bool) -> Value {
    let mut command = fleet.trawl_alone();
    command
        .args(["run", question, "--format", "json"])
        .args(args);
    fleet.with_llm(&mut command, llm.then_some("gpt-4o-mini"));
    // Its copies of the documents index go to the test's folder, not the machine's /tmp.
    command.env("TMPDIR", fleet.dir.path());
    let out = command.stdin(Stdio::null()).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
}

fn cited(job: &Value) -> Vec<String> {
    let sources = job["sources"].as_array().cloned().unwrap_or_default();
    (sources.iter())
        .filter(|s| s["cited_as"].is_u64())
        .map(|s| match s["cited_page"].as_u64() {
            Some(page) => format!("{}#page={page}", s["url"].as_str().unwrap()),
            None => s["url"].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn documents_answer_what_the_web_does_not_cited_at_their_page() {
    let fleet = Fleet::start().await;
    let dir = fleet.dir.path().join("documents");
    files::write_documents(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let only = ["--documents", dir, "--provider", "documents"];
    for llm in [false, true] {
        // The filing's answer stands on page 240 of 300: found there and cited at it.
        let job = run(&fleet, files::ANNUAL_QUESTION, &only, llm).await;
        let report = job["report"].as_str().unwrap_or_default();
        assert!(report.contains("18,420"), "LLM {llm}: {job:#}");
        let page = format!(
            "doc://filings/harlow-2023.pdf#page={}",
            files::ANNUAL_ANSWER_PAGE
        );
        assert!(
            report.contains(&format!("]({page})")),
            "LLM {llm}: {report}"
        );
        assert_eq!(
            cited(&job),
            std::slice::from_ref(&page),
            "LLM {llm}: {job:#}"
        );
        // Documents only: no page of the web was asked for.
        assert_eq!((fleet.simweb.stats()).count(|_, path| path == "/search"), 0);
    }
    // A Markdown note, without pages: cited as the file.
    let job = run(&fleet, files::NOTES_QUESTION, &only, false).await;
    assert!(
        job["report"]
            .as_str()
            .unwrap()
            .contains(files::NOTES_ANSWER),
        "{job:#}"
    );
    assert_eq!(cited(&job), ["doc://notes/observatory.md"], "{job:#}");
    let sources = job["sources"].to_string();
    assert!(!sources.contains("http"), "documents only, yet: {sources}");
    // A Word document.
    let question = "How often did observers walk the fixed transects?";
    let job = run(&fleet, question, &only, false).await;
    assert!(
        job["report"].as_str().unwrap().contains("every fortnight"),
        "{job:#}"
    );
    assert_eq!(cited(&job), ["doc://field/brief.docx"], "{job:#}");

    // Beside the web: the web's answer page and the documents are both read.
    let question = fleet.corpus.questions().remove(0);
    let job = run(&fleet, &question.query, &["--documents", dir], false).await;
    let urls: Vec<&str> = (job["sources"].as_array().unwrap().iter())
        .filter_map(|s| s["url"].as_str())
        .collect();
    assert!(urls.iter().any(|u| u.starts_with("doc://")), "{urls:?}");
    assert!(urls.iter().any(|u| u.starts_with("http://")), "{urls:?}");
    crate::common::assert_cites_answer(job["report"].as_str().unwrap(), &question);
    fleet.cleanup().await;
}

#[tokio::test]
async fn a_long_pdf_on_the_web_is_read_where_it_answers_and_cited_at_that_page() {
    let fleet = Fleet::start().await;
    let url = format!("http://{}/annual-report.pdf", files::HOST);
    let cited_at = format!("{url}#page={}", files::ANNUAL_ANSWER_PAGE);
    for llm in [false, true] {
        let job = run(
            &fleet,
            files::ANNUAL_QUESTION,
            &["--url", &url, "--no-search"],
            llm,
        )
        .await;
        let report = job["report"].as_str().unwrap_or_default();
        assert!(report.contains("18,420"), "LLM {llm}: {job:#}");
        assert!(
            report.contains(&format!("]({cited_at})")),
            "LLM {llm}: {report}"
        );
        assert_eq!(cited(&job), std::slice::from_ref(&cited_at), "{job:#}");
        assert_eq!(job["sources"][0]["title"], files::ANNUAL_TITLE, "{job:#}");
    }
    fleet.cleanup().await;
}

#[tokio::test]
async fn a_root_nobody_allowed_is_refused_and_a_missing_folder_named() {
    let fleet = Fleet::start().await;
    let refused = |args: &'static [&'static str]| {
        let mut command = fleet.trawl_alone();
        command.args(["run", "q"]).args(args).stdin(Stdio::null());
        async move {
            let out = command.output().await.unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            (out.status.code(), stderr)
        }
    };
    // A root URL the operator's documents.allow does not hold.
    let (code, stderr) = refused(&["--documents", "file:///etc", "--provider", "documents"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("not allowed") && stderr.contains("documents.allow"),
        "{stderr}"
    );
    let (code, stderr) = refused(&["--documents", "/nonexistent/docs"]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--documents: no folder at /nonexistent/docs"),
        "{stderr}"
    );
    fleet.cleanup().await;
}

/// The store of documents root `url` on the test's S3 server, as the workers open it.
fn root_store(fleet: &Fleet, url: &str) -> trawl_store::Objects {
    // Sets the AWS_* variables of the fleet's environment in this process.
    let _ = fleet.objects();
    let config = trawl_config::OutputConfig {
        url: url.to_owned(),
        endpoint: Some(crate::common::s3_endpoint()),
        path_style: Some(true),
        allow_http: Some(true),
        ..Default::default()
    };
    trawl_store::Objects::open(&config).unwrap()
}

/// Every job's record of `batch`, by question.
async fn records(fleet: &Fleet, batch: &str) -> Vec<Value> {
    let text = fleet.results(batch, "jsonl").await;
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Two workers of each stage, each on a disk of its own, index and search one documents prefix
/// on the S3-protocol server: one index for all of them, and a file changed between batches is
/// the only one read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_shares_one_index_of_a_bucket_and_reads_again_only_what_changed() {
    let mut fleet = Fleet::start().await;
    fleet.use_s3();
    let bucket = format!("s3://{}/", crate::common::S3_BUCKET);
    let root = format!("s3://{}/{}-docs", crate::common::S3_BUCKET, fleet.namespace);
    let docs = root_store(&fleet, &root);
    let local = tempfile::tempdir().unwrap();
    files::write_documents(local.path()).unwrap();
    for name in [
        "filings/harlow-2023.pdf",
        "field/brief.docx",
        "notes/observatory.md",
    ] {
        let bytes = std::fs::read(local.path().join(name)).unwrap();
        docs.put(name, &bytes).await.unwrap();
    }
    // The operator allows the bucket, for the workers and for `trawl submit` alike.
    fleet.env.extend([
        (
            "TRAWL__DOCUMENTS__ALLOW".to_owned(),
            format!("[\"{bucket}\"]"),
        ),
        ("TRAWL__DOCUMENTS__REFRESH_SECS".to_owned(), "1".to_owned()),
    ]);
    for stage in crate::common::STAGES {
        for _ in 0..2 {
            fleet.spawn_isolated(stage, &[], &[]);
        }
    }
    let line = |q: &str| serde_json::json!({"query": q, "documents": root, "options": {"providers": ["documents"]}});
    let asked = [files::ANNUAL_QUESTION, files::NOTES_QUESTION];
    let lines: Vec<Value> = asked.iter().cycle().take(6).map(|q| line(q)).collect();
    let first = fleet.submit_jsonl("first", &lines).await;
    fleet
        .wait_done(&first, std::time::Duration::from_secs(180))
        .await;
    for job in records(&fleet, &first).await {
        let report = job["report"].as_str().unwrap_or_default();
        let wanted = match job["query"].as_str() == Some(files::ANNUAL_QUESTION) {
            true => (
                "18,420",
                format!(
                    "doc://filings/harlow-2023.pdf#page={}",
                    files::ANNUAL_ANSWER_PAGE
                ),
            ),
            false => (files::NOTES_ANSWER, "doc://notes/observatory.md".to_owned()),
        };
        assert!(report.contains(wanted.0), "{job:#}");
        assert_eq!(cited(&job), [wanted.1], "{job:#}");
    }
    let manifest = |fleet: &Fleet| {
        let objects = fleet.objects();
        let id = trawl_documents::Root::parse(&root).unwrap().id();
        async move {
            let key = trawl_messages::paths::documents(&id, "manifest.json");
            let bytes = objects.get(&key).await.unwrap().expect("a published index");
            serde_json::from_slice::<trawl_documents::Manifest>(&bytes).unwrap()
        }
    };
    let built = manifest(&fleet).await;
    assert_eq!(built.version, 1, "one index for all workers: {built:?}");
    assert_eq!(built.read.len(), 3);

    // The note changes; the next batch finds the new count, and only the note is read again.
    let changed = files::NOTES_MD.replace("3,117", "3,240");
    docs.put("notes/observatory.md", changed.as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let second = fleet
        .submit_jsonl("second", &[line(files::NOTES_QUESTION)])
        .await;
    fleet
        .wait_done(&second, std::time::Duration::from_secs(120))
        .await;
    let job = &records(&fleet, &second).await[0];
    assert!(job["report"].as_str().unwrap().contains("3,240"), "{job:#}");
    let rebuilt = manifest(&fleet).await;
    assert_eq!(rebuilt.version, 2);
    assert_eq!(rebuilt.read, ["notes/observatory.md"]);
    // The shared S3 server keeps nothing of the test's root.
    for name in [
        "filings/harlow-2023.pdf",
        "field/brief.docx",
        "notes/observatory.md",
    ] {
        docs.delete(name).await.unwrap();
    }
    fleet.cleanup().await;
}

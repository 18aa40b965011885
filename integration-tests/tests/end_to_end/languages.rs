//! simweb's languages family through the whole pipeline, embedded (`trawl run`): a question in
//! each of German, French, Spanish, Chinese, Japanese, Russian and Arabic finds its answer
//! pages among pages in seven languages, reads them (recording each one's language), cites them
//! and nothing that does not answer, and the answer is in the report, quoted as the sources
//! write it.

use serde_json::Value;
use trawl_integration_tests::simweb::Corpus;

use crate::common::Fleet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_in_each_language_is_answered_from_its_languages_pages() {
    let fleet = Fleet::start_with(Corpus::generate_with_languages()).await;
    let questions = fleet.corpus.language_questions();
    let langs: Vec<&str> = questions.iter().map(|q| q.lang).collect();
    assert_eq!(langs, ["de", "fr", "es", "zh", "ja", "ru", "ar"]);
    // Each page says its language, and Arabic its direction.
    for q in &questions {
        let html = &fleet.corpus.page(&q.answer_urls[0]).unwrap().html;
        let dir = if q.lang == "ar" { " dir=\"rtl\"" } else { "" };
        assert!(
            html.contains(&format!("<html lang=\"{}\"{dir}>", q.lang)),
            "{}",
            q.lang
        );
    }
    let mut failures = Vec::new();
    for q in &questions {
        let stdout = fleet.run_alone(&["--format", "json", &q.query]).await;
        let job: Value = serde_json::from_str(&stdout).unwrap();
        let sources = job["sources"].as_array().unwrap();
        let source = |url: &str| sources.iter().find(|s| s["url"] == url);
        let report = job["report"].as_str().unwrap();
        let mut problems = Vec::new();
        // Chosen and read: every answer page.
        for url in &q.answer_urls {
            match source(url) {
                None => problems.push(format!("answer page {url} not chosen")),
                Some(s) if s["outcome"]["outcome"] != "analysed" => {
                    problems.push(format!("answer page {url} not read: {}", s["outcome"]))
                }
                // Each source's own language, as clean detected it.
                Some(s) if s["language"] != q.lang => problems.push(format!(
                    "answer page {url} read as language {}",
                    s["language"]
                )),
                Some(_) => {}
            }
        }
        // Cited: an answer page, and nothing off the subject. (A page naming the subject
        // beside a word of the question can be cited too, as in English: the extractive
        // writer ranks words, not meaning.)
        let cited: Vec<&str> = (sources.iter())
            .filter(|s| !s["cited_as"].is_null())
            .map(|s| s["url"].as_str().unwrap())
            .collect();
        if !cited.iter().any(|u| q.answer_urls.iter().any(|a| a == u)) {
            problems.push("no answer page cited".into());
        }
        let on_subject = |u: &str| (q.answer_urls.iter().chain(&q.distractor_urls)).any(|a| a == u);
        for url in cited.iter().filter(|u| !on_subject(u)) {
            problems.push(format!(
                "{url} cited, which is not about the question's subject"
            ));
        }
        if !report.contains(&q.value) {
            problems.push(format!("the answer {} is not in the report", q.value));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{} ({}): {}\n{report}",
                q.lang,
                q.query,
                problems.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    fleet.cleanup().await;
}

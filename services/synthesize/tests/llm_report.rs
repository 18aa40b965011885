//! The LLM report path against simweb's scripted model over HTTP: citations the model invents
//! are removed and counted, the rest resolve to analysed sources, the prompt stays in budget.

use std::collections::BTreeMap;
use std::sync::Arc;

use trawl_config::LlmConfig;
use trawl_integration_tests::simweb::{Corpus, Simweb};
use trawl_llm::Llm;
use trawl_messages::{AnalysedDoc, Source, SourceKind};
use trawl_synthesize::conflicts::detect;
use trawl_synthesize::conflicts::Conflict;
use trawl_synthesize::report::{llm, Gaps, Material};

static NO_GAPS: Gaps = Gaps {
    outcomes: BTreeMap::new(),
    missing: Vec::new(),
    rounds: Vec::new(),
};

fn material<'a>(
    question: &'a str,
    docs: &'a [AnalysedDoc],
    conflicts: &'a [Conflict],
) -> Material<'a> {
    Material {
        findings: None,
        question,
        sub_queries: &[],
        data_points: &[],
        docs,
        conflicts,
        gaps: &NO_GAPS,
        unverified: trawl_config::Unverified::Drop,
        shape: trawl_messages::ReportType::Brief,
        lang: trawl_text::Lang::EN,
    }
}

fn style(context_tokens: usize) -> llm::Style<'static> {
    llm::Style {
        context_tokens,
        answer_tokens: 1500,
        language: "",
        sentences: 6,
    }
}

fn doc(idx: u32, text: &str) -> AnalysedDoc {
    let source = Source {
        idx,
        url: format!("http://s{idx}.test/"),
        title: format!("Source {idx}"),
        snippet: String::new(),
        provider: "searxng".into(),
        position: idx + 1,
        score: 0.5,
        kind: SourceKind::Page,
        file_type: None,
    };
    AnalysedDoc {
        summary: text.into(),
        key_points: vec![text.into()],
        relevance: 0.9 - f64::from(idx) * 0.1,
        is_relevant: true,
        bytes: 1000,
        ..AnalysedDoc::new(source, text.repeat(3))
    }
}

async fn client() -> (Simweb, Llm) {
    let web = Simweb::start(Arc::new(Corpus::generate()), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let config = LlmConfig {
        base_url: format!("{}/v1", web.base_url()),
        model: "gpt-4o-mini".into(),
        ..Default::default()
    };
    let env: BTreeMap<String, String> = [("OPENAI_API_KEY".to_string(), "k".to_string())]
        .into_iter()
        .collect();
    let llm = Llm::new(&config, &env).unwrap();
    (web, llm)
}

#[tokio::test]
async fn invented_citations_are_removed_and_counted() {
    let (_web, llm) = client().await;
    let docs = vec![
        doc(0, "The Brimomir Bridge is 1,156 metres long. "),
        doc(
            3,
            "The Brimomir Bridge opened in 1903 after years of delays. ",
        ),
    ];
    let question = "How long is the Brimomir Bridge? simweb:fakecite";
    let written = llm::write(&llm, &material(question, &docs, &[]), &style(20_000))
        .await
        .unwrap();
    let r = &written.report;
    assert_eq!(r.writer, trawl_messages::ReportWriter::Llm);
    assert_eq!(r.removed_citations, 2, "{}", r.markdown);
    assert!(
        !r.markdown.contains("[99]") && !r.markdown.contains("[S2]"),
        "{}",
        r.markdown
    );
    assert!(
        r.markdown.contains("[1]") && r.markdown.contains("## Sources"),
        "{}",
        r.markdown
    );
    let cited: Vec<u32> = r.citations.iter().map(|c| c.idx).collect();
    assert!(cited.iter().all(|i| [0, 3].contains(i)), "{cited:?}");
    assert_eq!(
        r.citations.iter().map(|c| c.n).collect::<Vec<_>>(),
        (1..=r.citations.len() as u32).collect::<Vec<_>>()
    );
    assert!(r
        .markdown
        .contains("citation(s) to sources this job did not read were removed"));
    assert_eq!(written.tokenizer, "o200k_base");
}

#[tokio::test]
async fn sources_that_never_name_the_subject_are_not_given_to_the_model() {
    let (_web, llm) = client().await;
    // On the topic and relevant, but about another bridge.
    let docs = vec![doc(0, "The Velvelra Bridge spans 3,339 metres. ")];
    let question = "How long is the Modar Bridge?";
    // Nothing is left to cite, so the model is not asked (synthesize writes the extractive
    // report, which says no source names Modar: `Material::answering`).
    let err = llm::write(&llm, &material(question, &docs, &[]), &style(20_000))
        .await
        .err()
        .expect("the model was given sources about another bridge");
    assert!(err.to_string().contains("nothing to cite"), "{err}");
}

#[tokio::test]
async fn a_report_that_states_no_value_of_what_is_asked_gives_way() {
    let (_web, llm) = client().await;
    // The model's report quotes its sources: they give the bridge's length and its opening,
    // not its cost, so no statement answers "how much did it cost".
    let docs = vec![
        doc(0, "The Brimomir Bridge is 1,156 metres long. "),
        doc(
            1,
            "The Brimomir Bridge opened in 1903 after years of delays. ",
        ),
    ];
    let question = "How much did the Brimomir Bridge cost?";
    let err = llm::write(&llm, &material(question, &docs, &[]), &style(20_000))
        .await
        .err()
        .expect("a report without an amount of money was accepted");
    assert!(
        err.to_string()
            .contains("no statement of the report states an amount of money"),
        "{err}"
    );
    // The extractive report, judged the same way, abstains and cites nothing.
    let r = material(question, &docs, &[]).extractive(6);
    assert!(
        !r.answerability.answerable && r.citations.is_empty(),
        "{}",
        r.markdown
    );
    assert!(r
        .markdown
        .contains("no statement they support gives an amount of money"));
}

#[tokio::test]
async fn the_sentence_that_answers_is_added_where_the_model_left_it_out() {
    let (_web, llm) = client().await;
    // The model quotes the sentences sharing most words with the question: an amount, but
    // the repairs', and a second bridge's plans. The sentence stating what the building cost
    // ranks high in trawl's own reading, and the report gives it in the source's words, cited.
    let docs =
        vec![
        doc(
            0,
            "Repairs to the Brimomir Bridge cost much less, $2 million, than building a new one. ",
        ),
        doc(
            1,
            "Building a second Brimomir Bridge would cost much more, the council said in 2019. ",
        ),
        doc(2, "Building the Brimomir Bridge cost 4.2 million euros in 1931. "),
    ];
    let question = "How much did the Brimomir Bridge cost to build?";
    let written = llm::write(&llm, &material(question, &docs, &[]), &style(20_000))
        .await
        .unwrap();
    let r = &written.report;
    assert_eq!(r.writer, trawl_messages::ReportWriter::Llm);
    let (prose, added) = (r.markdown.split_once("## In the sources' words"))
        .unwrap_or_else(|| panic!("nothing added: {}", r.markdown));
    assert!(
        prose.contains("Repairs to the Brimomir Bridge cost much less"),
        "{prose}"
    );
    let n = (r.citations.iter().find(|c| c.idx == 2))
        .unwrap_or_else(|| panic!("{:?}", r.citations))
        .n;
    assert!(
        added.contains(&format!(
            "Building the Brimomir Bridge cost 4.2 million euros in 1931 [{n}]"
        )),
        "{added}"
    );
    // A sentence the model said is not said again.
    assert!(!added.contains("Repairs"), "{added}");
    assert!(r.answerability.answerable);
}

#[tokio::test]
async fn where_the_question_does_not_say_what_answers_the_sentence_ranked_first_is_added() {
    let (_web, llm) = client().await;
    // "What is the melting point …" names no kind of value. The model quotes the sentence
    // sharing most words with the question, years' anecdotes; trawl ranks the most relevant
    // source's sentence first, and the report gives it in the source's words.
    let docs = vec![
        doc(
            0,
            "The melting point of Zorblium is 1,523 degrees Celsius. ",
        ),
        doc(
            1,
            "What Zorblium's melting point did in 1990 puzzled chemists. ",
        ),
        doc(
            2,
            "What Zorblium's melting point meant in 1991 for what metals became. ",
        ),
    ];
    let question = "What is the melting point of Zorblium?";
    let written = llm::write(&llm, &material(question, &docs, &[]), &style(20_000))
        .await
        .unwrap();
    let r = &written.report;
    let (prose, added) = (r.markdown.split_once("## In the sources' words"))
        .unwrap_or_else(|| panic!("nothing added: {}", r.markdown));
    assert!(prose.contains("in 1990 puzzled chemists"), "{prose}");
    assert!(
        added.contains("The melting point of Zorblium is 1,523 degrees Celsius"),
        "{added}"
    );
    assert!(!added.contains("1990"), "{added}");
}

#[tokio::test]
async fn a_neighbouring_amount_the_sources_do_not_state_as_asked_gives_way() {
    let (_web, llm) = client().await;
    // The model quotes the one sentence with an amount: the toll, not what the bridge cost.
    // trawl's own reading finds no sentence saying what is asked (a cost), so the model's
    // statement is a neighbouring fact and the extractive report, which abstains, takes over.
    let docs = vec![doc(0, "The Brimomir Bridge toll is 2 dollars for cars. ")];
    let question = "How much did the Brimomir Bridge cost?";
    let err = llm::write(&llm, &material(question, &docs, &[]), &style(20_000))
        .await
        .err()
        .expect("a neighbouring amount was taken for the answer");
    assert!(err.to_string().contains("not backed"), "{err}");
    let r = material(question, &docs, &[]).extractive(6);
    assert!(!r.answerability.answerable, "{}", r.markdown);
}

#[tokio::test]
async fn the_prompt_never_exceeds_the_budget_and_conflicts_are_listed() {
    let (_web, llm) = client().await;
    let long = "The Brimomir Bridge is 1,156 metres long and carries two lanes of traffic over the river. ";
    let mut docs: Vec<AnalysedDoc> = (0..12).map(|i| doc(i, &long.repeat(60))).collect();
    docs.push(doc(
        12,
        "The Brimomir Bridge is 1,190 metres long according to an older survey. ",
    ));
    let conflicts = detect("How long is the Brimomir Bridge?", &["long".into()], &docs);
    assert_eq!(conflicts.len(), 1);
    for budget in [400, 1_500, 6_000, 20_000] {
        let question = "How long is the Brimomir Bridge?";
        let written =
            llm::write(&llm, &material(question, &docs, &conflicts), &style(budget)).await;
        // 400 tokens hold the sources' titles and URLs only: nothing the model could cite, so
        // it is not asked (the stage writes the extractive report).
        if budget == 400 {
            let err = written
                .err()
                .expect("a report from titles alone was written");
            assert!(err.to_string().contains("nothing to cite"), "{err}");
            continue;
        }
        let written = written.unwrap_or_else(|e| panic!("budget {budget}: {e}"));
        assert!(
            written.context_tokens <= budget,
            "{} > {budget}",
            written.context_tokens
        );
        assert!(
            written.report.markdown.contains("## Conflicts"),
            "{}",
            written.report.markdown
        );
    }
}

/// With a model, a follow-up round's searches are the model's: simweb's scripted one answers
/// "subject + what is missing" for each line of the prompt's Missing list.
#[tokio::test]
async fn the_model_plans_a_follow_up_rounds_searches() {
    let (_web, llm) = client().await;
    let mut round = trawl_messages::Round {
        n: 2,
        why: vec!["no source read states the birefringence".into()],
        queries: vec!["density velmorite along birefringence".into()],
    };
    let question =
        "Could you tell me the density of Velmorite, along with the birefringence of Velmorite?";
    trawl_synthesize::rounds::plan(&llm, question, &mut round)
        .await
        .expect("planned");
    assert_eq!(round.queries, ["Velmorite birefringence"]);
    assert_eq!(llm.spent().requests, 1);
}

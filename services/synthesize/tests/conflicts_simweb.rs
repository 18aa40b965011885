//! Conflict detection on simweb's pages: where one answer page states a number differently,
//! the detector names the data point and both values; where the pages agree, it stays quiet,
//! also beside the topic's comparison page, which states other subjects' values of the same
//! attribute.

use trawl_integration_tests::simweb::{Corpus, PageKind};
use trawl_messages::{AnalysedDoc, Source, SourceKind};
use trawl_synthesize::conflicts::detect;

fn analysed(corpus: &Corpus, url: &str, question: &str, idx: u32) -> AnalysedDoc {
    let page = corpus.page(url).expect("answer page");
    let extracted = trawl_clean::extract::extract(&page.html, url);
    let analysis =
        trawl_clean::analysis::analyse(question, &extracted.title, &extracted.markdown, 0.15);
    let source = Source {
        idx,
        url: url.into(),
        title: extracted.title,
        snippet: String::new(),
        provider: "searxng".into(),
        position: idx + 1,
        score: 0.5,
        kind: SourceKind::Page,
        file_type: None,
    };
    AnalysedDoc {
        summary: analysis.summary,
        key_points: analysis.key_points,
        relevance: analysis.relevance,
        is_relevant: analysis.is_relevant,
        bytes: page.html.len() as u64,
        ..AnalysedDoc::new(source, extracted.markdown)
    }
}

#[test]
fn disagreeing_pages_are_found_and_agreeing_ones_are_not() {
    let corpus = Corpus::generate_with_families();
    let (mut found, mut disagreeing, mut false_alarms) = (0, 0, Vec::new());
    for q in corpus.questions() {
        let comparison = (corpus.pages().iter())
            .filter(|p| matches!(&p.kind, PageKind::Comparison { topic } if *topic == q.topic))
            .map(|p| &p.url);
        let docs: Vec<AnalysedDoc> = (q.answer_urls.iter().chain(comparison))
            .enumerate()
            .map(|(i, u)| analysed(&corpus, u, &q.query, i as u32))
            .collect();
        let points = trawl_search::analysis::data_points(&q.query);
        let conflicts = detect(&q.query, &points, &docs);
        if q.disagrees {
            disagreeing += 1;
            if !conflicts.is_empty() {
                found += 1;
                assert!(conflicts[0].values.len() >= 2, "{conflicts:?}");
            }
        } else if !conflicts.is_empty() {
            false_alarms.push((q.query.clone(), conflicts));
        }
    }
    println!(
        "disagreeing questions {disagreeing}, conflicts found in {found}, false alarms {}",
        false_alarms.len()
    );
    assert!(disagreeing > 0);
    assert_eq!(found, disagreeing, "conflicts missed");
    assert!(false_alarms.is_empty(), "{false_alarms:#?}");
}

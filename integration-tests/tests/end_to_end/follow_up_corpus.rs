//! simweb's follow-up family as trawl's clean stage reads it: main-content extraction, then the
//! extractive analysis with the question's two data points. The pages a first round reads give
//! data point 1 and never data point 2, so trawl must run a follow-up round; only the buried
//! page, which that round's query finds, gives data point 2.

use trawl_clean::analysis::{analyse_in, Analysis, Context};
use trawl_config::CleanConfig;
use trawl_integration_tests::simweb::{Corpus, FollowUp, Page, PageKind, Question};

fn family(c: &Corpus) -> Vec<(Question, FollowUp)> {
    let out: Vec<(Question, FollowUp)> = c
        .questions()
        .into_iter()
        .filter_map(|q| {
            let f = q.follow_up.clone()?;
            Some((q, f))
        })
        .collect();
    assert!(out.len() >= 3, "{} follow-up questions", out.len());
    out
}

/// What clean makes of `page` for the question's first round: its data points as trawl's
/// heuristic analysis names them, the question as the one sub-query.
fn analyse(q: &Question, f: &FollowUp, page: &Page) -> Analysis {
    let ctx = Context {
        question: q.query.clone(),
        sub_queries: vec![q.query.clone()],
        data_points: vec![f.answered.clone(), f.data_point.clone()],
        is_news: false,
        language: "en".into(),
    };
    let e = trawl_clean::extract::extract(&page.html, &page.url);
    analyse_in(
        &ctx,
        &e.title,
        &e.markdown,
        CleanConfig::default().min_relevance,
    )
}

fn value<'a>(a: &'a Analysis, point: &str) -> Option<&'a str> {
    a.extracted_data.get(point).and_then(|v| v.as_deref())
}

#[test]
fn answer_pages_give_data_point_1_and_only_the_buried_page_gives_data_point_2() {
    let c = Corpus::generate_with_follow_ups();
    for (q, f) in family(&c) {
        for url in &q.answer_urls {
            let page = c.page(url).expect("answer page exists");
            let a = analyse(&q, &f, page);
            assert!(a.is_relevant, "{url}: {}", a.relevance);
            assert_eq!(
                value(&a, &f.answered),
                Some(f.answered_value.as_str()),
                "{url}"
            );
            assert_eq!(value(&a, &f.data_point), None, "{url}");
        }
        let buried = c.page(&f.url).expect("the buried page exists");
        let a = analyse(&q, &f, buried);
        assert!(a.is_relevant, "{}: {}", f.url, a.relevance);
        assert_eq!(
            value(&a, &f.data_point),
            Some(f.value.as_str()),
            "{}",
            f.url
        );
        // Nothing else in the corpus, decoys included, states data point 2.
        for page in c.pages().iter().filter(|p| p.url != f.url) {
            let a = analyse(&q, &f, page);
            assert_eq!(value(&a, &f.data_point), None, "{}", page.url);
        }
        let decoys = c
            .pages()
            .iter()
            .filter(|p| matches!(&p.kind, PageKind::Decoy { topic } if *topic == q.topic))
            .count();
        assert!(decoys >= 17, "{decoys} decoys for {}", q.query);
    }
}

/// The query each follow-up carries is the one trawl builds: the question's terms (clean's BM25
/// query holds exactly `trawl_text::terms`), then the data point's words not among them.
/// The family's questions name the two data points as trawl's search analyses them, and its
/// follow-up query is the one synthesize plans for the second.
#[test]
fn data_points_and_follow_up_query_are_trawls() {
    let c = Corpus::generate_with_follow_ups();
    for (q, f) in family(&c) {
        assert_eq!(
            trawl_search::analysis::data_points(&q.query),
            [f.answered.as_str(), f.data_point.as_str()],
            "{}",
            q.query
        );
        assert_eq!(
            f.query,
            trawl_synthesize::rounds::query(&q.query, &f.data_point, trawl_text::Lang::EN),
            "{}",
            q.query
        );
    }
}

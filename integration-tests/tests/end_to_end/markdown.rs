//! Markdown fidelity on simweb's technical pages: the clean stage's extractor keeps code blocks
//! with their language, tables, nested lists, block quotes and absolute links, and drops the
//! documentation site around them.

use trawl_integration_tests::simweb::docs;

fn extracted(path: &str) -> String {
    let html = docs::page(path).expect("a docs.test page");
    trawl_clean::extract::extract(&html, &format!("http://{}{path}", docs::HOST)).markdown
}

#[test]
fn technical_content_survives_and_the_site_around_it_does_not() {
    for &(path, expected) in docs::EXPECTED {
        let md = extracted(path);
        for piece in expected {
            assert!(
                md.contains(piece),
                "{path}: missing\n{piece}\n--- in ---\n{md}"
            );
        }
        for clutter in docs::CLUTTER {
            assert!(!md.contains(clutter), "{path}: kept {clutter:?}\n{md}");
        }
        assert!(!md.contains("]()"), "{path}: an empty link\n{md}");
        assert!(!md.contains("\n\n\n"), "{path}: runs of blank lines\n{md}");
    }
}

//! The words of an HTML document for a search index: its title and the text of its body,
//! scripts, styles and the head left out, a blank line between blocks. Not main-content
//! extraction (clean's, for the page a job reads): an index wants every word a reader may
//! search for.

use scraper::{Html, Node};

/// Elements whose text is not the document's.
const HIDDEN: &[&str] = &["script", "style", "noscript", "template", "head", "svg"];

/// Elements that start a block of their own.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "li",
    "tr",
    "td",
    "th",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "br",
    "dd",
    "dt",
    "table",
    "ul",
    "ol",
];

/// `html`'s `<title>` (when it has one) and the text of its body.
pub fn html_text(html: &str) -> (Option<String>, String) {
    let doc = Html::parse_document(html);
    let mut title = None;
    let mut text = String::new();
    for node in doc.tree.root().descendants() {
        match node.value() {
            Node::Element(e) if BLOCKS.contains(&e.name()) => text.push_str("\n\n"),
            Node::Text(t) => {
                let hidden = node.ancestors().find_map(|a| {
                    let name = a.value().as_element()?.name();
                    (HIDDEN.contains(&name) || name == "title").then_some(name)
                });
                match hidden {
                    Some("title") => {
                        title.get_or_insert_with(String::new).push_str(t);
                    }
                    Some(_) => {}
                    None => text.push_str(t),
                }
            }
            _ => {}
        }
    }
    let blocks: Vec<String> = (text.split("\n\n"))
        .map(trawl_text::collapse_whitespace)
        .map(|b| b.trim().to_owned())
        .filter(|b| !b.is_empty())
        .collect();
    let title = title
        .map(|t| trawl_text::collapse_whitespace(&t).trim().to_owned())
        .filter(|t| !t.is_empty());
    (title, blocks.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_s_words_in_blocks_without_scripts_or_styles() {
        let (title, text) = html_text(
            "<html><head><title> Kestrel\n notes </title><style>p { color: red }</style></head>\
             <body><h1>Survey</h1><p>Pairs <b>counted</b>: 412.</p><script>track()</script>\
             <ul><li>North</li><li>East</li></ul></body></html>",
        );
        assert_eq!(title.as_deref(), Some("Kestrel notes"));
        assert_eq!(text, "Survey\n\nPairs counted: 412.\n\nNorth\n\nEast");
        assert_eq!(html_text("<p>Just text</p>"), (None, "Just text".into()));
    }
}

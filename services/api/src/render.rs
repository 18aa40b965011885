//! Reports as HTML for the web app. A report is markdown made from page text, so nothing in it
//! may run or load anything when shown: raw HTML is shown as text, an image as its alt text
//! (an image would be a request to another origin), and a link only leads to an http(s) page
//! (in a new tab, with neither opener nor referrer) or to an anchor of the page itself; a
//! document of the job's own is named, `doc://…#page=N`, after its title. Citation
//! markers `[n]` become links to the citation, `#cite-n`, which the app opens in place.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd, TextMergeStream};

/// `markdown` as HTML safe to insert into the app's page.
pub fn report_html(markdown: &str) -> String {
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    let mut events: Vec<Event> = Vec::new();
    // Each open link: kept (its end is written only then), or a document of the job's own
    // (`doc://…#page=N`, which no browser opens) named after its text.
    let mut links: Vec<Result<(), Option<String>>> = Vec::new();
    let mut in_code = false;
    for event in TextMergeStream::new(parser) {
        match event {
            Event::Html(text) | Event::InlineHtml(text) => events.push(Event::Text(text)),
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => {}
            Event::Start(Tag::Link { dest_url, .. }) => {
                if link_ok(&dest_url) {
                    events.push(Event::InlineHtml(open_link(&dest_url).into()));
                    links.push(Ok(()));
                } else {
                    let document = dest_url.starts_with("doc://").then(|| dest_url.to_string());
                    links.push(Err(document));
                }
            }
            Event::End(TagEnd::Link) => match links.pop() {
                Some(Ok(())) => events.push(Event::InlineHtml("</a>".into())),
                Some(Err(Some(document))) => {
                    events.push(Event::Text(" (".into()));
                    events.push(Event::Code(document.into()));
                    events.push(Event::Text(")".into()));
                }
                _ => {}
            },
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code = true;
                events.push(Event::Start(Tag::CodeBlock(kind)));
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                events.push(Event::End(TagEnd::CodeBlock));
            }
            Event::Text(text) if !in_code => citations(text, &mut events),
            other => events.push(other),
        }
    }
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events.into_iter());
    out
}

/// An http(s) URL, or an anchor of this page: nothing that runs (`javascript:`) or embeds
/// (`data:`), and no relative path that would lead into the app.
fn link_ok(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with('#')
}

fn open_link(url: &str) -> String {
    let mut href = String::new();
    pulldown_cmark_escape::escape_href(&mut href, url).expect("writing to a String");
    if url.starts_with('#') {
        format!("<a href=\"{href}\">")
    } else {
        format!("<a href=\"{href}\" target=\"_blank\" rel=\"noopener noreferrer\">")
    }
}

/// `text` with each citation marker (`[3]`, `[2, 5]`) as links to its citations, the rest as
/// text.
fn citations<'a>(text: CowStr<'a>, events: &mut Vec<Event<'a>>) {
    if !text.contains('[') {
        events.push(Event::Text(text));
        return;
    }
    let mut rest: &str = &text;
    while let Some(open) = rest.find('[') {
        let Some((numbers, len)) = marker(&rest[open..]) else {
            // Not a marker ("[a]"): the bracket is text, and the search goes on after it.
            events.push(Event::Text(rest[..=open].to_owned().into()));
            rest = &rest[open + 1..];
            continue;
        };
        if open > 0 {
            events.push(Event::Text(rest[..open].to_owned().into()));
        }
        let links: Vec<String> = numbers
            .iter()
            .map(|n| format!("<a class=\"cite\" href=\"#cite-{n}\" data-cite=\"{n}\">[{n}]</a>"))
            .collect();
        events.push(Event::InlineHtml(links.concat().into()));
        rest = &rest[open + len..];
    }
    if !rest.is_empty() {
        events.push(Event::Text(rest.to_owned().into()));
    }
}

/// The numbers of a citation marker at the start of `text` (`[3]`, `[2, 5]`) and its length.
fn marker(text: &str) -> Option<(Vec<u32>, usize)> {
    let close = text.find(']')?;
    let inside = &text[1..close];
    let numbers: Option<Vec<u32>> = inside
        .split(',')
        .map(|n| {
            let n = n.trim();
            let short = !n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit());
            short.then(|| n.parse().ok()).flatten()
        })
        .collect();
    numbers
        .filter(|n| n.iter().all(|&n| n > 0))
        .map(|n| (n, close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_become_links_to_their_entry() {
        let html = report_html("Paris is the capital [1][2], since 508 [3, 4].\n\nNot [a] or [0].");
        assert!(html.contains(
            "capital <a class=\"cite\" href=\"#cite-1\" data-cite=\"1\">[1]</a><a class=\"cite\" href=\"#cite-2\" data-cite=\"2\">[2]</a>, since"
        ), "{html}");
        assert!(html.contains("data-cite=\"3\">[3]</a><a class=\"cite\" href=\"#cite-4\""));
        assert!(html.contains("Not [a] or [0]."), "{html}");
        assert!(report_html("`x[1]`").contains("<code>x[1]</code>"));
    }

    /// Page text reaches the report; none of it may run, load or lead anywhere unsafe.
    #[test]
    fn a_document_is_named_by_its_doc_url_not_linked() {
        let html =
            report_html("1. [Annual report](doc://filings/acme.pdf#page=41) (relevance 0.9)");
        assert!(
            html.contains("Annual report (<code>doc://filings/acme.pdf#page=41</code>) (relevance"),
            "{html}"
        );
        assert!(!html.contains("href=\"doc:"), "{html}");
    }

    #[test]
    fn nothing_from_a_page_runs_or_loads() {
        let hostile = "Intro <script>alert(1)</script> and <img src=x onerror=alert(2)>\n\n\
            <div onclick=\"x()\">block</div>\n\n\
            ![tracker](https://evil.example/pixel.png)\n\n\
            [click](javascript:alert(3)) [data](data:text/html,hi) [ok](https://example.org/a?b=\"c\")\n\n\
            [Lowe's](https://www.barrons.com/quote/LOW)";
        let html = report_html(hostile);
        for bad in [
            "<script",
            "<img",
            "<div",
            "javascript:",
            "data:text",
            "href=\"x\"",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(html.contains("tracker"), "an image keeps its alt text");
        assert!(html.contains("click") && html.contains("data"), "{html}");
        assert!(html.contains(
            "<a href=\"https://example.org/a?b=%22c%22\" target=\"_blank\" rel=\"noopener noreferrer\">ok</a>"
        ) || html.contains(
            "<a href=\"https://example.org/a?b=&quot;c&quot;\" target=\"_blank\" rel=\"noopener noreferrer\">ok</a>"
        ), "{html}");
    }

    #[test]
    fn tables_and_headings_render() {
        let html = report_html("# Answer\n\n| field | value |\n|---|---|\n| city | Paris [1] |\n");
        assert!(html.contains("<h1>Answer</h1>"));
        assert!(html.contains("<td>Paris <a class=\"cite\""), "{html}");
    }
}

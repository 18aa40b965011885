use super::*;
use scraper::Html;

fn md(html: &str) -> String {
    let base = Url::parse("https://example.com/docs/guide/page.html").unwrap();
    to_markdown_with(
        Html::parse_fragment(html).root_element(),
        Some(&base),
        &|_| false,
    )
}

#[test]
fn code_block_keeps_language_and_whitespace() {
    let code = "fn main() {\n    let x = 1;\n\n\tprintln!(\"{x}  \");\n}";
    let out = md(&format!(
        r#"<pre class="language-rust"><code>{code}</code></pre>"#
    ));
    assert_eq!(out, format!("```rust\n{code}\n```"));
    let out = md(r#"<pre><code class="lang-py"><span>if</span> x:
    <b>pass</b></code></pre>"#);
    assert_eq!(out, "```py\nif x:\n    pass\n```");
}

#[test]
fn table_becomes_gfm() {
    let out = md(
        "<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>\
        <tr><td>a|b</td><td>1<br>\n 2</td></tr><tr><td>c</td></tr></tbody></table>",
    );
    assert_eq!(
        out,
        "| Name | Value |\n| --- | --- |\n| a\\|b | 1 2 |\n| c |"
    );
}

#[test]
fn nested_lists_are_indented() {
    let out = md("<ul><li>one<ul><li>two</li></ul></li><li>three</li></ul>\
        <ol><li>a</li><li>b<ol><li>c</li></ol></li></ol>");
    assert_eq!(out, "- one\n  - two\n- three\n\n1. a\n2. b\n   1. c");
}

#[test]
fn links_are_absolute_and_empty_ones_dropped() {
    let out = md(
        r#"<p>See <a href="../api/x.html?q=1#top">the API</a>, <a href="/y"> </a>
            <a href="javascript:void(0)">click</a> and <a href="https://o.org/a b">o</a>.</p>"#,
    );
    assert_eq!(
        out,
        "See [the API](https://example.com/docs/api/x.html?q=1#top), click and [o](https://o.org/a%20b)."
    );
}

#[test]
fn entities_decoded_and_whitespace_collapsed() {
    let out = md("<p>  Fish &amp; chips\n\n &lt;3 &eacute;t&eacute;&nbsp;&nbsp;x \t</p><p> </p><div><p>d</p></div>");
    assert_eq!(out, "Fish & chips <3 été x\n\nd");
}

#[test]
fn inline_and_block_formatting() {
    let out = md(
        "<h2>Sub <em>title</em></h2><p>Some<strong> bold </strong>and <i>it</i> \
        with <code>x()</code>.<br>next line</p><blockquote><p>q1</p><p>q2</p></blockquote><hr>",
    );
    assert_eq!(
        out,
        "## Sub *title*\n\nSome **bold** and *it* with `x()`.\nnext line\n\n> q1\n>\n> q2\n\n---"
    );
}

#[test]
fn skip_predicate_removes_subtrees() {
    let frag = Html::parse_fragment("<p>keep</p><div class=ad><p>drop</p></div>");
    let skip = |e: ElementRef<'_>| {
        e.value()
            .has_class("ad", scraper::CaseSensitivity::CaseSensitive)
    };
    assert_eq!(to_markdown_with(frag.root_element(), None, &skip), "keep");
}

/// Caught by the `markdown` fuzz target (fuzz/corpus/markdown/regress_list_start_overflow): a
/// `start` of `usize::MAX` overflowed at the second item.
#[test]
fn list_start_beyond_nine_digits_counts_from_one() {
    assert_eq!(
        md(r#"<ol start="18446744073709551615"><li>a<li>b</ol>"#),
        "1. a\n2. b"
    );
    assert_eq!(md(r#"<ol start=" 999999999"><li>a</ol>"#), "999999999. a");
}

#[test]
fn short_table_rows_stay_short() {
    assert_eq!(
        md("<table><tr><td>a<td>b<td>c<tr><td>x<tr></table>"),
        "| a | b | c |\n| --- | --- | --- |\n| x |\n|  |"
    );
}

#[test]
fn lists_and_quotes_nest_six_deep_at_most() {
    let out = md(&format!("{}<p>deep</p>", "<blockquote>".repeat(10)));
    assert_eq!(out, format!("{}deep", "> ".repeat(6)));
    // Six levels of items; the four below them are paragraphs of the sixth item.
    let out = md(&"<ul><li>a".repeat(10));
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert_eq!(out.lines().map(indent).max(), Some(12), "{out}");
    assert_eq!(out.matches("- a").count(), 6, "{out}");
    assert_eq!(out.matches('a').count(), 10, "{out}");
}

/// Caught by the `markdown` fuzz target's size bound (fuzz/corpus/markdown/regress_*): every
/// table row padded to the widest, and a prefix per nesting level on every line, made pages
/// of a few kilobytes into megabytes of markdown.
#[test]
fn markdown_grows_linearly_with_hostile_markup() {
    for html in [
        format!(
            "<table><tr>{}{}</table>",
            "<td>a".repeat(100),
            "<tr>".repeat(300)
        ),
        format!("{}{}", "<blockquote>".repeat(150), "<p>x".repeat(1000)),
        format!(
            "{}{}",
            "<ol start=99999999999><li>".repeat(90),
            "<p>x".repeat(1000)
        ),
        format!(
            "{}{}",
            "<ol start=999999999><li>".repeat(90),
            "x<br>".repeat(1000)
        ),
    ] {
        let out = md(&html);
        assert!(
            out.len() < 16 * html.len(),
            "{} bytes from {} of HTML",
            out.len(),
            html.len()
        );
    }
}

/// Caught by the `markdown` fuzz target's size bound
/// (fuzz/corpus/markdown/regress_unclosed_link_per_paragraph): the parser re-opens an
/// unclosed `<a>` in every paragraph after it, and each copy wrote the whole href again.
#[test]
fn an_unclosed_link_is_written_once_not_per_paragraph() {
    let long = "x".repeat(400);
    let out = md(&format!(r#"<p><a href="/{long}">one<p>two<p>three"#));
    assert_eq!(out.matches(long.as_str()).count(), 1, "{out}");
    assert!(out.ends_with("two\n\nthree"), "{out}");
    let too_long = format!(r#"<p><a href="/{}">text</a></p>"#, "y".repeat(600));
    assert_eq!(md(&too_long), "text");
}

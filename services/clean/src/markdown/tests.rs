use super::*;
use scraper::Html;

fn md(html: &str) -> String {
    let base = Url::parse("https://example.com/docs/guide/page.html").unwrap();
    to_markdown(Html::parse_fragment(html).root_element(), Some(&base))
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
        "| Name | Value |\n| --- | --- |\n| a\\|b | 1 2 |\n| c |  |"
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

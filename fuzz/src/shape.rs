//! What the targets share: the invariants every markdown the clean stage writes keeps, and an
//! HTML tree generator for the structure-aware half of the `markdown` target.

use arbitrary::Arbitrary;

/// Markdown may be this many times its HTML, plus the links' base URLs. The worst case the
/// renderer allows: lists nest six deep with markers of up to 11 bytes (`999999999. `), so a
/// two-byte line of code (`x\n`) deep inside gets a 66-byte indent: 34 times. Escapes (`\|`,
/// `\[`) at most double a character. Anything superlinear (rows × columns, depth × lines)
/// breaks this on inputs of a few kilobytes.
pub const GROWTH: usize = 40;

/// What every markdown the clean stage writes from `html` (at page `url`) keeps: no trailing
/// whitespace, blank lines single up to the first fenced code block (whose content is kept byte
/// for byte), and a size within [`GROWTH`] times the HTML. Resolving a relative link writes the
/// base URL once per link, so each link (`](` in the output) is allowed the page URL again, four
/// times over for IDNA and percent-encoding.
pub fn assert_markdown_ok(html: &str, url: &str, markdown: &str) {
    assert_eq!(markdown, markdown.trim_end(), "trailing whitespace");
    let prose = match markdown.find("```") {
        Some(fence) => &markdown[..markdown[..fence].rfind('\n').unwrap_or(0)],
        None => markdown,
    };
    assert!(
        !prose.contains("\n\n\n"),
        "a run of blank lines:\n{markdown}"
    );
    for line in prose.lines() {
        assert_eq!(
            line,
            line.trim_end(),
            "a line ends in whitespace:\n{markdown}"
        );
    }
    let links = markdown.matches("](").count();
    let limit = GROWTH * html.len() + 1024 + links * 4 * url.len();
    assert!(
        markdown.len() <= limit,
        "{} bytes of markdown from {} of HTML (limit {limit})",
        markdown.len(),
        html.len()
    );
}

/// An HTML element tree: tags the renderer treats specially, attributes it reads.
#[derive(Arbitrary, Debug)]
pub enum Node {
    Text(Text),
    Element(Name, Vec<(Attr, Value)>, Vec<Node>),
}

#[derive(Arbitrary, Debug)]
pub enum Text {
    Word,
    Space,
    Pipe,
    Backticks,
    Brackets,
    Newlines,
    Entity,
    Other(String),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Name {
    P,
    Div,
    Span,
    Article,
    Main,
    Nav,
    Aside,
    Header,
    Footer,
    Section,
    Body,
    H1,
    H2,
    H3,
    H6,
    Ul,
    Ol,
    Li,
    Dl,
    Dt,
    Dd,
    Table,
    Thead,
    Tbody,
    Tr,
    Td,
    Th,
    Caption,
    Pre,
    Code,
    Kbd,
    Blockquote,
    A,
    Em,
    Strong,
    B,
    Br,
    Hr,
    Details,
    Summary,
    Figure,
    Img,
    Svg,
    Script,
    Style,
    Template,
    Noscript,
    Iframe,
    Button,
    Base,
    Title,
    Meta,
    Time,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Attr {
    Href,
    Class,
    Id,
    Start,
    Hidden,
    Style,
    Lang,
    AriaHidden,
    Datetime,
    Content,
    Name,
    Rel,
}

#[derive(Arbitrary, Debug)]
pub enum Value {
    Empty,
    Relative,
    Absolute,
    Fragment,
    Javascript,
    Content,
    Boilerplate,
    LanguageClass,
    Number,
    HugeNumber,
    None,
    Other(String),
}

impl Node {
    pub fn write(&self, out: &mut String, depth: usize) {
        match self {
            Node::Text(t) => out.push_str(match t {
                Text::Word => "budget ",
                Text::Space => " \u{a0}\t",
                Text::Pipe => "a|b",
                Text::Backticks => "```",
                Text::Brackets => "[x](y)",
                Text::Newlines => "\n\n\n",
                Text::Entity => "&lt;&amp;&#x60;&nbsp;",
                Text::Other(s) => s,
            }),
            Node::Element(name, attrs, children) => {
                let tag = format!("{name:?}").to_lowercase();
                out.push('<');
                out.push_str(&tag);
                for (a, v) in attrs {
                    let attr = match a {
                        Attr::AriaHidden => "aria-hidden".to_string(),
                        a => format!("{a:?}").to_lowercase(),
                    };
                    out.push_str(&format!(" {attr}=\"{}\"", v.text().replace('"', "&quot;")));
                }
                out.push('>');
                // Deeper than any limit of the renderer, not so deep that generation dominates.
                if depth < 300 {
                    for c in children {
                        c.write(out, depth + 1);
                    }
                }
                out.push_str(&format!("</{tag}>"));
            }
        }
    }
}

impl Value {
    fn text(&self) -> &str {
        match self {
            Value::Empty => "",
            Value::Relative => "../a b/(c)?d=1#e",
            Value::Absolute => "https://other.test/x",
            Value::Fragment => "#top",
            Value::Javascript => "JavaScript:void(0)",
            Value::Content => "article-body post-content",
            Value::Boilerplate => "navbar cookie-banner share",
            Value::LanguageClass => "language-rust",
            Value::Number => "7",
            Value::HugeNumber => "18446744073709551615",
            Value::None => "display:none",
            Value::Other(s) => s,
        }
    }
}

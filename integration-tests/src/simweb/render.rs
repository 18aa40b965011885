//! HTML rendering. The article is wrapped in realistic clutter (navigation, cookie banner,
//! ads, related links, comments, footer) because the clean stage must learn to throw that
//! away; some layouts have no `<article>`/`<main>` so extraction cannot lean on them.

use std::fmt::Write as _;

use super::rng::Rng;

/// Where a host puts its article body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Layout {
    /// `<main><article>…</article></main>`
    Article,
    /// `<div class="post-content">` with no semantic tags.
    PostContent,
    /// `<div id="main-text">` with no semantic tags.
    MainText,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    P(String),
    H2(String),
    Ul(Vec<String>),
    Table(Vec<(String, String)>),
    Code(String),
}

/// An article before it is dressed in boilerplate.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Doc {
    /// Title plus body text: what search indexes (never the boilerplate).
    pub fn plain_text(&self) -> String {
        let mut out = self.title.clone();
        for b in &self.blocks {
            out.push('\n');
            match b {
                Block::P(s) | Block::H2(s) | Block::Code(s) => out.push_str(s),
                Block::Ul(items) => out.push_str(&items.join("\n")),
                Block::Table(rows) => {
                    for (k, v) in rows {
                        let _ = writeln!(out, "{k}: {v}");
                    }
                }
            }
        }
        out
    }
}

/// Everything around the article, decided by the corpus once all pages are placed.
pub struct Frame<'a> {
    pub host: &'a str,
    pub layout: Layout,
    pub nav: &'a [(String, String)],
    pub related: &'a [(String, String)],
}

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

const COMMENTERS: &[&str] = &[
    "marta_k",
    "quietfox",
    "Dale P.",
    "n0vember",
    "grumpy_otter",
    "Ingrid",
    "tech_uncle",
    "sol",
];

const COMMENTS: &[&str] = &[
    "Great read, thanks for putting this together!",
    "I disagree with the second half but enjoyed it anyway.",
    "Bookmarked. My kids will love this.",
    "Does anyone have a source for this? Asking for a friend.",
    "First! Also, the ads on this site are getting out of hand.",
    "This is exactly the kind of writing I subscribe for.",
    "Typo in the third paragraph, otherwise solid.",
    "Shared with my book club, we argued about it for an hour.",
];

const ADS: &[&str] = &[
    "Refinance today! Rates as low as you can imagine.",
    "Hot singles in your area want to talk about spreadsheets.",
    "This one weird trick makes your coffee taste expensive.",
    "Upgrade to Premium and never miss a story.",
];

pub fn render(frame: &Frame<'_>, doc: &Doc, rng: &mut Rng) -> String {
    let mut h = String::with_capacity(8 * 1024);
    let title = escape(&doc.title);
    let site = site_name(frame.host);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} | {site}</title>\n<link rel=\"stylesheet\" href=\"/static/site.css\">\n\
         <script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments);}}</script>\n\
         </head>\n<body>\n"
    );
    h.push_str("<div class=\"cookie-banner\" role=\"dialog\"><p>We use cookies to improve your experience and to show you personalised advertising. By continuing you accept our cookie policy.</p><button>Accept all</button> <button>Manage preferences</button></div>\n");
    let _ = write!(h, "<header class=\"site-header\"><a class=\"logo\" href=\"/\">{site}</a>\n<nav class=\"primary-nav\"><ul>\n");
    for (href, text) in frame.nav {
        let _ = writeln!(
            h,
            "<li><a href=\"{}\">{}</a></li>",
            escape(href),
            escape(text)
        );
    }
    h.push_str("</ul></nav></header>\n");
    let _ = writeln!(
        h,
        "<div class=\"ad banner-ad\"><span>Advertisement</span><p>{}</p></div>",
        rng.pick(ADS)
    );

    let (open, close) = match frame.layout {
        Layout::Article => (
            "<main id=\"content\">\n<article class=\"story\">\n",
            "</article>\n</main>\n",
        ),
        Layout::PostContent => (
            "<div class=\"wrapper\">\n<div class=\"post-content\">\n",
            "</div>\n</div>\n",
        ),
        Layout::MainText => (
            "<div class=\"container\">\n<div id=\"main-text\">\n",
            "</div>\n</div>\n",
        ),
    };
    h.push_str(open);
    let _ = writeln!(h, "<h1>{title}</h1>");
    let _ = writeln!(
        h,
        "<p class=\"byline\">By {} &middot; {} min read</p>",
        rng.pick(COMMENTERS),
        rng.range(3, 14)
    );
    for (i, b) in doc.blocks.iter().enumerate() {
        render_block(&mut h, b);
        // An inline sponsored block mid-article, as many news sites do.
        if i == 2 {
            let _ = writeln!(
                h,
                "<div class=\"sponsored\"><em>Sponsored</em> {}</div>",
                rng.pick(ADS)
            );
        }
    }
    h.push_str(close);

    h.push_str("<aside class=\"sidebar\">\n<h3>Related articles</h3>\n<ul>\n");
    for (href, text) in frame.related {
        let _ = writeln!(
            h,
            "<li><a href=\"{}\">{}</a></li>",
            escape(href),
            escape(text)
        );
    }
    let _ = writeln!(
        h,
        "</ul>\n<div class=\"ad\">{}</div>\n</aside>",
        rng.pick(ADS)
    );

    h.push_str("<section id=\"comments\">\n<h3>Comments</h3>\n");
    let n = rng.range(3, 6);
    for _ in 0..n {
        let _ = writeln!(
            h,
            "<div class=\"comment\"><span class=\"author\">{}</span><p>{}</p></div>",
            escape(rng.pick(COMMENTERS)),
            rng.pick(COMMENTS)
        );
    }
    h.push_str("</section>\n");
    let _ = write!(
        h,
        "<footer class=\"site-footer\"><p>&copy; 2024 {site}. All rights reserved.</p>\
         <a href=\"/about\">About</a> <a href=\"/privacy\">Privacy</a> <a href=\"/terms\">Terms</a> \
         <a href=\"/contact\">Contact</a></footer>\n</body>\n</html>\n"
    );
    h
}

fn render_block(h: &mut String, b: &Block) {
    match b {
        Block::P(s) => {
            let _ = writeln!(h, "<p>{}</p>", escape(s));
        }
        Block::H2(s) => {
            let _ = writeln!(h, "<h2>{}</h2>", escape(s));
        }
        Block::Ul(items) => {
            h.push_str("<ul>\n");
            for it in items {
                let _ = writeln!(h, "<li>{}</li>", escape(it));
            }
            h.push_str("</ul>\n");
        }
        Block::Table(rows) => {
            h.push_str("<table>\n<thead><tr><th>Item</th><th>Detail</th></tr></thead>\n<tbody>\n");
            for (k, v) in rows {
                let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
            }
            h.push_str("</tbody>\n</table>\n");
        }
        Block::Code(s) => {
            let _ = writeln!(h, "<pre><code>{}</code></pre>", escape(s));
        }
    }
}

/// "daily-orbit.test" -> "Daily Orbit".
pub fn site_name(host: &str) -> String {
    let base = host.strip_suffix(".test").unwrap_or(host);
    base.split('-')
        .map(super::words::capitalise)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A bare page for a host's `/` listing and for 404s.
pub fn simple_page(title: &str, body_html: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n</head>\n<body>\n<h1>{}</h1>\n{body_html}\n</body>\n</html>\n",
        escape(title),
        escape(title)
    )
}

//! `docs.test`: technical pages as documentation sites and developer blogs lay them out —
//! highlighted code in the markup of common generators (Sphinx, highlight.js, Prism, GitHub),
//! tables, nested lists, admonitions — inside the usual sidebar, breadcrumbs, "edit this page"
//! and cookie clutter. The clean stage must keep every piece of the content and none of the
//! clutter; [`EXPECTED`] says what must survive and [`CLUTTER`] what must not.

use axum::http::header;
use axum::response::{IntoResponse, Response};

pub const HOST: &str = "docs.test";

pub const PATHS: &[&str] = &["/guide/install", "/blog/benchmarks"];

/// Per path: strings the markdown must contain, verbatim.
pub const EXPECTED: &[(&str, &[&str])] = &[
    (
        "/guide/install",
        &[
            "# Installing Quillfeather",
            "```bash\npip install quillfeather==2.4.1\nquill init --profile research\n```",
            "```python\nfrom quillfeather import Index\n\nindex = Index(\"notes\")\nfor hit in index.search(\"kestrel\", limit=5):\n    print(hit.score, hit.title)\n```",
            "```toml\n[index]\nshards = 4\n```",
            "| Platform | Minimum version | Notes |",
            "| Linux | glibc 2.31 | x86_64 and aarch64 |",
            "- Create a profile\n  1. Run `quill init`\n  2. Edit `~/.quill/profile.toml`\n- Build the index",
            "> **Note:** shards cannot be changed after the first build.",
            "[the configuration reference](http://docs.test/reference/config)",
        ],
    ),
    (
        "/blog/benchmarks",
        &[
            "# Measuring Quillfeather on 10 million notes",
            "```rust\nlet index = Index::open(\"notes\")?;\nlet hits = index.search(\"heron\", 10)?;\n```",
            "```\n$ quill bench --notes 10000000\nindexed 10000000 notes in 412 s\n```",
            "| Shards | Index time (s) | Query p99 (ms) |",
            "| 8 | 412 | 9.8 |",
        ],
    ),
];

/// Strings of the surrounding page that must not reach the markdown.
pub const CLUTTER: &[&str] = &[
    "Edit this page",
    "We use cookies",
    "Previous: Overview",
    "Table of contents",
    "Subscribe to our newsletter",
    "© 2026 Quillfeather",
    "Copy to clipboard",
];

const HEAD: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__ — Quillfeather docs</title>
<link rel="canonical" href="http://docs.test__PATH__"></head>
<body>
<div class="cookie-banner" id="cookie-consent"><p>We use cookies to improve your experience. <a href="/privacy">Learn more</a></p><button>Accept</button></div>
<header class="site-header"><a class="logo" href="/">Quillfeather</a>
<nav class="top-nav"><ul><li><a href="/guide/">Guide</a></li><li><a href="/reference/">Reference</a></li><li><a href="/blog/">Blog</a></li><li><a href="https://github.test/quill">GitHub</a></li></ul></nav></header>
<div class="wy-grid">
<nav class="wy-nav-side sidebar" aria-label="Table of contents"><p class="caption">Table of contents</p>
<ul><li><a href="/guide/overview">Overview</a></li><li><a href="/guide/install">Installation</a></li><li><a href="/guide/profiles">Profiles</a></li><li><a href="/guide/queries">Queries</a></li><li><a href="/reference/config">Configuration</a></li><li><a href="/reference/cli">Command line</a></li></ul></nav>
<div class="wy-nav-content"><div class="rst-content">
<div role="navigation" aria-label="breadcrumbs"><ul class="breadcrumbs"><li><a href="/">Docs</a> »</li><li><a href="/guide/">Guide</a> »</li><li>__TITLE__</li></ul><a class="edit-link" href="https://github.test/quill/edit/main/docs__PATH__.rst">Edit this page</a></div>
<div role="main" class="document" itemscope itemtype="http://schema.org/Article"><div itemprop="articleBody">
"##;

const TAIL: &str = r##"</div></div>
<footer><div class="rst-footer-buttons"><a href="/guide/overview" class="btn">Previous: Overview</a> <a href="/guide/profiles" class="btn">Next: Profiles</a></div>
<div class="newsletter"><h3>Subscribe to our newsletter</h3><form><input type="email" placeholder="you@example.org"><button>Subscribe</button></form></div>
<p class="copyright">© 2026 Quillfeather contributors. Built with Sphinx.</p></footer>
</div></div></div>
</body></html>
"##;

const INSTALL: &str = r##"<h1>Installing Quillfeather<a class="headerlink" href="#installing" title="Permalink to this heading">¶</a></h1>
<p>Quillfeather is a note index for researchers. It runs on Linux and macOS and needs Python 3.10 or later; this page takes you from nothing to a first query in a few minutes.</p>
<h2>Install the package</h2>
<p>Install the release from the package index and create a profile:</p>
<div class="highlight-bash notranslate"><div class="highlight"><pre><span></span>pip<span class="w"> </span>install<span class="w"> </span>quillfeather<span class="o">==</span><span class="m">2</span>.4.1
quill<span class="w"> </span>init<span class="w"> </span>--profile<span class="w"> </span>research
</pre><button class="copybtn" title="Copy to clipboard">Copy to clipboard</button></div></div>
<p>Then open the index from Python and search it:</p>
<pre><code class="language-python hljs">from quillfeather import Index

index = Index(&quot;notes&quot;)
for hit in index.search(&quot;kestrel&quot;, limit=5):
    print(hit.score, hit.title)
</code></pre>
<h2>Supported platforms</h2>
<table class="docutils align-default">
<thead><tr><th>Platform</th><th>Minimum version</th><th>Notes</th></tr></thead>
<tbody>
<tr><td>Linux</td><td>glibc 2.31</td><td>x86_64 and aarch64</td></tr>
<tr><td>macOS</td><td>13</td><td>Apple silicon and Intel</td></tr>
<tr><td>Windows</td><td>10</td><td>through WSL 2 only</td></tr>
</tbody></table>
<h2>First steps</h2>
<ul>
<li>Create a profile<ol><li>Run <code>quill init</code></li><li>Edit <code>~/.quill/profile.toml</code></li></ol></li>
<li>Build the index</li>
</ul>
<p>A profile sets how many shards the index has:</p>
<div class="highlight-toml notranslate"><div class="highlight"><pre>[index]
shards = 4
</pre></div></div>
<blockquote><p><strong>Note:</strong> shards cannot be changed after the first build.</p></blockquote>
<p>Every key is described in <a href="../reference/config">the configuration reference</a>.</p>
"##;

const BENCHMARKS: &str = r##"<h1>Measuring Quillfeather on 10 million notes</h1>
<p class="byline">By Ada Marsh, 3 October 2026</p>
<p>We indexed ten million notes from the public research archive on one machine and measured index time and query latency for different shard counts. The results below are the median of five runs.</p>
<div class="highlight"><pre><code class="language-rust">let index = Index::open(&quot;notes&quot;)?;
let hits = index.search(&quot;heron&quot;, 10)?;
</code></pre></div>
<p>The command line tool reports the same figures:</p>
<pre>$ quill bench --notes 10000000
indexed 10000000 notes in 412 s
</pre>
<table>
<tr><th>Shards</th><th>Index time (s)</th><th>Query p99 (ms)</th></tr>
<tr><td>1</td><td>1630</td><td>31.0</td></tr>
<tr><td>4</td><td>655</td><td>12.4</td></tr>
<tr><td>8</td><td>412</td><td>9.8</td></tr>
</table>
<p>Eight shards index four times faster than one, and the slowest queries get three times quicker; past eight shards the disk, not the CPU, sets the pace.</p>
"##;

/// Serves `path` on docs.test; `None` means 404.
pub fn handle(path: &str) -> Option<Response> {
    if path == "/robots.txt" {
        let robots = "User-agent: *\nDisallow:\n";
        return Some(([(header::CONTENT_TYPE, "text/plain")], robots).into_response());
    }
    let html = page(path)?;
    Some(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response())
}

/// The page at `path` as served, for tests that extract without a socket.
pub fn page(path: &str) -> Option<String> {
    let (title, body) = match path {
        "/guide/install" => ("Installing Quillfeather", INSTALL),
        "/blog/benchmarks" => ("Measuring Quillfeather", BENCHMARKS),
        _ => return None,
    };
    let head = HEAD.replace("__TITLE__", title).replace("__PATH__", path);
    Some(format!("{head}{body}{TAIL}"))
}

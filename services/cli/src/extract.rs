//! `trawl extract`: the clean stage's extraction on a file, a URL or stdin, or on a directory of
//! pages in one process.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use trawl_clean::extract::{extract, Extracted};
use trawl_config::Config;
use trawl_text::strip_links;

use crate::input::{read_bounded, read_file};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Markdown, with the title as a heading.
    Markdown,
    /// Plain text: the markdown without its markup.
    Text,
    /// One JSON object: url, title, byline, publication date, language, canonical URL, method
    /// and the markdown.
    Json,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Text => "txt",
            Format::Json => "json",
        }
    }
}

#[derive(clap::Args)]
pub struct ExtractArgs {
    /// An HTML file (gzip accepted), an http(s) URL, or - for standard input.
    #[arg(value_name = "FILE|URL|-", required_unless_present = "batch")]
    input: Option<String>,
    /// Extract every IN_DIR/<name>.html (or .html.gz) into OUT_DIR/<name>.md (.txt, .json): the
    /// main content only (the title is in the JSON), as benchmarks score it.
    #[arg(long, num_args = 2, value_names = ["IN_DIR", "OUT_DIR"], conflicts_with = "input")]
    batch: Option<Vec<PathBuf>>,
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    format: Format,
}

pub async fn run(mut config: Config, args: ExtractArgs) -> anyhow::Result<ExitCode> {
    // A local page is held to the bound a fetched one is, before and after gunzipping.
    let limit = config.fetch.max_bytes;
    if let Some(dirs) = args.batch {
        return batch(&dirs[0], &dirs[1], args.format, limit);
    }
    let input = args.input.unwrap_or_default();
    let (body, url, content_type) = if input == "-" {
        let bytes = read_bounded(std::io::stdin(), limit, "standard input (fetch.max_bytes)")?;
        (html_of(&bytes, limit)?, "http://localhost/".into(), None)
    } else if is_web_url(&input) {
        let url = url::Url::parse(&input).with_context(|| format!("invalid URL {input:?}"))?;
        let fetcher = trawl_fetch::http::Fetcher::new(&config.fetch)
            .context("failed to build the HTTP client")?;
        // Robots.txt is cached in memory for this one page: nothing is written anywhere.
        config.output.url = "memory://".into();
        let rt = trawl_pipeline::Runtime::embedded(config).context("in-memory runtime")?;
        match trawl_fetch::one::fetch_one(&rt, &fetcher, &url).await {
            Ok(p) => (p.body, p.final_url, Some(p.content_type)),
            Err(e) => bail!("could not fetch {input}: {e}"),
        }
    } else {
        let path = Path::new(&input);
        let bytes = read_file(path, limit, &format!("{input} (fetch.max_bytes)"))?;
        (html_of(&bytes, limit)?, file_url(path), None)
    };
    let extracted = of_fetched(body, &url, content_type.as_deref());
    println!("{}", render(&extracted, &url, args.format, true));
    Ok(ExitCode::SUCCESS)
}

/// The main content of a page; a file fetched from a URL (PDF, DOCX …, any `content_type` but
/// HTML) already is text and is kept as it came.
pub(crate) fn of_fetched(body: String, url: &str, content_type: Option<&str>) -> Extracted {
    match content_type {
        Some(ct) if ct != "text/html" => Extracted {
            title: String::new(),
            text_chars: body.chars().count(),
            markdown: body,
            method: "file",
            lang: None,
            canonical_url: None,
            byline: None,
            published: None,
        },
        _ => extract(&body, url),
    }
}

/// The page as text: gunzipped (to at most `limit` bytes) when it is gzip, decoded by its
/// `<meta>` charset, as UTF-8, or as the charset detector reads it.
fn html_of(bytes: &[u8], limit: u64) -> anyhow::Result<String> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(trawl_files::decode(bytes, "text/html", None));
    }
    let gunzipped = read_bounded(
        flate2::read::MultiGzDecoder::new(bytes),
        limit,
        "the gunzipped page (fetch.max_bytes)",
    )
    .context("not a valid gzip file, or one that unpacks too large")?;
    Ok(trawl_files::decode(&gunzipped, "text/html", None))
}

fn file_url(path: &Path) -> String {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    url::Url::from_file_path(&absolute)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// `e` in `format`; `with_title` puts the title first (as a heading in markdown).
pub fn render(e: &Extracted, url: &str, format: Format, with_title: bool) -> String {
    let title = with_title && !e.title.is_empty();
    match format {
        Format::Markdown if title => format!("# {}\n\n{}", e.title, e.markdown),
        Format::Markdown => e.markdown.clone(),
        Format::Text if title => format!("{}\n\n{}", e.title, plain_text(&e.markdown)),
        Format::Text => plain_text(&e.markdown),
        Format::Json => json!({
            "url": url,
            "title": e.title,
            "language": e.lang,
            "canonical_url": e.canonical_url,
            "byline": e.byline,
            "published": e.published,
            "method": e.method,
            "text_chars": e.text_chars,
            "markdown": e.markdown,
        })
        .to_string(),
    }
}

/// The markdown's text without its markup: heading and list markers, emphasis, link and image
/// syntax, code fences and table rules go; the words and their order stay.
pub fn plain_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || is_table_rule(trimmed) {
            continue;
        }
        if let Some(row) = trimmed.strip_prefix('|') {
            let cells: Vec<String> = (row.trim_end().trim_end_matches('|').split('|'))
                .map(|c| inline_text(c.trim()))
                .collect();
            out.push_str(&cells.join("\t"));
            out.push('\n');
            continue;
        }
        let mut text = trimmed.trim_start_matches('#').trim_start_matches('>');
        for marker in ["- ", "* ", "+ "] {
            text = text.strip_prefix(marker).unwrap_or(text);
        }
        let text = text.trim_start();
        let text = match text.split_once(". ") {
            Some((n, rest)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => rest,
            _ => text,
        };
        out.push_str(&inline_text(text));
        out.push('\n');
    }
    out.trim_end().to_owned()
}

fn is_table_rule(line: &str) -> bool {
    line.starts_with('|') && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// Inline markup to its text: `![alt](src)` → alt, `[text](url)` → text, emphasis and code
/// marks dropped (`_` is left alone: in prose it is more often part of a name than emphasis).
fn inline_text(s: &str) -> String {
    strip_links(&s.replace("![", "["))
        .replace('*', "")
        .trim()
        .to_owned()
}

fn batch(input: &Path, output: &Path, format: Format, limit: u64) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(output)
        .with_context(|| format!("failed to create {}", output.display()))?;
    let mut pages: Vec<(PathBuf, String)> = Vec::new();
    for entry in
        std::fs::read_dir(input).with_context(|| format!("failed to read {}", input.display()))?
    {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if let Some(stem) = name
            .strip_suffix(".html.gz")
            .or_else(|| name.strip_suffix(".html"))
        {
            pages.push((path.clone(), stem.to_owned()));
        }
    }
    pages.sort();
    let dir = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
    let bar = ProgressBar::new(pages.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} pages {elapsed}")
            .expect("a valid template"),
    );
    for (path, stem) in &pages {
        let bytes = read_file(
            path,
            limit,
            &format!("{} (fetch.max_bytes)", path.display()),
        )?;
        let html = html_of(&bytes, limit).with_context(|| format!("{}", path.display()))?;
        let url = (path.file_name().map(|name| dir.join(name)))
            .and_then(|p| url::Url::from_file_path(p).ok())
            .map_or_else(|| file_url(path), String::from);
        let extracted = extract(&html, &url);
        let out = output.join(format!("{stem}.{}", format.extension()));
        std::fs::write(&out, render(&extracted, &url, format, false))
            .with_context(|| format!("failed to write {}", out.display()))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    eprintln!("extracted {} pages into {}", pages.len(), output.display());
    Ok(ExitCode::SUCCESS)
}

/// An http(s) URL, whatever the case of its scheme (`HTTP://` is as much a URL as `http://`).
fn is_web_url(input: &str) -> bool {
    input.split_once("://").is_some_and(|(scheme, _)| {
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_are_told_from_file_names_whatever_their_case() {
        for url in ["http://a.test/", "HTTP://a.test/", "Https://a.test/x"] {
            assert!(super::is_web_url(url), "{url}");
        }
        for file in ["page.html", "./http/page.html", "ftp://a.test/", "-"] {
            assert!(!super::is_web_url(file), "{file}");
        }
    }

    use super::*;

    #[test]
    fn plain_text_drops_markup_and_keeps_words() {
        let md = "## Install\n\nRun **this** with `pip`, see [the docs](https://x.test/d) and ![a chart](c.png).\n\n- first\n1. second\n\n```bash\npip install trawl\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n> quoted";
        assert_eq!(
            plain_text(md),
            "Install\n\nRun this with pip, see the docs and a chart.\n\nfirst\nsecond\n\npip install trawl\n\na\tb\n1\t2\nquoted"
        );
    }

    #[test]
    fn gzip_pages_are_read_like_plain_ones() {
        use std::io::Write;
        let page = "<html><body><p>caf\u{e9}</p></body></html>";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(page.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(html_of(&gz, 1 << 20).unwrap(), page);
        assert_eq!(html_of(page.as_bytes(), 1 << 20).unwrap(), page);
        assert!(html_of(&gz[..gz.len() / 2], 1 << 20).is_err());
    }

    /// Issue 25, item 9: a gzip bomb unpacks only to the bound.
    #[test]
    fn a_gzip_bomb_stops_at_the_bound() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            gz.write_all(&zeros).unwrap();
        }
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 1 << 20);
        let err = html_of(&bomb, 4 << 20).unwrap_err();
        assert!(
            format!("{err:#}").contains("larger than 4.0 MiB"),
            "{err:#}"
        );
    }
}

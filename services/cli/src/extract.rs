//! `trawl extract`: the clean stage's extraction on a file, a URL or stdin.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use trawl_config::Config;

#[derive(clap::Args)]
pub struct ExtractArgs {
    /// An HTML file, an http(s) URL, or - for standard input.
    #[arg(value_name = "FILE|URL|-", required_unless_present = "batch")]
    input: Option<String>,
    /// Extract every *.html file of IN_DIR into OUT_DIR/<name>.md.
    #[arg(long, num_args = 2, value_names = ["IN_DIR", "OUT_DIR"], conflicts_with = "input")]
    batch: Option<Vec<PathBuf>>,
}

pub async fn run(config: Config, args: ExtractArgs) -> anyhow::Result<ExitCode> {
    if let Some(dirs) = args.batch {
        return batch(&dirs[0], &dirs[1]);
    }
    let input = args.input.unwrap_or_default();
    let (html, base) = if input == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("failed to read standard input")?;
        (s, "http://localhost/".to_owned())
    } else if input.starts_with("http://") || input.starts_with("https://") {
        let url = url::Url::parse(&input).with_context(|| format!("invalid URL {input:?}"))?;
        let fetcher = trawl_fetch::http::Fetcher::new(&config.fetch)
            .context("failed to build the HTTP client")?;
        match fetcher.get(&url, 0).await {
            trawl_fetch::http::Fetched::Page(p) => (p.body, p.final_url),
            other => bail!("could not fetch {input}: {other:?}"),
        }
    } else {
        let bytes = std::fs::read(&input).with_context(|| format!("failed to read {input}"))?;
        (
            trawl_fetch::http::decode(&bytes, "text/html"),
            format!("file://{input}"),
        )
    };
    let extracted = trawl_clean::extract::extract(&html, &base);
    if !extracted.title.is_empty() {
        println!("# {}\n", extracted.title);
    }
    println!("{}", extracted.markdown);
    Ok(ExitCode::SUCCESS)
}

fn batch(input: &std::path::Path, output: &std::path::Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(output)
        .with_context(|| format!("failed to create {}", output.display()))?;
    let mut count = 0;
    for entry in
        std::fs::read_dir(input).with_context(|| format!("failed to read {}", input.display()))?
    {
        let path = entry?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("html") {
            continue;
        }
        let bytes =
            std::fs::read(&path).with_context(|| format!("failed to read {}", path.display()))?;
        let html = trawl_fetch::http::decode(&bytes, "text/html");
        let extracted = trawl_clean::extract::extract(&html, &format!("file://{}", path.display()));
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
        std::fs::write(output.join(format!("{name}.md")), extracted.markdown)?;
        count += 1;
    }
    eprintln!("extracted {count} pages into {}", output.display());
    Ok(ExitCode::SUCCESS)
}

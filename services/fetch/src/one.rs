//! One page fetched for a tool: `trawl mcp`'s extract and `trawl extract URL` share it, so
//! there is one fetch policy outside the fleet too: the SSRF guard, robots.txt (through the
//! store's cache, waiting for another worker that is fetching it), plain HTTP at level 0, then
//! the browser-like client at level 1 when the honest one is blocked. The browser levels stay
//! with the fleet's research jobs.

use std::time::Duration;

use trawl_pipeline::Runtime;
use url::Url;

use crate::http::{Fetched, Fetcher, Page};
use crate::robots::{decide, rules_for, Rules};

/// Why a page could not be had, in words for the person or agent who asked.
#[derive(Debug, thiserror::Error)]
pub enum OneError {
    #[error("only http(s) URLs can be read")]
    Scheme,
    #[error("robots.txt: {0}")]
    Robots(String),
    /// The SSRF guard's refusal, or robots.txt's host refused.
    #[error("{0}")]
    Refused(String),
    #[error("robots.txt of {0} disallows this URL")]
    Disallowed(String),
    #[error("blocked ({0}); the page needs a real browser, which research jobs use when fetch.max_level allows")]
    Blocked(String),
    #[error("could not fetch it: {0}")]
    Failed(String),
    #[error("larger than fetch.max_bytes ({0} bytes)")]
    TooLarge(u64),
    #[error("cannot read {0} content")]
    Unsupported(String),
}

/// How long to wait for another worker's robots.txt fetch of the same origin.
const ROBOTS_WAIT: Duration = Duration::from_secs(10);

/// Fetches `url` as the policy above says.
pub async fn fetch_one(rt: &Runtime, fetcher: &Fetcher, url: &Url) -> Result<Page, OneError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(OneError::Scheme);
    }
    let waited = std::time::Instant::now();
    let rules = loop {
        let rules = (rules_for(rt, fetcher, url).await).map_err(|e| OneError::Robots(e.message))?;
        match rules {
            Some(rules) => break rules,
            None if waited.elapsed() < ROBOTS_WAIT => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            None => break Rules::DisallowAll,
        }
    };
    match rules {
        Rules::Refused(reason) => return Err(OneError::Refused(reason)),
        Rules::Unreachable(reason) => {
            return Err(OneError::Robots(format!(
                "{}/robots.txt could not be read ({reason}), and nothing there is fetched until it can be",
                url.origin().ascii_serialization()
            )))
        }
        rules if !decide(&rules, &rt.config.fetch.user_agent, url).allowed => {
            return Err(OneError::Disallowed(url.origin().ascii_serialization()))
        }
        _ => {}
    }
    let mut fetched = fetcher.get(url, 0).await;
    if matches!(fetched, Fetched::Blocked { .. }) {
        fetched = fetcher.get(url, 1).await;
    }
    match fetched {
        Fetched::Page(page) => Ok(page),
        Fetched::Blocked { block, .. } => Err(OneError::Blocked(block.describe())),
        Fetched::Transient(reason) | Fetched::Failed(reason) => Err(OneError::Failed(reason)),
        Fetched::Refused(refusal) => Err(OneError::Refused(refusal.to_string())),
        Fetched::TooLarge => Err(OneError::TooLarge(rt.config.fetch.max_bytes)),
        Fetched::Unsupported(mime) => Err(OneError::Unsupported(mime)),
        // Asked without validators: a server's mistake.
        Fetched::NotModified => Err(OneError::Failed("http 304 to a plain request".into())),
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A robots.txt that cannot be read stops the page, and the error says why rather than
    /// claiming robots.txt disallows it. The server is on loopback, allowed for this test.
    #[tokio::test]
    async fn an_unreadable_robots_txt_is_named_with_its_reason() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut request = [0u8; 2048];
                    let _ = socket.read(&mut request).await;
                    let _ = socket
                        .write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                });
            }
        });
        let mut config = trawl_config::Config::default();
        config.fetch.allow_networks = vec!["127.0.0.0/8".into()];
        config.output.url = "memory://".into();
        let fetcher = Fetcher::new(&config.fetch).unwrap();
        let rt = Runtime::embedded(config).unwrap();
        let url = Url::parse(&format!("http://{addr}/page")).unwrap();
        let error = fetch_one(&rt, &fetcher, &url)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("/robots.txt could not be read (") && error.contains("503"),
            "{error}"
        );
    }
}

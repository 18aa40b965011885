//! Plain-HTTP fetching, levels 0 and 1.
//!
//! Level 0 is an honest request (`User-Agent: <token> (+research)`); level 1 looks like a
//! browser's (user agent, Accept, Accept-Language). Both are bounded: a total time limit (slow
//! drips end there), at most `max_redirects` hops each re-checked by the SSRF guard, and at most
//! `max_bytes` of body after decompression (so a compression bomb stops at the cap, it is never
//! inflated whole). Environment proxies are ignored: they would bypass the guard.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{
    HeaderMap, HeaderValue, ACCEPT, ACCEPT_LANGUAGE, CONTENT_LENGTH, CONTENT_TYPE,
};
use reqwest::redirect::Policy;
use reqwest::StatusCode;
use trawl_config::FetchConfig;
use url::Url;

use crate::ssrf::{resolver, Guard};

const BROWSER_UA: &str =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";

/// A fetched body, decoded to text.
#[derive(Debug)]
pub struct Page {
    pub final_url: String,
    pub status: u16,
    pub content_type: String,
    pub body: String,
    pub bytes: u64,
}

#[derive(Debug)]
pub enum Fetched {
    Page(Page),
    /// The site refused us (401, 403, 429, 503 …); `retry_after` from its header.
    Blocked {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// Worth another attempt later (5xx, timeouts, connection errors).
    Transient(String),
    /// Will not change (404, refused by the SSRF guard, too many redirects …).
    Failed(String),
    TooLarge,
    Unsupported(String),
}

pub struct Fetcher {
    levels: [reqwest::Client; 2],
    guard: Guard,
    max_bytes: u64,
}

impl Fetcher {
    pub fn new(config: &FetchConfig) -> Result<Self, reqwest::Error> {
        let guard = Guard::new(&config.allow_networks);
        let build = |level: u8| {
            let redirect_guard = guard.clone();
            let max_redirects = config.max_redirects;
            let mut headers = HeaderMap::new();
            let ua = if level == 0 {
                format!("{} (+research; respects robots.txt)", config.user_agent)
            } else {
                headers.insert(
                    ACCEPT,
                    HeaderValue::from_static(
                        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
                    ),
                );
                headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_static("en-US,en;q=0.9"));
                BROWSER_UA.to_owned()
            };
            reqwest::Client::builder()
                .user_agent(ua)
                .default_headers(headers)
                .dns_resolver(resolver(guard.clone(), &config.resolve))
                .no_proxy()
                .timeout(Duration::from_secs(config.timeout_secs))
                .connect_timeout(Duration::from_secs(10))
                .redirect(Policy::custom(move |attempt| {
                    if attempt.previous().len() > max_redirects {
                        attempt.error(format!("more than {max_redirects} redirects"))
                    } else if let Err(reason) = redirect_guard.check_url(attempt.url()) {
                        attempt.error(reason)
                    } else {
                        attempt.follow()
                    }
                }))
                .build()
        };
        Ok(Fetcher {
            levels: [build(0)?, build(1)?],
            guard,
            max_bytes: config.max_bytes,
        })
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The honest client, also used for robots.txt.
    pub fn client(&self) -> &reqwest::Client {
        &self.levels[0]
    }

    pub async fn get(&self, url: &Url, level: u8) -> Fetched {
        if let Err(reason) = self.guard.check_url(url) {
            return Fetched::Failed(reason);
        }
        let client = &self.levels[usize::from(level.min(1))];
        let response = match client.get(url.clone()).send().await {
            Ok(r) => r,
            Err(e) => return classify_error(&e),
        };
        let status = response.status();
        if is_block(status) {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            return Fetched::Blocked {
                status: status.as_u16(),
                retry_after,
            };
        }
        if status.is_server_error() {
            return Fetched::Transient(format!("http {}", status.as_u16()));
        }
        if !status.is_success() {
            return Fetched::Failed(format!("http {}", status.as_u16()));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("text/html")
            .to_owned();
        if !is_text(&content_type) {
            return Fetched::Unsupported(mime_of(&content_type));
        }
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_bytes) {
            return Fetched::TooLarge;
        }
        let final_url = response.url().to_string();
        let mut bytes = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(chunk) => {
                    if bytes.len() as u64 + chunk.len() as u64 > self.max_bytes {
                        return Fetched::TooLarge;
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Err(e) => return classify_error(&e),
            }
        }
        Fetched::Page(Page {
            final_url,
            status: status.as_u16(),
            body: decode(&bytes, &content_type),
            content_type: mime_of(&content_type),
            bytes: bytes.len() as u64,
        })
    }
}

fn is_block(status: StatusCode) -> bool {
    matches!(status.as_u16(), 401 | 403 | 429 | 503)
}

fn classify_error(e: &reqwest::Error) -> Fetched {
    let text = trawl_pipeline::error::describe(e);
    if text.contains("refused:") || e.is_redirect() || e.is_builder() {
        Fetched::Failed(text)
    } else if e.is_timeout() {
        Fetched::Transient(format!("timed out: {text}"))
    } else {
        Fetched::Transient(text)
    }
}

fn mime_of(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Types passed to clean as text. Files (PDF, DOCX …) are the file-extraction work of a later
/// increment and end as `unsupported` until then.
fn is_text(content_type: &str) -> bool {
    let mime = mime_of(content_type);
    mime.starts_with("text/")
        || matches!(
            mime.as_str(),
            "application/xhtml+xml" | "application/json" | "application/xml"
        )
}

/// Decodes with the charset of the header, else of a `<meta>` in the first 1 KiB, else a BOM,
/// else UTF-8; undecodable bytes become U+FFFD rather than failing the page.
pub fn decode(bytes: &[u8], content_type: &str) -> String {
    let label = charset_param(content_type).or_else(|| {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
        let at = head.find("charset=")?;
        let rest = head[at + 8..].trim_start_matches(['"', '\'']);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        Some(rest[..end].to_owned())
    });
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset")).then(|| v.trim().trim_matches('"').to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_declared_and_sniffed_charsets() {
        assert_eq!(decode(b"caf\xe9", "text/html; charset=iso-8859-1"), "café");
        assert_eq!(
            decode(b"<meta charset=\"windows-1252\">caf\xe9", "text/html"),
            "<meta charset=\"windows-1252\">café"
        );
        assert_eq!(decode("café".as_bytes(), "text/html"), "café");
        assert_eq!(
            decode(b"bad \xff byte", "text/html; charset=utf-8"),
            "bad \u{fffd} byte"
        );
    }

    #[test]
    fn classifies_content_types() {
        assert!(is_text("text/html; charset=utf-8"));
        assert!(is_text("application/xhtml+xml"));
        assert!(!is_text("application/pdf"));
        assert_eq!(mime_of("Text/HTML; charset=x"), "text/html");
    }
}

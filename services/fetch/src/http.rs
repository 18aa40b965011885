//! Plain-HTTP fetching, levels 0 and 1.
//!
//! Level 0 is an honest request (`User-Agent: <token> (+research)`); level 1 looks like a
//! browser's (user agent, Accept, Accept-Language, a cookie jar, HTTP/2 when the server offers
//! it, a referrer on redirects). Both are bounded: a total time limit (slow drips end there), an
//! idle limit between reads (stalls end there), at most `max_redirects` hops each re-checked by
//! the SSRF guard, and at most `max_bytes` of body after decompression (so a compression bomb
//! stops at the cap, it is never inflated whole; a file whose parts inflate past the converter's
//! caps, a zip bomb, ends `too_large` the same way). Environment proxies are ignored: they would
//! bypass the guard. Every response goes through [`block::detect`]; bodies that are not HTML
//! are told apart by [`files::sniff`] and converted to text by [`files::convert`].

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{
    HeaderMap, HeaderValue, ACCEPT, ACCEPT_LANGUAGE, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE,
    ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use reqwest::redirect::Policy;
use trawl_config::FetchConfig;
use trawl_messages::Domains;
use url::Url;

use crate::block::{self, Block};
use trawl_files::{self as files, decode, mime_of, tld_of, Kind};
use trawl_guard::{refusal_in, resolver, Guard, Refusal};

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
    /// What a later request for the same page may send to ask whether it changed.
    pub validators: Validators,
    /// The response may be kept for others (no `Cache-Control: no-store` or `private`).
    pub storable: bool,
}

/// A response's validators, sent back in a conditional request (RFC 9110 §13).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Validators {
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    fn of(headers: &HeaderMap) -> Validators {
        let text = |name| {
            (headers
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok()))
            .map(str::to_owned)
        };
        Validators {
            etag: text(ETAG),
            last_modified: text(LAST_MODIFIED),
        }
    }
}

/// Whether a response with these headers may be kept and served to others: not when it says
/// `no-store` or `private` (RFC 9111 §5.2.2), which a shared cache must honour.
fn storable(headers: &HeaderMap) -> bool {
    !(headers.get_all(CACHE_CONTROL).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|d| {
            d.trim()
                .split('=')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .any(|d| d == "no-store" || d == "private")
}

#[derive(Debug)]
pub enum Fetched {
    Page(Page),
    /// A conditional request's answer: the copy the request named is still the page (304).
    NotModified,
    /// The site refused us, or answered with a stand-in for the page; `retry_after` from its
    /// header.
    Blocked {
        block: Block,
        retry_after: Option<Duration>,
    },
    /// Worth another attempt later (5xx, connection errors).
    Transient(String),
    /// Will not change (404, too many redirects, timeouts …).
    Failed(String),
    /// Refused by the SSRF guard: the URL, a redirect hop or every address of its host.
    Refused(Refusal),
    TooLarge,
    Unsupported(String),
}

tokio::task_local! {
    /// The domain filter of the task being fetched ([`Fetcher::get_within`]): the redirect
    /// policy is built once per client, and reads the filter of the request it follows here.
    static DOMAINS: Domains;
}

/// Why a redirect to `url` leaves the fetching task's domains, if it does.
fn off_domain(url: &Url) -> Option<String> {
    (DOMAINS.try_with(|d| d.refusal_of_url(url.as_str()))).unwrap_or(None)
}

pub struct Fetcher {
    levels: [reqwest::Client; 2],
    guard: Guard,
    max_bytes: u64,
    idle: Duration,
    /// robots.txt rules this process read lately, in front of the store's cache.
    pub(crate) robots: Box<crate::robots::Memo>,
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
            let builder = if level == 0 {
                trawl_http::builder()
            } else {
                trawl_http::builder().cookie_store(true).referer(true)
            };
            builder
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
                    } else if let Some(why) = off_domain(attempt.url()) {
                        attempt.error(format!("redirect not followed: {why}"))
                    } else {
                        attempt.follow()
                    }
                }))
                .build()
        };
        Ok(Fetcher {
            levels: [build(0)?, build(1)?],
            robots: Default::default(),
            guard,
            max_bytes: config.max_bytes,
            idle: Duration::from_secs(config.idle_timeout_secs),
        })
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The honest client, also used for robots.txt.
    pub fn client(&self) -> &reqwest::Client {
        &self.levels[0]
    }

    /// [`get_if`](Self::get_if), following redirects only within `domains`: a hop outside them
    /// is not requested, and the page fails with why.
    pub async fn get_within(
        &self,
        url: &Url,
        level: u8,
        domains: &Domains,
        validators: &Validators,
    ) -> Fetched {
        if domains.is_empty() {
            return self.get_if(url, level, validators).await;
        }
        (DOMAINS.scope(domains.clone(), self.get_if(url, level, validators))).await
    }

    pub async fn get(&self, url: &Url, level: u8) -> Fetched {
        self.get_if(url, level, &Validators::default()).await
    }

    /// The page at `url`, or [`Fetched::NotModified`] when `validators` (a cached copy's)
    /// still hold.
    pub async fn get_if(&self, url: &Url, level: u8, validators: &Validators) -> Fetched {
        let response = match self.send(url, level, validators).await {
            Ok(response) => response,
            Err(ended) => return ended,
        };
        let status = response.status();
        let headers = response.headers().clone();
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let retry_after = header("retry-after").and_then(parse_retry_after);
        if status == reqwest::StatusCode::NOT_MODIFIED && !validators.is_empty() {
            return Fetched::NotModified;
        }
        if let Some(block) = block::detect(status.as_u16(), header, "", false) {
            return Fetched::Blocked { block, retry_after };
        }
        if status.is_server_error() {
            return Fetched::Transient(format!("http {}", status.as_u16()));
        }
        if !status.is_success() {
            return Fetched::Failed(format!("http {}", status.as_u16()));
        }
        let content_type = header(CONTENT_TYPE.as_str()).unwrap_or("").to_owned();
        let final_url = response.url().clone();
        if files::hopeless(&content_type, &final_url) {
            return Fetched::Unsupported(mime_of(&content_type));
        }
        let declared = header(CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_bytes) {
            return Fetched::TooLarge;
        }
        let bytes = match self.read_body(response).await {
            Ok(bytes) => bytes,
            Err(ended) => return ended,
        };
        // The whole body: a ZIP is told to be a DOCX by an entry's name, not its first bytes.
        let kind = files::sniff(&bytes, &content_type, &final_url);
        let size = bytes.len() as u64;
        let page = |content_type: String, body: String| {
            Fetched::Page(Page {
                final_url: final_url.to_string(),
                status: status.as_u16(),
                content_type,
                body,
                bytes: size,
                validators: Validators::of(&headers),
                storable: storable(&headers),
            })
        };
        match kind {
            Kind::Html => {
                let body = decode(&bytes, &content_type, tld_of(&final_url).as_deref());
                // Up to `max_bytes` that the page will not need again.
                drop(bytes);
                match block::detect(status.as_u16(), header, &body, false) {
                    Some(block) => Fetched::Blocked { block, retry_after },
                    None => page("text/html".into(), body),
                }
            }
            Kind::Unsupported(mime) => Fetched::Unsupported(mime),
            kind => {
                // Parsing a PDF is CPU work: keep it off the threads that drive I/O.
                let ct = content_type.clone();
                let converted =
                    tokio::task::spawn_blocking(move || files::convert(&kind, &bytes, &ct)).await;
                match converted {
                    Ok(Ok(c)) => page(c.mime.clone(), c.titled()),
                    Ok(Err(files::FileError::Unsupported(mime))) => Fetched::Unsupported(mime),
                    Ok(Err(files::FileError::TooLarge(_))) => Fetched::TooLarge,
                    Ok(Err(e)) => Fetched::Failed(e.to_string()),
                    Err(e) => Fetched::Failed(format!("file conversion panicked: {e}")),
                }
            }
        }
    }

    /// The request for `url` at `level` (conditional when `validators` are given), its
    /// response counted.
    async fn send(
        &self,
        url: &Url,
        level: u8,
        validators: &Validators,
    ) -> Result<reqwest::Response, Fetched> {
        self.guard.check_url(url).map_err(Fetched::Refused)?;
        let client = &self.levels[usize::from(level.min(1))];
        let mut request = client.get(url.clone());
        if let Some(etag) = &validators.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(date) = &validators.last_modified {
            request = request.header(IF_MODIFIED_SINCE, date);
        }
        let response = request.send().await;
        let status = response.as_ref().ok().map(|r| r.status().as_u16());
        crate::metrics::response(level, status);
        response.map_err(|e| classify_error(&e))
    }

    /// The body, at most `max_bytes` after decompression, with no gap longer than the idle
    /// limit between reads.
    async fn read_body(&self, response: reqwest::Response) -> Result<Vec<u8>, Fetched> {
        let mut bytes = Vec::new();
        let mut stream = response.bytes_stream();
        loop {
            let next = tokio::time::timeout(self.idle, stream.next())
                .await
                .map_err(|_| {
                    Fetched::Failed(format!(
                        "idle timeout: no data for {} s",
                        self.idle.as_secs_f32()
                    ))
                })?;
            match next {
                None => return Ok(bytes),
                Some(Ok(chunk)) => {
                    if bytes.len() as u64 + chunk.len() as u64 > self.max_bytes {
                        return Err(Fetched::TooLarge);
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Some(Err(e)) => return Err(classify_error(&e)),
            }
        }
    }
}

/// `Retry-After` as seconds or an HTTP date, capped at an hour: a longer hold is the site
/// asking not to be crawled today, which the escalation and the deadline handle better.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    let secs = match value.parse::<u64>() {
        Ok(secs) => secs,
        Err(_) => {
            let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
            (at.timestamp() - chrono::Utc::now().timestamp()).max(0) as u64
        }
    };
    Some(Duration::from_secs(secs.min(3600)))
}

fn classify_error(e: &reqwest::Error) -> Fetched {
    if let Some(refusal) = refusal_in(e) {
        return Fetched::Refused(refusal.clone());
    }
    let text = trawl_pipeline::error::describe(e);
    if e.is_timeout() {
        // A server that has not finished in the time limit will not finish on a retry either.
        Fetched::Failed(format!("timeout: {text}"))
    } else if e.is_redirect() || e.is_builder() {
        Fetched::Failed(text)
    } else {
        Fetched::Transient(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_store_and_private_responses_are_not_kept_for_others() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(CACHE_CONTROL, HeaderValue::from_str(value).unwrap());
            storable(&headers)
        };
        assert!(storable(&HeaderMap::new()));
        assert!(with("max-age=600, public"));
        assert!(!with("no-store"));
        assert!(!with("max-age=0, Private"));
        assert!(!with("private=\"set-cookie\""));
        // `no-cache` asks for revalidation, which the cache does past its max age anyway.
        assert!(with("no-cache"));
    }

    #[test]
    fn reads_retry_after_as_seconds_or_a_date() {
        assert_eq!(parse_retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("99999"), Some(Duration::from_secs(3600)));
        let soon = (chrono::Utc::now() + chrono::Duration::seconds(120)).to_rfc2822();
        let d = parse_retry_after(&soon).unwrap();
        assert!(
            d > Duration::from_secs(100) && d <= Duration::from_secs(120),
            "{d:?}"
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(mime_of("Text/HTML; charset=x"), "text/html");
    }
}

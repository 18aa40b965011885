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
use crate::files::{self, mime_of, Kind};
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
                    Ok(Ok(c)) => page(c.mime, c.text),
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

/// Decodes with a BOM's encoding, else the header's charset, else a `<meta>` charset in the
/// first 1 KiB, else UTF-8 when the bytes are UTF-8, else what Firefox's detector (chardetng)
/// makes of them, helped by the top-level domain `tld` the page came from (`ru`, `jp`);
/// undecodable bytes become U+FFFD rather than failing the page.
///
/// Two departures from taking the header at its word, both for pages that would otherwise come
/// out as replacement characters: a label no encoding answers to is passed over, and a header
/// saying UTF-8 over bytes that are not UTF-8 (a server-wide default over an old page) gives way
/// to the page's own `<meta>`, or to the detector. A `<meta>` naming UTF-16 means UTF-8, as in
/// browsers: the bytes were readable enough to find it.
///
/// NUL and the other C0 controls an HTML parser never shows (all but tab, line feed, form feed
/// and carriage return) are removed: each would cost six bytes once the page travels as JSON.
pub fn decode(bytes: &[u8], content_type: &str, tld: Option<&str>) -> String {
    use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};
    let known = |label: String| Encoding::for_label(label.trim().as_bytes());
    let meta = || {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
        let at = head.find("charset=")?;
        let rest = head[at + 8..].trim_start_matches(['"', '\'']);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        known(rest[..end].to_owned()).map(|e| {
            if e == UTF_16LE || e == UTF_16BE {
                UTF_8
            } else {
                e
            }
        })
    };
    let unlabelled = || unlabelled(bytes, tld);
    let encoding = match charset_param(content_type).and_then(known) {
        Some(e) if e == UTF_8 && std::str::from_utf8(bytes).is_err() => {
            meta().unwrap_or_else(unlabelled)
        }
        Some(e) => e,
        None => meta().unwrap_or_else(unlabelled),
    };
    // `decode` looks for a BOM first and drops it.
    let (text, _, _) = encoding.decode(bytes);
    let hidden = |c: char| matches!(c, '\0'..='\x08' | '\x0b' | '\x0e'..='\x1f' | '\x7f');
    if text.contains(hidden) {
        text.chars().filter(|&c| !hidden(c)).collect()
    } else {
        text.into_owned()
    }
}

/// The encoding of bytes that do not say theirs (or say UTF-8 and are not): UTF-8 when they
/// are; the detector's guess when it is a multi-byte encoding that reads them without an
/// error (Shift_JIS, EUC-JP, GBK, Big5, EUC-KR: their structure rarely holds by chance, while
/// such text often forms a few UTF-8 sequences by chance); otherwise UTF-8 when it is UTF-8
/// but for a few stray bytes, else the guess.
fn unlabelled(bytes: &[u8], tld: Option<&str>) -> &'static encoding_rs::Encoding {
    if std::str::from_utf8(bytes).is_ok() {
        return encoding_rs::UTF_8;
    }
    let guess = detect(bytes, tld);
    let reads = || (guess.decode_without_bom_handling_and_without_replacement(bytes)).is_some();
    if !guess.is_single_byte() && reads() || !mostly_utf8(bytes) {
        guess
    } else {
        encoding_rs::UTF_8
    }
}

/// UTF-8 but for a few stray bytes: some characters beyond ASCII read as UTF-8, and at most
/// eight broken sequences for each. Text in a single-byte legacy encoding almost never forms
/// UTF-8 sequences (a letter beyond ASCII is followed by a space or another such letter, not
/// by a continuation byte), and a UTF-8 page with stray bytes reads better with a few U+FFFD
/// than decoded as a legacy encoding throughout.
fn mostly_utf8(bytes: &[u8]) -> bool {
    let (mut read, mut broken) = (0usize, 0usize);
    for chunk in bytes.utf8_chunks() {
        read += chunk.valid().chars().filter(|c| !c.is_ascii()).count();
        broken += usize::from(!chunk.invalid().is_empty());
    }
    read > 0 && broken <= read * 8
}

/// The detector's guess from the first [`DETECT_BYTES`]: enough text for its statistics, and,
/// at about 70 ns a byte, at most about a millisecond however large the page.
fn detect(bytes: &[u8], tld: Option<&str>) -> &'static encoding_rs::Encoding {
    use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
    // ISO-2022-JP is left out, as browsers do: its escapes can smuggle ASCII past a filter.
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(&bytes[..bytes.len().min(DETECT_BYTES)], false);
    // The detector panics on a label with a period, upper case or non-ASCII.
    let tld = tld.filter(|t| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    detector.guess(tld.map(str::as_bytes), Utf8Detection::Deny)
}

const DETECT_BYTES: usize = 16 * 1024;

/// The last label of `url`'s host, lower case, for [`decode`]'s detector.
pub fn tld_of(url: &url::Url) -> Option<String> {
    let host = url.host_str()?.trim_end_matches('.');
    Some(host.rsplit('.').next()?.to_ascii_lowercase())
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
    fn decodes_declared_and_sniffed_charsets() {
        assert_eq!(
            decode(b"caf\xe9", "text/html; charset=iso-8859-1", None),
            "café"
        );
        assert_eq!(
            decode(b"<meta charset=\"windows-1252\">caf\xe9", "text/html", None),
            "<meta charset=\"windows-1252\">café"
        );
        assert_eq!(decode("café".as_bytes(), "text/html", None), "café");
    }

    /// Pages that declare no charset, or one their bytes are not in, come out as the text they
    /// are: Firefox's detector reads their statistics (and the page's top-level domain).
    #[test]
    fn undeclared_legacy_encodings_are_detected() {
        let texts = [
            (
                encoding_rs::WINDOWS_1251,
                "ru",
                "Москва - столица России, крупнейший по численности населения город страны. \
                 Город расположен на реке Москве в центре Восточно-Европейской равнины.",
            ),
            (
                encoding_rs::KOI8_R,
                "ru",
                "Москва - столица России, крупнейший по численности населения город страны. \
                 Город расположен на реке Москве в центре Восточно-Европейской равнины.",
            ),
            (
                encoding_rs::SHIFT_JIS,
                "jp",
                "東京は日本の首都であり、世界有数の大都市である。人口は約千四百万人で、\
                 政治と経済の中心地となっている。",
            ),
            (
                encoding_rs::EUC_JP,
                "jp",
                "東京は日本の首都であり、世界有数の大都市である。人口は約千四百万人で、\
                 政治と経済の中心地となっている。",
            ),
            (
                encoding_rs::GBK,
                "cn",
                "北京是中华人民共和国的首都，是全国的政治中心、文化中心，也是世界著名古都。",
            ),
            (
                encoding_rs::EUC_KR,
                "kr",
                "서울은 대한민국의 수도이며 최대 도시이다. 한강을 사이에 두고 남북으로 나뉜다.",
            ),
            (
                encoding_rs::WINDOWS_1252,
                "fr",
                "Le château se trouve près de la forêt ; à côté, un café où l'on mange des crêpes.",
            ),
            (
                encoding_rs::ISO_8859_7,
                "gr",
                "Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας, με μακρά ιστορία.",
            ),
        ];
        for (encoding, tld, text) in texts {
            let page = format!("<html><body><p>{text}</p></body></html>");
            let (bytes, _, unmappable) = encoding.encode(&page);
            assert!(!unmappable, "{} cannot hold the sample", encoding.name());
            for content_type in ["text/html", "text/html; charset=utf-8"] {
                for tld in [Some(tld), None] {
                    assert_eq!(
                        decode(&bytes, content_type, tld),
                        page,
                        "{} under {content_type:?} from {tld:?}",
                        encoding.name()
                    );
                }
            }
        }
    }

    /// Bytes no detector reads, and top-level domains the detector would refuse, give a
    /// best-effort text, never a panic.
    #[test]
    fn hostile_bytes_and_odd_domains_never_panic() {
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for tld in [
            None,
            Some("RU"),
            Some("xn--p1ai"),
            Some("рф"),
            Some("co.uk"),
            Some(""),
        ] {
            let text = decode(&noise, "text/html", tld);
            assert!(!text.is_empty());
        }
        let url = url::Url::parse("http://Example.CO.UK./page").unwrap();
        assert_eq!(tld_of(&url).as_deref(), Some("uk"));
    }

    #[test]
    fn a_wrong_or_unknown_header_charset_gives_way_to_the_meta() {
        let latin = b"<meta charset=\"windows-1252\">caf\xe9 \x93quoted\x94";
        let read = "<meta charset=\"windows-1252\">café “quoted”";
        assert_eq!(decode(latin, "text/html; charset=utf-8", None), read);
        assert_eq!(decode(latin, "text/html; charset=x-klingon", None), read);
        // A header naming another encoding is still taken at its word.
        assert_eq!(
            decode(
                b"<meta charset=utf-8>caf\xe9",
                "text/html; charset=iso-8859-1",
                None
            ),
            "<meta charset=utf-8>café"
        );
        // A page that is UTF-8 but for a stray byte stays UTF-8.
        assert_eq!(
            decode(
                &["naïve \u{2014} ".as_bytes(), b"\xff"].concat(),
                "text/html; charset=utf-8",
                None
            ),
            "naïve \u{2014} \u{fffd}"
        );
        // A few characters beyond ASCII and more stray bytes than them: still UTF-8.
        let stray = b"The na\xc3\xafve fa\xc3\xa7ade \x80 \xc3 \xff\xfe se\xc3\xb1ora";
        assert_eq!(
            decode(stray, "text/html; charset=utf-8", None),
            "The naïve façade \u{fffd} \u{fffd} \u{fffd}\u{fffd} señora"
        );
        assert_eq!(
            decode(b"<meta charset=utf-16>caf\xc3\xa9", "text/html", None),
            "<meta charset=utf-16>café"
        );
        assert_eq!(
            decode(
                b"\xef\xbb\xbfcaf\xc3\xa9",
                "text/html; charset=iso-8859-1",
                None
            ),
            "café"
        );
    }

    #[test]
    fn controls_a_parser_never_shows_are_removed() {
        assert_eq!(
            decode(b"a\0b\x01\x7f c\td\r\n\x0ce", "text/html", None),
            "ab c\td\r\n\x0ce"
        );
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

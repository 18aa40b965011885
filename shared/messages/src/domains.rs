//! Domain filters: the hosts a job may read, from its `include_domains` and `exclude_domains`.
//!
//! A domain matches itself and every subdomain: `example.com` takes `www.example.com` and
//! `example.com`, not `badexample.com`; `gov` takes every `.gov` host. An excluded domain wins
//! over an included one (`include: example.com, exclude: ads.example.com`). Search asks the
//! providers for these domains where they take them, and every later step checks again (the
//! results, a job's own `urls`, every redirect hop and every crawled link), since a provider's
//! own filter is a hint: what a filter refuses is never fetched nor cited.

use serde::{Deserialize, Serialize};

/// A job's domain filter; empty lists filter nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domains {
    /// When not empty, only hosts of these domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Never hosts of these domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

/// Why a domain was refused, naming what would be right.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{given:?} is not a domain: {why}")]
pub struct DomainError {
    pub given: String,
    pub why: &'static str,
}

/// What a filter domain may be, as the API's document states it: letters, digits and hyphens
/// in dot-separated labels, with an optional leading `*.` or `.` and trailing dot.
pub const DOMAIN_PATTERN: &str = r"^(\*\.|\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?$";

/// `given` as a filter domain: lower-case, without a leading `*.` or `.` or a trailing dot.
/// Exactly what [`DOMAIN_PATTERN`] matches is taken. A URL is refused rather than matching
/// nothing, so `https://example.com/news` is named at submission; an international name is
/// written in its ASCII (`xn--`) form, which is how hosts reach the filter.
pub fn domain(given: &str) -> Result<String, DomainError> {
    let refuse = |why| DomainError {
        given: given.to_owned(),
        why,
    };
    let d = given
        .strip_prefix("*.")
        .or(given.strip_prefix('.'))
        .unwrap_or(given);
    let d = d.strip_suffix('.').unwrap_or(d);
    if d.is_empty() {
        return Err(refuse("write a domain such as example.com"));
    }
    if d.contains("://") || d.contains(['/', '@', '?', '#']) {
        return Err(refuse(
            "write the host alone, such as example.com, not a URL",
        ));
    }
    if d.contains(':') {
        return Err(refuse("write the host without a port"));
    }
    if !d.is_ascii() {
        return Err(refuse(
            "write an international name in its ASCII form (xn--…), as hosts are compared",
        ));
    }
    let label =
        |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !d.split('.').all(label) {
        return Err(refuse(
            "use letters, digits, hyphens and dots, such as example.com or gov",
        ));
    }
    Ok(d.to_ascii_lowercase())
}

/// A string schema of the API's document: what matches `pattern`, such as `example`.
#[cfg(feature = "openapi")]
fn string_schema(
    pattern: &str,
    example: &str,
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    (ObjectBuilder::new().schema_type(Type::String))
        .pattern(Some(pattern))
        .examples([example])
        .into()
}

/// What the API's document says an `include_domains` or `exclude_domains` item is.
#[cfg(feature = "openapi")]
pub struct DomainName;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for DomainName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(DOMAIN_PATTERN, "example.com")
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for DomainName {}

/// What the API's document says a `urls` item is: an http or https URL (whether it parses as
/// one is `check_task`'s call).
#[cfg(feature = "openapi")]
pub struct HttpUrl;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for HttpUrl {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        string_schema(
            r"^[Hh][Tt][Tt][Pp][Ss]?://\S+$",
            "https://example.com/report",
        )
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for HttpUrl {}

/// Whether `host` is `domain` or one of its subdomains (both lower-case).
fn within(host: &str, domain: &str) -> bool {
    host.strip_suffix(domain)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
}

impl Domains {
    /// The filter of a job's options, each domain in its [`domain`] form; domains that are not
    /// (refused at submission) are left out.
    pub fn new(include: &[String], exclude: &[String]) -> Domains {
        let read = |list: &[String]| -> Vec<String> {
            let mut out: Vec<String> = list.iter().filter_map(|d| domain(d).ok()).collect();
            out.sort();
            out.dedup();
            out
        };
        Domains {
            include: read(include),
            exclude: read(exclude),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Why `host` may not be read, or `None` when it may.
    pub fn refusal(&self, host: &str) -> Option<String> {
        let host = bare(host);
        match self.refused(&host)? {
            Refused::Excluded(d) => Some(format!("{host} is in the job's excluded domain {d}")),
            Refused::Outside => Some(format!(
                "{host} is outside the job's domains ({})",
                self.include.join(", ")
            )),
        }
    }

    /// Whether `host` may be read: what [`refusal`](Self::refusal) decides, without writing
    /// why (every search result and crawled link is asked).
    pub fn allows(&self, host: &str) -> bool {
        self.is_empty() || self.refused(&bare(host)).is_none()
    }

    /// The rule `host` (lower-case, bare) breaks, if any.
    fn refused(&self, host: &str) -> Option<Refused<'_>> {
        if let Some(d) = self.exclude.iter().find(|d| within(host, d)) {
            return Some(Refused::Excluded(d));
        }
        (!self.include.is_empty() && !self.include.iter().any(|d| within(host, d)))
            .then_some(Refused::Outside)
    }

    /// Why `url` may not be read (a URL without a host may not be read by a filter), or `None`.
    /// A document of the job's own root (`doc://…`) is not on the web: no domain filter holds
    /// it back.
    pub fn refusal_of_url(&self, url: &str) -> Option<String> {
        if self.is_empty() || is_document(url) {
            return None;
        }
        match url::Url::parse(url)
            .ok()
            .as_ref()
            .and_then(url::Url::host_str)
        {
            Some(host) => self.refusal(host),
            None => Some(format!(
                "{url:?} has no host to check against the job's domains"
            )),
        }
    }

    /// Whether `url` may be read.
    pub fn allows_url(&self, url: &str) -> bool {
        self.is_empty()
            || is_document(url)
            || (url::Url::parse(url).ok().as_ref())
                .and_then(url::Url::host_str)
                .is_some_and(|host| self.allows(host))
    }
}

/// Whether `url` names a document of a job's documents root rather than a page of the web.
pub fn is_document(url: &str) -> bool {
    url.starts_with("doc://")
}

/// The rule a host breaks.
enum Refused<'a> {
    Excluded(&'a str),
    Outside,
}

/// `host` as filter domains are written: lower-case, without a trailing dot or the brackets a
/// URL puts around IPv6; borrowed when it already is (as hosts from a parsed URL are).
fn bare(host: &str) -> std::borrow::Cow<'_, str> {
    let host = host
        .trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']');
    match host.bytes().any(|b| b.is_ascii_uppercase()) {
        true => host.to_ascii_lowercase().into(),
        false => host.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> Domains {
        let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Domains::new(&own(include), &own(exclude))
    }

    #[test]
    fn a_jobs_own_documents_are_not_held_back_by_a_domain_filter() {
        let f = filter(&["example.com"], &["doc"]);
        assert_eq!(f.refusal_of_url("doc://filings/acme.pdf#page=4"), None);
        assert!(f.allows_url("doc://filings/acme.pdf"));
        assert!(f.refusal_of_url("https://elsewhere.org/").is_some());
    }

    #[test]
    fn a_domain_takes_itself_and_its_subdomains_only() {
        let f = filter(&["example.com", "gov"], &[]);
        assert!(f.allows("example.com"));
        assert!(f.allows("www.example.com"));
        assert!(f.allows("WWW.Example.COM."));
        assert!(f.allows("data.census.gov"));
        assert!(!f.allows("badexample.com"));
        assert!(!f.allows("example.com.evil.net"));
        assert!(!f.allows("gov.uk"));
        assert!(filter(&[], &[]).allows("anything.test"));
    }

    #[test]
    fn an_excluded_domain_wins_over_an_included_one() {
        let f = filter(&["example.com"], &["ads.example.com"]);
        assert!(f.allows("news.example.com"));
        assert!(!f.allows("x.ads.example.com"));
        assert_eq!(
            f.refusal("ads.example.com").unwrap(),
            "ads.example.com is in the job's excluded domain ads.example.com"
        );
        let only_out = filter(&[], &["pinterest.com"]);
        assert!(only_out.allows("example.org"));
        assert!(!only_out.allows("www.pinterest.com"));
    }

    #[test]
    fn urls_are_checked_by_their_host() {
        let f = filter(&["example.com"], &[]);
        assert!(f.allows_url("https://www.example.com/a?b=c"));
        assert!(!f.allows_url("https://example.com.evil.net/"));
        assert!(!f.allows_url("mailto:someone@example.com"));
        assert!(filter(&[], &[]).allows_url("not a url"));
    }

    #[test]
    fn domains_are_written_one_way_and_urls_are_refused() {
        let why = |d: &str| domain(d).unwrap_err().why;
        assert_eq!(domain("*.Example.COM.").unwrap(), "example.com");
        assert_eq!(domain(".gov").unwrap(), "gov");
        assert_eq!(domain("xn--bcher-kva.de").unwrap(), "xn--bcher-kva.de");
        assert!(why("bücher.de").contains("xn--"));
        assert_eq!(domain("127.0.0.1").unwrap(), "127.0.0.1");
        assert!(why("https://example.com/news").contains("not a URL"));
        assert!(why("example.com:8080").contains("port"));
        assert!(why("").contains("such as example.com"));
        assert!(why("a..b").contains("letters, digits"));
        assert!(why("exa mple.com").contains("letters, digits"));
        assert!(why(" example.com").contains("letters, digits"));
    }
}

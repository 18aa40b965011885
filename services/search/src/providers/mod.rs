//! Search providers. Each module speaks one provider's real wire format and turns one page of
//! its answer into [`Hit`]s; [`search_chain`] pages through a provider until the target count or
//! until it runs dry, and falls back to the next provider on an error, a timeout or an empty
//! first page.
//!
//! | name | module | key (environment) | paging |
//! |---|---|---|---|
//! | `searxng` | [`searxng`] | none | `pageno` |
//! | `duckduckgo` | [`duckduckgo`] | none (HTML endpoint) | `s` offset |
//! | `serper` | [`serper`] | `SERPER_API_KEY` | `page` |
//! | `serpapi` | [`serpapi`] | `SERPAPI_API_KEY` | `start` offset |
//! | `tavily` | [`tavily`] | `TAVILY_API_KEY` | one page; its `answer` becomes a source |
//! | `brave` | [`brave`] | `BRAVE_API_KEY` | `offset` (page index) |
//! | `newsapi` | [`newsapi`] | `NEWSAPI_API_KEY` | `page` |
//! | `bocha` | [`bocha`] | `BOCHA_API_KEY` | `page` |
//!
//! `documents` is the job's documents root ([`trawl_documents`]), searched by the stage beside
//! the web chain, not through it: a hybrid job reads both.

use std::collections::BTreeMap;
use std::time::Duration;
use trawl_messages::ProviderName;

use reqwest::header::HeaderValue;
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

pub mod bocha;
pub mod brave;
pub mod duckduckgo;
pub mod newsapi;
pub mod searxng;
pub mod serpapi;
pub mod serper;
pub mod tavily;

pub use trawl_messages::Freshness;
pub use trawl_text::Locale;

/// One request for one page of results.
#[derive(Clone, Debug)]
pub struct PageRequest<'a> {
    pub query: &'a str,
    /// 1-based page number.
    pub page: u32,
    /// Results wanted per page (providers may cap it).
    pub per_page: u32,
    pub freshness: Freshness,
    /// Ask the provider's news vertical where it has one.
    pub news: bool,
    /// The language (and region) results should be in, where the provider takes them.
    pub locale: &'a Locale,
    /// The job's domain filter, for providers that take it as parameters (Tavily, NewsAPI);
    /// those that read `site:` operators find them in `query`.
    pub domains: &'a trawl_messages::Domains,
}

/// The language parameters each provider takes, from a job's locale. Each provider spells
/// languages its own way, and some refuse a language they do not list (Brave answers 422), so
/// a language a provider does not take is left out rather than sent.
pub(crate) mod locale {
    use super::Locale;

    /// Google's `hl` (SerpAPI, Serper): the ISO code, Chinese by its script's region.
    pub fn google_hl(locale: &Locale) -> Option<String> {
        let code = known(locale)?;
        Some(match (code, locale.region.as_deref()) {
            ("zh", Some("tw" | "hk" | "mo")) => "zh-tw".into(),
            ("zh", _) => "zh-cn".into(),
            (code, _) => code.into(),
        })
    }

    /// Brave's `search_lang`, from the list its API accepts.
    pub fn brave_lang(locale: &Locale) -> Option<&'static str> {
        const TAKEN: &[&str] = &[
            "ar", "eu", "bn", "bg", "ca", "hr", "cs", "da", "nl", "en", "et", "fi", "fr", "gl",
            "de", "gu", "he", "hi", "hu", "is", "it", "kn", "ko", "lv", "lt", "ms", "ml", "mr",
            "nb", "pl", "pa", "ro", "ru", "sr", "sk", "sl", "es", "sv", "ta", "te", "th", "tr",
            "uk", "vi",
        ];
        let code = known(locale)?;
        let region = locale.region.as_deref();
        Some(match (code, region) {
            ("zh", Some("tw" | "hk" | "mo")) => "zh-hant",
            ("zh", _) => "zh-hans",
            ("ja", _) => "jp",
            ("pt", Some("br")) => "pt-br",
            ("pt", _) => "pt-pt",
            ("en", Some("gb")) => "en-gb",
            (code, _) => TAKEN.iter().find(|t| **t == code)?,
        })
    }

    /// NewsAPI's `language`, one of the fourteen it has; English when the question's language
    /// is unknown, as before languages were detected.
    pub fn newsapi_language(locale: &Locale) -> Option<&'static str> {
        const TAKEN: &[&str] = &[
            "ar", "de", "en", "es", "fr", "he", "it", "nl", "no", "pt", "ru", "sv", "ud", "zh",
        ];
        match locale.lang.code() {
            "und" => Some("en"),
            "nb" => Some("no"),
            "ur" => Some("ud"),
            code => TAKEN.iter().find(|t| **t == code).copied(),
        }
    }

    /// SearXNG's `language`: `de` or `de-DE`.
    pub fn searxng_language(locale: &Locale) -> Option<String> {
        let code = known(locale)?;
        Some(match &locale.region {
            Some(region) => format!("{code}-{}", region.to_ascii_uppercase()),
            None => code.into(),
        })
    }

    /// DuckDuckGo's region `kl`, country first (`de-de`, `br-pt`, `uk-en`, and `jp-jp`,
    /// `kr-kr` as it spells those): only with a region, which it needs.
    pub fn duckduckgo_region(locale: &Locale) -> Option<String> {
        let code = known(locale)?;
        let country = match locale.region.as_deref()? {
            "gb" => "uk",
            region => region,
        };
        let language = match code {
            "ja" => "jp",
            "ko" => "kr",
            code => code,
        };
        Some(format!("{country}-{language}"))
    }

    /// Google's and Brave's country (`gl`, `country`).
    pub fn country(locale: &Locale) -> Option<&str> {
        locale.region.as_deref()
    }

    fn known(locale: &Locale) -> Option<&'static str> {
        locale.lang.is_known().then(|| locale.lang.code())
    }
}

/// One search hit as the provider gave it, in rank order within its page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub url: String,
    pub title: String,
    pub snippet: String,
}

impl Hit {
    /// A hit, unless the entry has no URL (story clusters, knowledge cards).
    pub(crate) fn new(url: Option<String>, title: String, snippet: String) -> Option<Hit> {
        Some(Hit {
            url: url.filter(|u| !u.is_empty())?,
            title,
            snippet,
        })
    }
}

/// One page of a provider's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultPage {
    pub hits: Vec<Hit>,
    /// A direct answer the provider wrote itself (Tavily), kept as a source of kind `answer`.
    pub answer: Option<String>,
    /// False when the provider says there is nothing after this page.
    pub more: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("{provider}: request failed: {reason}")]
    Request {
        provider: &'static str,
        reason: String,
    },
    #[error("{provider}: timed out")]
    Timeout { provider: &'static str },
    #[error("{provider}: HTTP {status}")]
    Status { provider: &'static str, status: u16 },
    #[error("{provider}: rate limited{}", .retry_after.map(|d| format!(" (retry after {} s)", d.as_secs())).unwrap_or_default())]
    RateLimited {
        provider: &'static str,
        retry_after: Option<Duration>,
    },
    #[error("{provider}: unexpected response: {reason}")]
    Malformed {
        provider: &'static str,
        reason: String,
    },
}

impl ProviderError {
    /// The error without the provider's name, for records that name the provider beside it.
    pub fn detail(&self) -> String {
        let whole = self.to_string();
        match whole.split_once(": ") {
            Some((_, detail)) => detail.to_owned(),
            None => whole,
        }
    }
}

impl ResultPage {
    pub(crate) fn of(hits: Vec<Hit>, more: bool) -> ResultPage {
        ResultPage {
            hits,
            answer: None,
            more,
        }
    }
}

impl ProviderError {
    /// The bounded metric label of this error.
    pub fn label(&self) -> &'static str {
        match self {
            ProviderError::Request { .. } => "request_error",
            ProviderError::Timeout { .. } => "timeout",
            ProviderError::Status { .. } => "http_error",
            ProviderError::RateLimited { .. } => "rate_limited",
            ProviderError::Malformed { .. } => "malformed",
        }
    }

    /// Classifies a reqwest failure. The URL is left out: a provider that takes its key in the
    /// query string must not leak it.
    fn from_reqwest(provider: &'static str, e: reqwest::Error) -> ProviderError {
        if e.is_timeout() {
            ProviderError::Timeout { provider }
        } else {
            ProviderError::Request {
                provider,
                reason: trawl_pipeline::error::describe(&e.without_url()),
            }
        }
    }
}

/// Parses a JSON body, turning a body that is not the expected JSON (HTML error pages,
/// truncated bodies) into [`ProviderError::Malformed`].
pub(crate) fn json<T: serde::de::DeserializeOwned>(
    provider: &'static str,
    body: &[u8],
) -> Result<T, ProviderError> {
    serde_json::from_slice(body).map_err(|e| {
        let head = String::from_utf8_lossy(&body[..body.len().min(80)]).replace('\n', " ");
        ProviderError::Malformed {
            provider,
            reason: format!("{e} (body starts {head:?})"),
        }
    })
}

/// A header value that carries a secret: marked sensitive, and refused without showing it
/// (errors end up in logs and search.json).
pub(crate) fn secret(provider: &'static str, value: &str) -> Result<HeaderValue, ProviderError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| ProviderError::Request {
        provider,
        reason: "the API key is not a valid header value".into(),
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The window's name as most providers spell it (`day` … `year`); `None` for any time.
pub(crate) fn window(freshness: Freshness) -> Option<&'static str> {
    match freshness {
        Freshness::Any => None,
        Freshness::Day => Some("day"),
        Freshness::Week => Some("week"),
        Freshness::Month => Some("month"),
        Freshness::Year => Some("year"),
    }
}

/// Where a provider lives and how it authenticates.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Base URL without trailing slash, e.g. `https://google.serper.dev`.
    pub base_url: String,
    pub api_key: Option<String>,
}

/// One provider's wire format: the request for a page and the page in its answer. Sending,
/// status codes and errors are [`page`](trait.Provider.html#method.page)'s, the same for all.
pub trait Provider: Send + Sync {
    fn name(&self) -> &'static str;
    /// The request for one page; `None` when the provider has no such page (past its last), so
    /// nothing is sent.
    fn request(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<Option<reqwest::RequestBuilder>, ProviderError>;
    /// The page in a successful answer's body.
    fn read(&self, body: &[u8], request: &PageRequest<'_>) -> Result<ResultPage, ProviderError>;
    /// Whether the provider's engine reads `site:` and `-site:` operators in the query.
    fn takes_site_operators(&self) -> bool {
        false
    }
    /// Whether an error answer is the provider's way of saying the list has ended.
    fn ended(&self, _status: u16, _body: &[u8]) -> bool {
        false
    }
}

impl dyn Provider + '_ {
    /// One page of results: a 429 (with `Retry-After` seconds) and any other non-2xx answer are
    /// errors, unless the provider says the answer [ends](Provider::ended) the list.
    pub async fn page(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        let provider = self.name();
        let Some(builder) = self.request(http, request)? else {
            return Ok(ResultPage::default());
        };
        let fail = |e| ProviderError::from_reqwest(provider, e);
        let response = builder.send().await.map_err(fail)?;
        let status = response.status();
        let retry_after = (response.headers().get(reqwest::header::RETRY_AFTER))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = response.bytes().await.map_err(fail)?;
        match status.as_u16() {
            _ if status.is_success() => self.read(&body, request),
            code if self.ended(code, &body) => Ok(ResultPage::default()),
            429 => Err(ProviderError::RateLimited {
                provider,
                retry_after,
            }),
            code => Err(ProviderError::Status {
                provider,
                status: code,
            }),
        }
    }
}

/// Each provider's public endpoint and conventional key variable.
fn defaults(provider: ProviderName) -> (&'static str, Option<&'static str>) {
    match provider {
        ProviderName::Searxng => ("http://127.0.0.1:8888", None),
        ProviderName::Duckduckgo => ("https://html.duckduckgo.com", None),
        ProviderName::Serper => ("https://google.serper.dev", Some("SERPER_API_KEY")),
        ProviderName::Serpapi => ("https://serpapi.com", Some("SERPAPI_API_KEY")),
        ProviderName::Tavily => ("https://api.tavily.com", Some("TAVILY_API_KEY")),
        ProviderName::Brave => ("https://api.search.brave.com", Some("BRAVE_API_KEY")),
        ProviderName::Newsapi => ("https://newsapi.org", Some("NEWSAPI_API_KEY")),
        ProviderName::Bocha => ("https://api.bochaai.com", Some("BOCHA_API_KEY")),
        ProviderName::Documents => ("", None),
    }
}

/// Why a configured provider is not in the chain.
#[derive(Debug, PartialEq, Eq)]
pub enum Skipped {
    Unknown,
    /// `documents`: searched by the stage from the job's root, not over HTTP.
    Documents,
    MissingKey(String),
}

/// Where provider `name` is reached and with which key (from `env`), as configured.
fn endpoint(
    name: &str,
    config: &trawl_config::SearchConfig,
    env: &BTreeMap<String, String>,
) -> Result<(ProviderName, Endpoint), Skipped> {
    let provider = ProviderName::from_name(name).ok_or(Skipped::Unknown)?;
    if provider == ProviderName::Documents {
        return Err(Skipped::Documents);
    }
    let (default_url, default_key) = defaults(provider);
    let base_url = match (provider, config.endpoints.get(name)) {
        (_, Some(url)) => url.clone(),
        (ProviderName::Searxng, None) => config.searxng_url.clone(),
        (_, None) => default_url.to_owned(),
    };
    let base_url = base_url.trim_end_matches('/').to_owned();
    let api_key = match config
        .api_key_env
        .get(name)
        .map(String::as_str)
        .or(default_key)
    {
        Some(var) => match env.get(var).filter(|k| !k.trim().is_empty()) {
            Some(key) => Some(key.clone()),
            None => return Err(Skipped::MissingKey(var.to_owned())),
        },
        None => None,
    };
    Ok((provider, Endpoint { base_url, api_key }))
}

/// Why a provider could not answer a search now; see [`probe`].
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("no HTTP client: {0}")]
    NoClient(String),
    #[error("not a provider trawl knows")]
    Unknown,
    /// No key for the provider in the environment, by the variable to set.
    #[error("no API key: set {0}")]
    MissingKey(String),
    #[error("nothing answered at {url} within {} s", .within.as_secs_f32())]
    Timeout { url: String, within: Duration },
    /// Refused, or no such host: the innermost cause says which.
    #[error("nothing answers at {url} ({})", innermost(.source))]
    NoAnswer { url: String, source: reqwest::Error },
}

/// The last error of `e`'s chain of sources.
fn innermost(e: &reqwest::Error) -> &dyn std::error::Error {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause
}

/// Whether `names`, tried in order as the chain tries them, has a provider that could answer a
/// search now: the providers tried, each with the reason it could not (no key in the
/// environment, or nothing answering at its address within `within`), up to the first that
/// could. Any HTTP answer counts, so no query is spent, and the ones after it are not
/// contacted. `trawl run` stops in seconds with this, saying what to set, instead of retrying
/// providers that are not there.
pub async fn probe(
    names: &[String],
    config: &trawl_config::SearchConfig,
    env: &BTreeMap<String, String>,
    within: Duration,
) -> Vec<(String, Result<(), ProbeError>)> {
    let http = trawl_http::builder()
        .timeout(within)
        .redirect(reqwest::redirect::Policy::none())
        .build();
    let mut tried = Vec::new();
    for name in names {
        let answer = match &http {
            Ok(http) => reachable(http, name, config, env, within).await,
            Err(e) => Err(ProbeError::NoClient(e.to_string())),
        };
        let answered = answer.is_ok();
        tried.push((name.clone(), answer));
        if answered {
            break;
        }
    }
    tried
}

/// Whether anything answers HTTP at provider `name`'s address; see [`probe`].
async fn reachable(
    http: &reqwest::Client,
    name: &str,
    config: &trawl_config::SearchConfig,
    env: &BTreeMap<String, String>,
    within: Duration,
) -> Result<(), ProbeError> {
    let (_, endpoint) = match endpoint(name, config, env) {
        Ok(found) => found,
        Err(Skipped::Unknown) => return Err(ProbeError::Unknown),
        Err(Skipped::MissingKey(var)) => return Err(ProbeError::MissingKey(var)),
        // The documents root is not reached over HTTP: nothing to probe.
        Err(Skipped::Documents) => return Ok(()),
    };
    let url = endpoint.base_url;
    match http.get(&url).send().await {
        Ok(_) => Ok(()),
        Err(e) if e.is_timeout() => Err(ProbeError::Timeout { url, within }),
        Err(source) => Err(ProbeError::NoAnswer { url, source }),
    }
}

/// Builds provider `name` from config, reading its key from `env`.
pub fn build(
    name: &str,
    config: &trawl_config::SearchConfig,
    env: &BTreeMap<String, String>,
) -> Result<Box<dyn Provider>, Skipped> {
    let (provider, endpoint) = endpoint(name, config, env)?;
    Ok(match provider {
        ProviderName::Searxng => Box::new(searxng::Searxng(endpoint)),
        ProviderName::Duckduckgo => Box::new(duckduckgo::DuckDuckGo(endpoint)),
        ProviderName::Serper => Box::new(serper::Serper(endpoint)),
        ProviderName::Serpapi => Box::new(serpapi::SerpApi(endpoint)),
        ProviderName::Tavily => Box::new(tavily::Tavily(endpoint)),
        ProviderName::Brave => Box::new(brave::Brave(endpoint)),
        ProviderName::Newsapi => Box::new(newsapi::NewsApi(endpoint)),
        ProviderName::Bocha => Box::new(bocha::Bocha(endpoint)),
        ProviderName::Documents => return Err(Skipped::Documents),
    })
}

/// The configured providers that can run, by name; the others are logged once and skipped.
pub(crate) fn build_all(
    config: &trawl_config::SearchConfig,
    env: &BTreeMap<String, String>,
) -> BTreeMap<String, Box<dyn Provider>> {
    let mut out = BTreeMap::new();
    for name in config.providers.iter().chain(&config.news_providers) {
        if out.contains_key(name) {
            continue;
        }
        match build(name, config, env) {
            Ok(p) => {
                out.insert(name.clone(), p);
            }
            Err(Skipped::MissingKey(var)) => {
                info!(provider = %name, key = %var, "provider skipped: no API key in the environment")
            }
            Err(Skipped::Unknown) => warn!(provider = %name, "provider skipped: unknown name"),
            Err(Skipped::Documents) => {}
        }
    }
    out
}

/// Shared by the provider modules' tests: simweb over real HTTP on loopback.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Arc;
    use std::time::Duration;

    use trawl_integration_tests::simweb::{Corpus, Simweb};

    use super::{Endpoint, Freshness, PageRequest, Provider, ResultPage};

    pub async fn simweb() -> Simweb {
        Simweb::start(Arc::new(Corpus::generate()), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap()
    }

    /// An endpoint for the provider simweb serves under `/prefix`.
    pub fn endpoint(web: &Simweb, prefix: &str, key: Option<&str>) -> Endpoint {
        Endpoint {
            base_url: format!("{}/{prefix}", web.base_url()),
            api_key: key.map(str::to_owned),
        }
    }

    /// A client with a short timeout, so `simweb:slow` ends as a timeout quickly.
    pub fn http() -> reqwest::Client {
        reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .no_proxy()
            .build()
            .unwrap()
    }

    pub fn request(query: &str, page: u32) -> PageRequest<'_> {
        PageRequest {
            query,
            page,
            per_page: 10,
            freshness: Freshness::Any,
            news: false,
            locale: &NO_LOCALE,
            domains: &NO_DOMAINS,
        }
    }

    pub static NO_DOMAINS: trawl_messages::Domains = trawl_messages::Domains {
        include: Vec::new(),
        exclude: Vec::new(),
    };

    pub static NO_LOCALE: super::Locale = super::Locale {
        lang: trawl_text::Lang::UND,
        region: None,
    };

    /// A question simweb can answer, with its answer pages.
    pub fn question() -> trawl_integration_tests::simweb::Question {
        Corpus::generate().questions().remove(0)
    }

    /// The failure markers every provider maps alike, with the error label each must give.
    pub(crate) const MARKERS: &[(&str, &str)] = &[
        ("simweb:error", "http_error"),
        ("simweb:html", "malformed"),
        ("simweb:malformed", "malformed"),
        ("simweb:429", "rate_limited"),
        ("simweb:slow", "timeout"),
    ];

    /// What [`contract`] expects of one provider.
    pub struct Expect {
        /// Page 2 is a further page; false for Tavily, whose page 2 must be empty (and whose
        /// page 1 must then say there is no more).
        pub paged: bool,
        /// Queries with failure markers, and the error label each must give.
        pub markers: &'static [(&'static str, &'static str)],
        /// The provider's API key, which must not appear in any error text.
        pub key: Option<&'static str>,
    }

    impl Expect {
        /// A paged provider without a key, failing as [`MARKERS`] say.
        pub fn keyless() -> Expect {
            Expect {
                paged: true,
                markers: MARKERS,
                key: None,
            }
        }

        /// A paged provider with API key `key`, failing as [`MARKERS`] say.
        pub fn keyed(key: &'static str) -> Expect {
            Expect {
                key: Some(key),
                ..Expect::keyless()
            }
        }
    }

    /// Pages 1 and 2 of [`question`]'s query, for a provider's own further checks.
    pub struct Pages {
        pub first: ResultPage,
        pub second: ResultPage,
    }

    /// The checks every provider must pass against simweb: ten hits on page 1 with an answer
    /// page in the first five; a different page 2 (or, unpaged, an empty one); an empty last
    /// page for `simweb:empty`; an `http_error` from `keyless` (the provider without its key);
    /// the labels of `expect.markers`; and no error text that shows the key.
    pub async fn contract(
        provider: &dyn Provider,
        keyless: Option<&dyn Provider>,
        expect: Expect,
    ) -> Pages {
        let name = provider.name();
        let http = http();
        let q = question();
        let first = provider.page(&http, &request(&q.query, 1)).await.unwrap();
        assert_eq!(first.hits.len(), 10, "{name}: {first:?}");
        assert_eq!(first.more, expect.paged, "{name}: more on page 1");
        assert!(
            first
                .hits
                .iter()
                .take(5)
                .any(|h| q.answer_urls.contains(&h.url)),
            "{name}: no answer page in the first five hits"
        );
        let second = provider.page(&http, &request(&q.query, 2)).await.unwrap();
        if expect.paged {
            assert!(!second.hits.is_empty(), "{name}: page 2 is empty");
            assert_ne!(first.hits[0].url, second.hits[0].url, "{name}: page 2");
        } else {
            assert_eq!(second, ResultPage::default(), "{name}: page 2");
        }

        let empty = provider
            .page(&http, &request("simweb:empty", 1))
            .await
            .unwrap();
        assert!(
            empty.hits.is_empty() && !empty.more && empty.answer.is_none(),
            "{name}: {empty:?}"
        );

        let mut errors = Vec::new();
        if let Some(keyless) = keyless {
            let err = keyless
                .page(&http, &request(&q.query, 1))
                .await
                .unwrap_err();
            assert_eq!(err.label(), "http_error", "{name} without a key: {err}");
            errors.push(err);
        }
        for &(query, label) in expect.markers {
            let err = provider.page(&http, &request(query, 1)).await.unwrap_err();
            assert_eq!(err.label(), label, "{name}: {query}: {err}");
            errors.push(err);
        }
        if let Some(key) = expect.key {
            for err in &errors {
                assert!(!err.to_string().contains(key), "{name}: {err}");
            }
        }
        Pages { first, second }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    /// Tavily and NewsAPI take the job's domains as parameters; the others read `site:`
    /// operators, which the chain writes into their query.
    #[test]
    fn providers_that_filter_by_parameters_are_given_the_jobs_domains() {
        let ep = || Endpoint {
            base_url: "http://127.0.0.1:9".into(),
            api_key: Some("k".into()),
        };
        let domains = trawl_messages::Domains::new(&["gov".into()], &["ads.gov".into()]);
        let request = PageRequest {
            domains: &domains,
            ..request("zorbium", 1)
        };
        let built = |p: &dyn Provider| {
            (p.request(&testing::http(), &request).unwrap().unwrap())
                .build()
                .unwrap()
        };
        let tavily = built(&tavily::Tavily(ep()));
        let body: serde_json::Value =
            serde_json::from_slice(tavily.body().unwrap().as_bytes().unwrap()).unwrap();
        assert_eq!(body["include_domains"], serde_json::json!(["gov"]));
        assert_eq!(body["exclude_domains"], serde_json::json!(["ads.gov"]));
        let news = built(&newsapi::NewsApi(ep()));
        let params: BTreeMap<String, String> = news.url().query_pairs().into_owned().collect();
        assert_eq!(
            (
                params["domains"].as_str(),
                params["excludeDomains"].as_str()
            ),
            ("gov", "ads.gov")
        );
        assert!(searxng::Searxng(ep()).takes_site_operators());
        assert!(!tavily::Tavily(ep()).takes_site_operators());
    }

    /// Each provider is asked for the job's language and region in its own spelling, and a
    /// language it does not take is left out.
    #[test]
    fn providers_are_asked_for_the_jobs_language_their_way() {
        let at = |tag: &str| Locale::from_tag(tag).unwrap();
        let ep = || Endpoint {
            base_url: "http://127.0.0.1:9".into(),
            api_key: Some("k".into()),
        };
        let built = |p: &dyn Provider, locale: &Locale| {
            let request = PageRequest {
                locale,
                ..request("zorbium", 1)
            };
            p.request(&testing::http(), &request)
                .unwrap()
                .unwrap()
                .build()
                .unwrap()
        };
        let params = |r: &reqwest::Request| -> BTreeMap<String, String> {
            r.url().query_pairs().into_owned().collect()
        };
        let body = |r: &reqwest::Request| {
            String::from_utf8(r.body().unwrap().as_bytes().unwrap().to_vec()).unwrap()
        };

        let brave = params(&built(&brave::Brave(ep()), &at("pt-BR")));
        assert_eq!(
            (brave["search_lang"].as_str(), brave["country"].as_str()),
            ("pt-br", "BR")
        );
        assert_eq!(
            params(&built(&brave::Brave(ep()), &at("ja")))["search_lang"],
            "jp"
        );
        // Esperanto is not Brave's: nothing is sent, rather than a 422.
        assert!(!params(&built(&brave::Brave(ep()), &at("eo"))).contains_key("search_lang"));

        let serpapi = params(&built(&serpapi::SerpApi(ep()), &at("zh-TW")));
        assert_eq!(
            (serpapi["hl"].as_str(), serpapi["gl"].as_str()),
            ("zh-tw", "tw")
        );
        let serper = body(&built(&serper::Serper(ep()), &at("de-AT")));
        assert!(
            serper.contains(r#""hl":"de""#) && serper.contains(r#""gl":"at""#),
            "{serper}"
        );
        let searxng = params(&built(&searxng::Searxng(ep()), &at("fr-CA")));
        assert_eq!(searxng["language"], "fr-CA");
        let ddg = body(&built(&duckduckgo::DuckDuckGo(ep()), &at("es-MX")));
        assert!(ddg.contains("kl=mx-es"), "{ddg}");
        let ddg = body(&built(&duckduckgo::DuckDuckGo(ep()), &at("ja-JP")));
        assert!(ddg.contains("kl=jp-jp"), "{ddg}");
        assert!(!body(&built(&duckduckgo::DuckDuckGo(ep()), &at("es"))).contains("kl="));

        let news = |locale: &Locale| params(&built(&newsapi::NewsApi(ep()), locale));
        assert_eq!(news(&at("ru"))["language"], "ru");
        assert_eq!(news(&at("nb"))["language"], "no");
        assert_eq!(news(&Locale::default())["language"], "en");
        assert!(!news(&at("ja")).contains_key("language"));

        // A job without a known language sends none of these.
        let plain = params(&built(&serpapi::SerpApi(ep()), &Locale::default()));
        assert!(!plain.contains_key("hl") && !plain.contains_key("gl"));
    }

    /// Submission accepts the provider names of `PROVIDERS` alone: each must be one this stage
    /// builds, and no other name builds anything.
    #[test]
    fn the_submittable_providers_are_the_ones_built_here() {
        let config = trawl_config::SearchConfig::default();
        let env: BTreeMap<String, String> = ProviderName::ALL
            .iter()
            .filter_map(|&p| defaults(p).1)
            .map(|var| (var.to_owned(), "k".to_owned()))
            .collect();
        for name in trawl_messages::PROVIDERS {
            match *name {
                // Searched from the job's root by the stage, not built as an HTTP provider.
                "documents" => {
                    assert_eq!(build(name, &config, &env).err(), Some(Skipped::Documents))
                }
                _ => assert!(build(name, &config, &env).is_ok(), "{name}"),
            }
        }
        assert_eq!(build("nope", &config, &env).err(), Some(Skipped::Unknown));
    }

    /// A provider's error reads as a sentence beside the provider's name: the name once, and a
    /// Retry-After in seconds, not as Rust writes an `Option<Duration>`.
    #[test]
    fn errors_name_the_provider_once_and_read_as_sentences() {
        let status = ProviderError::Status {
            provider: "searxng",
            status: 502,
        };
        assert_eq!(status.to_string(), "searxng: HTTP 502");
        assert_eq!(status.detail(), "HTTP 502");
        let limited = ProviderError::RateLimited {
            provider: "brave",
            retry_after: Some(Duration::from_secs(2)),
        };
        assert_eq!(limited.detail(), "rate limited (retry after 2 s)");
        let limited = ProviderError::RateLimited {
            provider: "brave",
            retry_after: None,
        };
        assert_eq!(limited.detail(), "rate limited");
    }

    /// The probe tells an answering provider from one with no key and one with nothing at its
    /// address, without a search; every address here is on loopback.
    #[tokio::test]
    async fn probe_names_what_is_missing() {
        let web = simweb().await;
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_url = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let mut config = trawl_config::SearchConfig {
            searxng_url: web.base_url(),
            ..Default::default()
        };
        config.endpoints.insert("brave".into(), closed_url.clone());
        // duckduckgo comes after one that answers, so it is never contacted.
        let names: Vec<String> = ["serper", "brave", "searxng", "duckduckgo"]
            .map(String::from)
            .into();
        let env = BTreeMap::from([("BRAVE_API_KEY".to_owned(), "k".to_owned())]);
        let tried = probe(&names, &config, &env, Duration::from_secs(2)).await;
        assert_eq!(tried.len(), 3, "{tried:?}");
        assert_eq!(tried[0].0, "serper");
        assert_eq!(
            tried[0].1.as_ref().unwrap_err().to_string(),
            "no API key: set SERPER_API_KEY"
        );
        let brave = tried[1].1.as_ref().unwrap_err().to_string();
        assert!(
            brave.starts_with(&format!("nothing answers at {closed_url} (")),
            "{brave}"
        );
        assert_eq!(tried[2].0, "searxng");
        assert!(tried[2].1.is_ok());
    }

    #[tokio::test]
    async fn searxng_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &searxng::Searxng(Endpoint {
            base_url: web.base_url(),
            api_key: None,
        });
        contract(p, None, Expect::keyless()).await;
    }

    #[test]
    fn providers_without_keys_are_skipped() {
        let config = trawl_config::SearchConfig {
            providers: vec!["serper".into(), "searxng".into(), "nope".into()],
            news_providers: Vec::new(),
            ..Default::default()
        };
        let env = BTreeMap::new();
        assert_eq!(
            build("serper", &config, &env).err(),
            Some(Skipped::MissingKey("SERPER_API_KEY".into()))
        );
        assert_eq!(build("nope", &config, &env).err(), Some(Skipped::Unknown));
        let env: BTreeMap<String, String> = [("SERPER_API_KEY".to_string(), "k".to_string())]
            .into_iter()
            .collect();
        assert!(build("serper", &config, &env).is_ok());
        assert_eq!(
            build_all(&config, &BTreeMap::new())
                .keys()
                .collect::<Vec<_>>(),
            vec!["searxng"]
        );
    }
}

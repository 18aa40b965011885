//! Running a provider chain for one query: paging, caching, fallback.
//!
//! Providers are tried in order. Each is paged until `target` results, until it says there is
//! no more, or until a page comes back empty; an error, timeout or empty *first* page moves on to
//! the next provider (an error on a later page keeps what the earlier pages gave). Every page
//! answer is cached in the store per (provider, vertical, freshness, locale, page, query), so a repeated
//! batch makes no repeated provider calls. Every attempt is recorded for the work product.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tracing::warn;
use trawl_store::{Cache, Store};

use crate::metrics::{labels, METRICS};
use crate::providers::{Freshness, Hit, Locale, PageRequest, Provider, ProviderError, ResultPage};
use trawl_messages::record::RawResult;
use trawl_messages::Domains;

/// Most domains written into a query as `site:` operators: past that the query would be mostly
/// operators (engines cap a query's length), and the filter after the provider does the work.
const MAX_SITE_OPERATORS: usize = 8;

/// `query` with the filter's domains as the `site:` and `-site:` operators that Google, Bing,
/// DuckDuckGo and Brave read (SearXNG hands them on to its engines).
pub fn site_operators(query: &str, domains: &Domains) -> String {
    let mut out = query.to_owned();
    let include = &domains.include;
    if !include.is_empty() && include.len() <= MAX_SITE_OPERATORS {
        let sites: Vec<String> = include.iter().map(|d| format!("site:{d}")).collect();
        match sites.len() {
            1 => out.push_str(&format!(" {}", sites[0])),
            _ => out.push_str(&format!(" ({})", sites.join(" OR "))),
        }
    }
    for d in domains.exclude.iter().take(MAX_SITE_OPERATORS) {
        out.push_str(&format!(" -site:{d}"));
    }
    out
}

/// Pages asked of one provider for one query at most.
const MAX_PAGES: u32 = 10;
const PER_PAGE: u32 = 10;

use trawl_messages::record::Attempt;

#[derive(Debug, Default)]
pub struct ChainResult {
    pub results: Vec<RawResult>,
    /// Results the job's domain filter refused, with why: the providers' own filters are
    /// hints, and what they let through is recorded, never fetched.
    pub refused: Vec<(RawResult, String)>,
    /// Direct answers written by a provider (Tavily), by provider.
    pub answers: Vec<(String, String)>,
    pub attempts: Vec<Attempt>,
    /// True if at least one provider answered (even with nothing): an empty answer is an
    /// answer, a failure of every provider is an outage.
    pub answered: bool,
}

impl ChainResult {
    /// A page's `hits` from provider `name` as results after `got`, numbered by their rank
    /// there; those `domains` refuse go to `refused` instead.
    fn sort(&mut self, hits: Vec<Hit>, name: &str, got: &mut Vec<RawResult>, domains: &Domains) {
        for hit in hits {
            let result = RawResult {
                url: hit.url,
                title: hit.title,
                snippet: hit.snippet,
                provider: name.to_owned(),
                position: got.len() as u32 + 1,
            };
            match domains.refusal_of_url(&result.url) {
                Some(why) => self.refused.push((result, why)),
                None => got.push(result),
            }
        }
    }
}

/// Where a page of results is cached: one entry per provider, vertical, freshness, locale,
/// page and query, and filter (providers that filter by parameters answer differently per
/// filter).
fn cache_key(name: &str, request: &PageRequest<'_>) -> String {
    let key = format!(
        "{name}|{}|{:?}|{}-{}|{}|{}",
        if request.news { "news" } else { "web" },
        request.freshness,
        request.locale.lang,
        request.locale.region.as_deref().unwrap_or(""),
        request.page,
        request.query
    );
    match request.domains.is_empty() {
        true => key,
        false => format!("{key}|{:?}", request.domains),
    }
}

pub struct Search<'a> {
    pub providers: &'a BTreeMap<String, Box<dyn Provider>>,
    pub http: &'a reqwest::Client,
    pub store: &'a dyn Store,
    pub cache_ttl: Duration,
    /// Fleet-wide requests per second per provider (`search.requests_per_second`).
    pub requests_per_second: &'a BTreeMap<String, f64>,
    /// The job's domain filter: asked of the providers that take one, then applied to every
    /// result.
    pub domains: &'a Domains,
}

impl Search<'_> {
    pub async fn chain(
        &self,
        chain: &[String],
        query: &str,
        target: usize,
        freshness: Freshness,
        news: bool,
        locale: &Locale,
    ) -> ChainResult {
        let mut out = ChainResult::default();
        for name in chain {
            let Some(provider) = self.providers.get(name) else {
                out.attempts.push(Attempt {
                    provider: name.clone(),
                    query: query.to_owned(),
                    page: 0,
                    outcome: "skipped".into(),
                    detail: "not configured (unknown, or no API key)".into(),
                });
                continue;
            };
            let mut got: Vec<RawResult> = Vec::new();
            let query = match provider.takes_site_operators() {
                true => site_operators(query, self.domains),
                false => query.to_owned(),
            };
            for page in 1..=MAX_PAGES {
                let request = PageRequest {
                    query: &query,
                    page,
                    per_page: PER_PAGE,
                    freshness,
                    news,
                    locale,
                    domains: self.domains,
                };
                let (answer, mut attempt) = self.page(provider.as_ref(), &request).await;
                attempt.provider = name.clone();
                let page_result = match answer {
                    Ok(p) => p,
                    Err(e) => {
                        attempt.outcome = e.label().into();
                        attempt.detail = e.detail();
                        out.attempts.push(attempt);
                        break;
                    }
                };
                out.answered = true;
                if page_result.hits.is_empty() && attempt.outcome == "ok" {
                    attempt.outcome = "empty".into();
                }
                out.attempts.push(attempt);
                if let Some(answer) = page_result.answer {
                    out.answers.push((name.clone(), answer));
                }
                let done = page_result.hits.is_empty() || !page_result.more;
                out.sort(page_result.hits, name, &mut got, self.domains);
                if done || got.len() >= target {
                    break;
                }
            }
            if !got.is_empty() {
                got.truncate(target);
                out.results = got;
                return out;
            }
        }
        out
    }

    /// One page, from the cache or the provider.
    async fn page(
        &self,
        provider: &dyn Provider,
        request: &PageRequest<'_>,
    ) -> (Result<ResultPage, crate::providers::ProviderError>, Attempt) {
        let name = provider.name();
        let key = cache_key(name, request);
        let mut attempt = Attempt {
            provider: name.into(),
            query: request.query.to_owned(),
            page: request.page,
            outcome: "ok".into(),
            detail: String::new(),
        };
        match self.store.cache_get(Cache::Search, &key).await {
            Ok(Some(bytes)) => {
                if let Ok(page) = serde_json::from_slice::<ResultPage>(&bytes) {
                    attempt.outcome = "cached".into();
                    return (Ok(page), attempt);
                }
            }
            Ok(None) => {}
            // A cache that cannot answer costs a provider call, never the job.
            Err(e) => warn!(error = %e, "search cache unavailable"),
        }
        self.pace(name).await;
        let started = Instant::now();
        let result = trawl_store::outside::waiting(provider.page(self.http, request)).await;
        if let Err(ProviderError::RateLimited {
            retry_after: Some(wait),
            ..
        }) = &result
        {
            // The provider's limit is the fleet's: every worker waits, not only this one.
            let wait = (*wait).min(MAX_HOLD);
            if let Err(e) = self.store.rate_hold(&rate_slot(name), wait).await {
                warn!(error = %e, provider = name, "a 429's Retry-After could not be shared through the store");
            }
        }
        METRICS
            .provider_latency
            .get_or_create(&labels(&[("provider", name)]))
            .observe(started.elapsed().as_secs_f64());
        let outcome = match &result {
            Ok(p) if p.hits.is_empty() => "empty",
            Ok(_) => "ok",
            Err(e) => e.label(),
        };
        METRICS
            .provider_requests
            .get_or_create(&labels(&[("provider", name), ("outcome", outcome)]))
            .inc();
        if let Err(e) = &result {
            warn!(provider = name, page = request.page, error = %e, "provider request failed");
        }
        if let Ok(page) = &result {
            if let Ok(bytes) = serde_json::to_vec(page) {
                if let Err(e) = self
                    .store
                    .cache_put(Cache::Search, &key, &bytes, self.cache_ttl)
                    .await
                {
                    warn!(error = %e, "search cache unavailable");
                }
            }
        }
        (result, attempt)
    }

    /// Waits for this worker's turn at `provider` under its fleet-wide requests per second.
    /// The slot is read even without a limit: a 429's hold is kept there. With the store down
    /// the call goes unpaced.
    async fn pace(&self, provider: &str) {
        let interval = (self.requests_per_second.get(provider))
            .map_or(Duration::ZERO, |rps| Duration::from_secs_f64(1.0 / rps));
        let waited = trawl_store::rate_wait::take_turn(self.store, &rate_slot(provider), interval)
            .await
            .unwrap_or_else(|e| {
                warn!(error = %e, provider, "the provider's rate limit could not be read from the store; calling unpaced");
                Duration::ZERO
            });
        if !waited.is_zero() {
            METRICS
                .rate_wait
                .get_or_create(&labels(&[("provider", provider)]))
                .inc_by(waited.as_secs_f64());
        }
    }
}

/// The longest a provider's `Retry-After` holds the fleet.
const MAX_HOLD: Duration = Duration::from_secs(60);

/// The store's rate slot of `provider` (Redis key `rate:search:<provider>`).
fn rate_slot(provider: &str) -> String {
    format!("search:{provider}")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use trawl_integration_tests::simweb::{Corpus, Simweb};
    use trawl_store::{prelude::*, MemoryStore};

    use super::*;

    /// simweb's Brave as the only provider, with a store of its own.
    struct Brave {
        _web: Simweb,
        cfg: trawl_config::SearchConfig,
        providers: BTreeMap<String, Box<dyn Provider>>,
        store: MemoryStore,
        http: reqwest::Client,
        no_limits: BTreeMap<String, f64>,
        no_domains: Domains,
    }

    impl Brave {
        async fn start() -> Brave {
            let web = Simweb::start(Arc::new(Corpus::generate()), "127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
            let mut cfg = trawl_config::SearchConfig {
                providers: vec!["brave".into()],
                ..Default::default()
            };
            cfg.endpoints
                .insert("brave".into(), format!("{}/brave", web.base_url()));
            let env = BTreeMap::from([("BRAVE_API_KEY".to_owned(), "k".to_owned())]);
            Brave {
                providers: crate::providers::build_all(&cfg, &env),
                _web: web,
                cfg,
                store: MemoryStore::new(),
                http: reqwest::Client::new(),
                no_limits: BTreeMap::new(),
                no_domains: Domains::default(),
            }
        }

        fn search(&self) -> Search<'_> {
            Search {
                providers: &self.providers,
                http: &self.http,
                store: &self.store,
                cache_ttl: Duration::from_secs(60),
                requests_per_second: &self.no_limits,
                domains: &self.no_domains,
            }
        }
    }

    #[test]
    fn domains_become_site_operators_within_a_bound() {
        let domains = |include: &[&str], exclude: &[&str]| {
            let own = |l: &[&str]| l.iter().map(|d| d.to_string()).collect::<Vec<_>>();
            Domains::new(&own(include), &own(exclude))
        };
        assert_eq!(site_operators("q", &Domains::default()), "q");
        assert_eq!(
            site_operators("q", &domains(&["example.com"], &["ads.example.com"])),
            "q site:example.com -site:ads.example.com"
        );
        assert_eq!(
            site_operators("q", &domains(&["b.org", "a.org"], &[])),
            "q (site:a.org OR site:b.org)"
        );
        let many: Vec<String> = (0..20).map(|i| format!("d{i}.org")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        // Too many to write: the filter after the provider alone holds them.
        assert_eq!(site_operators("q", &domains(&many, &[])), "q");
    }

    /// Results outside the job's domains are kept apart with why, and the next provider is
    /// asked when none of a provider's results may be read.
    #[tokio::test]
    async fn results_outside_the_jobs_domains_are_refused_and_recorded() {
        let brave = Brave::start().await;
        let only = Domains::new(&["nowhere.example".to_owned()], &[]);
        let search = Search {
            domains: &only,
            ..brave.search()
        };
        let query = Corpus::generate().questions().remove(0).query;
        let out = (search.chain(
            &brave.cfg.providers,
            &query,
            10,
            Freshness::Any,
            false,
            &Locale::default(),
        ))
        .await;
        assert!(out.results.is_empty(), "{:?}", out.results);
        assert!(!out.refused.is_empty());
        let (result, why) = &out.refused[0];
        assert!(
            why.contains("outside the job's domains (nowhere.example)"),
            "{why}"
        );
        assert!(!result.url.contains("nowhere.example"));
        // The query Brave was sent asks for the domain itself.
        assert!(
            out.attempts[0].query.ends_with(" site:nowhere.example"),
            "{:?}",
            out.attempts
        );
    }

    /// A page of results asked for in one language is not the answer for another: the cache
    /// keeps them apart, and gives each back to its own language.
    #[tokio::test]
    async fn the_search_cache_keeps_each_language_apart() {
        let brave = Brave::start().await;
        let (search, cfg) = (brave.search(), &brave.cfg);
        // A question simweb has results for: an empty first page is not cached.
        let query = Corpus::generate().questions().remove(0).query;
        let outcome = |locale: Locale| {
            let (search, chain, query) = (&search, &cfg.providers, &query);
            async move {
                let out = (search.chain(chain, query, 10, Freshness::Any, false, &locale)).await;
                out.attempts[0].outcome.clone()
            }
        };
        let at = |tag: &str| Locale::from_tag(tag).unwrap();
        assert_eq!(outcome(at("de")).await, "ok");
        assert_eq!(outcome(at("fr")).await, "ok");
        assert_eq!(outcome(at("fr-CA")).await, "ok");
        assert_eq!(outcome(at("de")).await, "cached");
    }

    /// A provider's 429 with `Retry-After: 7` holds its slot, so every worker's next call to it
    /// waits out the seven seconds, not only the one that met it.
    #[tokio::test]
    async fn a_providers_429_holds_every_worker_for_its_retry_after() {
        let brave = Brave::start().await;
        let (search, cfg, store) = (brave.search(), &brave.cfg, &brave.store);
        let out = (search.chain(
            &cfg.providers,
            "zorbium simweb:429",
            10,
            Freshness::Any,
            false,
            &Locale::default(),
        ))
        .await;
        assert_eq!(
            out.attempts[0].outcome, "rate_limited",
            "{:?}",
            out.attempts
        );
        let held = store
            .rate_acquire(&rate_slot("brave"), Duration::ZERO)
            .await
            .unwrap();
        assert!(held > Duration::from_secs(5), "{held:?}");
    }
}

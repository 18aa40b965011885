//! The store's metrics, declared once: cache lookups by cache and result, and the page cache's
//! hits, misses and revalidations by stage.

use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::{init_series, labels, register, Labels};

use crate::{Cache, StoreError};

static LOOKUPS: LazyLock<Family<Labels, Counter>> = LazyLock::new(|| {
    register(
        "cache_lookups",
        "Store cache lookups by cache and result (hit, miss, error)",
        Family::default(),
    )
});

const RESULTS: [&str; 3] = ["hit", "miss", "error"];

/// What a stage found in the fleet's page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageLookup {
    /// A fresh copy, read instead of fetching.
    Hit,
    /// No copy, or one that had to be fetched again.
    Miss,
    /// A copy past its age that its server confirmed unchanged.
    Revalidated,
}

struct PageCounters {
    hits: Family<Labels, Counter>,
    misses: Family<Labels, Counter>,
    revalidated: Family<Labels, Counter>,
}

static PAGES: LazyLock<PageCounters> = LazyLock::new(|| PageCounters {
    hits: register(
        "cache_hits",
        "Pages read from the fleet's page cache instead of fetched, by stage",
        Family::default(),
    ),
    misses: register(
        "cache_misses",
        "Pages the fleet's page cache did not have fresh, by stage",
        Family::default(),
    ),
    revalidated: register(
        "cache_revalidated",
        "Cached pages past their age that their server confirmed unchanged, by stage",
        Family::default(),
    ),
});

/// The stages that read the page cache: fetch for pages, clean for their extracted text.
const PAGE_STAGES: [&str; 2] = ["fetch", "clean"];

/// Counts one page cache lookup of `stage` (`fetch` or `clean`).
pub fn page_lookup(stage: &'static str, found: PageLookup) {
    let family = match found {
        PageLookup::Hit => &PAGES.hits,
        PageLookup::Miss => &PAGES.misses,
        PageLookup::Revalidated => &PAGES.revalidated,
    };
    family.get_or_create(&labels(&[("stage", stage)])).inc();
}

pub(crate) fn lookup(cache: Cache, found: &Result<Option<Vec<u8>>, StoreError>) {
    lookups(&[cache], found.as_ref().map(std::slice::from_ref));
}

/// Counts each of `caches` as hit, miss or error by what the lookup found for it.
pub(crate) fn lookups<T>(caches: &[Cache], found: Result<&[Option<T>], &StoreError>) {
    for (i, cache) in caches.iter().enumerate() {
        let result = match found.map(|values| values.get(i).is_some_and(Option::is_some)) {
            Ok(true) => RESULTS[0],
            Ok(false) => RESULTS[1],
            Err(_) => RESULTS[2],
        };
        LOOKUPS
            .get_or_create(&labels(&[("cache", cache.as_str()), ("result", result)]))
            .inc();
    }
}

/// Creates every cache's series at zero, so a hit ratio has data before the first lookup.
pub fn init() {
    for cache in Cache::ALL {
        for result in RESULTS {
            init_series(&LOOKUPS, &[("cache", cache.as_str()), ("result", result)]);
        }
    }
    for stage in PAGE_STAGES {
        for family in [&PAGES.hits, &PAGES.misses, &PAGES.revalidated] {
            init_series(family, &[("stage", stage)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{Cache, Caches, MemoryStore};

    #[tokio::test]
    async fn every_cache_lookup_is_counted_by_result() {
        let store = MemoryStore::new();
        assert!(store
            .cache_get(Cache::Idempotency, "k")
            .await
            .unwrap()
            .is_none());
        store
            .cache_put(Cache::Idempotency, "k", b"v", Duration::from_secs(60))
            .await
            .unwrap();
        assert!(store
            .cache_get(Cache::Idempotency, "k")
            .await
            .unwrap()
            .is_some());
        let text = trawl_telemetry::render();
        for line in [
            "trawl_cache_lookups_total{cache=\"idempotency\",result=\"hit\"} 1",
            "trawl_cache_lookups_total{cache=\"idempotency\",result=\"miss\"} 1",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }
}

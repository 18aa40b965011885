//! `[cache]`: the page cache the fleet shares. A page fetched for one job is kept in the object
//! store, so every later job of any batch that wants it within `max_age_secs` reads it instead
//! of fetching, and revalidates it with its validators after that.

use serde::{Deserialize, Serialize};

use crate::check;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// How old a cached page may be and still be read without asking its server; past it the
    /// page is revalidated (`If-None-Match` / `If-Modified-Since`) or fetched again. 0 always
    /// fetches (and caches nothing). A batch or a line may set its own.
    pub max_age_secs: u64,
    /// The cache's bound in bytes: past it the least recently used pages go first.
    pub max_bytes: u64,
    /// How long a page nobody reads stays cached (set the object store's lifecycle rule for
    /// `pages/` to the same).
    pub keep_secs: u64,
    /// How long jobs that want a page another job is fetching wait for it before they fetch it
    /// themselves.
    pub wait_secs: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            max_age_secs: 86_400,
            max_bytes: 2 << 30,
            keep_secs: 7 * 86_400,
            wait_secs: 30,
        }
    }
}

impl CacheConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::at_least_one(problems, "cache.max_bytes", self.max_bytes);
        check::at_least_one(problems, "cache.wait_secs", self.wait_secs);
        if self.keep_secs < self.max_age_secs {
            problems.push(format!(
                "cache.keep_secs ({}) must be at least cache.max_age_secs ({}): a page must outlive its freshness",
                self.keep_secs, self.max_age_secs
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::env;
    use crate::Config;

    #[test]
    fn a_page_must_be_kept_as_long_as_it_is_fresh() {
        let config = Config::load(None, &env(&[("TRAWL__CACHE__MAX_AGE_SECS", "0")])).unwrap();
        assert_eq!(config.cache.max_age_secs, 0);
        let err = Config::load(
            None,
            &env(&[
                ("TRAWL__CACHE__MAX_AGE_SECS", "600"),
                ("TRAWL__CACHE__KEEP_SECS", "60"),
                ("TRAWL__CACHE__WAIT_SECS", "0"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("cache.keep_secs (60) must be at least cache.max_age_secs (600)"),
            "{err}"
        );
        assert!(err.contains("cache.wait_secs must be at least 1"), "{err}");
    }
}

//! Each worker's own view of its bound, read from its `/metrics` at every sample: messages and
//! bytes in flight against their caps, and the time its calls have waited for rate limits and
//! hosts' turns.

use std::time::Duration;

use serde::Serialize;

/// One worker's figures at one moment; counters are totals since the worker started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Gauges {
    pub in_flight: f64,
    /// Its prefetch.
    pub capacity: f64,
    pub bytes: f64,
    pub bytes_capacity: f64,
    /// Seconds its LLM and search-provider calls waited for a fleet-wide rate limit.
    pub rate_wait_secs: f64,
    /// Seconds its fetch tasks waited for their hosts' turns, in the worker or deferred.
    pub politeness_wait_secs: f64,
    /// LLM calls that failed for good (the step took its non-LLM path).
    pub llm_failed: f64,
    /// Page cache lookups: read from the cache, not found fresh there, and found stale but
    /// confirmed unchanged by the page's server.
    pub cache_hits: f64,
    pub cache_misses: f64,
    pub cache_revalidated: f64,
}

/// The figures of the worker serving `/metrics` on `addr`; none if it did not answer.
pub async fn scrape(client: &reqwest::Client, addr: &str) -> Option<Gauges> {
    let response = client
        .get(format!("http://{addr}/metrics"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .ok()?;
    Some(parse(&response.text().await.ok()?))
}

/// Sums each series of interest over its labels, from Prometheus's text format.
pub fn parse(text: &str) -> Gauges {
    let mut g = Gauges::default();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let name = series.split('{').next().unwrap_or(series);
        let slot = match name {
            "trawl_in_flight" => &mut g.in_flight,
            "trawl_worker_capacity" => &mut g.capacity,
            "trawl_in_flight_bytes" => &mut g.bytes,
            "trawl_in_flight_bytes_capacity" => &mut g.bytes_capacity,
            "trawl_llm_rate_limit_wait_seconds_total"
            | "trawl_search_provider_rate_limit_wait_seconds_total" => &mut g.rate_wait_secs,
            "trawl_fetch_host_wait_seconds_sum" | "trawl_fetch_deferral_wait_seconds_sum" => {
                &mut g.politeness_wait_secs
            }
            "trawl_llm_fallbacks_total" => &mut g.llm_failed,
            "trawl_cache_hits_total" => &mut g.cache_hits,
            "trawl_cache_misses_total" => &mut g.cache_misses,
            "trawl_cache_revalidated_total" => &mut g.cache_revalidated,
            _ => continue,
        };
        *slot += value;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_summed_over_their_labels_and_only_exact_names_count() {
        let text = "# HELP trawl_in_flight Messages being handled\n\
            trawl_in_flight{stage=\"clean\"} 3\n\
            trawl_in_flight_bytes{stage=\"clean\"} 1048576\n\
            trawl_in_flight_bytes_capacity{stage=\"clean\"} 268435456\n\
            trawl_worker_capacity{stage=\"clean\"} 256\n\
            trawl_llm_rate_limit_wait_seconds_total{model=\"a\"} 1.5\n\
            trawl_llm_rate_limit_wait_seconds_total{model=\"b\"} 0.5\n\
            trawl_fetch_host_wait_seconds_sum 2\n\
            trawl_fetch_host_wait_seconds_count 4\n\
            trawl_llm_fallbacks_total{step=\"judge\",reason=\"timeout\"} 1\n\
            trawl_cache_hits_total{stage=\"fetch\"} 40\n\
            trawl_cache_misses_total{stage=\"fetch\"} 10\n\
            trawl_cache_revalidated_total{stage=\"fetch\"} 0\n\
            trawl_cache_lookups_total{cache=\"idempotency\",result=\"hit\"} 7\n";
        assert_eq!(
            parse(text),
            Gauges {
                in_flight: 3.0,
                capacity: 256.0,
                bytes: 1048576.0,
                bytes_capacity: 268435456.0,
                rate_wait_secs: 2.0,
                politeness_wait_secs: 2.0,
                llm_failed: 1.0,
                cache_hits: 40.0,
                cache_misses: 10.0,
                cache_revalidated: 0.0,
            }
        );
    }
}

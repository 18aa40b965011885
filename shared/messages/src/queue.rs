//! Queue names. Every queue lives under a namespace (`trawl` in production) so tests and several
//! deployments can share one broker without meeting each other's messages.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Queue {
    Search,
    Fetch,
    FetchBrowser,
    Clean,
    Synthesize,
    Results,
    /// Messages that exhausted their attempts or could not be decoded, with the reason attached.
    Dead,
}

impl Queue {
    /// Every queue, work queues first.
    pub const ALL: [Queue; 7] = [
        Queue::Search,
        Queue::Fetch,
        Queue::FetchBrowser,
        Queue::Clean,
        Queue::Synthesize,
        Queue::Results,
        Queue::Dead,
    ];

    /// The suffix after the namespace: `trawl.<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            Queue::Search => "search",
            Queue::Fetch => "fetch",
            Queue::FetchBrowser => "fetch.browser",
            Queue::Clean => "clean",
            Queue::Synthesize => "synthesize",
            Queue::Results => "results",
            Queue::Dead => "dead",
        }
    }

    /// The full queue name under `namespace`.
    pub fn name(self, namespace: &str) -> String {
        format!("{namespace}.{}", self.suffix())
    }

    /// The queue a stage name (as given to `trawl worker STAGE`) consumes.
    pub fn for_stage(stage: &str) -> Option<Queue> {
        Some(match stage {
            "search" => Queue::Search,
            "fetch" => Queue::Fetch,
            "fetch-browser" | "fetch.browser" => Queue::FetchBrowser,
            "clean" => Queue::Clean,
            "synthesize" => Queue::Synthesize,
            _ => return None,
        })
    }

    /// The bounded label used in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Queue::FetchBrowser => "fetch_browser",
            other => other.suffix(),
        }
    }
}

impl fmt::Display for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_design() {
        assert_eq!(Queue::FetchBrowser.name("trawl"), "trawl.fetch.browser");
        assert_eq!(Queue::Dead.name("t-1"), "t-1.dead");
        assert_eq!(Queue::for_stage("fetch-browser"), Some(Queue::FetchBrowser));
        assert_eq!(Queue::for_stage("nope"), None);
    }
}

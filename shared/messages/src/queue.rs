//! Queue names. Every queue lives under a namespace (`trawl` in production) so tests and several
//! deployments can share one broker without meeting each other's messages.

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum Queue {
    Search,
    Fetch,
    #[strum(serialize = "fetch.browser")]
    FetchBrowser,
    Clean,
    Synthesize,
    Results,
    /// Messages that exhausted their attempts or could not be decoded, with the reason attached.
    Dead,
}

impl Queue {
    /// Every queue, work queues first.
    pub const ALL: &[Queue] = <Self as strum::VariantArray>::VARIANTS;

    /// The suffix after the namespace: `trawl.<suffix>`.
    pub fn suffix(self) -> &'static str {
        self.into()
    }

    /// The full queue name under `namespace`.
    pub fn name(self, namespace: &str) -> String {
        format!("{namespace}.{}", self.suffix())
    }

    /// The bounded label used in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Queue::FetchBrowser => "fetch_browser",
            other => other.suffix(),
        }
    }
}

/// The stages of the pipeline, one kind of worker each: the one list that the stage binaries,
/// `trawl worker`, the embedded fleet, `trawl status` and the monitor go by. (Each stage's
/// constructor is with its crate; `trawl_cli::stages` maps each kind to it.)
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
    strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum StageKind {
    Search,
    Fetch,
    /// Fetch levels 2–3, with a browser over WebDriver.
    FetchBrowser,
    Clean,
    Synthesize,
}

impl StageKind {
    /// Every stage, in pipeline order.
    pub const ALL: &[StageKind] = <Self as strum::VariantArray>::VARIANTS;

    /// The queue the stage's workers consume.
    pub fn queue(self) -> Queue {
        match self {
            StageKind::Search => Queue::Search,
            StageKind::Fetch => Queue::Fetch,
            StageKind::FetchBrowser => Queue::FetchBrowser,
            StageKind::Clean => Queue::Clean,
            StageKind::Synthesize => Queue::Synthesize,
        }
    }

    /// The name `trawl worker STAGE` takes.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The stage's own binary.
    pub fn binary(self) -> &'static str {
        match self {
            StageKind::Search => "trawl-search",
            StageKind::Fetch => "trawl-fetch",
            StageKind::FetchBrowser => "trawl-fetch-browser",
            StageKind::Clean => "trawl-clean",
            StageKind::Synthesize => "trawl-synthesize",
        }
    }

    /// What the stage does, for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            StageKind::Search => "trawl search worker: questions in, URLs worth fetching out",
            StageKind::Fetch => {
                "trawl fetch worker: robots.txt, politeness, HTTP fetch with escalation"
            }
            StageKind::FetchBrowser => {
                "trawl browser fetch worker: pages that need a real browser (levels 2-3, WebDriver)"
            }
            StageKind::Clean => "trawl clean worker: fetched pages in, analysed markdown out",
            StageKind::Synthesize => {
                "trawl synthesize worker: analysed sources in, cited reports out"
            }
        }
    }

    /// The stage `trawl worker` was given by name.
    pub fn from_name(name: &str) -> Option<StageKind> {
        name.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_design() {
        assert_eq!(Queue::FetchBrowser.name("trawl"), "trawl.fetch.browser");
        assert_eq!(Queue::Dead.name("t-1"), "t-1.dead");
        assert_eq!(
            StageKind::from_name("fetch-browser").map(StageKind::queue),
            Some(Queue::FetchBrowser)
        );
        assert_eq!(StageKind::from_name("nope"), None);
        for &stage in StageKind::ALL {
            assert_eq!(StageKind::from_name(stage.name()), Some(stage));
        }
    }
}

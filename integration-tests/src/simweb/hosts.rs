//! Hosts of the fake web: names, article layout, URL style and robots.txt policy. The
//! special policies sit on the first few hosts, which page placement treats with care so
//! every topic keeps two answers trawl may fetch.

use serde::Serialize;

use super::render::Layout;
use super::rng::Rng;
use super::words::{slug, HOST_FIRST, HOST_SECOND};

pub const HOSTS: usize = 50;

/// A host's robots.txt behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Robots {
    /// `User-agent: *` with an empty `Disallow:`.
    AllowAll,
    /// `Disallow: /private/`; the host holds a few pages under `/private/`.
    DisallowPrivate,
    /// `Crawl-delay: 1`, everything allowed.
    CrawlDelay,
    /// robots.txt is a 404: everything allowed (RFC 9309 "unavailable").
    NotFound,
    /// robots.txt is a 500: treat the whole host as disallowed (RFC 9309 "unreachable").
    ServerError,
    /// A `User-agent: trawl` group with `Disallow: /`; other agents are allowed.
    TrawlDisallowAll,
}

impl Robots {
    /// The robots.txt body and status this policy is served with.
    pub fn response(self) -> (u16, &'static str) {
        match self {
            Robots::AllowAll => (200, "User-agent: *\nDisallow:\n"),
            Robots::DisallowPrivate => (200, "User-agent: *\nDisallow: /private/\n"),
            Robots::CrawlDelay => (200, "User-agent: *\nCrawl-delay: 1\nDisallow:\n"),
            Robots::NotFound => (404, "not found\n"),
            Robots::ServerError => (500, "internal server error\n"),
            Robots::TrawlDisallowAll => (
                200,
                "User-agent: trawl\nDisallow: /\n\nUser-agent: *\nDisallow:\n",
            ),
        }
    }

    /// Whether agent "trawl" may fetch `path` on a host with this policy.
    pub fn allows_trawl(self, path: &str) -> bool {
        match self {
            Robots::AllowAll | Robots::CrawlDelay | Robots::NotFound => true,
            Robots::DisallowPrivate => !path.starts_with("/private/"),
            Robots::ServerError | Robots::TrawlDisallowAll => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Host {
    pub name: String,
    pub layout: Layout,
    pub robots: Robots,
}

/// Hosts, with the special robots policies on the first few (after shuffling names).
pub fn make_hosts(rng: &mut Rng) -> Vec<Host> {
    let mut names: Vec<String> = HOST_FIRST
        .iter()
        .flat_map(|a| HOST_SECOND.iter().map(move |b| format!("{a}-{b}.test")))
        .collect();
    rng.shuffle(&mut names);
    names.truncate(HOSTS);
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let robots = match i {
                0 => Robots::ServerError,
                1 => Robots::TrawlDisallowAll,
                2 | 3 => Robots::DisallowPrivate,
                4 | 5 => Robots::CrawlDelay,
                6..=8 => Robots::NotFound,
                _ => Robots::AllowAll,
            };
            let layout = match i % 6 {
                4 => Layout::PostContent,
                5 => Layout::MainText,
                _ => Layout::Article,
            };
            Host {
                name,
                layout,
                robots,
            }
        })
        .collect()
}

/// Path style differs per host, as real sites differ.
pub fn article_path(host_ix: usize, title: &str, year: u64) -> String {
    let s = slug(title);
    match host_ix % 4 {
        0 => format!("/articles/{s}"),
        1 => format!("/blog/{year}/{s}"),
        2 => format!("/news/{s}.html"),
        _ => format!("/wiki/{s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_policies_match_their_bodies() {
        assert!(Robots::DisallowPrivate.allows_trawl("/articles/x"));
        assert!(!Robots::DisallowPrivate.allows_trawl("/private/x"));
        assert!(!Robots::ServerError.allows_trawl("/"));
        assert!(!Robots::TrawlDisallowAll.allows_trawl("/a"));
        assert!(Robots::NotFound.allows_trawl("/a"));
        assert_eq!(Robots::ServerError.response().0, 500);
        assert!(Robots::TrawlDisallowAll
            .response()
            .1
            .contains("User-agent: trawl\nDisallow: /\n"));
        assert!(Robots::CrawlDelay.response().1.contains("Crawl-delay: 1"));
    }
}

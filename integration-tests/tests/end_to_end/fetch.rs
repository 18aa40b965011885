//! The fetch stage end to end: the real `trawl-fetch` and `trawl-fetch-browser` binaries on
//! RabbitMQ and Redis, real Chromium through chromedriver, simweb's guarded, hostile, robots
//! and file hosts. Each URL must end with the right outcome at the right level.
//!
//! simweb listens on 127.0.0.2 and only that address is allowed, so redirects to 127.0.0.1
//! (and its other spellings) are refused like any private address.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{webdriver_sessions, Fleet};
use trawl_config::Config;
use trawl_fetch::browser::LocalWebDriver;
use trawl_integration_tests::simweb::{files, guarded, hostile};
use trawl_messages::{
    Envelope, FetchTask, FetchedDoc, FileType, Outcome, Queue, Source, SourceKind,
};
use trawl_pipeline::fanin::{JobMeta, OutcomeRecord};
use trawl_pipeline::Job;
use trawl_pipeline::Runtime;
use uuid::Uuid;

/// Resolves to 10.1.2.3 in every harness.
const PRIVATE_NAME: &str = "intranet.example";

/// How a URL ended: passed on to clean, or a terminal outcome.
#[derive(Debug)]
enum Ended {
    Doc(Box<FetchedDoc>),
    Outcome(OutcomeRecord),
}

impl Ended {
    fn doc(&self) -> &FetchedDoc {
        match self {
            Ended::Doc(d) => d,
            Ended::Outcome(o) => panic!("expected a page, got {o:?}"),
        }
    }

    fn outcome(&self) -> &OutcomeRecord {
        match self {
            Ended::Outcome(o) => o,
            Ended::Doc(d) => panic!(
                "expected an outcome, got a page at level {}: {:.300}",
                d.level, d.body
            ),
        }
    }
}

struct Harness {
    fleet: Fleet,
    rt: Runtime,
    driver: Option<LocalWebDriver>,
}

impl Harness {
    async fn start(browser: bool, extra_env: &[(&str, &str)]) -> Harness {
        let mut fleet = Fleet::start_on("127.0.0.2").await;
        // Besides simweb, a name that resolves to a private address, as an intranet name would.
        let resolve = format!(
            "{{ \"*.test\" = \"{}\", \"{PRIVATE_NAME}\" = \"10.1.2.3:80\" }}",
            fleet.simweb.addr()
        );
        fleet.env.push(("TRAWL__FETCH__RESOLVE".into(), resolve));
        let mut env = vec![
            ("TRAWL__FETCH__TIMEOUT_SECS", "6"),
            ("TRAWL__FETCH__IDLE_TIMEOUT_SECS", "2"),
            ("TRAWL__FETCH__BROWSER_TIMEOUT_SECS", "30"),
        ];
        env.extend_from_slice(extra_env);
        for (k, v) in env {
            fleet.env.push((k.into(), v.into()));
        }
        let driver = if browser {
            let driver = LocalWebDriver::start(0).await.unwrap();
            fleet
                .env
                .push(("TRAWL__FETCH__WEBDRIVER_URL".into(), driver.url()));
            fleet.spawn("trawl-fetch-browser");
            Some(driver)
        } else {
            None
        };
        fleet.spawn("trawl-fetch");
        let env: BTreeMap<String, String> = fleet.fleet_env().into_iter().collect();
        let config = Config::load(None, &env).unwrap();
        let rt = Runtime::connect(config, Duration::from_secs(10))
            .await
            .unwrap();
        Harness { fleet, rt, driver }
    }

    fn url(path: &str, host: &str) -> String {
        format!("http://{host}{path}")
    }

    /// Runs one job of `urls` through the fetch workers and returns how each ended, in order
    /// (then the pages a crawl added, in the order the job numbered them).
    async fn fetch(&self, urls: &[String]) -> Vec<Ended> {
        self.fetch_with(urls, 3).await
    }

    async fn fetch_with(&self, urls: &[String], max_level: u8) -> Vec<Ended> {
        let sources: Vec<Source> = urls
            .iter()
            .enumerate()
            .map(|(i, url)| {
                let file = [".pdf", ".docx", ".csv", ".tsv", ".png", ".zip", "download"]
                    .iter()
                    .any(|ext| url.contains(ext));
                Source {
                    idx: i as u32,
                    url: url.clone(),
                    title: url.clone(),
                    snippet: String::new(),
                    provider: "test".into(),
                    position: i as u32 + 1,
                    score: 1.0,
                    kind: if file {
                        SourceKind::File
                    } else {
                        SourceKind::Page
                    },
                    file_type: file.then_some(FileType::Unknown),
                }
            })
            .collect();
        let query = "fetch test".to_string();
        let deadline = chrono::Utc::now() + chrono::Duration::minutes(10);
        let first = |source: Source| FetchTask {
            query: query.clone(),
            source,
            level: 0,
            max_level,
            depth: 0,
            domains: Default::default(),
            cache_max_age_secs: None,
            documents: None,
        };
        let job = Envelope::new(
            Uuid::now_v7(),
            Uuid::now_v7(),
            deadline,
            first(sources[0].clone()),
        );
        let meta = JobMeta {
            query: query.clone(),
            sources: sources.clone(),
            ..Default::default()
        };
        Job::new(&self.rt, &job).open(meta).await.unwrap();
        for source in sources {
            self.rt
                .publish(Queue::Fetch, &job.follow(first(source)))
                .await
                .unwrap();
        }

        let mut docs: BTreeMap<u32, FetchedDoc> = BTreeMap::new();
        let mut clean = self.rt.broker.consume(Queue::Clean, 64).await.unwrap();
        let started = tokio::time::Instant::now();
        loop {
            let outcomes = self
                .rt
                .store
                .fanin_outcomes(&job.job_id.to_string())
                .await
                .unwrap();
            // A crawl grows the job: wait for what it expects now.
            let expected = (self
                .rt
                .store
                .fanin_meta(&job.job_id.to_string())
                .await
                .unwrap())
            .map_or(urls.len(), |(n, _)| n as usize);
            if outcomes.len() + docs.len() >= expected {
                clean.cancel().await;
                let mut ended: BTreeMap<u32, Ended> = docs
                    .into_iter()
                    .map(|(i, d)| (i, Ended::Doc(Box::new(d))))
                    .collect();
                for (i, bytes) in outcomes {
                    ended.insert(i, Ended::Outcome(serde_json::from_slice(&bytes).unwrap()));
                }
                return ended.into_values().collect();
            }
            if started.elapsed() > Duration::from_secs(150) {
                self.fleet.dump_logs();
                panic!(
                    "fetch not done after 150 s: {} pages, outcomes {:?}",
                    docs.len(),
                    outcomes.keys().collect::<Vec<_>>()
                );
            }
            if let Ok(Some(delivery)) =
                tokio::time::timeout(Duration::from_millis(250), clean.next()).await
            {
                let doc = Envelope::<FetchedDoc>::decode(&delivery.message.body).unwrap();
                delivery.ack().await.unwrap();
                if doc.job_id == job.job_id {
                    docs.insert(doc.body.source.idx, doc.body);
                }
            }
        }
    }

    async fn stop(self) {
        self.fleet.cleanup().await;
    }
}

fn failed_reason(ended: &Ended) -> &str {
    match &ended.outcome().outcome {
        Outcome::Failed { reason } => reason,
        other => panic!("expected failed, got {other:?}"),
    }
}

/// Each page needs exactly its level: browser-like headers, a browser, a stealth browser; a
/// challenge stays blocked at the top. Run in level order, because the level that worked is
/// remembered for the host; the last step checks that memory.
#[tokio::test]
async fn escalates_only_as_far_as_each_page_needs() {
    let h = Harness::start(true, &[]).await;
    let at = |path: &str| Harness::url(path, guarded::HOST);

    let ended = h.fetch(&[at(guarded::NEEDS_HEADERS_PATH)]).await;
    let doc = ended[0].doc();
    assert_eq!(doc.level, 1);
    assert!(doc.body.contains(guarded::NEEDS_HEADERS_MARKER));

    let ended = h.fetch(&[at(guarded::JS_ONLY_PATH)]).await;
    let doc = ended[0].doc();
    assert_eq!(doc.level, 2);
    assert!(doc.body.contains(guarded::JS_ONLY_MARKER), "{}", doc.body);

    let ended = h.fetch(&[at(guarded::WEBDRIVER_CHECK_PATH)]).await;
    let doc = ended[0].doc();
    assert_eq!(doc.level, 3);
    assert!(
        doc.body.contains(guarded::WEBDRIVER_CHECK_MARKER),
        "{}",
        doc.body
    );

    let ended = h
        .fetch(&[at(guarded::CHALLENGE_PATH), at(guarded::CHALLENGE_200_PATH)])
        .await;
    for e in &ended {
        assert_eq!(e.outcome().outcome, Outcome::Blocked { level: 3 });
    }

    // The host needed level 3 last: its plain index page now starts there.
    let ended = h.fetch(&[at("/")]).await;
    assert_eq!(ended[0].doc().level, 3);

    // A batch that allows no browser ends blocked at its own ceiling.
    let ended = h
        .fetch_with(&[Harness::url(guarded::JS_ONLY_PATH, "guarded.test")], 1)
        .await;
    assert_eq!(ended[0].outcome().outcome, Outcome::Blocked { level: 1 });

    // A worker that stops closes every browser session it pooled.
    let mut h = h;
    let exits = h.fleet.terminate_all(Duration::from_secs(20)).await;
    assert!(exits.iter().all(|(_, clean)| *clean), "{exits:?}");
    assert_eq!(
        webdriver_sessions(&h.driver.as_ref().unwrap().url()).await,
        0
    );
    h.stop().await;
}

/// A 429 with Retry-After holds the host and retries at the same level, no escalation; the
/// request log shows the wait.
#[tokio::test]
async fn retry_after_holds_the_host_and_retries_at_the_same_level() {
    let h = Harness::start(false, &[]).await;
    let url = format!(
        "http://{}{}?k={}",
        guarded::HOST,
        guarded::RATE_LIMITED_PATH,
        Uuid::now_v7().simple()
    );
    let ended = h.fetch(&[url]).await;
    let doc = ended[0].doc();
    assert_eq!(doc.level, 0);
    assert!(doc.body.contains(guarded::RATE_LIMITED_MARKER));
    let log: Vec<_> = h
        .fleet
        .simweb
        .stats()
        .log(guarded::HOST)
        .into_iter()
        .filter(|(path, _)| path == guarded::RATE_LIMITED_PATH)
        .collect();
    assert_eq!(log.len(), 2, "{log:?}");
    let gap = log[1].1 - log[0].1;
    assert!(
        gap >= Duration::from_secs(guarded::RETRY_AFTER_SECONDS),
        "{gap:?}"
    );
    h.stop().await;
}

/// Hostile pages end as their own outcomes, never a hung worker; redirects into private
/// addresses are refused in every spelling.
#[tokio::test]
async fn hostile_pages_and_private_redirects_end_with_clear_outcomes() {
    let h = Harness::start(false, &[]).await;
    let hostile_at = |path: &str| Harness::url(path, hostile::HOST);
    let mut urls: Vec<String> = [
        "/huge",
        "/gzip-bomb",
        "/deflate-bomb",
        "/br-bomb",
        "/slow",
        "/stall",
        "/redirect-loop",
        "/latin1",
    ]
    .iter()
    .map(|p| hostile_at(p))
    .collect();
    urls.extend(
        guarded::PRIVATE_REDIRECTS
            .iter()
            .map(|(path, _)| Harness::url(path, guarded::HOST)),
    );
    urls.push("http://169.254.169.254/latest/meta-data/".into());
    urls.push("http://0x7f000001/".into());
    urls.push("http://0177.0.0.1/".into());
    urls.push("http://[::1]/".into());
    urls.push(format!("http://{PRIVATE_NAME}/"));
    let ended = h.fetch(&urls).await;

    for e in &ended[..4] {
        assert_eq!(e.outcome().outcome, Outcome::TooLarge, "{e:?}");
    }
    assert!(
        failed_reason(&ended[4]).starts_with("timeout"),
        "{:?}",
        ended[4]
    );
    assert!(
        failed_reason(&ended[5]).starts_with("idle timeout"),
        "{:?}",
        ended[5]
    );
    assert!(
        failed_reason(&ended[6]).contains("redirects"),
        "{:?}",
        ended[6]
    );
    let latin1 = ended[7].doc();
    assert!(
        latin1.body.contains("Café crème à la carte"),
        "{}",
        latin1.body
    );
    for e in &ended[8..] {
        assert!(failed_reason(e).contains("refused"), "{e:?}");
    }
    h.stop().await;
}

/// robots.txt per RFC 9309: redirects followed (up to five, rules kept for the original
/// authority), only the first 500 KiB read, unreachable means disallowed.
#[tokio::test]
async fn robots_variants_are_applied() {
    let h = Harness::start(false, &[]).await;
    let cases = [
        (guarded::ROBOTS_REDIRECT_HOST, "/page", true),
        (guarded::ROBOTS_REDIRECT_HOST, "/private/page", false),
        (guarded::ROBOTS_CROSS_HOST, "/page", true),
        (guarded::ROBOTS_CROSS_HOST, "/private/page", false),
        (guarded::ROBOTS_HUGE_HOST, "/page", true),
        (guarded::ROBOTS_HUGE_HOST, "/private/page", false),
        (guarded::ROBOTS_SLOW_HOST, "/page", false),
        (guarded::ROBOTS_LOOP_HOST, "/page", false),
    ];
    let urls: Vec<String> = cases
        .iter()
        .map(|(host, path, _)| Harness::url(path, host))
        .collect();
    let ended = h.fetch(&urls).await;
    for ((host, path, allowed), e) in cases.iter().zip(&ended) {
        match e {
            Ended::Doc(doc) => assert!(allowed, "{host}{path} fetched: {}", doc.final_url),
            Ended::Outcome(o) => {
                assert!(!allowed, "{host}{path}: {o:?}");
                assert_eq!(o.outcome, Outcome::RobotsDisallowed, "{host}{path}");
            }
        }
    }
    // Fetched once per origin although two tasks needed it at once.
    assert_eq!(
        h.fleet
            .simweb
            .path_hits(guarded::ROBOTS_HUGE_HOST, "/robots.txt"),
        1
    );
    h.stop().await;
}

/// One page for a tool (`trawl extract URL`, MCP's `extract`): the stage's robots.txt and
/// SSRF guard apply, and each refusal says why in words.
#[tokio::test]
async fn one_page_for_a_tool_keeps_to_robots_and_the_guard() {
    use trawl_fetch::one::{fetch_one, OneError};
    let h = Harness::start(false, &[]).await;
    let fetcher = trawl_fetch::http::Fetcher::new(&h.rt.config.fetch).unwrap();
    let at = |url: String| url::Url::parse(&url).unwrap();
    let host = guarded::ROBOTS_CROSS_HOST;
    let page = fetch_one(&h.rt, &fetcher, &at(Harness::url("/page", host))).await;
    assert!(page.is_ok(), "{:?}", page.err());
    let private = at(Harness::url("/private/page", host));
    let err = fetch_one(&h.rt, &fetcher, &private).await.unwrap_err();
    assert!(matches!(err, OneError::Disallowed(_)), "{err}");
    let intranet = at(Harness::url("/", PRIVATE_NAME));
    let err = fetch_one(&h.rt, &fetcher, &intranet).await.unwrap_err();
    assert!(
        matches!(&err, OneError::Refused(why) if why.contains("private or reserved")),
        "{err}"
    );
    let ftp = at("ftp://files.test/a".into());
    let err = fetch_one(&h.rt, &fetcher, &ftp).await.unwrap_err();
    assert!(matches!(err, OneError::Scheme), "{err}");
    h.stop().await;
}

/// Files are recognised by their bytes and turned into text; the rest is unsupported.
#[tokio::test]
async fn files_become_text_or_say_why_not() {
    let h = Harness::start(false, &[]).await;
    let at = |path: &str| Harness::url(path, files::HOST);
    let urls: Vec<String> = [
        "/report.pdf",
        "/download?id=7",
        "/brief.docx",
        "/data.csv",
        "/photo.png",
        "/archive.zip",
        "/misnamed.pdf",
        "/broken.pdf",
    ]
    .iter()
    .map(|p| at(p))
    .collect();
    let ended = h.fetch(&urls).await;
    for e in &ended[..2] {
        let doc = e.doc();
        assert_eq!(doc.content_type, "application/pdf");
        assert!(doc.body.contains("<!-- page 2 -->"), "{}", doc.body);
    }
    assert!(ended[2].doc().content_type.contains("wordprocessingml"));
    assert_eq!(ended[3].doc().content_type, "text/csv");
    assert!(ended[3].doc().body.contains(" | "));
    for e in &ended[4..6] {
        assert!(
            matches!(e.outcome().outcome, Outcome::Unsupported { .. }),
            "{e:?}"
        );
    }
    assert_eq!(ended[6].doc().content_type, "text/html");
    assert!(
        failed_reason(&ended[7]).contains("unreadable"),
        "{:?}",
        ended[7]
    );
    h.stop().await;
}

/// Politeness across processes: three fetch workers share one interval per host (and a host's
/// Crawl-delay when it is longer), as simweb's own request log shows. With one request per host
/// at a time (the default) each goes an interval after the previous one's answer, so no
/// scheduling delay on the way can bring two closer; robots.txt counts as a request.
#[tokio::test]
async fn several_fetch_processes_keep_each_hosts_interval() {
    let interval = Duration::from_millis(300);
    let mut h = Harness::start(false, &[("TRAWL__FETCH__MIN_INTERVAL_MS", "300")]).await;
    h.fleet.spawn("trawl-fetch");
    h.fleet.spawn("trawl-fetch");
    let mut urls: Vec<String> = (0..24)
        .map(|i| Harness::url(&format!("/p/{i}"), guarded::POLITE_HOST))
        .collect();
    urls.extend(
        guarded::CRAWL_DELAY_PATHS
            .iter()
            .map(|p| Harness::url(p, guarded::CRAWL_DELAY_HOST)),
    );
    let ended = h.fetch(&urls).await;
    assert!(
        ended.iter().all(|e| matches!(e, Ended::Doc(_))),
        "{ended:?}"
    );
    let stats = h.fleet.simweb.stats();
    let polite = stats.min_gap(guarded::POLITE_HOST, false).unwrap();
    assert!(polite >= interval, "two requests {polite:?} apart");
    let delay = Duration::from_secs(guarded::CRAWL_DELAY_SECONDS);
    let crawl = stats.min_gap(guarded::CRAWL_DELAY_HOST, false).unwrap();
    assert!(
        crawl >= delay,
        "two requests {crawl:?} apart under Crawl-delay"
    );
    h.stop().await;
}

/// A browser worker whose WebDriver is down puts the task back and tries again; once a
/// WebDriver answers, the page is fetched. No task is lost to a missing browser.
#[tokio::test]
async fn a_missing_browser_requeues_the_task_until_one_answers() {
    let mut h = Harness::start(false, &[]).await;
    let port = common::free_port();
    h.fleet.env.push((
        "TRAWL__FETCH__WEBDRIVER_URL".into(),
        format!("http://127.0.0.1:{port}"),
    ));
    h.fleet.spawn("trawl-fetch-browser");
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        LocalWebDriver::start(port).await.unwrap()
    });
    let ended = h
        .fetch(&[Harness::url(guarded::JS_ONLY_PATH, guarded::HOST)])
        .await;
    let doc = ended[0].doc();
    assert_eq!(doc.level, 2);
    assert!(doc.body.contains(guarded::JS_ONLY_MARKER));
    h.stop().await;
    drop(late.await.unwrap());
}

/// The shallow crawl follows a page's links within the job's cap; every followed link is an
/// ordinary task, so robots.txt still refuses what it disallows.
#[tokio::test]
async fn a_shallow_crawl_follows_links_and_checks_robots_for_each() {
    let h = Harness::start(
        false,
        &[
            ("TRAWL__FETCH__CRAWL_DEPTH", "1"),
            ("TRAWL__FETCH__CRAWL_MAX_PAGES", "4"),
        ],
    )
    .await;
    let host = guarded::ROBOTS_REDIRECT_HOST;
    let ended = h.fetch(&[Harness::url("/", host)]).await;
    assert_eq!(ended.len(), 3, "{ended:?}");
    assert!(ended[1].doc().final_url.ends_with("/page"));
    let private = ended[2].outcome();
    assert!(private.url.ends_with("/private/page"));
    assert_eq!(private.outcome, Outcome::RobotsDisallowed);

    // A page of 100 links adds only the job's cap, in document order, and no deeper hop.
    let ended = h.fetch(&[Harness::url("/", guarded::POLITE_HOST)]).await;
    let urls: Vec<&str> = ended[1..]
        .iter()
        .map(|e| e.doc().source.url.as_str())
        .collect();
    let expected: Vec<String> = (0..4)
        .map(|i| Harness::url(&format!("/p/{i}"), guarded::POLITE_HOST))
        .collect();
    assert_eq!(urls, expected);
    h.stop().await;
}

//! Chaos case 10, SSRF: redirects and links into 127.0.0.1, [::1], [::ffff:127.0.0.1],
//! 169.254.169.254, 10/8, decimal, octal and hex spellings, a name with a private address and
//! `localhost`; pages that need the browser and reach for such addresses from their
//! sub-resources, scripts and navigations; a name whose answer changes between resolutions.
//! Everything is refused by default and counted, no refused address is ever reached, and the
//! jobs complete with the refusals as their sources' outcomes.
//!
//! The fleet's simweb listens on 127.0.0.2, the only address allowed. A canary server listens
//! on 127.0.0.1, 127.0.0.3 and [::1] (loopback, so private here) at the port the targets name:
//! any connection to it is a hole in the guard. The cloud metadata and 10/8 addresses have no
//! canary (nothing may be sent there from this machine): they are refused before any connect,
//! which the outcomes and the counter show.
//!
//! A rebinding name cannot be made with the system resolver, so it is tested a level down: a
//! guarded resolver whose lookup answers the allowed address first and the canary's after,
//! over plain HTTP, through the browser proxy, and through real Chromium.

use crate::chaos_kit;
use crate::common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chaos_kit::ledger::Ledger;
use chaos_kit::run::{jobs_of, SERIAL};
use common::{free_port, get_text, Fleet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use trawl_config::FetchConfig;
use trawl_fetch::browser::{BrowserPool, LocalWebDriver};
use trawl_fetch::browser_proxy::BrowserProxy;
use trawl_fetch::metrics::METRICS;
use trawl_guard::{Guard, GuardedResolver, Rebinding};
use trawl_integration_tests::simweb::guarded::ssrf;
use trawl_integration_tests::simweb::{Corpus, Simweb};
use url::Url;

/// A server that must never be reached: it counts every connection on every address it
/// listens on, and answers with the secret a leak would carry.
struct Canary {
    port: u16,
    hits: Arc<AtomicUsize>,
    tasks: Vec<JoinHandle<()>>,
}

impl Canary {
    /// Listens on each of `ips` at `port` (0: one port free on all of them).
    async fn start(ips: &[&str], port: u16) -> Canary {
        for _ in 0..50 {
            let port = match port {
                0 => free_port(),
                p => p,
            };
            let mut listeners = Vec::new();
            for ip in ips {
                match TcpListener::bind((*ip, port)).await {
                    Ok(l) => listeners.push(l),
                    Err(_) => break,
                }
            }
            if listeners.len() < ips.len() {
                continue;
            }
            let hits = Arc::new(AtomicUsize::new(0));
            let tasks = listeners
                .into_iter()
                .map(|listener| {
                    let hits = Arc::clone(&hits);
                    tokio::spawn(async move {
                        while let Ok((mut s, _)) = listener.accept().await {
                            hits.fetch_add(1, Ordering::SeqCst);
                            tokio::spawn(async move {
                                let mut buf = [0u8; 4096];
                                let _ = s.read(&mut buf).await;
                                let body = ssrf::CANARY_SECRET;
                                let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n{body}", body.len());
                                let _ = s.write_all(reply.as_bytes()).await;
                            });
                        }
                    })
                })
                .collect();
            return Canary { port, hits, tasks };
        }
        panic!("no port free on {ips:?}");
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// `trawl_fetch_ssrf_refusals_total` on the metrics endpoint at `port`.
async fn refusals_at(port: u16) -> u64 {
    let text = get_text(&format!("http://127.0.0.1:{port}/metrics")).await;
    text.lines()
        .find_map(|l| l.strip_prefix("trawl_fetch_ssrf_refusals_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no refusal counter in\n{text}")) as u64
}

/// Case 10: SSRF through the whole fleet, levels 0 to 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf() {
    let _serial = SERIAL.lock().await;
    let canary = Canary::start(&["127.0.0.1", "127.0.0.3", "::1"], 0).await;
    let cp = canary.port;
    let mut fleet = Fleet::start_on("127.0.0.2").await;
    let web = fleet.simweb.addr();
    let driver = LocalWebDriver::start(0).await.unwrap();
    let settings = [
        (
            "TRAWL__FETCH__RESOLVE",
            format!(
                "{{ \"*.test\" = \"{web}\", \"{}\" = \"127.0.0.3:{cp}\" }}",
                ssrf::CANARY_NAME
            ),
        ),
        ("TRAWL__SEARCH__PROVIDERS", "[\"searxng\"]".into()),
        (
            "TRAWL__SEARCH__SEARXNG_URL",
            format!("http://{web}{}{cp}", ssrf::SEARCH_PREFIX),
        ),
        ("TRAWL__FETCH__CRAWL_DEPTH", "1".into()),
        ("TRAWL__FETCH__CRAWL_MAX_PAGES", "30".into()),
        ("TRAWL__FETCH__CRAWL_SAME_DOMAIN", "false".into()),
        ("TRAWL__FETCH__TIMEOUT_SECS", "10".into()),
        ("TRAWL__FETCH__BROWSER_TIMEOUT_SECS", "30".into()),
        ("TRAWL__FETCH__WEBDRIVER_URL", driver.url()),
        // Every job renders its own browser pages, so each makes its sub-resource requests
        // (and the guard refuses each): the page cache would hand later jobs the first render.
        ("TRAWL__CACHE__MAX_AGE_SECS", "0".into()),
    ];
    for (k, v) in settings {
        fleet.env.push((k.into(), v));
    }
    for stage in ["trawl-search", "trawl-clean", "trawl-synthesize"] {
        fleet.spawn(stage);
    }
    let metrics = [free_port(), free_port()];
    for (stage, port) in ["trawl-fetch", "trawl-fetch-browser"].iter().zip(metrics) {
        fleet.spawn_with(
            stage,
            &[],
            &[("TRAWL__METRICS__ADDR", format!("127.0.0.1:{port}"))],
        );
    }
    for port in metrics {
        let url = format!("http://127.0.0.1:{port}/metrics");
        fleet
            .wait_answering(&url, Duration::from_secs(30), "a fetch worker")
            .await;
    }
    let mut before = 0;
    for port in metrics {
        before += refusals_at(port).await;
    }

    let started = Instant::now();
    let options = "\"options\": {\"min_relevance\": 0.0, \"max_urls\": 20}";
    let questions: Vec<String> = [ssrf::REDIRECTS_WORD, ssrf::LINKS_WORD, ssrf::BROWSER_WORD]
        .iter()
        .flat_map(|word| {
            (1..=2).map(move |n| {
                format!("{{\"query\": \"What did the {word} survey {n} find?\", {options}}}")
            })
        })
        .collect();
    let batch = fleet.submit(&questions).await;
    fleet.wait_done(&batch, Duration::from_secs(300)).await;
    let jobs = jobs_of(&fleet, &batch);
    let mut ledger = Ledger::read("ssrf", &fleet.broker, &fleet.store, &batch, &jobs).await;
    ledger.wall_secs = started.elapsed().as_secs_f64();

    // Every source of every job, by the word its question named.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            fleet
                .out_dir()
                .join("batches")
                .join(&batch)
                .join("batch.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut refused = 0u64;
    let mut kept = 0u64;
    for job in manifest["jobs"].as_array().unwrap() {
        let (id, query) = (job["job_id"].as_str().unwrap(), job["query"].as_str());
        let query = query.unwrap_or_default();
        let path = fleet.out_dir().join("batches").join(&batch).join(id);
        let sources: Vec<serde_json::Value> = serde_json::from_slice(
            &std::fs::read(path.join("sources.json"))
                .unwrap_or_else(|e| panic!("{query}: no sources.json ({e})")),
        )
        .unwrap();
        let word = [ssrf::REDIRECTS_WORD, ssrf::LINKS_WORD, ssrf::BROWSER_WORD]
            .into_iter()
            .find(|w| query.contains(w))
            .unwrap_or_else(|| panic!("a question of no case: {query}"));
        let searched = ssrf::sources(word, cp);
        let urls: Vec<&str> = sources.iter().map(|s| s["url"].as_str().unwrap()).collect();
        for url in &searched {
            assert!(
                urls.contains(&url.as_str()),
                "{query}: {url} not a source: {urls:?}"
            );
        }
        // The pages themselves are fine; what they lead to is not.
        let fine = |url: &str| {
            url.ends_with(&format!("/links?canary={cp}"))
                || url.contains(&format!("{}?", ssrf::SUBRESOURCES_PATH))
        };
        for s in &sources {
            let (url, outcome) = (s["url"].as_str().unwrap(), &s["outcome"]);
            if fine(url) {
                assert!(
                    matches!(outcome["outcome"].as_str(), Some("analysed" | "irrelevant")),
                    "{query}: {url} should have been read: {s}"
                );
                kept += 1;
                continue;
            }
            assert_eq!(
                outcome["outcome"], "failed",
                "{query}: {url} not refused: {s}"
            );
            let reason = outcome["reason"].as_str().unwrap_or_default();
            assert!(reason.contains("refused:"), "{query}: {url}: {reason}");
            refused += 1;
        }
        match word {
            // Every link became a source (the crawl counts the spellings of one address once).
            ssrf::LINKS_WORD => {
                for (_, link) in ssrf::TARGETS {
                    let link = Url::parse(&ssrf::target(link, cp)).unwrap().to_string();
                    assert!(
                        urls.contains(&link.as_str()),
                        "{query}: {link} not followed"
                    );
                }
            }
            ssrf::BROWSER_WORD => {
                let page = sources.iter().find(|s| fine(s["url"].as_str().unwrap()));
                assert_eq!(page.unwrap()["level"], 2, "{page:?}");
            }
            _ => {}
        }
    }
    let mut after = 0;
    for port in metrics {
        after += refusals_at(port).await;
    }
    let counted = after - before;
    // Each refused source once, and each request the browser pages made to a refused address
    // (the sub-resource pages are rendered once per job that has one).
    let browser_pages = questions.len() as u64 / 3;
    let expected = refused + browser_pages * ssrf::SUBRESOURCE_REQUESTS as u64;
    ledger.notes.push(format!(
        "{refused} sources refused, {kept} kept; trawl_fetch_ssrf_refusals_total +{counted} (at least {expected} expected); canary hits {}",
        canary.hits()
    ));
    let leaked: Vec<String> = common::files_under(&fleet.out_dir())
        .into_iter()
        .filter(|p| {
            String::from_utf8_lossy(&std::fs::read(p).unwrap()).contains(ssrf::CANARY_SECRET)
        })
        .map(|p| p.display().to_string())
        .collect();
    ledger.settle();
    assert_eq!(canary.hits(), 0, "a refused address was reached");
    assert!(leaked.is_empty(), "the canary's answer reached {leaked:?}");
    assert_eq!(ledger.completed, ledger.submitted, "{ledger:?}");
    // Per question pair: every redirect, every distinct link, both browser navigations.
    let links: std::collections::BTreeSet<String> = (ssrf::TARGETS.iter())
        .map(|(_, link)| Url::parse(&ssrf::target(link, cp)).unwrap().to_string())
        .collect();
    assert_eq!(refused, 2 * (ssrf::TARGETS.len() + links.len() + 2) as u64);
    assert!(
        counted >= expected,
        "{counted} refusals counted, {expected} made"
    );
    fleet.cleanup().await;
    drop(driver);
}

/// Answers the allowed address to the first `good` lookups, then the canary's.
fn rebinding(good: usize) -> Arc<Rebinding> {
    Rebinding::new(good, [127, 0, 0, 2].into(), [127, 0, 0, 3].into())
}

/// A simweb on 127.0.0.2, the only address the tests' guards allow.
async fn allowed_simweb() -> Simweb {
    Simweb::start(Arc::new(Corpus::generate()), "127.0.0.2:0".parse().unwrap())
        .await
        .unwrap()
}

fn guarded(lookup: Arc<Rebinding>, overrides: &[(&str, String)]) -> GuardedResolver {
    let overrides: BTreeMap<String, String> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    GuardedResolver::with_lookup(Guard::new(&["127.0.0.2/32".into()]), &overrides, lookup)
}

fn browser_config(driver: &LocalWebDriver) -> FetchConfig {
    FetchConfig {
        webdriver_url: driver.url(),
        allow_networks: vec!["127.0.0.2/32".into()],
        browser_sessions: 1,
        browser_timeout_secs: 30,
        ..FetchConfig::default()
    }
}

/// A name that answers the allowed address first and a private one after never gets a byte to
/// the private one: each resolution is checked and is the one connected to, in the plain-HTTP
/// client, in the browser proxy, and so in Chromium, which resolves nothing itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_name_never_reaches_a_private_address() {
    let _serial = SERIAL.lock().await;
    let web = allowed_simweb().await;
    let port = web.addr().port();
    // The private answer leads to the same port on 127.0.0.3.
    let canary = Canary::start(&["127.0.0.3"], port).await;
    let page = format!("http://{}:{port}/page", ssrf::REBIND_HOST);

    // Plain HTTP, with the resolver as the fetch levels install it: one resolution per new
    // connection, checked.
    let lookup = rebinding(1);
    let client = reqwest::Client::builder()
        .dns_resolver(Arc::new(guarded(lookup.clone(), &[])))
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let first = client
        .get(&page)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(first.contains(ssrf::REBIND_MARKER), "{first}");
    let second = client.get(&page).send().await.unwrap_err();
    let text = trawl_pipeline::error::describe(&second);
    assert!(text.contains("refused:"), "{text}");
    assert_eq!(lookup.calls(), 2);

    // Through the browser proxy: absolute-form plain HTTP, then a CONNECT tunnel.
    let lookup = rebinding(1);
    let proxy =
        BrowserProxy::start("127.0.0.1:0".parse().unwrap(), guarded(lookup.clone(), &[])).unwrap();
    let via = reqwest::Client::builder()
        .proxy(reqwest::Proxy::http(format!("http://{}", proxy.addr())).unwrap())
        .build()
        .unwrap();
    let first = via.get(&page).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert!(first.text().await.unwrap().contains(ssrf::REBIND_MARKER));
    let second = via.get(&page).send().await.unwrap();
    assert_eq!(second.status(), 403);
    assert!(second.text().await.unwrap().contains("refused: "));
    let mut tunnel = TcpStream::connect(proxy.addr()).await.unwrap();
    let connect = format!("CONNECT {}:{port} HTTP/1.1\r\n\r\n", ssrf::REBIND_HOST);
    tunnel.write_all(connect.as_bytes()).await.unwrap();
    let mut reply = String::new();
    tunnel.read_to_string(&mut reply).await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 403 "), "{reply}");
    assert_eq!(lookup.calls(), 3);
    drop(proxy);

    // Chromium. The check before navigating gets the allowed answer; the browser, asking
    // through its proxy, the private one. Under the old design (check, then let Chromium
    // resolve) this is the rebinding window.
    let driver = LocalWebDriver::start(0).await.unwrap();
    let config = browser_config(&driver);
    let url = Url::parse(&page).unwrap();
    let lookup = rebinding(usize::MAX);
    let pool = BrowserPool::with_resolver(&config, guarded(lookup.clone(), &[])).unwrap();
    let control = pool.render(&url, 2).await.unwrap();
    assert!(
        control.html.contains(ssrf::REBIND_MARKER),
        "{}",
        control.html
    );
    drop(pool);
    for good in [1, 2] {
        // 1: the page itself is refused; 2: the page loads, and its script, image and data
        // (its own host, asked again) meet the private answer, so the page is refused too.
        let lookup = rebinding(good);
        let pool = BrowserPool::with_resolver(&config, guarded(lookup.clone(), &[])).unwrap();
        let refused = pool.render(&url, 2).await.unwrap_err();
        assert!(
            refused.to_string().contains("refused: "),
            "{good}: {refused}"
        );
        assert!(lookup.calls() > good, "{good}: {} lookups", lookup.calls());
    }
    assert_eq!(
        canary.hits(),
        0,
        "a rebinding name reached a private address"
    );
    drop(driver);
}

/// What a browser page asks of refused addresses never leaves the proxy: the page renders
/// with its own content and the proxy's refusals where the answers would have been.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pages_requests_to_private_addresses_stop_at_the_proxy() {
    let _serial = SERIAL.lock().await;
    let web = allowed_simweb().await;
    let canary = Canary::start(&["127.0.0.1", "127.0.0.3", "::1"], 0).await;
    let driver = LocalWebDriver::start(0).await.unwrap();
    let mut config = browser_config(&driver);
    config.resolve = [
        ("*.test".to_string(), web.addr().to_string()),
        (
            ssrf::CANARY_NAME.to_string(),
            SocketAddr::new([127, 0, 0, 3].into(), canary.port).to_string(),
        ),
    ]
    .into_iter()
    .collect();
    let pool = BrowserPool::new(&config).unwrap();
    let at = |path: &str| {
        Url::parse(&format!(
            "http://{}{path}?canary={}",
            ssrf::BROWSER_HOST,
            canary.port
        ))
        .unwrap()
    };
    let since = std::time::Instant::now();
    let page = pool.render(&at(ssrf::SUBRESOURCES_PATH), 2).await.unwrap();
    assert!(page.html.contains(ssrf::ARTICLE_MARKER), "{}", page.html);
    // A refusal is opaque to the page's scripts (no CORS header): nothing came back at all.
    assert!(!page.html.contains(ssrf::CANARY_SECRET), "{}", page.html);
    assert!(!page.html.contains("<pre class=\"leak\">"), "{}", page.html);
    // Each of the page's requests reached the proxy, and each was refused there.
    let refused = pool.proxy().refusals_since(since);
    let mut by_host: BTreeMap<&str, usize> = BTreeMap::new();
    for (host, _) in &refused {
        *by_host.entry(host.as_str()).or_default() += 1;
    }
    // The page's requests by kind: stylesheet, script, images, frames, fetch, XHR, WebSocket.
    let asked = [
        ("[::1]", 1),
        ("127.0.0.3", 3),
        ("169.254.169.254", 3),
        ("127.0.0.1", 1),
        (ssrf::CANARY_NAME, 1),
        ("localhost", 1),
        ("[::ffff:7f00:1]", 1),
    ];
    assert_eq!(
        asked.iter().map(|(_, n)| n).sum::<usize>(),
        ssrf::SUBRESOURCE_REQUESTS
    );
    for (host, n) in asked {
        let got = by_host.get(host).copied().unwrap_or(0);
        assert!(got >= n, "{host}: {got} of {n} refused; all: {refused:?}");
    }
    for path in [ssrf::SCRIPT_REDIRECT_PATH, ssrf::META_REFRESH_PATH] {
        let (counted, since) = (METRICS.ssrf_refusals.get(), std::time::Instant::now());
        let refused = pool.render(&at(path), 2).await.unwrap_err();
        assert!(
            refused.to_string().contains("refused: "),
            "{path}: {refused}"
        );
        // The navigation the proxy refused is counted there, and only there.
        let made = pool.proxy().refusals_since(since).len() as u64;
        assert_eq!(METRICS.ssrf_refusals.get() - counted, made, "{path}");
    }
    // A refusal of the pool's own check, before any browser, is counted once too.
    let counted = METRICS.ssrf_refusals.get();
    let private = format!("http://{}:{}/", ssrf::CANARY_NAME, canary.port);
    let refused = pool.render(&Url::parse(&private).unwrap(), 2).await;
    assert!(refused.is_err_and(|e| e.to_string().contains("refused: ")));
    assert_eq!(METRICS.ssrf_refusals.get(), counted + 1);
    assert_eq!(canary.hits(), 0, "a refused address was reached");
    drop(pool);
    drop(driver);
}

/// No configuration takes the browser around its proxy: switches that would are refused, and
/// a browser on another machine (which could not reach a loopback proxy) needs the proxy's
/// address as it sees it.
#[tokio::test]
async fn the_browser_cannot_be_configured_around_its_proxy() {
    let _serial = SERIAL.lock().await;
    for arg in [
        "--proxy-server=direct://",
        "--no-proxy-server",
        "--proxy-bypass-list=*",
        "--host-resolver-rules=MAP * 10.0.0.1",
    ] {
        let config = FetchConfig {
            browser_args: vec![arg.into()],
            ..FetchConfig::default()
        };
        let err = BrowserPool::new(&config)
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains("past the SSRF proxy"), "{arg}: {err}");
    }
    let remote = FetchConfig {
        webdriver_url: "http://selenium:4444".into(),
        ..FetchConfig::default()
    };
    let err = BrowserPool::new(&remote)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("fetch.browser_proxy_advertise"), "{err}");
    let advertised = FetchConfig {
        browser_proxy_advertise: "fetch-browser:9470".into(),
        ..remote
    };
    assert!(BrowserPool::new(&advertised).is_ok());
}

//! Levels 2 and 3: a real Chromium over WebDriver (chromedriver or a Selenium pod), through
//! fantoccini.
//!
//! Level 2 is headless Chromium as it comes; level 3 launches it without the automation tells
//! (`navigator.webdriver` false, no "HeadlessChrome" user agent, no automation switch), with a
//! desktop viewport and language, and scrolls a little as a reader would. A page counts as
//! loaded when the DOM is ready and then stops changing: its size and the number of resources
//! it has fetched stay the same over two polls.
//!
//! Sessions are pooled per level (starting Chromium costs far more than a page) and recycled
//! after a number of pages. A worker never holds more than `fetch.browser_sessions` of them,
//! busy and idle together: an idle session of the other level is closed to make room. Every
//! path closes them: a session that errs is closed before the error is returned, and a session
//! dropped without being closed (a cancelled task, a panic, the worker shutting down with idle
//! sessions) is deleted by a blocking WebDriver call from its `Drop`, so no Chromium outlives
//! its worker. Only a SIGKILLed worker leaves sessions behind; Selenium reaps those by its
//! session timeout, a bare chromedriver keeps them until it stops.
//!
//! The WebDriver can die too (a Selenium pod killed, chromedriver OOM-killed or restarted).
//! Chromium talks to it over a pipe (`--remote-debugging-pipe`) rather than a port, so it quits
//! with the WebDriver that launched it instead of living on as an orphan nobody can reach or
//! close. A page whose WebDriver stopped answering ends in [`BrowserError::Unreachable`], an
//! outage the stage retries without spending the task's attempts. A page that needs a new
//! session while the WebDriver is down waits a little for it to come back (a restart takes
//! about a second) before it goes back to the queue, and a pooled session is checked before
//! reuse, so one that died while idle (its WebDriver restarted) costs no page anything.
//!
//! The SSRF guard cannot sit inside Chromium's resolver, so Chromium resolves nothing: every
//! request it makes (the page, its sub-resources and scripts' requests, redirects, script
//! navigations) goes through the pool's [`BrowserProxy`], which resolves through the guard and
//! connects to the address it checked (`--proxy-server`, with `--proxy-bypass-list=<-loopback>`
//! so loopback is no exception; configured overrides apply there). The URL is also checked
//! before navigating and the final URL after, and a page whose own host the proxy refused while
//! it rendered (a name that answered differently once Chromium asked) ends refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::error::{CmdError, ErrorStatus, NewSessionError};
use fantoccini::wd::TimeoutConfiguration;
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tracing::{debug, warn};
use trawl_config::FetchConfig;
use url::Url;

use crate::browser_proxy::BrowserProxy;
use crate::metrics::{labels, METRICS};
use trawl_guard::{Guard, GuardedResolver, LookupError, Refusal};

/// What a stealth session claims to be: a desktop Chrome, matching the Chromium that runs it.
const DESKTOP_UA: &str =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
/// Pages a session renders before it is replaced (Chromium grows over long runs).
const PAGES_PER_SESSION: u32 = 50;
/// Sessions idle longer than this are closed rather than reused.
const MAX_IDLE: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(250);
/// How long a page waits for its WebDriver to answer again before it goes back to the queue: a
/// chromedriver restart takes about a second, and the whole backlog should not cycle through
/// the retry tier for it.
const OUTAGE_WAIT: Duration = Duration::from_secs(10);

/// A rendered page.
#[derive(Debug)]
pub struct Rendered {
    pub final_url: String,
    /// From the Navigation Timing entry; absent when Chromium does not report it.
    pub status: Option<u16>,
    pub html: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No session could be had (Chromium would not start, or took too long): try again later.
    #[error("browser unavailable: {0}")]
    Unavailable(String),
    /// The WebDriver did not answer at all (down, killed, restarting): an outage of the
    /// browser service, whatever the page.
    #[error("browser unreachable: {0}")]
    Unreachable(String),
    /// The session died under the page while its WebDriver still answers (Chromium or its tab
    /// crashed or was killed): try again later, an attempt spent, as the page may be the cause.
    #[error("browser crashed: {0}")]
    Crashed(String),
    #[error("browser timed out after {0} s")]
    Timeout(u64),
    /// The page itself failed (DNS, refused, TLS) or the guard refused it.
    #[error("{0}")]
    Navigation(String),
    #[error("rendered page is larger than {0} bytes")]
    TooLarge(u64),
}

impl BrowserError {
    pub(crate) fn is_transient(&self) -> bool {
        matches!(
            self,
            BrowserError::Unavailable(_) | BrowserError::Unreachable(_) | BrowserError::Crashed(_)
        )
    }
}

struct Session {
    client: Option<Client>,
    id: String,
    stealth: bool,
    pages: u32,
    idle_since: Instant,
    webdriver: Arc<Url>,
}

impl Session {
    fn client(&self) -> &Client {
        self.client.as_ref().expect("an open session")
    }

    /// One cheap round trip: a pooled session may have died while it sat idle.
    async fn alive(&self) -> bool {
        let probe = tokio::time::timeout(Duration::from_secs(5), self.client().current_url());
        probe.await.is_ok_and(|r| r.is_ok())
    }

    async fn close(mut self) {
        if let Some(client) = self.client.take() {
            if let Err(e) = tokio::time::timeout(Duration::from_secs(10), client.close()).await {
                debug!(session = %self.id, error = %e, "closing a browser session timed out");
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.client.take().is_some() {
            delete_session_blocking(&self.webdriver, &self.id);
        }
    }
}

/// `DELETE /session/{id}` over a plain socket, for `Drop`, where nothing can be awaited.
fn delete_session_blocking(webdriver: &Url, id: &str) {
    let Some(host) = webdriver.host_str() else {
        return;
    };
    let port = webdriver.port_or_known_default().unwrap_or(80);
    let path = format!("{}/session/{id}", webdriver.path().trim_end_matches('/'));
    let attempt = || -> std::io::Result<()> {
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))?
            .next()
            .ok_or_else(|| std::io::Error::other("no address"))?;
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_write_timeout(Some(Duration::from_secs(2)))?;
        write!(
            stream,
            "DELETE {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        // The status line is enough: chromedriver may hold the connection open after it.
        let mut head = [0u8; 64];
        let n = stream.read(&mut head)?;
        if head[..n].starts_with(b"HTTP/1.1 200") {
            Ok(())
        } else {
            Err(std::io::Error::other(
                String::from_utf8_lossy(&head[..n]).into_owned(),
            ))
        }
    };
    match attempt() {
        Ok(()) => debug!(session = id, "browser session deleted on drop"),
        Err(e) => warn!(session = id, error = %e, "could not delete a dropped browser session"),
    }
}

fn set_idle(sessions: usize) {
    METRICS
        .browser_sessions
        .get_or_create(&labels(&[("state", "idle")]))
        .set(sessions as i64);
}

/// Counts a session as busy for as long as a page holds it.
struct Busy;

impl Busy {
    fn start() -> Self {
        METRICS
            .browser_sessions
            .get_or_create(&labels(&[("state", "busy")]))
            .inc();
        Busy
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        METRICS
            .browser_sessions
            .get_or_create(&labels(&[("state", "busy")]))
            .dec();
    }
}

pub struct BrowserPool {
    webdriver: Arc<Url>,
    idle: Mutex<Vec<Session>>,
    permits: Semaphore,
    timeout: Duration,
    max_bytes: u64,
    args: Vec<String>,
    guard: Guard,
    resolver: GuardedResolver,
    /// Chromium's only way out; it stops with the pool.
    proxy: BrowserProxy,
}

/// Switches that would take Chromium past the proxy, refused in `fetch.browser_args`.
const PROXY_SWITCHES: [&str; 6] = [
    "--proxy-server",
    "--proxy-bypass-list",
    "--proxy-pac-url",
    "--proxy-auto-detect",
    "--no-proxy-server",
    "--host-resolver-rules",
];

/// Why a browser pool could not be built from its config.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("fetch.webdriver_url {given:?}: {source}")]
    WebDriverUrl {
        given: String,
        source: url::ParseError,
    },
    /// A WebDriver URL of another scheme than `http`, by its scheme.
    #[error("fetch.webdriver_url must be http:// (chromedriver, Selenium), not {0}")]
    NotHttp(String),
    /// A `fetch.browser_args` switch of [`PROXY_SWITCHES`].
    #[error("fetch.browser_args: {0} would take the browser past the SSRF proxy")]
    ProxyBypass(String),
    /// A WebDriver elsewhere, and no address of the proxy given that its browser could reach.
    #[error(
        "fetch.webdriver_url {webdriver} is not on this machine, so its browser cannot reach this worker's SSRF proxy at fetch.browser_proxy_listen ({listen}): listen where it can (such as 0.0.0.0:9470) and set fetch.browser_proxy_advertise to this worker's host:port as the browser sees it"
    )]
    ProxyUnreachable { webdriver: Url, listen: String },
    #[error("fetch.browser_proxy_listen: {0}")]
    Listen(std::net::AddrParseError),
    #[error("browser proxy: {0}")]
    Proxy(#[from] crate::browser_proxy::ProxyError),
}

/// The WebDriver's URL, once the config is known to keep its browser behind the SSRF proxy: a
/// plain HTTP WebDriver, no switch around the proxy, and a proxy address the browser can reach.
fn checked_webdriver(config: &FetchConfig) -> Result<Url, PoolError> {
    let webdriver =
        Url::parse(&config.webdriver_url).map_err(|source| PoolError::WebDriverUrl {
            given: config.webdriver_url.clone(),
            source,
        })?;
    if webdriver.scheme() != "http" {
        return Err(PoolError::NotHttp(webdriver.scheme().to_owned()));
    }
    let bypass = |a: &&String| PROXY_SWITCHES.iter().any(|s| a.starts_with(s));
    if let Some(arg) = config.browser_args.iter().find(bypass) {
        return Err(PoolError::ProxyBypass(arg.clone()));
    }
    let local_webdriver = match webdriver.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if !local_webdriver && config.browser_proxy_advertise.is_empty() {
        return Err(PoolError::ProxyUnreachable {
            webdriver,
            listen: config.browser_proxy_listen.clone(),
        });
    }
    Ok(webdriver)
}

/// Chromium's command line: headless, quiet, every connection through the proxy at
/// `advertised`, then the configured `extra` switches.
fn chromium_args(advertised: &str, extra: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless=new",
        // Containers run as root without user namespaces; the pod is the sandbox.
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-sync",
        "--disable-default-apps",
        "--no-first-run",
        "--mute-audio",
        "--window-size=1366,900",
        // DevTools over a pipe from the WebDriver, not a port: when the WebDriver dies
        // (SIGKILL, OOM), the pipe closes and Chromium quits instead of living on orphaned.
        "--remote-debugging-pipe",
    ]
    .map(String::from)
    .to_vec();
    args.extend([
        format!("--proxy-server=http://{advertised}"),
        // Chromium sends loopback around a proxy unless told not to.
        "--proxy-bypass-list=<-loopback>".into(),
        // WebRTC would otherwise open UDP to any address a page names.
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        // QUIC is UDP: it cannot go through the proxy.
        "--disable-quic".into(),
    ]);
    args.extend(extra.iter().cloned());
    args
}

impl BrowserPool {
    /// A pool whose browsers resolve names through the guard and the configured overrides.
    /// Starts the pool's proxy, so it must be called inside a tokio runtime.
    pub fn new(config: &FetchConfig) -> Result<BrowserPool, PoolError> {
        let guard = Guard::new(&config.allow_networks);
        BrowserPool::with_resolver(config, GuardedResolver::new(guard, &config.resolve))
    }

    /// A pool whose browsers reach the web through `resolver` (tests give it a scripted
    /// lookup).
    pub fn with_resolver(
        config: &FetchConfig,
        resolver: GuardedResolver,
    ) -> Result<BrowserPool, PoolError> {
        let webdriver = checked_webdriver(config)?;
        let guard = resolver.guard().clone();
        let listen = (config.browser_proxy_listen.parse()).map_err(PoolError::Listen)?;
        let proxy = BrowserProxy::start(listen, resolver.clone())?;
        let advertised = match config.browser_proxy_advertise.as_str() {
            "" if proxy.addr().ip().is_unspecified() => {
                format!("127.0.0.1:{}", proxy.addr().port())
            }
            "" => proxy.addr().to_string(),
            configured => configured.to_owned(),
        };
        let args = chromium_args(&advertised, &config.browser_args);
        METRICS
            .browser_sessions_max
            .set(config.browser_sessions as i64);
        Ok(BrowserPool {
            webdriver: Arc::new(webdriver),
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(config.browser_sessions),
            timeout: Duration::from_secs(config.browser_timeout_secs),
            max_bytes: config.max_bytes,
            args,
            guard,
            resolver,
            proxy,
        })
    }

    fn capabilities(&self, stealth: bool) -> serde_json::Map<String, Value> {
        let mut args = self.args.clone();
        let mut options = json!({});
        if stealth {
            args.extend(
                [
                    "--disable-blink-features=AutomationControlled",
                    "--lang=en-US",
                    &format!("--user-agent={DESKTOP_UA}"),
                ]
                .map(String::from),
            );
            options["excludeSwitches"] = json!(["enable-automation"]);
            options["prefs"] = json!({"intl.accept_languages": "en-US,en"});
        }
        options["args"] = json!(args);
        let caps = json!({
            "browserName": "chrome",
            // Our own settle loop decides when the page is done; "normal" would wait on every
            // slow image.
            "pageLoadStrategy": "eager",
            "goog:chromeOptions": options,
        });
        match caps {
            Value::Object(map) => map,
            _ => unreachable!("a JSON object literal"),
        }
    }

    /// A new session. While the WebDriver does not answer, the page waits for it (at most
    /// [`OUTAGE_WAIT`]) and holds its permit, so the worker's other pages wait their turn
    /// instead of failing one after another.
    async fn open(&self, stealth: bool) -> Result<Session, BrowserError> {
        match self.start_session(stealth).await {
            Err(BrowserError::Unreachable(reason)) => {
                let until = Instant::now() + OUTAGE_WAIT;
                while !webdriver_ready(self.webdriver.as_str()).await {
                    if Instant::now() >= until {
                        return Err(BrowserError::Unreachable(reason));
                    }
                    tokio::time::sleep(POLL).await;
                }
                self.start_session(stealth).await
            }
            started => started,
        }
    }

    async fn start_session(&self, stealth: bool) -> Result<Session, BrowserError> {
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        builder.capabilities(self.capabilities(stealth));
        let connect = builder.connect(self.webdriver.as_str());
        let client = tokio::time::timeout(self.timeout, connect)
            .await
            .map_err(|_| BrowserError::Unavailable("starting a session timed out".into()))?
            .map_err(|e| new_session_error(&e))?;
        let id = client.session_id().await.ok().flatten().unwrap_or_default();
        let session = Session {
            client: Some(client),
            id,
            stealth,
            pages: 0,
            idle_since: Instant::now(),
            webdriver: Arc::clone(&self.webdriver),
        };
        let timeouts =
            TimeoutConfiguration::new(Some(self.timeout), Some(self.timeout), Some(Duration::ZERO));
        let client = session.client.as_ref().expect("just opened");
        if let Err(e) = client.update_timeouts(timeouts).await {
            let error = match cmd_error(&e, self.timeout.as_secs()) {
                unreachable @ BrowserError::Unreachable(_) => unreachable,
                other => BrowserError::Unavailable(other.to_string()),
            };
            session.close().await;
            return Err(error);
        }
        Ok(session)
    }

    /// A pooled session for the level, or a new one. The caller holds a permit; before it
    /// opens a session, idle ones beyond the permits nobody holds are closed, longest idle
    /// first, so busy and idle sessions together stay within the pool's bound.
    async fn take(&self, stealth: bool) -> Result<Session, BrowserError> {
        let (reuse, retired) = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let (mut retired, fresh): (Vec<Session>, Vec<Session>) = idle
                .drain(..)
                .partition(|s| s.idle_since.elapsed() > MAX_IDLE);
            *idle = fresh;
            let at = idle.iter().position(|s| s.stealth == stealth);
            let reuse = at.map(|i| idle.remove(i));
            if reuse.is_none() {
                let over = surplus(idle.len(), self.permits.available_permits());
                retired.extend(idle.drain(..over));
            }
            set_idle(idle.len());
            (reuse, retired)
        };
        for s in retired {
            s.close().await;
        }
        match reuse {
            Some(s) if s.alive().await => Ok(s),
            Some(dead) => {
                // Died while idle (its WebDriver restarted, its Chromium was killed): no fault
                // of the page about to use it.
                debug!(session = %dead.id, "pooled browser session is gone; opening another");
                dead.close().await;
                self.open(stealth).await
            }
            None => self.open(stealth).await,
        }
    }

    async fn give_back(&self, mut session: Session) {
        session.pages += 1;
        let reusable = session.pages < PAGES_PER_SESSION && {
            let client = session.client.as_ref().expect("open session");
            // Nothing of one site may follow the session to the next.
            let reset = async {
                client.goto("about:blank").await?;
                client.delete_all_cookies().await
            };
            tokio::time::timeout(Duration::from_secs(10), reset)
                .await
                .is_ok_and(|r| r.is_ok())
        };
        if reusable {
            session.idle_since = Instant::now();
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push(session);
            set_idle(idle.len());
        } else {
            session.close().await;
        }
    }

    /// Renders `url` at `level` (2 or 3).
    pub async fn render(&self, url: &Url, level: u8) -> Result<Rendered, BrowserError> {
        self.check(url).await?;
        let _permit = match self.permits.try_acquire() {
            Ok(permit) => permit,
            Err(_) => {
                METRICS.browser_waits.inc();
                self.permits
                    .acquire()
                    .await
                    .map_err(|_| BrowserError::Unavailable("pool closed".into()))?
            }
        };
        let _busy = Busy::start();
        let stealth = level >= 3;
        let session = self.take(stealth).await?;
        let since = Instant::now();
        let visited = self.visit(session.client(), url, stealth).await;
        let visited = visited.map_err(|e| self.refused_during(url, since, e));
        match visited {
            Ok(page) => {
                self.give_back(session).await;
                self.check_rendered(url, &page, since)?;
                Ok(page)
            }
            Err(e) => {
                session.close().await;
                Err(e)
            }
        }
    }

    /// The proxy the pool's browsers go through.
    pub fn proxy(&self) -> &BrowserProxy {
        &self.proxy
    }

    /// A failed navigation of `url` whose host the proxy refused meanwhile was refused.
    fn refused_during(&self, url: &Url, since: Instant, e: BrowserError) -> BrowserError {
        let refused = match &e {
            BrowserError::Navigation(_) => url
                .host_str()
                .and_then(|host| self.proxy.refused_since(host, since)),
            _ => None,
        };
        refused.map_or(e, BrowserError::Navigation)
    }

    /// The page's host must not have been refused by the proxy while it rendered: then what
    /// Chromium shows is the proxy's refusal, or a page whose name turned private halfway (the
    /// proxy counted that refusal). Where the page ended must pass the guard too: the proxy
    /// resolved and checked its host, so only what the proxy never sees is left to check (a
    /// scheme other than http(s)).
    fn check_rendered(
        &self,
        url: &Url,
        page: &Rendered,
        since: Instant,
    ) -> Result<(), BrowserError> {
        let final_url = Url::parse(&page.final_url).unwrap_or_else(|_| url.clone());
        let host = final_url.host_str().unwrap_or_default();
        if let Some(reason) = self.proxy.refused_since(host, since) {
            return Err(BrowserError::Navigation(reason));
        }
        self.guard.check_url(&final_url).map_err(refused)
    }

    /// The SSRF guard, before the browser is asked: a clear refusal without a round trip.
    async fn check(&self, url: &Url) -> Result<(), BrowserError> {
        self.guard.check_url(url).map_err(refused)?;
        match url.host() {
            Some(url::Host::Domain(host)) => {
                self.resolver
                    .lookup(host)
                    .await
                    .map(|_| ())
                    .map_err(|e| match e {
                        LookupError::Refused(r) => refused(r),
                        LookupError::Unresolved(reason) => BrowserError::Navigation(reason),
                    })
            }
            _ => Ok(()),
        }
    }

    async fn visit(
        &self,
        client: &Client,
        url: &Url,
        stealth: bool,
    ) -> Result<Rendered, BrowserError> {
        let started = Instant::now();
        let secs = self.timeout.as_secs();
        let deadline = started + self.timeout;
        tokio::time::timeout(self.timeout, client.goto(url.as_str()))
            .await
            .map_err(|_| BrowserError::Timeout(secs))?
            .map_err(|e| cmd_error(&e, secs))?;
        self.settle(client, deadline).await?;
        if stealth {
            // A reader scrolls; some pages load their text on the way.
            for y in [300, 700, 1200, 0] {
                script(client, &format!("window.scrollTo(0, {y});"), secs).await?;
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            self.settle(client, deadline).await?;
        }
        let state = script(
            client,
            "const n = performance.getEntriesByType('navigation')[0];
             return [location.href, n && n.responseStatus ? n.responseStatus : 0,
                     document.documentElement.outerHTML.length];",
            secs,
        )
        .await?;
        let final_url = state[0].as_str().unwrap_or(url.as_str()).to_owned();
        let status = state[1].as_u64().filter(|&s| s > 0).map(|s| s as u16);
        let chars = state[2].as_u64().unwrap_or(0);
        if chars > self.max_bytes {
            return Err(BrowserError::TooLarge(self.max_bytes));
        }
        let html = script(client, "return document.documentElement.outerHTML;", secs).await?;
        Ok(Rendered {
            final_url,
            status,
            html: html.as_str().unwrap_or_default().to_owned(),
        })
    }

    /// Waits until the document is ready and its size and resource count hold still over two
    /// polls, or the deadline passes (then what there is counts: a page that never stops
    /// changing still has content).
    async fn settle(&self, client: &Client, deadline: Instant) -> Result<(), BrowserError> {
        let secs = self.timeout.as_secs();
        let mut last = None;
        let mut steady = 0;
        while Instant::now() < deadline {
            let probe = script(
                client,
                "return [document.readyState,
                         document.documentElement ? document.documentElement.outerHTML.length : 0,
                         performance.getEntriesByType('resource').length];",
                secs,
            )
            .await?;
            let ready = probe[0].as_str() == Some("complete");
            let now = (probe[1].as_u64(), probe[2].as_u64());
            steady = if ready && last == Some(now) {
                steady + 1
            } else {
                0
            };
            if steady >= 2 {
                return Ok(());
            }
            last = Some(now);
            tokio::time::sleep(POLL).await;
        }
        Ok(())
    }
}

async fn script(client: &Client, js: &str, secs: u64) -> Result<Value, BrowserError> {
    client
        .execute(js, Vec::new())
        .await
        .map_err(|e| cmd_error(&e, secs))
}

fn new_session_error(e: &NewSessionError) -> BrowserError {
    match e {
        NewSessionError::Failed(_) | NewSessionError::FailedC(_) | NewSessionError::Lost(_) => {
            BrowserError::Unreachable(format!("no WebDriver answering ({e}); start chromedriver or a Selenium pod at fetch.webdriver_url, or set fetch.max_level = 1"))
        }
        _ => BrowserError::Unavailable(e.to_string()),
    }
}

/// A refusal of the pool's own guard checks, counted here as the proxy counts its own.
fn refused(refusal: Refusal) -> BrowserError {
    METRICS.ssrf_refusals.inc();
    BrowserError::Navigation(refusal.to_string())
}

/// How many of `idle` sessions to close before opening one more, when `free` permits are held
/// by nobody: each of those may yet want a session of its own.
fn surplus(idle: usize, free: usize) -> usize {
    idle.saturating_sub(free)
}

fn cmd_error(e: &CmdError, secs: u64) -> BrowserError {
    match e {
        CmdError::Standard(w) => {
            let message = w.message.to_string();
            if w.error == ErrorStatus::Timeout || w.error == ErrorStatus::ScriptTimeout {
                BrowserError::Timeout(secs)
            } else if message.contains("net::ERR_") {
                let code = message
                    .split_whitespace()
                    .find(|w| w.starts_with("net::ERR_"))
                    .unwrap_or("net::ERR_FAILED");
                BrowserError::Navigation(format!("browser: {code}"))
            } else {
                // Invalid session, "chrome not reachable", "tab crashed" …: the session is gone.
                BrowserError::Crashed(message.lines().next().unwrap_or_default().to_owned())
            }
        }
        // No answer at all: the WebDriver died or is restarting, whatever the page.
        CmdError::Failed(_) | CmdError::FailedC(_) | CmdError::Lost(_) => {
            BrowserError::Unreachable(e.to_string())
        }
        other => BrowserError::Crashed(other.to_string()),
    }
}

/// True when a WebDriver answers `GET /status` as ready at `url`.
pub async fn webdriver_ready(url: &str) -> bool {
    let client = trawl_http::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build();
    let Ok(client) = client else { return false };
    let status = format!("{}/status", url.trim_end_matches('/'));
    match client.get(status).send().await {
        Ok(r) if r.status().is_success() => r
            .json::<Value>()
            .await
            .is_ok_and(|v| v["value"]["ready"].as_bool().unwrap_or(true)),
        _ => false,
    }
}

/// Why [`LocalWebDriver::start`] has no chromedriver to give.
#[derive(Debug, thiserror::Error)]
pub enum ChromedriverError {
    #[error("no free port for chromedriver: {0}")]
    NoPort(std::io::Error),
    #[error("cannot start chromedriver ({0}); install chromium and chromium-driver (scripts/services-up does)")]
    Spawn(std::io::Error),
    /// Started, but not answering on this port after ten seconds.
    #[error("chromedriver did not come up on port {0}")]
    NotUp(u16),
}

/// A chromedriver this process started, for `trawl run` on a workstation and for tests; shut
/// down with every browser it launched when dropped.
pub struct LocalWebDriver {
    port: u16,
    child: std::process::Child,
}

impl LocalWebDriver {
    /// Starts `chromedriver` from `PATH` on `port` (0: any free port) and waits until it
    /// answers.
    pub async fn start(port: u16) -> Result<LocalWebDriver, ChromedriverError> {
        let port = match port {
            0 => std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(ChromedriverError::NoPort)?
                .port(),
            p => p,
        };
        let child = std::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(ChromedriverError::Spawn)?;
        let driver = LocalWebDriver { port, child };
        for _ in 0..100 {
            if webdriver_ready(&driver.url()).await {
                return Ok(driver);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(ChromedriverError::NotUp(port))
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for LocalWebDriver {
    fn drop(&mut self) {
        // `/shutdown` quits the browsers too; a bare kill would orphan them.
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = write!(
                s,
                "GET /shutdown HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            );
            let _ = s.read(&mut [0u8; 64]);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use fantoccini::error::WebDriver;

    use super::*;

    #[test]
    fn a_webdriver_that_does_not_answer_is_an_outage_not_a_crash() {
        let lost = CmdError::Lost(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset by peer",
        ));
        assert!(matches!(cmd_error(&lost, 30), BrowserError::Unreachable(_)));
        let gone = CmdError::Standard(WebDriver::new(
            ErrorStatus::InvalidSessionId,
            "invalid session id: session deleted as the browser has closed the connection",
        ));
        assert!(matches!(cmd_error(&gone, 30), BrowserError::Crashed(_)));
        let refused = CmdError::Standard(WebDriver::new(
            ErrorStatus::UnknownError,
            "unknown error: net::ERR_CONNECTION_REFUSED",
        ));
        assert!(matches!(
            cmd_error(&refused, 30),
            BrowserError::Navigation(m) if m == "browser: net::ERR_CONNECTION_REFUSED"
        ));
        for e in [
            BrowserError::Unreachable(String::new()),
            BrowserError::Crashed(String::new()),
        ] {
            assert!(e.is_transient(), "{e}");
        }
    }

    #[test]
    fn idle_sessions_make_room_for_every_permit_not_yet_served() {
        // Two permits free, three idle of the other level: one must go.
        assert_eq!(surplus(3, 2), 1);
        assert_eq!(surplus(1, 2), 0);
        // Every permit held: each holder has a session or is opening one; no idle one may stay.
        assert_eq!(surplus(2, 0), 2);
    }
}

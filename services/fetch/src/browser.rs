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
//! after a number of pages. Every path closes them: a session that errs is closed before the
//! error is returned, and a session dropped without being closed (a cancelled task, a panic,
//! the worker shutting down with idle sessions) is deleted by a blocking WebDriver call from
//! its `Drop`, so no Chromium outlives its worker. Only a SIGKILLed worker leaves sessions
//! behind; chromedriver and Selenium reap those by their own idle timeouts.
//!
//! The SSRF guard cannot sit inside Chromium's resolver, so the URL is checked before
//! navigating (literal addresses, and the host resolved through the guard) and the final URL
//! again after; configured overrides reach Chromium as `--host-resolver-rules`.

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

use crate::metrics::{labels, METRICS};
use crate::ssrf::{Guard, GuardedResolver};

/// What a stealth session claims to be: a desktop Chrome, matching the Chromium that runs it.
const DESKTOP_UA: &str =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
/// Pages a session renders before it is replaced (Chromium grows over long runs).
const PAGES_PER_SESSION: u32 = 50;
/// Sessions idle longer than this are closed rather than reused.
const MAX_IDLE: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(250);

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
    /// No session could be had (WebDriver down, Chromium would not start): try again later.
    #[error("browser unavailable: {0}")]
    Unavailable(String),
    /// The session died under the page (crash, lost connection): try again later.
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
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            BrowserError::Unavailable(_) | BrowserError::Crashed(_)
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
}

impl BrowserPool {
    pub fn new(config: &FetchConfig) -> Result<BrowserPool, String> {
        let webdriver = Url::parse(&config.webdriver_url)
            .map_err(|e| format!("fetch.webdriver_url {:?}: {e}", config.webdriver_url))?;
        if webdriver.scheme() != "http" {
            return Err(format!(
                "fetch.webdriver_url must be http:// (chromedriver, Selenium), not {}",
                webdriver.scheme()
            ));
        }
        let guard = Guard::new(&config.allow_networks);
        let resolver = GuardedResolver::new(guard.clone(), &config.resolve);
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
        ]
        .map(String::from)
        .to_vec();
        if let Some(rules) = resolver.chromium_rules() {
            args.push(format!("--host-resolver-rules={rules}"));
        }
        args.extend(config.browser_args.iter().cloned());
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

    async fn open(&self, stealth: bool) -> Result<Session, BrowserError> {
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        builder.capabilities(self.capabilities(stealth));
        let connect = builder.connect(self.webdriver.as_str());
        let client = tokio::time::timeout(self.timeout, connect)
            .await
            .map_err(|_| BrowserError::Unavailable("starting a session timed out".into()))?
            .map_err(|e| BrowserError::Unavailable(new_session_error(&e)))?;
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
            let reason = e.to_string();
            session.close().await;
            return Err(BrowserError::Unavailable(reason));
        }
        Ok(session)
    }

    /// A pooled session for the level, or a new one.
    async fn take(&self, stealth: bool) -> Result<Session, BrowserError> {
        let (reuse, stale) = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let (stale, fresh): (Vec<Session>, Vec<Session>) = idle
                .drain(..)
                .partition(|s| s.idle_since.elapsed() > MAX_IDLE);
            *idle = fresh;
            let at = idle.iter().position(|s| s.stealth == stealth);
            let reuse = at.map(|i| idle.swap_remove(i));
            set_idle(idle.len());
            (reuse, stale)
        };
        for s in stale {
            s.close().await;
        }
        match reuse {
            Some(s) => Ok(s),
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
        let session = self.take(level >= 3).await?;
        let client = session.client.as_ref().expect("open session");
        match self.visit(client, url, level >= 3).await {
            Ok(page) => {
                self.give_back(session).await;
                match Url::parse(&page.final_url) {
                    Ok(final_url) if final_url.as_str() != url.as_str() => {
                        self.check(&final_url).await?
                    }
                    _ => {}
                }
                Ok(page)
            }
            Err(e) => {
                session.close().await;
                Err(e)
            }
        }
    }

    /// The SSRF guard, before Chromium resolves the host itself.
    async fn check(&self, url: &Url) -> Result<(), BrowserError> {
        self.guard
            .check_url(url)
            .map_err(BrowserError::Navigation)?;
        match url.host() {
            Some(url::Host::Domain(host)) => self
                .resolver
                .lookup(host)
                .await
                .map(|_| ())
                .map_err(BrowserError::Navigation),
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

fn new_session_error(e: &NewSessionError) -> String {
    match e {
        NewSessionError::Failed(_) | NewSessionError::FailedC(_) | NewSessionError::Lost(_) => {
            format!("no WebDriver answering ({e}); start chromedriver or a Selenium pod at fetch.webdriver_url, or set fetch.max_level = 1")
        }
        _ => e.to_string(),
    }
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
        other => BrowserError::Crashed(other.to_string()),
    }
}

/// True when a WebDriver answers `GET /status` as ready at `url`.
pub async fn webdriver_ready(url: &str) -> bool {
    let client = reqwest::Client::builder()
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

/// A chromedriver this process started, for `trawl run` on a workstation and for tests; shut
/// down with every browser it launched when dropped.
pub struct LocalWebDriver {
    port: u16,
    child: std::process::Child,
}

impl LocalWebDriver {
    /// Starts `chromedriver` from `PATH` on `port` (0: any free port) and waits until it
    /// answers.
    pub async fn start(port: u16) -> Result<LocalWebDriver, String> {
        let port = match port {
            0 => std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("no free port for chromedriver: {e}"))?
                .port(),
            p => p,
        };
        let child = std::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start chromedriver ({e}); install chromium and chromium-driver (scripts/services-up does)"))?;
        let driver = LocalWebDriver { port, child };
        for _ in 0..100 {
            if webdriver_ready(&driver.url()).await {
                return Ok(driver);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("chromedriver did not come up on port {port}"))
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

//! The browser's only way out: a small forward proxy inside the fetch worker.
//!
//! Chromium is launched with `--proxy-server` pointing here and `--proxy-bypass-list=<-loopback>`
//! (so not even loopback goes around it). Every request a page makes — the page itself, its
//! images, frames, scripts, `fetch` and XHR, the redirects and script navigations it follows,
//! WebSockets — is then resolved and checked by the same [`GuardedResolver`] as plain HTTP, and
//! connected to the very address that was checked. Chromium resolves no name itself, so there is
//! no window between our check and its connection for a name to answer differently (DNS
//! rebinding). What the guard refuses gets a 403, is counted in
//! `trawl_fetch_ssrf_refusals_total`, and is remembered a short while by host, so the browser
//! pool can tell a page that was refused from a page that failed.
//!
//! Two request forms, the two a browser sends to an HTTP proxy:
//! - `CONNECT host:port` (https, wss): the target checked, resolved and connected, then a byte
//!   tunnel.
//! - absolute-form plain HTTP (`GET http://host/path HTTP/1.1`): forwarded by a reqwest client
//!   that resolves through the guard, one request per connection (`Connection: close` both
//!   ways, so no second request can ride on a connection checked for the first), the response
//!   streamed back as it comes: not decompressed, redirects not followed (the browser follows
//!   them, through here again).
//!
//! Bounded: the request head (size and time), request bodies, connections at once, connect
//! time, and the silence allowed on any read or write. The proxy lives as long as its
//! [`BrowserProxy`]: dropping it (with the browser pool that owns it) stops the listener and
//! every connection it serves.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::redirect::Policy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, info, warn};
use url::{Host, Url};

use crate::metrics::METRICS;
use trawl_guard::{refusal_in, GuardedResolver, LookupError, Refusal};

/// Refusals kept for [`BrowserProxy::refused_since`]: enough for the pages in flight.
const REMEMBERED: usize = 512;

/// Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), and the proxy's
/// own.
const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
];

/// What one connection may cost.
#[derive(Clone, Debug)]
struct Limits {
    /// Request line and headers, in bytes.
    head_bytes: usize,
    /// Time for the whole request head to arrive.
    head_time: Duration,
    /// A request body (a form post, an XHR payload) is read whole, up to this.
    body_bytes: usize,
    connect_time: Duration,
    /// Longest silence on a connection, either way, before it is closed.
    idle: Duration,
    /// Connections served at once; the next waits in the listen backlog.
    connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head_bytes: 32 * 1024,
            head_time: Duration::from_secs(10),
            body_bytes: 8 * 1024 * 1024,
            connect_time: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            connections: 256,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("the browser proxy must be started inside a tokio runtime")]
    NoRuntime,
    #[error("HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// A running proxy; it stops, with every connection it serves, when dropped.
pub struct BrowserProxy {
    addr: SocketAddr,
    refusals: Arc<Refusals>,
    serve: JoinHandle<()>,
}

impl BrowserProxy {
    /// Listens on `listen` (port 0: any free port) and serves until dropped.
    pub fn start(listen: SocketAddr, resolver: GuardedResolver) -> Result<Self, ProxyError> {
        BrowserProxy::start_with(listen, resolver, Limits::default())
    }

    fn start_with(
        listen: SocketAddr,
        resolver: GuardedResolver,
        limits: Limits,
    ) -> Result<Self, ProxyError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| ProxyError::NoRuntime)?;
        let bind = |e| ProxyError::Bind(listen, e);
        let std_listener = std::net::TcpListener::bind(listen).map_err(bind)?;
        std_listener.set_nonblocking(true).map_err(bind)?;
        let addr = std_listener.local_addr().map_err(bind)?;
        // Inside the runtime (checked above), as tokio's listener needs.
        let listener = TcpListener::from_std(std_listener).map_err(bind)?;
        let http = trawl_http::builder_http1()
            .dns_resolver(Arc::new(resolver.clone()))
            // Environment proxies would take requests past the guard.
            .no_proxy()
            .redirect(Policy::none())
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .connect_timeout(limits.connect_time)
            .read_timeout(limits.idle)
            // A pooled connection would carry the next request without a new resolution: safe
            // (it goes to an address already checked), but one resolution per request is
            // simpler to reason about and the browser's pages are few.
            .pool_max_idle_per_host(0)
            .build()?;
        let refusals = Arc::new(Refusals::default());
        let shared = Arc::new(Shared {
            resolver,
            http,
            refusals: Arc::clone(&refusals),
            limits,
        });
        let serve = runtime.spawn(serve(listener, shared));
        Ok(BrowserProxy {
            addr,
            refusals,
            serve,
        })
    }

    /// The address the proxy listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Why the proxy last refused a request to `host` (as [`Url::host_str`] spells it) at or
    /// after `since`, if it did.
    pub(crate) fn refused_since(&self, host: &str, since: Instant) -> Option<String> {
        self.refusals.last(host, since)
    }

    /// Every request refused at or after `since` (of the last few hundred), oldest first, as
    /// (host, reason).
    pub fn refusals_since(&self, since: Instant) -> Vec<(String, String)> {
        self.refusals.since(since)
    }
}

impl Drop for BrowserProxy {
    fn drop(&mut self) {
        // The serving task owns every connection's task: aborting it drops them all.
        self.serve.abort();
    }
}

struct Shared {
    resolver: GuardedResolver,
    http: reqwest::Client,
    refusals: Arc<Refusals>,
    limits: Limits,
}

#[derive(Default)]
struct Refusals {
    recent: Mutex<VecDeque<(Instant, String, String)>>,
}

impl Refusals {
    fn record(&self, host: &str, reason: &str) {
        METRICS.ssrf_refusals.inc();
        info!(host, reason, "browser proxy refused a request");
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() >= REMEMBERED {
            recent.pop_front();
        }
        recent.push_back((Instant::now(), host.to_ascii_lowercase(), reason.to_owned()));
    }

    fn since(&self, since: Instant) -> Vec<(String, String)> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        (recent.iter())
            .filter(|(at, _, _)| *at >= since)
            .map(|(_, host, reason)| (host.clone(), reason.clone()))
            .collect()
    }

    fn last(&self, host: &str, since: Instant) -> Option<String> {
        let host = host.to_ascii_lowercase();
        (self.since(since).into_iter().rev())
            .find(|(h, _)| *h == host)
            .map(|(_, reason)| reason)
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        if connections.len() >= shared.limits.connections {
            connections.join_next().await;
            continue;
        }
        match listener.accept().await {
            Ok((stream, _)) => {
                connections.spawn(handle(stream, Arc::clone(&shared)));
            }
            Err(e) => {
                // Out of file descriptors, most likely: let connections end before the next.
                warn!(error = %e, "browser proxy could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// A request the proxy answers itself.
#[derive(Debug, PartialEq)]
enum Answer {
    Status(u16, &'static str),
    /// Nothing to answer: the browser went away.
    Hangup,
}

#[derive(Debug, PartialEq)]
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    /// Bytes read past the head: the start of a body, or of a tunnel's traffic.
    rest: Vec<u8>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&[u8]> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }
}

async fn handle(mut client: TcpStream, shared: Arc<Shared>) {
    let _ = client.set_nodelay(true);
    let limits = &shared.limits;
    let head = match read_head(&mut client, limits).await {
        Ok(head) => head,
        Err(Answer::Status(code, why)) => return answer(&mut client, code, why, limits).await,
        Err(Answer::Hangup) => return,
    };
    if head.method == "CONNECT" {
        tunnel(client, head, &shared).await
    } else {
        forward(client, head, &shared).await
    }
}

/// Reads up to the end of the request head, within the size and time limits.
async fn read_head(client: &mut TcpStream, limits: &Limits) -> Result<Head, Answer> {
    let deadline = tokio::time::Instant::now() + limits.head_time;
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            if end > limits.head_bytes {
                break;
            }
            let rest = buf[end + 4..].to_vec();
            buf.truncate(end);
            return parse_head(&buf, rest);
        }
        if buf.len() > limits.head_bytes + 3 {
            break;
        }
        let n = read_by(client, &mut chunk, deadline).await?;
        buf.extend_from_slice(&chunk[..n]);
    }
    Err(Answer::Status(431, "Request Header Fields Too Large"))
}

/// One read that brings something before `deadline`: a 408 when it does not, a hangup when the
/// browser closed or broke the connection.
async fn read_by(
    client: &mut TcpStream,
    buf: &mut [u8],
    deadline: tokio::time::Instant,
) -> Result<usize, Answer> {
    match tokio::time::timeout_at(deadline, client.read(buf)).await {
        Err(_) => Err(Answer::Status(408, "Request Timeout")),
        Ok(Ok(0) | Err(_)) => Err(Answer::Hangup),
        Ok(Ok(n)) => Ok(n),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

const BAD_REQUEST: Answer = Answer::Status(400, "Bad Request");

/// The request line and headers (without the blank line that ends them).
fn parse_head(head: &[u8], rest: Vec<u8>) -> Result<Head, Answer> {
    let text = std::str::from_utf8(head).map_err(|_| BAD_REQUEST)?;
    let mut lines = text.split("\r\n");
    let mut parts = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BAD_REQUEST);
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    if !token(method) || target.is_empty() || !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(BAD_REQUEST);
    }
    let mut headers = Vec::new();
    for line in lines {
        // Obsolete line folding is refused, as RFC 9112 allows a proxy to.
        let (name, value) = line.split_once(':').ok_or(BAD_REQUEST)?;
        if !token(name) {
            return Err(BAD_REQUEST);
        }
        headers.push((name.to_owned(), value.trim().as_bytes().to_vec()));
    }
    Ok(Head {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        rest,
    })
}

/// Writes `bytes` unless the browser stops reading for longer than the idle limit.
async fn send(client: &mut TcpStream, bytes: &[u8], limits: &Limits) -> bool {
    matches!(
        tokio::time::timeout(limits.idle, client.write_all(bytes)).await,
        Ok(Ok(()))
    )
}

/// A short answer of the proxy's own, then the connection ends.
async fn answer(client: &mut TcpStream, code: u16, why: &str, limits: &Limits) {
    reply(client, code, why, why, limits).await;
}

async fn reply(client: &mut TcpStream, code: u16, phrase: &str, text: &str, limits: &Limits) {
    let reply = format!(
        "HTTP/1.1 {code} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    send(client, reply.as_bytes(), limits).await;
    let _ = client.shutdown().await;
}

/// Refuses a request the guard would not let through: counted, remembered, answered 403.
async fn refuse(client: &mut TcpStream, host: &str, reason: &str, shared: &Shared) {
    shared.refusals.record(host, reason);
    reply(client, 403, "Forbidden", reason, &shared.limits).await;
}

/// `CONNECT host:port`: the target checked and connected, then bytes both ways.
async fn tunnel(mut client: TcpStream, head: Head, shared: &Shared) {
    let limits = &shared.limits;
    // Authority-form only: a host and a port, nothing else.
    let authority_only = head.target.rsplit_once(':').is_some_and(|(host, port)| {
        !host.is_empty()
            && port.parse::<u16>().is_ok()
            && !head.target.contains(['/', '@', '?', '#'])
    });
    let url = match Url::parse(&format!("https://{}/", head.target)) {
        Ok(url) if authority_only => url,
        _ => return answer(&mut client, 400, "Bad Request", limits).await,
    };
    let host = url.host_str().unwrap_or_default().to_owned();
    let addrs = match target_addrs(&url, &shared.resolver).await {
        Ok(addrs) => addrs,
        Err(Failure::Refused(refusal)) => {
            return refuse(&mut client, &host, &refusal.to_string(), shared).await
        }
        Err(Failure::Unreachable(reason)) => {
            debug!(host, reason, "browser proxy: no address to connect to");
            return answer(&mut client, 502, "Bad Gateway", limits).await;
        }
    };
    let mut upstream = None;
    for addr in addrs {
        match tokio::time::timeout(limits.connect_time, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                upstream = Some(stream);
                break;
            }
            Ok(Err(e)) => debug!(%addr, error = %e, "browser proxy: connect failed"),
            Err(_) => debug!(%addr, "browser proxy: connect timed out"),
        }
    }
    let Some(mut upstream) = upstream else {
        return answer(&mut client, 502, "Bad Gateway", limits).await;
    };
    let _ = upstream.set_nodelay(true);
    if !send(
        &mut client,
        b"HTTP/1.1 200 Connection established\r\n\r\n",
        limits,
    )
    .await
    {
        return;
    }
    if !head.rest.is_empty() && !send(&mut upstream, &head.rest, limits).await {
        return;
    }
    pump(client, upstream, limits.idle).await;
}

enum Failure {
    Refused(Refusal),
    Unreachable(String),
}

/// The checked addresses to connect to for `url`'s host and port. An override's port stands
/// unless the URL names a port of its own (as for plain HTTP, where reqwest does the same).
async fn target_addrs(url: &Url, resolver: &GuardedResolver) -> Result<Vec<SocketAddr>, Failure> {
    resolver.guard().check_url(url).map_err(Failure::Refused)?;
    let port = url.port_or_known_default().unwrap_or(443);
    let explicit = url.port().is_some();
    match url.host() {
        Some(Host::Ipv4(ip)) => Ok(vec![SocketAddr::new(ip.into(), port)]),
        Some(Host::Ipv6(ip)) => Ok(vec![SocketAddr::new(ip.into(), port)]),
        Some(Host::Domain(name)) => match resolver.lookup(name).await {
            Ok(addrs) => Ok(addrs
                .into_iter()
                .map(|mut a| {
                    if explicit || a.port() == 0 {
                        a.set_port(port);
                    }
                    a
                })
                .collect()),
            Err(LookupError::Refused(refusal)) => Err(Failure::Refused(refusal)),
            Err(LookupError::Unresolved(reason)) => Err(Failure::Unreachable(reason)),
        },
        None => Err(Failure::Unreachable("no host".into())),
    }
}

/// Copies both ways until both sides have finished, either fails, or neither has sent
/// anything for `idle`.
async fn pump(mut a: TcpStream, mut b: TcpStream, idle: Duration) {
    let (mut a_read, mut a_write) = a.split();
    let (mut b_read, mut b_write) = b.split();
    let (mut a_buf, mut b_buf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut a_open, mut b_open) = (true, true);
    while a_open || b_open {
        let step = tokio::time::timeout(idle, async {
            tokio::select! {
                r = a_read.read(&mut a_buf), if a_open => (true, r),
                r = b_read.read(&mut b_buf), if b_open => (false, r),
            }
        })
        .await;
        let Ok((from_a, read)) = step else { return };
        let (buf, to, open) = match from_a {
            true => (&a_buf, &mut b_write, &mut a_open),
            false => (&b_buf, &mut a_write, &mut b_open),
        };
        match read {
            Ok(0) => {
                *open = false;
                let _ = to.shutdown().await;
            }
            Ok(n) => {
                let wrote = tokio::time::timeout(idle, to.write_all(&buf[..n])).await;
                if !matches!(wrote, Ok(Ok(()))) {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

/// Absolute-form plain HTTP: the request forwarded through the guarded client, the response
/// streamed back, then the connection ends.
async fn forward(mut client: TcpStream, head: Head, shared: &Shared) {
    let limits = &shared.limits;
    let url = match Url::parse(&head.target) {
        Ok(url) if url.scheme() == "http" && head.target.starts_with("http://") => url,
        // Origin-form (`GET /path`) is for servers, not proxies; https comes as CONNECT.
        _ => return answer(&mut client, 400, "Bad Request", limits).await,
    };
    let host = url.host_str().unwrap_or_default().to_owned();
    if let Err(refusal) = shared.resolver.guard().check_url(&url) {
        // Literal addresses never reach the resolver: checked here.
        return refuse(&mut client, &host, &refusal.to_string(), shared).await;
    }
    let Ok(method) = reqwest::Method::from_bytes(head.method.as_bytes()) else {
        return answer(&mut client, 400, "Bad Request", limits).await;
    };
    if head.header("transfer-encoding").is_some() {
        // Browsers send a length with every body they upload over HTTP/1.1.
        return answer(&mut client, 411, "Length Required", limits).await;
    }
    let body = match read_body(&mut client, &head, limits).await {
        Ok(body) => body,
        Err(Answer::Status(code, why)) => return answer(&mut client, code, why, limits).await,
        Err(Answer::Hangup) => return,
    };
    let Some(headers) = forwarded_headers(&head) else {
        return answer(&mut client, 400, "Bad Request", limits).await;
    };
    let request = shared.http.request(method, url).headers(headers);
    let request = match body {
        Some(body) => request.body(body),
        None => request,
    };
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(e) => {
            return match refusal_in(&e) {
                Some(refusal) => refuse(&mut client, &host, &refusal.to_string(), shared).await,
                None if e.is_timeout() => answer(&mut client, 504, "Gateway Timeout", limits).await,
                None => answer(&mut client, 502, "Bad Gateway", limits).await,
            };
        }
    };
    if !send(&mut client, &response_head(&response), limits).await {
        return;
    }
    // reqwest's read timeout bounds the silence of the server; `send` that of the browser.
    while let Ok(Some(chunk)) = response.chunk().await {
        if !send(&mut client, &chunk, limits).await {
            return;
        }
    }
    let _ = client.shutdown().await;
}

/// The request's end-to-end headers, as the guarded client sends them on: hop-by-hop ones
/// (and those `Connection` names) are the proxy's, `Host` and `Content-Length` the client's to
/// set. `None`: a header that is not valid HTTP.
fn forwarded_headers(head: &Head) -> Option<HeaderMap> {
    let mut headers = HeaderMap::new();
    let listed: Vec<String> = head
        .header("connection")
        .map(|v| String::from_utf8_lossy(v).to_ascii_lowercase())
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
        .unwrap_or_default();
    for (name, value) in &head.headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str())
            || listed.contains(&lower)
            || matches!(lower.as_str(), "host" | "content-length")
        {
            continue;
        }
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_bytes(value),
        ) else {
            return None;
        };
        headers.append(name, value);
    }
    Some(headers)
}

/// The status line and end-to-end headers of `response`, as the browser gets them.
fn response_head(response: &reqwest::Response) -> Vec<u8> {
    let status = response.status();
    let mut out = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
    .into_bytes();
    for (name, value) in response.headers() {
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    // Without Transfer-Encoding the body ends where the connection does.
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

/// The request's body, when it declares one: what came with the head and the rest of
/// `Content-Length`, within the body limit and the idle limit.
async fn read_body(
    client: &mut TcpStream,
    head: &Head,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, Answer> {
    let Some(length) = head.header("content-length") else {
        return Ok(None);
    };
    let length: usize = std::str::from_utf8(length)
        .ok()
        .and_then(|l| l.trim().parse().ok())
        .ok_or(BAD_REQUEST)?;
    if length > limits.body_bytes {
        return Err(Answer::Status(413, "Content Too Large"));
    }
    let mut body = head.rest.clone();
    body.truncate(length);
    let mut chunk = [0u8; 16 * 1024];
    while body.len() < length {
        let want = (length - body.len()).min(chunk.len());
        let deadline = tokio::time::Instant::now() + limits.idle;
        let n = read_by(client, &mut chunk[..want], deadline).await?;
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use trawl_guard::{Guard, Lookup, Rebinding};

    /// Where tests' servers stand: allowed 127.0.0.1, and 127.0.0.2, private and never to be
    /// reached.
    const ALLOWED: &str = "127.0.0.1/32";

    /// A server on `ip` that answers each request with `hello` and records what arrived (head
    /// and body) as text; the second value counts connections.
    async fn server_on(
        ip: &str,
        port: u16,
    ) -> (SocketAddr, Arc<Mutex<Vec<String>>>, Arc<AtomicUsize>) {
        let listener = TcpListener::bind((ip, port)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let hits = Arc::new(AtomicUsize::new(0));
        let (log, count) = (Arc::clone(&seen), Arc::clone(&hits));
        tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let (end, length) = loop {
                        let Ok(n) = s.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(end) = find(&buf, b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length: "))
                                .and_then(|l| l.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (end, length);
                        }
                    };
                    while buf.len() < end + 4 + length {
                        let Ok(n) = s.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    log.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&buf).into_owned());
                    let _ = s
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Up: 1\r\nKeep-Alive: timeout=5\r\n\r\nhello")
                        .await;
                });
            }
        });
        (addr, seen, hits)
    }

    /// A server on 127.0.0.2 (refused) and one on 127.0.0.1 (allowed) on the same port, so a
    /// name can point at either with nothing else changed.
    async fn pair() -> (SocketAddr, Arc<Mutex<Vec<String>>>, Arc<AtomicUsize>) {
        for _ in 0..20 {
            let (addr, seen, _) = server_on("127.0.0.1", 0).await;
            if let Ok(canary) = tokio::net::TcpListener::bind(("127.0.0.2", addr.port())).await {
                drop(canary);
                let (_, _, hits) = server_on("127.0.0.2", addr.port()).await;
                return (addr, seen, hits);
            }
        }
        panic!("no port free on both 127.0.0.1 and 127.0.0.2");
    }

    fn proxy(overrides: &[(&str, SocketAddr)], lookup: Option<Arc<dyn Lookup>>) -> BrowserProxy {
        proxy_with(overrides, lookup, Limits::default())
    }

    fn proxy_with(
        overrides: &[(&str, SocketAddr)],
        lookup: Option<Arc<dyn Lookup>>,
        limits: Limits,
    ) -> BrowserProxy {
        let overrides: BTreeMap<String, String> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let guard = Guard::new(&[ALLOWED.into()]);
        let resolver = match lookup {
            Some(lookup) => GuardedResolver::with_lookup(guard, &overrides, lookup),
            None => GuardedResolver::new(guard, &overrides),
        };
        BrowserProxy::start_with("127.0.0.1:0".parse().unwrap(), resolver, limits).unwrap()
    }

    /// Sends `request` on a fresh connection and reads until the proxy closes it.
    async fn exchange(proxy: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(proxy).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
            .await
            .expect("the proxy ends every exchange")
            .unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn forwards_absolute_form_requests_one_per_connection() {
        let (up, seen, _) = server_on("127.0.0.1", 0).await;
        let p = proxy(&[("up.test", up)], None);
        let reply = exchange(
            p.addr(),
            b"GET http://up.test/page?q=1 HTTP/1.1\r\nHost: up.test\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nUser-Agent: test-agent\r\n\r\n",
        )
        .await;
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
        let lower = reply.to_ascii_lowercase();
        assert!(
            lower.contains("x-up: 1\r\n") && lower.contains("connection: close\r\n"),
            "{reply}"
        );
        assert!(
            !lower.contains("keep-alive") && reply.ends_with("\r\n\r\nhello"),
            "{reply}"
        );
        let request = seen.lock().unwrap()[0].to_ascii_lowercase();
        assert!(
            request.starts_with("get /page?q=1 http/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.contains("host: up.test\r\n") && request.contains("user-agent: test-agent\r\n"),
            "{request}"
        );
        assert!(
            !request.contains("proxy-connection") && !request.contains("x-hop"),
            "{request}"
        );

        // A body that comes in two parts arrives whole.
        let mut s = TcpStream::connect(p.addr()).await.unwrap();
        s.write_all(
            b"POST http://up.test/form HTTP/1.1\r\nHost: up.test\r\nContent-Length: 5\r\n\r\nab",
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        s.write_all(b"cde").await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        assert!(out.ends_with("hello"), "{out}");
        let posted = seen.lock().unwrap()[1].clone();
        assert!(
            posted.starts_with("POST /form HTTP/1.1") && posted.ends_with("\r\n\r\nabcde"),
            "{posted}"
        );
    }

    #[tokio::test]
    async fn tunnels_connect_to_the_checked_address() {
        let (up, seen, _) = server_on("127.0.0.1", 0).await;
        let p = proxy(&[("up.test", up)], None);
        let mut s = TcpStream::connect(p.addr()).await.unwrap();
        // Port 443 is the default: the override's port stands, as it does for plain HTTP.
        s.write_all(b"CONNECT up.test:443 HTTP/1.1\r\nHost: up.test:443\r\n\r\n")
            .await
            .unwrap();
        let mut established = [0u8; 39];
        s.read_exact(&mut established).await.unwrap();
        assert_eq!(
            &established[..],
            b"HTTP/1.1 200 Connection established\r\n\r\n"
        );
        s.write_all(b"GET /inside HTTP/1.1\r\nHost: up.test\r\n\r\n")
            .await
            .unwrap();
        let mut out = String::new();
        tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut out))
            .await
            .unwrap()
            .unwrap();
        assert!(
            out.starts_with("HTTP/1.1 200 OK") && out.ends_with("hello"),
            "{out}"
        );
        assert!(seen.lock().unwrap()[0].starts_with("GET /inside HTTP/1.1"));
    }

    #[tokio::test]
    async fn refuses_private_targets_in_every_form_and_counts_each() {
        let (up, _, canary) = pair().await;
        let port = up.port();
        let p = proxy(
            &[("private.test", SocketAddr::new([127, 0, 0, 2].into(), port))],
            None,
        );
        let before = METRICS.ssrf_refusals.get();
        let started = Instant::now();
        let requests = [
            format!("GET http://127.0.0.2:{port}/ HTTP/1.1"),
            format!("GET http://2130706434:{port}/ HTTP/1.1"),
            format!("GET http://0177.0.0.2:{port}/ HTTP/1.1"),
            format!("GET http://[::ffff:127.0.0.2]:{port}/ HTTP/1.1"),
            format!("GET http://[::1]:{port}/ HTTP/1.1"),
            "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1".into(),
            "GET http://10.0.0.1/ HTTP/1.1".into(),
            format!("GET http://private.test:{port}/ HTTP/1.1"),
            "GET http://private.test/ HTTP/1.1".into(),
            format!("CONNECT 127.0.0.2:{port} HTTP/1.1"),
            "CONNECT 169.254.169.254:443 HTTP/1.1".into(),
            format!("CONNECT [::1]:{port} HTTP/1.1"),
            "CONNECT private.test:443 HTTP/1.1".into(),
            format!("CONNECT private.test:{port} HTTP/1.1"),
        ];
        for request in &requests {
            let reply =
                exchange(p.addr(), format!("{request}\r\nHost: x\r\n\r\n").as_bytes()).await;
            assert!(
                reply.starts_with("HTTP/1.1 403 Forbidden\r\n"),
                "{request}: {reply}"
            );
            assert!(reply.contains("refused: "), "{request}: {reply}");
        }
        assert_eq!(
            canary.load(Ordering::SeqCst),
            0,
            "a refused address was reached"
        );
        assert!(METRICS.ssrf_refusals.get() - before >= requests.len() as u64);
        for host in ["127.0.0.2", "169.254.169.254", "[::1]", "private.test"] {
            assert!(p.refused_since(host, started).is_some(), "{host}");
        }
        assert!(p.refused_since("up.test", started).is_none());
    }

    #[tokio::test]
    async fn a_name_that_turns_private_is_refused_on_its_next_request() {
        let (up, seen, canary) = pair().await;
        let lookup = Rebinding::new(1, [127, 0, 0, 1].into(), [127, 0, 0, 2].into());
        let p = proxy(&[], Some(lookup.clone()));
        let get = format!(
            "GET http://rebind.example:{}/ HTTP/1.1\r\nHost: rebind.example\r\n\r\n",
            up.port()
        );
        let first = exchange(p.addr(), get.as_bytes()).await;
        assert!(first.ends_with("hello"), "{first}");
        for request in [
            get.clone(),
            format!("CONNECT rebind.example:{} HTTP/1.1\r\n\r\n", up.port()),
        ] {
            let reply = exchange(p.addr(), request.as_bytes()).await;
            assert!(reply.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{reply}");
            assert!(
                reply.contains("refused: rebind.example resolves only to private"),
                "{reply}"
            );
        }
        // One lookup per request, and each one is the address connected to.
        assert_eq!(lookup.calls(), 3);
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert_eq!(canary.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn bounds_the_request_head_and_refuses_what_is_not_a_proxy_request() {
        let (up, _, _) = server_on("127.0.0.1", 0).await;
        let limits = Limits {
            head_bytes: 1024,
            head_time: Duration::from_millis(300),
            body_bytes: 16,
            ..Limits::default()
        };
        let p = proxy_with(&[("up.test", up)], None, limits);
        let huge = format!(
            "GET http://up.test/ HTTP/1.1\r\nX-Big: {}\r\n\r\n",
            "a".repeat(2000)
        );
        assert!(exchange(p.addr(), huge.as_bytes())
            .await
            .starts_with("HTTP/1.1 431 "));
        let slow = exchange(
            p.addr(),
            b"GET http://up.test/ HTTP/1.1\r\nHost: up.test\r\n",
        )
        .await;
        assert!(slow.starts_with("HTTP/1.1 408 "), "{slow}");
        for (request, status) in [
            (&b"GET / HTTP/1.1\r\nHost: up.test\r\n\r\n"[..], "400"),
            (b"GET https://up.test/ HTTP/1.1\r\n\r\n", "400"),
            (b"CONNECT up.test HTTP/1.1\r\n\r\n", "400"),
            (b"CONNECT user@up.test:443 HTTP/1.1\r\n\r\n", "400"),
            (
                b"POST http://up.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "411",
            ),
            (
                b"POST http://up.test/ HTTP/1.1\r\nContent-Length: 17\r\n\r\n",
                "413",
            ),
            (b"GET file:///etc/passwd HTTP/1.1\r\n\r\n", "400"),
        ] {
            let reply = exchange(p.addr(), request).await;
            assert!(reply.starts_with(&format!("HTTP/1.1 {status} ")), "{reply}");
        }
    }

    #[tokio::test]
    async fn dropping_the_proxy_closes_its_listener_and_its_tunnels() {
        let (up, _, _) = server_on("127.0.0.1", 0).await;
        let p = proxy(&[("up.test", up)], None);
        let addr = p.addr();
        let mut tunnel = TcpStream::connect(addr).await.unwrap();
        tunnel
            .write_all(b"CONNECT up.test:443 HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut established = [0u8; 39];
        tunnel.read_exact(&mut established).await.unwrap();
        drop(p);
        let mut rest = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(5), tunnel.read_to_end(&mut rest)).await;
        assert!(matches!(closed, Ok(Ok(0)) | Ok(Err(_))), "{closed:?}");
        let mut refused = false;
        for _ in 0..50 {
            if TcpStream::connect(addr).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            refused,
            "the proxy still accepts connections after it was dropped"
        );
    }

    #[test]
    fn parses_the_two_request_forms_and_refuses_malformed_heads() {
        let head = parse_head(
            b"GET http://a.test/x?y=1 HTTP/1.1\r\nHost: a.test\r\nProxy-Connection: keep-alive",
            b"tail".to_vec(),
        )
        .unwrap();
        assert_eq!(
            (head.method.as_str(), head.target.as_str()),
            ("GET", "http://a.test/x?y=1")
        );
        assert_eq!(head.header("HOST"), Some(&b"a.test"[..]));
        assert_eq!(head.rest, b"tail");
        let connect = parse_head(
            b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443",
            Vec::new(),
        )
        .unwrap();
        assert_eq!(connect.target, "a.test:443");
        for bad in [
            &b"GET http://a.test/ HTTP/2.0"[..],
            b"GET  http://a.test/ HTTP/1.1",
            b"GET http://a.test/ HTTP/1.1\r\n folded: header",
            b"GET http://a.test/ HTTP/1.1\r\nno colon",
            b"G(T http://a.test/ HTTP/1.1",
            b"\xff\xfe",
        ] {
            assert_eq!(parse_head(bad, Vec::new()), Err(BAD_REQUEST), "{bad:?}");
        }
    }

    #[test]
    fn remembers_refusals_by_host_from_a_moment_on() {
        let refusals = Refusals::default();
        let before = Instant::now();
        refusals.record("Rebind.Example", "refused: one");
        assert_eq!(
            refusals.last("rebind.example", before).as_deref(),
            Some("refused: one")
        );
        assert_eq!(refusals.last("other.example", before), None);
        std::thread::sleep(Duration::from_millis(2));
        let after = Instant::now();
        assert_eq!(refusals.last("rebind.example", after), None);
        for i in 0..REMEMBERED + 10 {
            refusals.record(&format!("h{i}.example"), "refused: many");
        }
        assert_eq!(refusals.recent.lock().unwrap().len(), REMEMBERED);
        assert_eq!(refusals.last("h0.example", before), None);
    }
}

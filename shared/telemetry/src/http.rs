//! Serving a router to clients that may be hostile: every server trawl runs (the API, the
//! metrics port, `trawl mcp --http`) accepts connections through [`serve`], which bounds what
//! a client can hold without sending a complete request.
//!
//! - **Header read time**: a request's head must arrive within `header_timeout` of the
//!   connection becoming ready for it (hyper's timer; it starts again after each response, so an
//!   idle keep-alive connection is closed after the same time).
//! - **Idle time**: a connection on which no byte moves either way for `idle_timeout` (a body
//!   trickled byte by byte stalls, a response its client never reads) is closed. An event stream
//!   stays open because it sends keep-alive comments.
//! - **Connections**: at most `max_connections` in all, and `max_per_client` from one address
//!   (IPv6 clients count per /64, the block one host usually holds). A connection over either
//!   limit is closed at once, before anything is read, and counted in
//!   `trawl_http_connections_refused_total{server, reason}`.
//!
//! Each request sees its peer's address as `axum::extract::ConnectInfo<SocketAddr>`.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::{Extension, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tower::Layer;

use crate::{labels, register, Labels};

/// What one server allows its clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    /// 0: no limit per client (behind a proxy every client has the proxy's address).
    pub max_per_client: usize,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 4096,
            max_per_client: 256,
        }
    }
}

static REFUSED: LazyLock<Family<Labels, Counter>> = LazyLock::new(|| {
    register(
        "http_connections_refused",
        "Connections closed on arrival by server and reason (per_client or total limit)",
        Family::default(),
    )
});

/// The address a client is counted under: IPv4 as is (and IPv4 mapped into IPv6 as IPv4),
/// IPv6 by its /64.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
        v4 => v4,
    }
}

/// Open connections, in all and per client; a [`Slot`] gives its place back when dropped.
#[derive(Default)]
struct Census {
    total: usize,
    per_client: HashMap<IpAddr, usize>,
}

struct Slot {
    census: Arc<Mutex<Census>>,
    client: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.census.lock().expect("census lock");
        c.total -= 1;
        if let Some(n) = c.per_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                c.per_client.remove(&self.client);
            }
        }
    }
}

fn admit(
    census: &Arc<Mutex<Census>>,
    peer: IpAddr,
    limits: &ConnLimits,
) -> Result<Slot, &'static str> {
    let client = client_key(peer);
    let mut c = census.lock().expect("census lock");
    if c.total >= limits.max_connections {
        return Err("total");
    }
    let n = c.per_client.entry(client).or_default();
    if limits.max_per_client > 0 && *n >= limits.max_per_client {
        return Err("per_client");
    }
    *n += 1;
    c.total += 1;
    Ok(Slot {
        census: Arc::clone(census),
        client,
    })
}

/// The last time a byte moved on a connection, in milliseconds since `start`.
#[derive(Clone)]
struct Activity {
    start: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    fn new() -> Self {
        Activity {
            start: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn touch(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.start + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// A stream that records each read or write that moved bytes.
struct Tracked {
    inner: TcpStream,
    activity: Activity,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Serves one accepted connection until it closes, has been idle for `limits.idle_timeout`, or
/// has answered its request once `stopped` turns true; `_slot` counts it until then.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    (limits, mut stopped): (ConnLimits, tokio::sync::watch::Receiver<bool>),
    _slot: Slot,
) {
    let service =
        hyper_util::service::TowerToHyperService::new(Extension(ConnectInfo(peer)).layer(app));
    let activity = Activity::new();
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: activity.clone(),
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let conn = builder.serve_connection(io, service).with_upgrades();
    tokio::pin!(conn);
    let mut stopping = *stopped.borrow();
    if stopping {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        let idle_until = activity.last() + limits.idle_timeout;
        tokio::select! {
            _ = conn.as_mut() => break,
            _ = stopped.changed(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
            () = tokio::time::sleep_until(idle_until) => {
                if activity.last() + limits.idle_timeout <= Instant::now() {
                    break;
                }
            }
        }
    }
}

/// Serves `app` on `listener` under `limits` until `shutdown` resolves, then stops accepting,
/// lets each connection finish the request it is answering, and returns once all have closed.
/// `server` names it in the refused-connections metric.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    server: &'static str,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    for reason in ["per_client", "total"] {
        crate::init_series(&REFUSED, &[("server", server), ("reason", reason)]);
    }
    let census = Arc::new(Mutex::new(Census::default()));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was accepted:
                    // the listener itself is fine, so wait a little rather than spin.
                    tracing::debug!(error = %e, server, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let slot = match admit(&census, peer.ip(), &limits) {
            Ok(slot) => slot,
            Err(reason) => {
                REFUSED
                    .get_or_create(&labels(&[("server", server), ("reason", reason)]))
                    .inc();
                drop(stream);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        connections.spawn(connection(
            stream,
            peer,
            app.clone(),
            (limits.clone(), stopped.clone()),
            slot,
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_counted_by_address_and_ipv6_by_its_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(other));
        let mapped: IpAddr = "::ffff:10.1.2.3".parse().unwrap();
        assert_eq!(client_key(mapped), "10.1.2.3".parse::<IpAddr>().unwrap());

        let census = Arc::new(Mutex::new(Census::default()));
        let limits = ConnLimits {
            max_connections: 3,
            max_per_client: 2,
            ..ConnLimits::default()
        };
        let first = admit(&census, a, &limits).unwrap();
        let _second = admit(&census, b, &limits).unwrap();
        assert_eq!(admit(&census, a, &limits).err(), Some("per_client"));
        let _third = admit(&census, other, &limits).unwrap();
        assert_eq!(
            admit(&census, "10.0.0.1".parse().unwrap(), &limits).err(),
            Some("total")
        );
        drop(first);
        assert!(
            admit(&census, a, &limits).is_ok(),
            "a closed connection frees its place"
        );
        let unlimited = ConnLimits {
            max_per_client: 0,
            ..ConnLimits::default()
        };
        let held: Vec<_> = (0..300)
            .map(|_| admit(&census, a, &unlimited).unwrap())
            .collect();
        assert_eq!(held.len(), 300);
    }
}

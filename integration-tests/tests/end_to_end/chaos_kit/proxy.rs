//! A TCP proxy between the fleet and a service, to cut the network without stopping the
//! service: `reset` drops every connection and refuses new ones (a crashed peer or a firewall
//! that rejects), `blackhole` keeps connections open but passes no byte either way (a partition,
//! which only heartbeats and timeouts notice), `heal` lets traffic through again.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pass,
    Reset,
    Blackhole,
}

pub struct Proxy {
    pub addr: SocketAddr,
    mode: watch::Sender<Mode>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (mode, watcher) = watch::channel(Mode::Pass);
        let watcher = Arc::new(watcher);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let mode = watcher.as_ref().clone();
                if *mode.borrow() == Mode::Reset {
                    drop(client);
                    continue;
                }
                tokio::spawn(connection(client, target, mode));
            }
        });
        Proxy { addr, mode, task }
    }

    pub fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Forwards one connection both ways while the mode allows, until either side closes or a
/// `Reset` drops it.
async fn connection(client: TcpStream, target: SocketAddr, mut mode: watch::Receiver<Mode>) {
    let Ok(server) = TcpStream::connect(target).await else {
        return;
    };
    // A reset is a reset: dropped sockets send RST, not an orderly FIN. (A zero linger never
    // blocks on drop, which is what the deprecation warns about.)
    for stream in [&client, &server] {
        let _ = stream.set_nodelay(true);
        #[allow(deprecated)]
        let _ = stream.set_linger(Some(std::time::Duration::ZERO));
    }
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let mut up = vec![0u8; 16 * 1024];
    let mut down = vec![0u8; 16 * 1024];
    loop {
        let current = *mode.borrow_and_update();
        match current {
            Mode::Reset => return,
            Mode::Blackhole => {
                // Nothing moves; bytes wait in the kernel buffers until healed or reset.
                if mode.changed().await.is_err() {
                    return;
                }
                continue;
            }
            Mode::Pass => {}
        }
        tokio::select! {
            n = cr.read(&mut up) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => if sw.write_all(&up[..n]).await.is_err() { return },
            },
            n = sr.read(&mut down) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => if cw.write_all(&down[..n]).await.is_err() { return },
            },
            changed = mode.changed() => if changed.is_err() { return },
        }
    }
}

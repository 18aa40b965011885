//! Where trawl's HTTP clients start: `reqwest` builders that share one TLS context.
//!
//! Every TLS context OpenSSL makes reads and parses the system's root certificates (about
//! 150 of them: some 60 ms of CPU), and a process builds a dozen clients: one per LLM endpoint,
//! the search chain, each fetch level, the webhooks, the tools. Built apart, those contexts cost
//! `trawl run` half a second of CPU before it did anything. Built here, a process parses the
//! roots once per protocol choice, on first use.
//!
//! The context asks servers for HTTP/2 or HTTP/1.1 (ALPN), as reqwest's own would; a client
//! that speaks HTTP/1.1 only must take [`builder_http1`], or a server could pick HTTP/2 for it.

use std::sync::OnceLock;

use native_tls::TlsConnector;

/// A client builder on the shared TLS context (HTTP/2 or HTTP/1.1).
pub fn builder() -> reqwest::ClientBuilder {
    static TLS: OnceLock<Option<TlsConnector>> = OnceLock::new();
    with(TLS.get_or_init(|| connector(&["h2", "http/1.1"])))
}

/// A client builder for HTTP/1.1 only, on a shared context that asks for nothing else.
pub fn builder_http1() -> reqwest::ClientBuilder {
    static TLS: OnceLock<Option<TlsConnector>> = OnceLock::new();
    with(TLS.get_or_init(|| connector(&["http/1.1"]))).http1_only()
}

fn connector(alpn: &[&str]) -> Option<TlsConnector> {
    TlsConnector::builder().request_alpns(alpn).build().ok()
}

/// Without a shared context (OpenSSL could not make one), reqwest makes its own, and its
/// `build()` reports what is wrong.
fn with(tls: &Option<TlsConnector>) -> reqwest::ClientBuilder {
    match tls {
        Some(tls) => reqwest::Client::builder().tls_backend_preconfigured(tls.clone()),
        None => reqwest::Client::builder(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared context is the one backend reqwest recognises: building succeeds (an
    /// unrecognised one fails `build()`), for both protocol choices, many times over.
    #[test]
    fn builders_build_on_the_shared_context() {
        for _ in 0..3 {
            builder().build().unwrap();
            builder_http1().build().unwrap();
        }
    }

    /// A client on the shared context still speaks plain HTTP (loopback only).
    #[tokio::test]
    async fn a_shared_context_client_fetches() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await.unwrap();
            socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                .await
                .unwrap();
        });
        let client = builder().no_proxy().build().unwrap();
        let body = client.get(format!("http://{addr}/")).send().await.unwrap();
        assert_eq!(body.text().await.unwrap(), "ok");
    }
}

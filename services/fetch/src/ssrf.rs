//! The SSRF guard. On by default: loopback, private, link-local (which covers cloud metadata at
//! 169.254.169.254), CGNAT, unique-local, multicast, broadcast, documentation and unspecified
//! addresses are refused, IPv4-mapped IPv6 included, unless an allow-listed network holds them.
//!
//! Names are resolved inside [`GuardedResolver`], once per connection, so the address checked
//! is the address connected to: a name that answers differently on its next resolution (DNS
//! rebinding) gains nothing, since that next resolution is checked again before its own
//! connection. Every redirect hop goes through it again. Literal IPs in any encoding (decimal,
//! octal, hex) are normalised by the URL parser first and checked by [`Guard::check_url`].
//!
//! The browser levels use the same resolver: Chromium reaches the web only through the
//! fetch worker's [`crate::browser_proxy`], which resolves and connects here.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

#[derive(Clone, Debug, Default)]
pub struct Guard {
    allow: Vec<(IpAddr, u8)>,
}

fn in_net(ip: IpAddr, net: IpAddr, len: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if len == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(len))
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if len == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(len))
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (64..128).contains(&o[1])) // CGNAT 100.64.0.0/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || o[0] >= 240 // reserved
}

fn forbidden_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    let seg = ip.segments();
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (seg[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (seg[0] & 0xffc0) == 0xfe80 // link local fe80::/10
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
        || (seg[0] == 0x64 && seg[1] == 0xff9b) // NAT64 can reach IPv4 private space
}

impl Guard {
    pub fn new(allow_networks: &[String]) -> Self {
        Guard {
            allow: allow_networks
                .iter()
                .filter_map(|n| trawl_config::parse_cidr(n))
                .collect(),
        }
    }

    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        if self.allow.iter().any(|&(net, len)| in_net(ip, net, len)) {
            return true;
        }
        !match ip {
            IpAddr::V4(v4) => forbidden_v4(v4),
            IpAddr::V6(v6) => forbidden_v6(v6),
        }
    }

    /// Checks what can be checked before resolving: scheme, and a literal IP host.
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("refused: scheme {} is not http(s)", url.scheme()));
        }
        let ip = match url.host() {
            Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
            Some(Host::Domain(_)) => return Ok(()),
            None => return Err("refused: URL has no host".into()),
        };
        if self.allows_ip(ip) {
            Ok(())
        } else {
            Err(format!("refused: {ip} is a private or reserved address"))
        }
    }
}

/// The answers for one name, as a resolver would give them.
pub type Answers = Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;

/// The step that turns a name into addresses when no override matches: the system resolver
/// ([`SystemLookup`]) in the product, a scripted one in tests ([`Rebinding`]: a name whose
/// answers change between lookups, as a rebinding attacker's would).
pub trait Lookup: Send + Sync {
    fn lookup(&self, host: &str) -> Answers;
}

/// The system resolver (`getaddrinfo`, through tokio).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> Answers {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A rebinding name, for tests: answers `first` to the first `good` lookups and `later` to
/// every one after, counting them.
pub struct Rebinding {
    calls: std::sync::atomic::AtomicUsize,
    good: usize,
    first: IpAddr,
    later: IpAddr,
}

impl Rebinding {
    pub fn new(good: usize, first: IpAddr, later: IpAddr) -> Arc<Rebinding> {
        Arc::new(Rebinding {
            calls: Default::default(),
            good,
            first,
            later,
        })
    }

    /// Lookups so far.
    pub fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Lookup for Rebinding {
    fn lookup(&self, _host: &str) -> Answers {
        let n = (self.calls).fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let ip = if n < self.good {
            self.first
        } else {
            self.later
        };
        Box::pin(async move { Ok(vec![ip]) })
    }
}

/// Resolves with the configured overrides first, then the [`Lookup`] (the system resolver by
/// default), and drops every address the guard refuses.
#[derive(Clone)]
pub struct GuardedResolver {
    guard: Guard,
    overrides: Arc<[(String, SocketAddr)]>,
    lookup: Arc<dyn Lookup>,
}

impl GuardedResolver {
    pub fn new(guard: Guard, overrides: &std::collections::BTreeMap<String, String>) -> Self {
        GuardedResolver::with_lookup(guard, overrides, Arc::new(SystemLookup))
    }

    /// Like [`GuardedResolver::new`], with names that no override matches resolved by `lookup`.
    pub fn with_lookup(
        guard: Guard,
        overrides: &std::collections::BTreeMap<String, String>,
        lookup: Arc<dyn Lookup>,
    ) -> Self {
        let overrides = overrides
            .iter()
            .filter_map(|(pattern, addr)| Some((pattern.to_ascii_lowercase(), addr.parse().ok()?)))
            .collect();
        GuardedResolver {
            guard,
            overrides,
            lookup,
        }
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    fn lookup_override(&self, host: &str) -> Option<SocketAddr> {
        let host = host.to_ascii_lowercase();
        self.overrides.iter().find_map(|(pattern, addr)| {
            let hit = match pattern.strip_prefix("*.") {
                Some(suffix) => host.ends_with(&format!(".{suffix}")) || host == suffix,
                None => host == *pattern,
            };
            hit.then_some(*addr)
        })
    }
}

impl GuardedResolver {
    /// The addresses of `host` the guard allows; an error when there are none. An override's
    /// address carries its port; a looked-up address has port 0 (the caller's port applies).
    /// Each call resolves afresh: connect to what it returned, never to a later answer.
    pub async fn lookup(&self, host: &str) -> Result<Vec<SocketAddr>, String> {
        let candidates: Vec<SocketAddr> = match self.lookup_override(host) {
            Some(addr) => vec![addr],
            None => (self.lookup.lookup(host).await)
                .map_err(|e| format!("{host} did not resolve: {e}"))?
                .into_iter()
                .map(|ip| SocketAddr::new(ip, 0))
                .collect(),
        };
        let allowed: Vec<SocketAddr> = candidates
            .iter()
            .copied()
            .filter(|a| self.guard.allows_ip(a.ip()))
            .collect();
        match (allowed.is_empty(), candidates.is_empty()) {
            (false, _) => Ok(allowed),
            (true, true) => Err(format!("{host} did not resolve")),
            (true, false) => Err(format!(
                "refused: {host} resolves only to private or reserved addresses"
            )),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let this = self.clone();
        Box::pin(async move {
            let addrs = this
                .lookup(&host)
                .await
                .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { e.into() })?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

pub fn resolver(
    guard: Guard,
    overrides: &std::collections::BTreeMap<String, String>,
) -> Arc<GuardedResolver> {
    Arc::new(GuardedResolver::new(guard, overrides))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_private_and_reserved_addresses() {
        let g = Guard::default();
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::",
        ] {
            assert!(!g.allows_ip(bad.parse().unwrap()), "{bad} allowed");
        }
        for good in ["93.184.216.34", "2606:2800:220:1::1", "8.8.8.8"] {
            assert!(g.allows_ip(good.parse().unwrap()), "{good} refused");
        }
    }

    #[test]
    fn allow_list_opens_only_its_networks() {
        let g = Guard::new(&["127.0.0.0/8".into()]);
        assert!(g.allows_ip("127.0.0.1".parse().unwrap()));
        assert!(!g.allows_ip("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn literal_ips_in_any_encoding_are_checked() {
        let g = Guard::default();
        for url in [
            "http://2130706433/",
            "http://0x7f.0.0.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://[::ffff:7f00:1]/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let u = Url::parse(url).unwrap();
            assert!(g.check_url(&u).is_err(), "{url} passed");
        }
        assert!(g
            .check_url(&Url::parse("file:///etc/passwd").unwrap())
            .is_err());
        assert!(g
            .check_url(&Url::parse("http://example.test/").unwrap())
            .is_ok());
    }

    #[tokio::test]
    async fn resolver_applies_overrides_and_the_guard() {
        let overrides = [("*.test".to_string(), "127.0.0.1:9000".to_string())]
            .into_iter()
            .collect();
        let open = GuardedResolver::new(Guard::new(&["127.0.0.0/8".into()]), &overrides);
        let addrs: Vec<_> = open
            .resolve("a.b.test".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert_eq!(addrs, vec!["127.0.0.1:9000".parse().unwrap()]);
        let closed = GuardedResolver::new(Guard::default(), &overrides);
        let err = closed
            .resolve("a.test".parse().unwrap())
            .await
            .err()
            .unwrap();
        assert!(err.to_string().contains("refused"), "{err}");
        assert!(closed.resolve("localhost".parse().unwrap()).await.is_err());
    }

    #[tokio::test]
    async fn every_lookup_is_checked_so_a_changed_answer_is_refused() {
        let lookup = Rebinding::new(1, [127, 0, 0, 2].into(), [127, 0, 0, 3].into());
        let resolver = GuardedResolver::with_lookup(
            Guard::new(&["127.0.0.2/32".into()]),
            &Default::default(),
            lookup.clone(),
        );
        assert_eq!(
            resolver.lookup("rebind.example").await,
            Ok(vec!["127.0.0.2:0".parse().unwrap()])
        );
        let second = resolver
            .resolve("rebind.example".parse().unwrap())
            .await
            .err()
            .unwrap();
        assert!(second.to_string().starts_with("refused:"), "{second}");
        assert_eq!(lookup.calls(), 2);
    }

    #[tokio::test]
    async fn overrides_come_before_the_lookup() {
        let lookup = Rebinding::new(1, [10, 0, 0, 1].into(), [10, 0, 0, 1].into());
        let overrides = [("a.test".to_string(), "127.0.0.2:9000".to_string())]
            .into_iter()
            .collect();
        let resolver = GuardedResolver::with_lookup(
            Guard::new(&["127.0.0.2/32".into()]),
            &overrides,
            lookup.clone(),
        );
        assert_eq!(
            resolver.lookup("A.test").await,
            Ok(vec!["127.0.0.2:9000".parse().unwrap()])
        );
        assert_eq!(lookup.calls(), 0);
        assert!(resolver.lookup("b.example").await.is_err());
    }
}

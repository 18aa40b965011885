//! The SSRF guard. On by default: every address that IANA's special-purpose registries call not
//! globally reachable is refused (loopback, private, link-local with cloud metadata at
//! 169.254.169.254, CGNAT, benchmarking, documentation, unique-local, site-local, multicast,
//! reserved …), and an IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4,
//! Teredo) is judged by the IPv4 it carries, unless an allow-listed network holds it.
//!
//! Names are resolved inside [`GuardedResolver`], once per connection, so the address checked
//! is the address connected to: a name that answers differently on its next resolution (DNS
//! rebinding) gains nothing, since that next resolution is checked again before its own
//! connection. Every redirect hop goes through it again. Literal IPs in any encoding (decimal,
//! octal, hex) are normalised by the URL parser first and checked by [`Guard::check_url`].
//!
//! The browser levels use the same resolver: Chromium reaches the web only through the
//! fetch worker's browser proxy, which resolves and connects here; webhooks go through it too.
//!
//! A refusal is a [`Refusal`] value, also when it comes back inside a client's error chain
//! ([`refusal_in`]): callers tell it from other failures by type, not by text.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Why the guard refused a URL or a name: never to be fetched, and said so.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("refused: scheme {0} is not http(s)")]
    Scheme(String),
    #[error("refused: URL has no host")]
    NoHost,
    #[error("refused: {0} is a private or reserved address")]
    Address(IpAddr),
    #[error("refused: {0} resolves only to private or reserved addresses")]
    Resolves(String),
}

/// Why a name gave no address to connect to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Refused(Refusal),
    #[error("{0}")]
    Unresolved(String),
}

/// The guard's refusal somewhere in `error`'s chain of sources (an HTTP client's error around
/// the resolver's or the redirect policy's).
pub fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refusal> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(refusal) = e.downcast_ref::<Refusal>() {
            return Some(refusal);
        }
        next = e.source();
    }
    None
}

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

/// One entry of IANA's special-purpose address registries: a network, and whether the
/// registry calls it globally reachable.
struct Special<A> {
    net: A,
    len: u8,
    global: bool,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8, global: bool) -> Special<u32> {
    Special {
        net: u32::from_be_bytes([a, b, c, d]),
        len,
        global,
    }
}

/// IANA IPv4 Special-Purpose Address Registry (iana-ipv4-special-registry, as updated
/// 2025-04), each entry with its source, plus multicast (IPv4 Multicast Address Space
/// Registry). The most specific entry that holds an address decides; an address in none of
/// them is global.
const V4_SPECIAL: [Special<u32>; 21] = [
    v4(0, 0, 0, 0, 8, false),          // "This network", RFC 791
    v4(0, 0, 0, 0, 32, false),         // "This host on this network", RFC 1122
    v4(10, 0, 0, 0, 8, false),         // Private-Use, RFC 1918
    v4(100, 64, 0, 0, 10, false),      // Shared Address Space (CGNAT), RFC 6598
    v4(127, 0, 0, 0, 8, false),        // Loopback, RFC 1122
    v4(169, 254, 0, 0, 16, false),     // Link Local (cloud metadata), RFC 3927
    v4(172, 16, 0, 0, 12, false),      // Private-Use, RFC 1918
    v4(192, 0, 0, 0, 24, false),       // IETF Protocol Assignments, RFC 6890
    v4(192, 0, 0, 9, 32, true),        // Port Control Protocol Anycast, RFC 7723
    v4(192, 0, 0, 10, 32, true),       // Traversal Using Relays around NAT Anycast, RFC 8155
    v4(192, 0, 2, 0, 24, false),       // Documentation (TEST-NET-1), RFC 5737
    v4(192, 88, 99, 0, 24, false),     // Deprecated 6to4 Relay Anycast, RFC 7526
    v4(192, 168, 0, 0, 16, false),     // Private-Use, RFC 1918
    v4(198, 18, 0, 0, 15, false),      // Benchmarking, RFC 2544
    v4(198, 51, 100, 0, 24, false),    // Documentation (TEST-NET-2), RFC 5737
    v4(203, 0, 113, 0, 24, false),     // Documentation (TEST-NET-3), RFC 5737
    v4(224, 0, 0, 0, 4, false),        // Multicast, RFC 5771
    v4(240, 0, 0, 0, 4, false),        // Reserved, RFC 1112
    v4(255, 255, 255, 255, 32, false), // Limited Broadcast, RFC 919
    // Globally reachable in the registry, listed so no broader rule catches them:
    v4(192, 31, 196, 0, 24, true), // AS112-v4, RFC 7535
    v4(192, 175, 48, 0, 24, true), // Direct Delegation AS112 Service, RFC 7534
];

const fn v6(net: u128, len: u8, global: bool) -> Special<u128> {
    Special { net, len, global }
}

/// IANA IPv6 Special-Purpose Address Registry (iana-ipv6-special-registry, as updated
/// 2025-04), with the ranges it leaves out that no one may route to a server: site-local
/// fec0::/10 (deprecated, RFC 3879) and multicast ff00::/8 (RFC 4291). Prefixes that carry an
/// IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are decided by that address first,
/// in [`embedded_v4`].
const V6_SPECIAL: [Special<u128>; 22] = [
    v6(0, 128, false),                                   // Unspecified, RFC 4291
    v6(1, 128, false),                                   // Loopback, RFC 4291
    v6(0x0064_ff9b_0001 << 80, 48, false), // Local-Use IPv4/IPv6 Translation, RFC 8215
    v6(0x0100 << 112, 64, false),          // Discard-Only, RFC 6666
    v6((0x0100 << 112) | (1 << 64), 64, false), // Dummy IPv6 Prefix, RFC 9780
    v6(0x2001 << 112, 23, false),          // IETF Protocol Assignments, RFC 2928
    v6((0x2001 << 112) | (0x0001 << 96) | 1, 128, true), // Port Control Protocol Anycast, RFC 7723
    v6((0x2001 << 112) | (0x0001 << 96) | 2, 128, true), // TURN Anycast, RFC 8155
    v6((0x2001 << 112) | (0x0001 << 96) | 3, 128, true), // DNS-SD Service Registration, RFC 9665
    v6((0x2001 << 112) | (0x0002 << 96), 48, false), // Benchmarking, RFC 5180
    v6((0x2001 << 112) | (0x0003 << 96), 32, true), // AMT, RFC 7450
    v6((0x2001 << 112) | (0x0004 << 96) | (0x0112 << 80), 48, true), // AS112-v6, RFC 7535
    v6((0x2001 << 112) | (0x0020 << 96), 28, true), // ORCHIDv2, RFC 7343
    v6((0x2001 << 112) | (0x0030 << 96), 28, true), // Drone Remote ID, RFC 9374
    v6((0x2001 << 112) | (0x0db8 << 96), 32, false), // Documentation, RFC 3849
    v6((0x2620 << 112) | (0x004f << 96) | (0x8000 << 80), 48, true), // Direct Delegation AS112, RFC 7534
    v6(0x3fff << 112, 20, false),                                    // Documentation, RFC 9637
    v6(0x5f00 << 112, 16, false), // Segment Routing (SRv6) SIDs, RFC 9602
    v6(0xfc00 << 112, 7, false),  // Unique-Local, RFC 4193
    v6(0xfe80 << 112, 10, false), // Link-Local Unicast, RFC 4291
    v6(0xfec0 << 112, 10, false), // Site-Local (deprecated), RFC 3879
    v6(0xff00 << 112, 8, false),  // Multicast, RFC 4291
];

/// Whether the most specific entry of `table` holding `ip` says not globally reachable.
fn special<const BITS: u32>(table: &[Special<impl Copy + Into<u128>>], ip: u128) -> bool {
    let mut best: Option<(u8, bool)> = None;
    for entry in table {
        let len = u32::from(entry.len);
        let mask = if len == 0 {
            0
        } else {
            (u128::MAX >> (128 - BITS)) << (BITS - len)
        };
        if ip & mask == entry.net.into() & mask && best.is_none_or(|(l, _)| entry.len >= l) {
            best = Some((entry.len, entry.global));
        }
    }
    best.is_some_and(|(_, global)| !global)
}

fn forbidden_v4(ip: Ipv4Addr) -> bool {
    special::<32>(&V4_SPECIAL, u128::from(u32::from(ip)))
}

/// The IPv4 address an IPv6 address carries, where a prefix says it carries one: mapped
/// (::ffff:0:0/96), compatible (::/96, deprecated), NAT64 (64:ff9b::/96, RFC 6052), 6to4
/// (2002::/16, RFC 3056) and Teredo (2001::/32, RFC 4380: the client's address, inverted).
/// The loopback and unspecified addresses, also in ::/96, carry none.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from(bits as u32);
    let seg = ip.segments();
    match seg {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low32),
        [0, 0, 0, 0, 0, 0, _, _] if bits > 1 => Some(low32),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low32),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        [0x2001, 0, ..] => Some(Ipv4Addr::from(!(bits as u32))),
        _ => None,
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return forbidden_v4(v4);
    }
    special::<128>(&V6_SPECIAL, u128::from(ip))
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

    pub(crate) fn allows_ip(&self, ip: IpAddr) -> bool {
        if self.allow.iter().any(|&(net, len)| in_net(ip, net, len)) {
            return true;
        }
        !match ip {
            IpAddr::V4(v4) => forbidden_v4(v4),
            IpAddr::V6(v6) => forbidden_v6(v6),
        }
    }

    /// Checks what can be checked before resolving: scheme, and a literal IP host.
    pub fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Scheme(url.scheme().to_owned()));
        }
        let ip = match url.host() {
            Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
            Some(Host::Domain(_)) => return Ok(()),
            None => return Err(Refusal::NoHost),
        };
        match self.allows_ip(ip) {
            true => Ok(()),
            false => Err(Refusal::Address(ip)),
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
pub(crate) struct SystemLookup;

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
    pub async fn lookup(&self, host: &str) -> Result<Vec<SocketAddr>, LookupError> {
        let candidates: Vec<SocketAddr> = match self.lookup_override(host) {
            Some(addr) => vec![addr],
            None => (self.lookup.lookup(host).await)
                .map_err(|e| LookupError::Unresolved(format!("{host} did not resolve: {e}")))?
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
            (true, true) => Err(LookupError::Unresolved(format!("{host} did not resolve"))),
            (true, false) => Err(LookupError::Refused(Refusal::Resolves(host.to_owned()))),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let this = self.clone();
        Box::pin(async move {
            // The refusal itself is the error, so [`refusal_in`] finds it in the client's.
            let addrs = this.lookup(&host).await.map_err(
                |e| -> Box<dyn std::error::Error + Send + Sync> {
                    match e {
                        LookupError::Refused(r) => Box::new(r),
                        e => Box::new(e),
                    }
                },
            )?;
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

    /// One row per registry entry (its first and last address, or the one address), and the
    /// global addresses next to them (issue 25, item 11).
    #[test]
    fn every_special_purpose_range_is_decided_as_iana_lists_it() {
        let g = Guard::default();
        let refused = [
            "0.0.0.0",
            "0.255.255.255",
            "10.0.0.0",
            "10.255.255.255",
            "100.64.0.0",
            "100.127.255.255",
            "127.0.0.0",
            "127.255.255.255",
            "169.254.0.0",
            "169.254.169.254",
            "172.16.0.0",
            "172.31.255.255",
            "192.0.0.0",
            "192.0.0.8",
            "192.0.0.255",
            "192.0.2.0",
            "192.0.2.255",
            "192.88.99.1",
            "192.168.0.0",
            "192.168.255.255",
            "198.18.0.0",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.255",
            "224.0.0.1",
            "239.255.255.255",
            "240.0.0.1",
            "254.255.255.255",
            "255.255.255.255",
            "::",
            "::1",
            "64:ff9b:1::1",
            "100::1",
            "100:0:0:1::1",
            "2001::",
            "2001:1ff:ffff::1",
            "2001:1::4",
            "2001:2::1",
            "2001:db8::1",
            "3fff::1",
            "3fff:fff::1",
            "5f00::1",
            "fc00::1",
            "fdff::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "feff::1",
            "ff02::1",
            // IPv4 inside IPv6, judged by the IPv4 it carries.
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:198.18.0.1",
            "::127.0.0.1",
            "::10.1.2.3",
            "64:ff9b::10.0.0.1",
            "64:ff9b::169.254.169.254",
            "2002:a00:1::1",
            "2002:c0a8:101::",
            "2002:7f00:1::1",
            // Teredo, client 10.0.0.1 (inverted: f5ff:fffe), server 8.8.8.8.
            "2001:0:808:808::f5ff:fffe",
        ];
        for bad in refused {
            assert!(!g.allows_ip(bad.parse().unwrap()), "{bad} allowed");
        }
        let allowed = [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.0.9",
            "192.0.0.10",
            "192.0.3.0",
            "192.31.196.1",
            "192.175.48.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:2800:220:1::1",
            "2001:1::1",
            "2001:1::2",
            "2001:1::3",
            "2001:3::1",
            "2001:4:112::1",
            "2001:20::1",
            "2001:30::1",
            "2001:200::1",
            "2620:4f:8000::1",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
            // Teredo, client 8.8.8.8 (inverted: f7f7:f7f7).
            "2001:0:808:808::f7f7:f7f7",
        ];
        for good in allowed {
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

    /// A refusal comes back through an HTTP client's error as the typed value: nothing is
    /// sent (the only address is refused before any connection).
    #[tokio::test]
    async fn a_refusal_is_found_in_the_clients_error_by_type() {
        let overrides = [("a.test".to_string(), "127.0.0.1:9".to_string())]
            .into_iter()
            .collect();
        let client = reqwest::Client::builder()
            .dns_resolver(resolver(Guard::default(), &overrides))
            .build()
            .unwrap();
        let err = client.get("http://a.test/").send().await.unwrap_err();
        assert_eq!(
            refusal_in(&err),
            Some(&Refusal::Resolves("a.test".into())),
            "{err:?}"
        );
        let other = std::io::Error::other("connection reset");
        assert_eq!(refusal_in(&other), None);
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
        assert_eq!(
            refusal_in(&*second),
            Some(&Refusal::Resolves("rebind.example".into()))
        );
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

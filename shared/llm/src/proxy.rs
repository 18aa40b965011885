//! The proxy for calls to outside APIs (LLM endpoints and search providers): what corporate
//! networks need for every such call. Page fetches never go through it: they keep to the SSRF
//! guard and connect directly.
//!
//! An explicit proxy URL (`llm.proxy`, `search.proxy`) wins; otherwise the conventional
//! variables apply: `HTTPS_PROXY` for https URLs, `HTTP_PROXY` for http ones, `ALL_PROXY` for
//! both, each also in lower case, and `NO_PROXY` (hosts, domains, IPs and CIDR blocks, `*` for
//! all) exempts hosts from any of them. They are read from the environment map the caller
//! passes, so tests and the process agree on one source.

use std::collections::BTreeMap;

/// A proxy URL reqwest refused, and where it came from (`the configured proxy` or the
/// variable's name).
#[derive(Debug, thiserror::Error)]
#[error("{from} is not a proxy URL: {source}")]
pub struct ProxyError {
    pub from: &'static str,
    pub source: reqwest::Error,
}

/// `builder` with the proxies `explicit` or `env` name, and no others (reqwest would otherwise
/// read the process environment on its own).
pub fn apply(
    builder: reqwest::ClientBuilder,
    explicit: &str,
    env: &BTreeMap<String, String>,
) -> Result<reqwest::ClientBuilder, ProxyError> {
    let var = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| env.get(*n).filter(|v| !v.trim().is_empty()))
            .map(|v| v.trim().to_owned())
    };
    let no_proxy = var(&["NO_PROXY", "no_proxy"]).and_then(|v| reqwest::NoProxy::from_string(&v));
    let mut builder = builder.no_proxy();
    let bad = |from, source| ProxyError { from, source };
    if !explicit.trim().is_empty() {
        let proxy =
            reqwest::Proxy::all(explicit.trim()).map_err(|e| bad("the configured proxy", e))?;
        return Ok(builder.proxy(proxy.no_proxy(no_proxy)));
    }
    if let Some(url) = var(&["HTTPS_PROXY", "https_proxy"]) {
        let proxy = reqwest::Proxy::https(&url).map_err(|e| bad("HTTPS_PROXY", e))?;
        builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
    }
    if let Some(url) = var(&["HTTP_PROXY", "http_proxy"]) {
        let proxy = reqwest::Proxy::http(&url).map_err(|e| bad("HTTP_PROXY", e))?;
        builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
    }
    if let Some(url) = var(&["ALL_PROXY", "all_proxy"]) {
        let proxy = reqwest::Proxy::all(&url).map_err(|e| bad("ALL_PROXY", e))?;
        builder = builder.proxy(proxy.no_proxy(no_proxy));
    }
    Ok(builder)
}

//! URL normalisation for de-duplication: scheme and host case, default ports, fragments and
//! tracking parameters do not make a different page.

use url::Url;

const TRACKING: &[&str] = &[
    "gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "ref_src", "igshid",
];

/// The normalised form of `raw`, or `None` if it is not an http(s) URL.
pub(crate) fn normalize(raw: &str) -> Option<String> {
    // A document is one source whichever page a hit was at: clean finds the pages that answer.
    if let Some(name) = trawl_messages::documents::doc_name(raw.trim()) {
        return Some(trawl_messages::documents::doc_url(&name, None));
    }
    let mut url = Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    url.set_fragment(None);
    // `Url` already lower-cases scheme and host and drops default ports.
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !k.starts_with("utm_") && !TRACKING.contains(&k.as_ref()))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    Some(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_equivalent_urls() {
        let a = normalize("HTTP://Example.TEST:80/a?utm_source=x&id=3#top").unwrap();
        let b = normalize("http://example.test/a?id=3&gclid=9").unwrap();
        assert_eq!(a, b);
        assert_eq!(a, "http://example.test/a?id=3");
        assert_eq!(normalize("https://x.test:443/").unwrap(), "https://x.test/");
        assert!(normalize("ftp://x.test/").is_none());
        assert!(normalize("not a url").is_none());
        // A document is one candidate whichever page a hit was at.
        assert_eq!(
            normalize("doc://filings/acme%202023.pdf#page=41").unwrap(),
            "doc://filings/acme%202023.pdf"
        );
        assert!(normalize("doc://../etc/passwd").is_none());
    }
}

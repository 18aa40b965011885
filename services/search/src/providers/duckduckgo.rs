//! DuckDuckGo's keyless HTML endpoint: `POST {base}/html/` with the form fields its own
//! "Next" button submits (`q`, `s` = offset, `dc` = offset + 1, `df` = d|w|m|y). The answer is
//! an HTML page; each result is an `<a class="result__a">` whose href is usually a
//! `//duckduckgo.com/l/?uddg=<real URL>` redirect, followed by an `<a class="result__snippet">`.
//! A small string scanner reads it (trawl-search has no HTML parser, and these pages are
//! regular enough). The HTML endpoint has no news vertical, so `news` asks for web results.

use reqwest::header::{CONTENT_TYPE, REFERER};

use super::{window, Endpoint, Hit, PageRequest, Provider, ProviderError, ResultPage};

const NAME: &str = "duckduckgo";
const ANCHOR: &str = "class=\"result__a\"";
const SNIPPET: &str = "class=\"result__snippet\"";

pub struct DuckDuckGo(pub Endpoint);

impl Provider for DuckDuckGo {
    fn name(&self) -> &'static str {
        NAME
    }

    fn takes_site_operators(&self) -> bool {
        true
    }

    fn request(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<Option<reqwest::RequestBuilder>, ProviderError> {
        let offset = (request.page.max(1) - 1) * request.per_page.max(1);
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("q", request.query).append_pair("b", "");
        if offset > 0 {
            // The hidden fields of DDG's own "Next" form.
            form.append_pair("s", &offset.to_string())
                .append_pair("dc", &(offset + 1).to_string())
                .append_pair("v", "l")
                .append_pair("o", "json")
                .append_pair("api", "d.js");
        }
        // `df` is the window's initial: d, w, m or y.
        form.append_pair("df", window(request.freshness).map_or("", |w| &w[..1]));
        if let Some(region) = super::locale::duckduckgo_region(request.locale) {
            form.append_pair("kl", &region);
        }
        Ok(Some(
            (http.post(format!("{}/html/", self.0.base_url)))
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(REFERER, format!("{}/", self.0.base_url))
                .body(form.finish()),
        ))
    }

    fn read(&self, body: &[u8], request: &PageRequest<'_>) -> Result<ResultPage, ProviderError> {
        let mut page = parse(&String::from_utf8_lossy(body))?;
        page.hits.truncate(request.per_page.max(1) as usize);
        Ok(page)
    }
}

/// One result page, or why it is not one.
fn parse(html: &str) -> Result<ResultPage, ProviderError> {
    // DDG answers bots with a captcha page (HTTP 202), which is rate limiting in all but name.
    if html.contains("anomaly-modal") || html.contains("Unfortunately, bots use DuckDuckGo too") {
        return Err(ProviderError::RateLimited {
            provider: NAME,
            retry_after: None,
        });
    }
    let starts: Vec<usize> = html.match_indices(ANCHOR).map(|(i, _)| i).collect();
    if starts.is_empty() && !html.contains("no-results") {
        // Neither results nor DDG's "No results." block: not a result page at all (a block
        // page, or a markup change this scanner no longer understands).
        return Err(ProviderError::Malformed {
            provider: NAME,
            reason: "no DuckDuckGo result markup in the page".into(),
        });
    }
    let mut hits = Vec::new();
    let mut previous = 0;
    for (n, &at) in starts.iter().enumerate() {
        let block_end = starts.get(n + 1).copied().unwrap_or(html.len());
        // An ad's `result--ad` div opens between the previous result's link and its own.
        let is_ad = html[previous..at].contains("result--ad");
        previous = at;
        let Some((tag, inner)) = element(html, at) else {
            continue;
        };
        let Some(url) = attr(tag, "href").and_then(real_url) else {
            continue;
        };
        if is_ad {
            continue;
        }
        let snippet = html[at..block_end]
            .find(SNIPPET)
            .and_then(|i| element(html, at + i))
            .map(|(_, inner)| text(inner))
            .unwrap_or_default();
        hits.push(Hit {
            url,
            title: text(inner),
            snippet,
        });
    }
    // DDG shows its "Next" form only when there is another page.
    let more = !hits.is_empty() && html.contains("value=\"Next\"");
    Ok(ResultPage {
        hits,
        answer: None,
        more,
    })
}

/// The opening tag's text and the inner HTML of the element whose opening tag contains `at`.
fn element(html: &str, at: usize) -> Option<(&str, &str)> {
    let open = html[..at].rfind('<')?;
    let tag_end = at + html[at..].find('>')?;
    let tag = &html[open + 1..tag_end];
    let name = tag.split(|c: char| c.is_whitespace()).next()?;
    let inner_start = tag_end + 1;
    let close = html[inner_start..].find(&format!("</{name}"))?;
    Some((tag, &html[inner_start..inner_start + close]))
}

/// The value of attribute `name` in an opening tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let pattern = format!("{name}=");
    for (i, _) in tag.match_indices(&pattern) {
        // `href=` must not match the tail of `data-href=`.
        if !tag[..i].ends_with(char::is_whitespace) {
            continue;
        }
        let rest = &tag[i + pattern.len()..];
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let value = &rest[1..];
        return value.find(quote).map(|end| &value[..end]);
    }
    None
}

/// The result's real URL: DDG redirect links carry it percent-encoded in `uddg`; other links
/// into duckduckgo.com (ads via `y.js`) are not results.
fn real_url(href: &str) -> Option<String> {
    let href = decode_entities(href.trim());
    let absolute = match href.strip_prefix("//") {
        Some(rest) => format!("https://{rest}"),
        None => href,
    };
    let parsed = url::Url::parse(&absolute).ok()?;
    if parsed
        .host_str()
        .is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"))
    {
        if parsed.path() != "/l/" {
            return None;
        }
        return parsed
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned())
            .filter(|v| v.starts_with("http://") || v.starts_with("https://"));
    }
    Some(absolute)
}

/// Inner HTML to text: tags dropped, entities decoded, whitespace collapsed.
pub(super) fn text(inner: &str) -> String {
    let mut stripped = String::with_capacity(inner.len());
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => stripped.push(c),
            _ => {}
        }
    }
    decode_entities(&stripped)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Decodes the named entities DDG emits and any numeric one; unknown ones are kept as written.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        // Entities are short; looking at bytes keeps the slice on a char boundary (`;` is ASCII).
        let decoded = rest
            .bytes()
            .take(12)
            .position(|b| b == b';')
            .and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{contract, endpoint, http, request, simweb, Expect, Pages};
    use super::*;

    #[tokio::test]
    async fn duckduckgo_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &DuckDuckGo(endpoint(&web, "duckduckgo", None));
        let Pages { first, second } = contract(p, None, Expect::keyless()).await;
        assert!(first.hits.iter().all(|h| !h.title.is_empty()
            && !h.snippet.is_empty()
            && !h.snippet.contains('<')
            && h.url.starts_with("http://")));
        assert!(second.hits.iter().all(|h| !first.hits.contains(h)));

        let err = p
            .page(&http(), &request("simweb:captcha", 1))
            .await
            .unwrap_err();
        assert_eq!(err.label(), "rate_limited", "simweb:captcha: {err}");
    }

    #[test]
    fn scanner_reads_redirects_entities_and_skips_ads() {
        let html = r##"<div class="result results_links results_links_deep result--ad">
<a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=x.com&amp;u3=1">Ad</a>
<a class="result__snippet" href="#">Buy</a></div>
<div class="result results_links results_links_deep web-result ">
<h2 class="result__title"><a rel="nofollow" class="result__a"
 href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fx%3D1%26y%3D%C3%A9&amp;rut=abc">Tom&#x27;s <b>caf&eacute;</b> &amp; bar</a></h2>
<a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">A &quot;quoted&quot;
  <b>snippet</b>&#39;s text &lt;ok&gt;</a></div>
<div class="result web-result"><a data-href="nope" class="result__a" href='https://plain.example/p'>Plain</a></div>"##;
        let page = parse(html).unwrap();
        assert!(!page.more);
        assert_eq!(page.hits.len(), 2);
        assert_eq!(page.hits[0].url, "https://example.com/a?x=1&y=\u{e9}");
        assert_eq!(page.hits[0].title, "Tom's caf&eacute; & bar");
        assert_eq!(page.hits[0].snippet, "A \"quoted\" snippet's text <ok>");
        assert_eq!(page.hits[1].url, "https://plain.example/p");
        assert_eq!(page.hits[1].snippet, "");
        assert!(parse("<html>hello</html>").is_err());
        assert_eq!(
            parse("<div class=\"no-results\">No  results.</div>").unwrap(),
            ResultPage::default()
        );
        assert_eq!(decode_entities("&#1234567890; &amp"), "&#1234567890; &amp");
    }
}

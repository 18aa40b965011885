//! The web app for batches (`docs/ui.md`), served at `/` unless `api.ui = false`: one page and
//! its script and style, embedded in the binary, so it works with no internet and no Node.
//!
//! - Every app path (`/`, `/batches/{id}`, `/jobs/{id}`) answers the same page, so each batch,
//!   job and citation (`/jobs/{id}#cite-3`) has a link that opens it; the script reads the path.
//! - The script calls the API with the token from the tab's session storage in the
//!   `Authorization` header: there is no cookie, so no request can be forged from another site.
//! - A strict Content-Security-Policy: only this origin's script and style, nothing inline,
//!   nothing framed; the report's HTML is rendered on the server ([`crate::render`]).

use std::sync::OnceLock;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower_http::compression::CompressionLayer;

use crate::AppState;

/// One file of the app, with its entity tag: a hash of its bytes, so a browser revalidates
/// (`no-cache`) and an upgraded server's app is never mixed with a cached old one.
struct Asset {
    body: &'static str,
    content_type: &'static str,
    tag: OnceLock<String>,
}

impl Asset {
    const fn new(body: &'static str, content_type: &'static str) -> Asset {
        Asset {
            body,
            content_type,
            tag: OnceLock::new(),
        }
    }

    fn tag(&self) -> &str {
        self.tag.get_or_init(|| {
            let hash = crate::routes::sha256_hex(self.body.as_bytes());
            format!("\"{}\"", &hash[..16])
        })
    }

    fn serve(&self, request: &HeaderMap) -> Response {
        let tag = self.tag();
        let fresh = (request.get(header::IF_NONE_MATCH))
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
        let mut response = match fresh {
            true => StatusCode::NOT_MODIFIED.into_response(),
            false => ([(header::CONTENT_TYPE, self.content_type)], self.body).into_response(),
        };
        let headers = response.headers_mut();
        if let Ok(tag) = HeaderValue::from_str(tag) {
            headers.insert(header::ETAG, tag);
        }
        for (name, value) in [
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
        ] {
            headers.insert(name, HeaderValue::from_static(value));
        }
        response
    }
}

static INDEX: Asset = Asset::new(include_str!("../ui/index.html"), "text/html; charset=utf-8");
static SCRIPT: Asset = Asset::new(
    include_str!("../ui/app.js"),
    "text/javascript; charset=utf-8",
);
static STYLE: Asset = Asset::new(include_str!("../ui/app.css"), "text/css; charset=utf-8");
static ICON: Asset = Asset::new(include_str!("../ui/icon.svg"), "image/svg+xml");

/// What the page may load and do: its own script, style and images, API calls to its own
/// origin; no inline script or style, no plugin, no framing, no form posted elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    form-action 'self'; frame-ancestors 'none'";

/// The app's routes, gzip when the browser accepts it.
pub(crate) fn router() -> Router<AppState> {
    let serve =
        |asset: &'static Asset| get(move |headers: HeaderMap| async move { asset.serve(&headers) });
    Router::new()
        .route("/", serve(&INDEX))
        .route("/batches/{id}", serve(&INDEX))
        .route("/jobs/{id}", serve(&INDEX))
        .route("/ui/app.js", serve(&SCRIPT))
        .route("/ui/app.css", serve(&STYLE))
        .route("/ui/icon.svg", serve(&ICON))
        .layer(CompressionLayer::new().gzip(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page loads its script and style from this origin and runs nothing inline, which the
    /// policy would refuse anyway.
    #[test]
    fn the_page_has_no_inline_script_or_style_and_loads_only_its_own_assets() {
        for needle in ["/ui/app.js", "/ui/app.css", "/ui/icon.svg"] {
            assert!(INDEX.body.contains(needle), "{needle}");
        }
        let lower = INDEX.body.to_ascii_lowercase();
        for inline in [
            " style=",
            " onclick=",
            " onload=",
            "javascript:",
            "<style",
            "http://",
            "https://",
        ] {
            assert!(!lower.contains(inline), "{inline} in index.html");
        }
        assert_eq!(lower.matches("<script").count(), 1);
        assert!(!SCRIPT.body.contains("eval(") && !SCRIPT.body.contains("new Function"));
    }

    #[test]
    fn assets_are_revalidated_by_their_tag() {
        let first = SCRIPT.serve(&HeaderMap::new());
        assert_eq!(first.status(), StatusCode::OK);
        let tag = first.headers()[header::ETAG].clone();
        assert!(first.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .contains("script-src 'self'"));
        let mut again = HeaderMap::new();
        again.insert(header::IF_NONE_MATCH, tag);
        assert_eq!(SCRIPT.serve(&again).status(), StatusCode::NOT_MODIFIED);
    }
}

//! Hosts that make fetch escalate or hold back.
//!
//! * `guarded.test`: one page per escalation level (browser headers, JavaScript, a stealth
//!   browser), pages that always challenge or rate-limit, and redirects into addresses
//!   fetch must refuse. Each article carries a unique marker sentence so tests can tell
//!   the content really arrived rather than a shell or a block page.
//! * One host per robots.txt edge case (slow, redirected, looping, cross-host, huge) and
//!   `crawl-delay.test`; their pages are small articles marked by [`page_marker`].
//! * `polite.test`: a hundred small articles for politeness tests with several fetchers.
//! * `ssrf.test`, `ssrf-browser.test`, `rebind.test` and a SearXNG answer pointing at them:
//!   redirects, links, sub-resources and navigations into private addresses (see [`ssrf`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::render::{escape, simple_page, site_name};

pub const HOST: &str = "guarded.test";
pub const ROBOTS_SLOW_HOST: &str = "robots-slow.test";
pub const ROBOTS_REDIRECT_HOST: &str = "robots-redirect.test";
pub const ROBOTS_LOOP_HOST: &str = "robots-loop.test";
pub const ROBOTS_CROSS_HOST: &str = "robots-cross.test";
pub const ROBOTS_HUGE_HOST: &str = "robots-huge.test";
pub const CRAWL_DELAY_HOST: &str = "crawl-delay.test";
pub const POLITE_HOST: &str = "polite.test";
/// Pages like polite.test's, but the first request for each (in this process) stalls for
/// [`STALL_SECONDS`] before it is answered: a fetch that a test can kill midway.
pub const STALL_ONCE_HOST: &str = "stall-once.test";
pub const STALL_SECONDS: u64 = 60;

/// 403 unless the request looks like a browser's: needs level 1.
pub const NEEDS_HEADERS_PATH: &str = "/needs-headers";
/// Empty shell whose article arrives by script: needs level 2.
pub const JS_ONLY_PATH: &str = "/js-only";
/// Blocks clients with `navigator.webdriver` true: needs level 3.
pub const WEBDRIVER_CHECK_PATH: &str = "/webdriver-check";
/// A Cloudflare-style challenge for every client: 403 with Cloudflare headers.
pub const CHALLENGE_PATH: &str = "/challenge";
/// The same challenge body with status 200 and no telling headers.
pub const CHALLENGE_200_PATH: &str = "/challenge-200";
/// 429 per query parameter `k` until [`RETRY_AFTER_SECONDS`] after its first request.
pub const RATE_LIMITED_PATH: &str = "/rate-limited";
/// guarded.test paths that redirect (302) into addresses fetch must refuse, with targets.
pub const PRIVATE_REDIRECTS: &[(&str, &str)] = &[
    ("/to-metadata", "http://169.254.169.254/latest/meta-data/"),
    ("/to-loopback", "http://127.0.0.1/admin"),
    ("/to-private", "http://10.1.2.3/"),
    ("/to-ipv6-mapped", "http://[::ffff:127.0.0.1]/"),
    ("/to-decimal-ip", "http://2130706433/"),
];

/// A guarded.test path that redirects (302) to another site, [`ELSEWHERE_HOST`]: a job
/// whose domains hold guarded.test alone must not follow it.
pub const OFF_SITE_REDIRECT_PATH: &str = "/to-elsewhere";
/// The site [`OFF_SITE_REDIRECT_PATH`] leads to (every path a 404).
pub const ELSEWHERE_HOST: &str = "elsewhere.test";

pub const NEEDS_HEADERS_MARKER: &str =
    "The Elder Creek survey counted 417 heron nests along the restored channels in its ninth season.";
pub const JS_ONLY_MARKER: &str =
    "The keeper's log at Corran Point records the lens turning once every 7.5 seconds through the winter of 1861.";
pub const WEBDRIVER_CHECK_MARKER: &str =
    "The Marlow apiary reported that 23 of its 24 hives came through the January frost with live queens.";
pub const RATE_LIMITED_MARKER: &str =
    "The bindery on Quill Lane finished its thousandth sewn volume on the morning the presses were moved.";

pub const RETRY_AFTER_SECONDS: u64 = 2;
/// How long robots-slow.test takes to answer `/robots.txt`.
pub const ROBOTS_SLOW_SECONDS: u64 = 60;
pub const ROBOTS_HUGE_LEN: usize = 2 * 1024 * 1024;
pub const CRAWL_DELAY_SECONDS: u64 = 2;
pub const CRAWL_DELAY_PATHS: &[&str] = &["/a", "/b", "/c", "/d"];
/// polite.test serves `/p/0` … `/p/{POLITE_PAGES - 1}`.
pub const POLITE_PAGES: usize = 100;

const ALLOW_ALL: &str = "User-agent: *\nDisallow:\n";
const DISALLOW_PRIVATE: &str = "User-agent: *\nDisallow: /private/\n";

struct Article {
    title: &'static str,
    paragraphs: [&'static str; 3],
    /// Appended to the last paragraph, so it never stands alone as a short line.
    marker: &'static str,
}

impl Article {
    fn paragraphs(&self) -> Vec<String> {
        let mut ps: Vec<String> = self.paragraphs.iter().map(|p| p.to_string()).collect();
        if let Some(last) = ps.last_mut() {
            last.push(' ');
            last.push_str(self.marker);
        }
        ps
    }

    fn json(&self) -> Response {
        Json(json!({"title": self.title, "paragraphs": self.paragraphs()})).into_response()
    }
}

const NEEDS_HEADERS_ARTICLE: Article = Article {
    title: "Restoring Tidal Salt Marshes",
    paragraphs: [
        "Salt marshes form where sheltered coastlines meet slow tides, and their dense grasses trap sediment that would otherwise wash out to sea. Over the last century many marshes were drained for pasture or cut off by sea walls, and the land behind them slowly sank below the level of the tide.",
        "Restoration usually begins by breaching an old embankment so that seawater can return twice a day. Engineers model how far the water will reach, because too little flooding lets shrubs take over while too much drowns the young cordgrass before its roots can hold the mud.",
        "Within five years a restored marsh can support wading birds, juvenile fish and crabs, and it starts to store carbon in its waterlogged soil.",
    ],
    marker: NEEDS_HEADERS_MARKER,
};

const JS_ONLY_ARTICLE: Article = Article {
    title: "How Lighthouse Lenses Bend Light",
    paragraphs: [
        "Before the Fresnel lens, lighthouses relied on polished metal reflectors that wasted most of the light from their lamps. Augustin Fresnel realised in 1822 that a lens only needs its curved surface, so he divided a thick lens into concentric rings of glass prisms.",
        "The outer prisms bend light by total internal reflection while the central rings refract it, and together they gather nearly all of the lamp's output into a narrow horizontal beam. A first-order lens could throw its beam more than twenty nautical miles.",
        "Each lighthouse was given its own pattern of flashes, produced by rotating the lens on a bath of mercury, so that sailors could recognise the coast at night.",
    ],
    marker: JS_ONLY_MARKER,
};

const WEBDRIVER_CHECK_ARTICLE: Article = Article {
    title: "Keeping Honeybees Through a Hard Winter",
    paragraphs: [
        "Honeybees do not hibernate. When the air cools below about fourteen degrees the workers cluster around their queen and shiver their flight muscles, keeping the centre of the cluster warm enough for her to survive until spring.",
        "A colony needs roughly twenty kilograms of stored honey to last a northern winter, and beekeepers judge the reserve by hefting the back of the hive in autumn. Damp is a greater danger than cold, so hives are tilted forward and given an upper vent.",
        "On mild afternoons the bees leave for short cleansing flights, and a quiet hive in February is not necessarily a dead one.",
    ],
    marker: WEBDRIVER_CHECK_MARKER,
};

const RATE_LIMITED_ARTICLE: Article = Article {
    title: "The Slow Craft of Hand-Bound Books",
    paragraphs: [
        "A hand-bound book begins as folded sheets called signatures, each pressed flat and pierced along the fold so the sewing thread can pass through. Binders still sew onto raised cords or flat tapes, much as they did in monasteries eight centuries ago.",
        "Once the text block is sewn its spine is glued, rounded with a hammer and backed so the boards can hinge cleanly. Covering in leather means paring the skin thin at the edges so that it turns over the boards without bulging, which takes years of practice.",
        "A well-made binding opens flat thousands of times without cracking, which is why libraries still employ conservators to repair their oldest volumes by hand.",
    ],
    marker: RATE_LIMITED_MARKER,
};

/// The sentence that identifies a small article on the robots, crawl-delay and polite hosts.
pub fn page_marker(host: &str, path: &str) -> String {
    format!("Marker {host}{path} belongs to this page alone.")
}

/// Answers for the hosts of this module; `None` when `host` is not one of them.
pub async fn handle(host: &str, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
    let path = uri.path();
    Some(match host {
        HOST => guarded(path, uri.query(), headers),
        ROBOTS_SLOW_HOST if path == "/robots.txt" => {
            // A sleeping task, not a blocked thread: other requests keep being answered.
            tokio::time::sleep(Duration::from_secs(ROBOTS_SLOW_SECONDS)).await;
            robots(ALLOW_ALL)
        }
        ROBOTS_REDIRECT_HOST if path == "/robots.txt" => {
            redirect(StatusCode::MOVED_PERMANENTLY, "/robots-a.txt")
        }
        ROBOTS_REDIRECT_HOST if path == "/robots-a.txt" => {
            redirect(StatusCode::MOVED_PERMANENTLY, "/robots-b.txt")
        }
        ROBOTS_REDIRECT_HOST if path == "/robots-b.txt" => robots(DISALLOW_PRIVATE),
        ROBOTS_LOOP_HOST if path == "/robots.txt" => {
            let n: u64 = query_param(uri.query(), "n")
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            redirect(
                StatusCode::MOVED_PERMANENTLY,
                &format!("/robots.txt?n={}", n + 1),
            )
        }
        // RFC 9309: rules reached through a redirect apply to the original authority.
        ROBOTS_CROSS_HOST if path == "/robots.txt" => redirect(
            StatusCode::MOVED_PERMANENTLY,
            &format!("http://{ROBOTS_REDIRECT_HOST}/robots-b.txt"),
        ),
        ROBOTS_HUGE_HOST if path == "/robots.txt" => robots(huge_robots()),
        CRAWL_DELAY_HOST if path == "/robots.txt" => robots("User-agent: *\nCrawl-delay: 2\n"),
        STALL_ONCE_HOST if path != "/robots.txt" && first_request(path) => {
            tokio::time::sleep(Duration::from_secs(STALL_SECONDS)).await;
            small_site(host, path)
        }
        ROBOTS_SLOW_HOST | ROBOTS_REDIRECT_HOST | ROBOTS_LOOP_HOST | ROBOTS_CROSS_HOST
        | ROBOTS_HUGE_HOST | CRAWL_DELAY_HOST | POLITE_HOST | STALL_ONCE_HOST => {
            small_site(host, path)
        }
        ssrf::HOST | ssrf::BROWSER_HOST | ssrf::REBIND_HOST => ssrf::page(host, path, uri.query()),
        _ if path.starts_with(ssrf::SEARCH_PREFIX) => ssrf::search(path, uri.query()),
        _ => return None,
    })
}

fn guarded(path: &str, query: Option<&str>, headers: &HeaderMap) -> Response {
    match path {
        "/robots.txt" => robots(ALLOW_ALL),
        "/" => {
            let mut links: Vec<String> = [
                NEEDS_HEADERS_PATH,
                JS_ONLY_PATH,
                WEBDRIVER_CHECK_PATH,
                CHALLENGE_PATH,
                CHALLENGE_200_PATH,
            ]
            .iter()
            .map(|p| p.to_string())
            .collect();
            links.push(format!("{RATE_LIMITED_PATH}?k=index"));
            links.extend(PRIVATE_REDIRECTS.iter().map(|(p, _)| p.to_string()));
            Html(simple_page("Guarded Gazette", &link_list(&links))).into_response()
        }
        NEEDS_HEADERS_PATH if looks_like_browser(headers) => article_page(&NEEDS_HEADERS_ARTICLE),
        NEEDS_HEADERS_PATH => (
            StatusCode::FORBIDDEN,
            Html(simple_page(
                "Forbidden",
                "<p>You don't have permission to access this resource.</p>",
            )),
        )
            .into_response(),
        JS_ONLY_PATH => Html(shell("/api/js-only.json", false)).into_response(),
        "/api/js-only.json" => JS_ONLY_ARTICLE.json(),
        WEBDRIVER_CHECK_PATH => Html(shell("/api/webdriver-check.json", true)).into_response(),
        "/api/webdriver-check.json" => WEBDRIVER_CHECK_ARTICLE.json(),
        CHALLENGE_PATH => (
            StatusCode::FORBIDDEN,
            [
                (header::SERVER, "cloudflare"),
                (header::HeaderName::from_static("cf-mitigated"), "challenge"),
            ],
            Html(CHALLENGE_HTML),
        )
            .into_response(),
        CHALLENGE_200_PATH => Html(CHALLENGE_HTML).into_response(),
        RATE_LIMITED_PATH => rate_limited(&query_param(query, "k").unwrap_or_default()),
        OFF_SITE_REDIRECT_PATH => redirect(
            StatusCode::FOUND,
            &format!("http://{ELSEWHERE_HOST}/landing"),
        ),
        _ => match PRIVATE_REDIRECTS.iter().find(|(p, _)| *p == path) {
            Some((_, target)) => redirect(StatusCode::FOUND, target),
            None => not_found(path),
        },
    }
}

/// What a bare HTTP client usually lacks: a Mozilla-style User-Agent and Accept-Language.
fn looks_like_browser(headers: &HeaderMap) -> bool {
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    ua.contains("Mozilla/") && headers.contains_key(header::ACCEPT_LANGUAGE)
}

fn rate_limited(key: &str) -> Response {
    // Process-wide, so keys must be unique per test; a poisoned lock still holds valid times.
    static FIRST_SEEN: LazyLock<Mutex<HashMap<String, Instant>>> = LazyLock::new(Default::default);
    let first = *FIRST_SEEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key.to_string())
        .or_insert_with(Instant::now);
    if first.elapsed() >= Duration::from_secs(RETRY_AFTER_SECONDS) {
        return article_page(&RATE_LIMITED_ARTICLE);
    }
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, RETRY_AFTER_SECONDS.to_string())],
        Html(simple_page(
            "Too Many Requests",
            "<p>Slow down and try again shortly.</p>",
        )),
    )
        .into_response()
}

/// A page whose article only exists after its script ran. With `webdriver_check`, an
/// automated browser (`navigator.webdriver` true) gets a PerimeterX-style block instead.
fn shell(api: &str, webdriver_check: bool) -> String {
    SHELL_HTML
        .replace("__API__", api)
        .replace("__CHECK__", if webdriver_check { "true" } else { "false" })
}

const SHELL_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Guarded Gazette</title>
</head>
<body>
<div id="app"></div>
<noscript>Please enable JavaScript to view this page.</noscript>
<script>
(function () {
  var app = document.getElementById('app');
  function block() {
    document.title = 'Access denied';
    app.innerHTML = '<h1>Access denied</h1><p>Please verify you are a human to continue. Press and hold the button below.</p><div id="px-captcha"></div>';
  }
  function render(a) {
    document.title = a.title;
    var article = document.createElement('article');
    var h1 = document.createElement('h1');
    h1.textContent = a.title;
    article.appendChild(h1);
    a.paragraphs.forEach(function (text) {
      var p = document.createElement('p');
      p.textContent = text;
      article.appendChild(p);
    });
    app.appendChild(article);
  }
  setTimeout(function () {
    if (__CHECK__ && navigator.webdriver) {
      block();
      return;
    }
    fetch('__API__').then(function (r) { return r.json(); }).then(render);
  }, 300);
})();
</script>
</body>
</html>
"#;

/// Shaped like Cloudflare's managed challenge: the title, `cf-chl` ids and the
/// `challenge-platform` script path are what block detectors look for.
const CHALLENGE_HTML: &str = r#"<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta http-equiv="X-UA-Compatible" content="IE=Edge"><meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"></head><body><div class="main-wrapper" role="main"><div class="main-content"><h1 class="zone-name-title h1">guarded.test</h1><p id="cf-chl-status" class="h2 spacer-bottom">Verifying you are human. This may take a few seconds.</p><div id="cf-chl-widget-x8k2p"></div><noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></noscript></div></div><script>(function(){window._cf_chl_opt={cvId: '3',cZone: 'guarded.test',cType: 'managed',cRay: '8f1d2c3b4a596877'};var cpo=document.createElement('script');cpo.src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8f1d2c3b4a596877';document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>
"#;

/// `User-agent: *` / `Disallow: /private/` then comment lines up to [`ROBOTS_HUGE_LEN`],
/// so a crawler that stops reading at 500 KiB still sees the rule.
fn huge_robots() -> &'static str {
    static BODY: OnceLock<String> = OnceLock::new();
    BODY.get_or_init(|| {
        let mut body = String::with_capacity(ROBOTS_HUGE_LEN + 64);
        body.push_str(DISALLOW_PRIVATE);
        let mut line = 0u64;
        while body.len() < ROBOTS_HUGE_LEN {
            let _ = writeln!(
                body,
                "# padding line {line:08}: this robots.txt is larger than any crawler should read"
            );
            line += 1;
        }
        body.truncate(ROBOTS_HUGE_LEN - 1);
        body.push('\n');
        body
    })
}

/// The small sites: `/` lists the pages, every page is a short marked article.
fn small_site(host: &str, path: &str) -> Response {
    let pages = small_pages(host);
    match path {
        "/robots.txt" => robots(ALLOW_ALL),
        "/" => {
            let title = site_name(host);
            let intro = format!(
                "<p>{} publishes short notes for anyone who wants to read them.</p>",
                escape(&title)
            );
            Html(simple_page(
                &title,
                &format!("{intro}\n{}", link_list(&pages)),
            ))
            .into_response()
        }
        _ if pages.iter().any(|p| p == path) => small_article(host, path),
        _ => not_found(path),
    }
}

/// Whether this is the first request for `path` of [`STALL_ONCE_HOST`] in this process.
fn first_request(path: &str) -> bool {
    static SEEN: LazyLock<Mutex<std::collections::HashSet<String>>> =
        LazyLock::new(Default::default);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.insert(path.to_owned())
}

fn small_pages(host: &str) -> Vec<String> {
    match host {
        POLITE_HOST | STALL_ONCE_HOST => (0..POLITE_PAGES).map(|i| format!("/p/{i}")).collect(),
        CRAWL_DELAY_HOST => CRAWL_DELAY_PATHS.iter().map(|p| p.to_string()).collect(),
        // Hosts whose robots.txt disallows /private/ hold a page there to refuse.
        ROBOTS_REDIRECT_HOST | ROBOTS_CROSS_HOST | ROBOTS_HUGE_HOST => {
            vec!["/page".to_string(), "/private/page".to_string()]
        }
        _ => vec!["/page".to_string()],
    }
}

const SMALL_TOPICS: [&str; 5] = [
    "Old orchards are being replanted with local apple varieties that had survived only in a few farmhouse gardens, and growers swap grafting wood every February.",
    "Canal towpaths that once carried horses pulling barges now carry cyclists, and volunteers repair the lock gates each winter while the water is low.",
    "Dry-stone walls hold together without mortar because each stone is chosen to rest on two below it, so a well-built wall can stand for two hundred years.",
    "Community weather stations report rainfall every ten minutes, and their readings fill the gaps between the official gauges in the hills.",
    "Repair cafes meet once a month in village halls, where retired engineers mend toasters, lamps and bicycles alongside the people who brought them.",
];

fn small_article(host: &str, path: &str) -> Response {
    let title = format!("{} notes {path}", site_name(host));
    let topic = SMALL_TOPICS[path.bytes().map(usize::from).sum::<usize>() % SMALL_TOPICS.len()];
    let paragraphs = [
        format!("This short article is served by {host} at {path}. It exists so that tests can fetch real content from this host and check how the fetch stage honoured its robots.txt. {}", page_marker(host, path)),
        topic.to_string(),
    ];
    Html(article_html(&title, &paragraphs)).into_response()
}

fn article_page(article: &Article) -> Response {
    Html(article_html(article.title, &article.paragraphs())).into_response()
}

fn article_html(title: &str, paragraphs: &[String]) -> String {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<p>{}</p>\n", escape(p)))
        .collect();
    let title = escape(title);
    format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n</head>\n<body>\n<main>\n<article>\n<h1>{title}</h1>\n{body}</article>\n</main>\n</body>\n</html>\n")
}

fn link_list(paths: &[String]) -> String {
    let items: String = paths
        .iter()
        .map(|p| format!("<li><a href=\"{0}\">{0}</a></li>\n", escape(p)))
        .collect();
    format!("<ul>\n{items}</ul>")
}

fn robots(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

fn redirect(status: StatusCode, location: &str) -> Response {
    (status, [(header::LOCATION, location.to_string())], "").into_response()
}

fn not_found(path: &str) -> Response {
    let body = simple_page(
        "404 Not Found",
        &format!("<p>{} was not found on this server.</p>", escape(path)),
    );
    (StatusCode::NOT_FOUND, Html(body)).into_response()
}

fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The SSRF chaos case's web: redirects, links, sub-resources, script navigations and a name
/// that changes its answer, each into an address fetch must refuse, and a SearXNG answer that
/// makes them a job's sources. Pages take the canary's port as `?canary=PORT`: the test runs a
/// server there (on loopback addresses outside the allow-list) that must never be reached.
pub mod ssrf {
    use super::*;
    use crate::simweb::search::{result_json, searxng_response};

    /// Plain-HTTP pages: `/redirect/<target>` (a 302 to it) and `/links` (an article linking
    /// to every target).
    pub const HOST: &str = "ssrf.test";
    /// Pages that need a browser (empty until their script runs) and reach for the targets
    /// from it: [`SUBRESOURCES_PATH`], [`SCRIPT_REDIRECT_PATH`], [`META_REFRESH_PATH`].
    pub const BROWSER_HOST: &str = "ssrf-browser.test";
    /// The rebinding test's host: `/page`, an article whose script, image and data come from
    /// its own host.
    pub const REBIND_HOST: &str = "rebind.test";
    /// The name the test maps to the canary in `fetch.resolve`: a name with a private address.
    pub const CANARY_NAME: &str = "canary.example";
    /// On any host, `/ssrf-searxng/<canary port>/search`: SearXNG's JSON for the questions
    /// that name [`REDIRECTS_WORD`], [`LINKS_WORD`] or [`BROWSER_WORD`].
    pub const SEARCH_PREFIX: &str = "/ssrf-searxng/";
    pub const REDIRECTS_WORD: &str = "ssrfredirects";
    pub const LINKS_WORD: &str = "ssrflinks";
    pub const BROWSER_WORD: &str = "ssrfbrowser";
    /// What the canary answers, so a leak would show in whatever carried it.
    pub const CANARY_SECRET: &str = "canary-secret-7d1f0e93";

    /// Where redirects and links point, by name; `{port}` is the canary's.
    pub const TARGETS: &[(&str, &str)] = &[
        ("loopback", "http://127.0.0.1:{port}/admin"),
        ("other-loopback", "http://127.0.0.3:{port}/"),
        ("ipv6-loopback", "http://[::1]:{port}/"),
        ("ipv4-mapped", "http://[::ffff:127.0.0.1]:{port}/"),
        ("metadata", "http://169.254.169.254/latest/meta-data/"),
        ("ten", "http://10.0.0.1/"),
        ("decimal", "http://2130706435:{port}/"),
        ("octal", "http://0177.0.0.3:{port}/"),
        ("hex", "http://0x7f000003:{port}/"),
        ("localhost", "http://localhost:{port}/"),
        ("private-name", "http://canary.example:{port}/"),
    ];

    /// Loads its article from its own host, and meanwhile asks for refused addresses in every
    /// way a page can: stylesheet, script, images, frames, `fetch`, XHR and a WebSocket,
    /// writing whatever comes back into the page.
    pub const SUBRESOURCES_PATH: &str = "/subresources";
    /// Requests the sub-resources page makes to refused addresses, each to its own URL.
    pub const SUBRESOURCE_REQUESTS: usize = 11;
    /// Navigates, from its script, to the cloud metadata address.
    pub const SCRIPT_REDIRECT_PATH: &str = "/script-redirect";
    /// Refreshes to a redirect that ends on the canary.
    pub const META_REFRESH_PATH: &str = "/meta-refresh";
    pub const ARTICLE_MARKER: &str =
        "The harbour master's ledger gives the spring tide at Fennick Quay as 5.2 metres above datum.";
    pub const REBIND_MARKER: &str =
        "The Oakridge ferry logbook notes 312 crossings in the month the new pier opened.";

    pub fn target(url: &str, port: u16) -> String {
        url.replace("{port}", &port.to_string())
    }

    /// The sources SearXNG lists for a question naming `word`, with the canary on `port`.
    pub fn sources(word: &str, port: u16) -> Vec<String> {
        match word {
            REDIRECTS_WORD => (TARGETS.iter())
                .map(|(name, _)| format!("http://{HOST}/redirect/{name}?canary={port}"))
                .collect(),
            LINKS_WORD => vec![format!("http://{HOST}/links?canary={port}")],
            BROWSER_WORD => [SUBRESOURCES_PATH, SCRIPT_REDIRECT_PATH, META_REFRESH_PATH]
                .iter()
                .map(|path| format!("http://{BROWSER_HOST}{path}?canary={port}"))
                .collect(),
            _ => Vec::new(),
        }
    }

    pub(super) fn search(path: &str, query: Option<&str>) -> Response {
        let port = path
            .strip_prefix(SEARCH_PREFIX)
            .and_then(|rest| rest.strip_suffix("/search"))
            .and_then(|port| port.parse::<u16>().ok());
        let Some(port) = port else {
            return not_found(path);
        };
        let q = query_param(query, "q").unwrap_or_default().to_lowercase();
        let first_page = query_param(query, "pageno").is_none_or(|p| p == "1");
        let urls: Vec<String> = [REDIRECTS_WORD, LINKS_WORD, BROWSER_WORD]
            .iter()
            .filter(|word| first_page && q.contains(*word))
            .flat_map(|word| sources(word, port))
            .collect();
        let results = (urls.iter().enumerate())
            .map(|(rank, url)| {
                let (host, path) = url
                    .strip_prefix("http://")
                    .and_then(|u| u.split_once('/'))
                    .unwrap_or_default();
                let title = format!("SSRF survey source {rank} on {host}");
                let snippet = format!("What the {q} survey found at /{path}.");
                result_json(url, host, path, &title, &snippet, rank, 1.0)
            })
            .collect();
        Json(searxng_response(&q, urls.len(), results)).into_response()
    }

    pub(super) fn page(host: &str, path: &str, query: Option<&str>) -> Response {
        if path == "/robots.txt" {
            return robots(ALLOW_ALL);
        }
        let port: u16 = query_param(query, "canary")
            .and_then(|p| p.parse().ok())
            .unwrap_or(9);
        let html = |body: String| Html(body).into_response();
        match (host, path) {
            (HOST, "/links") => html(links(port)),
            (HOST, _) => match path
                .strip_prefix("/redirect/")
                .and_then(|name| TARGETS.iter().find(|(n, _)| *n == name))
            {
                Some((_, url)) => redirect(StatusCode::FOUND, &target(url, port)),
                None => not_found(path),
            },
            (BROWSER_HOST, SUBRESOURCES_PATH) => html(subresources(port)),
            (BROWSER_HOST, SCRIPT_REDIRECT_PATH) => html(SCRIPT_REDIRECT_HTML.to_owned()),
            (BROWSER_HOST, META_REFRESH_PATH) => html(META_REFRESH_HTML.replace(
                "__TARGET__",
                &format!("http://{HOST}/redirect/other-loopback?canary={port}"),
            )),
            (BROWSER_HOST, "/api/article.json") => Json(json!({
                "title": "Reading Harbour Tide Tables",
                "paragraphs": [
                    "Tide tables give the times and heights of high and low water for each day, computed from the harmonic constants of a port. Sailors read them with the chart datum in mind, since every height is measured from it.",
                    "Spring tides follow new and full moons, when the sun and moon pull together; neap tides fall between them. Local weather can add or take away half a metre, which no table predicts.",
                    format!("Harbour masters keep their own records against the published figures. {ARTICLE_MARKER}"),
                ],
            }))
            .into_response(),
            (REBIND_HOST, "/page") => html(REBIND_HTML.replace("__MARKER__", REBIND_MARKER)),
            (REBIND_HOST, "/api/rebind.json") => Json(json!({"note": REBIND_MARKER})).into_response(),
            _ => not_found(path),
        }
    }

    fn links(port: u16) -> String {
        let items: String = TARGETS
            .iter()
            .map(|(name, url)| {
                format!(
                    "<li><a href=\"{}\">The {name} archive</a></li>\n",
                    escape(&target(url, port))
                )
            })
            .collect();
        simple_page(
            "Survey Archives Around the Bay",
            &format!(
                "<main>\n<p>The bay's survey archives are kept by several offices, each with its own reading room and opening hours. Most of them let visitors consult the older volumes by appointment.</p>\n<p>The list below gives the archives that hold copies of the coastal surveys, with the years they cover.</p>\n<ul>\n{items}</ul>\n</main>"
            ),
        )
    }

    fn subresources(port: u16) -> String {
        SUBRESOURCES_HTML
            .replace("__PORT__", &port.to_string())
            .replace("__CANARY_NAME__", CANARY_NAME)
    }

    const SUBRESOURCES_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Harbour Tide Tables</title>
<link rel="stylesheet" href="http://[::1]:__PORT__/style.css">
<script src="http://127.0.0.3:__PORT__/tracker.js"></script>
</head>
<body>
<div id="app"></div>
<img src="http://169.254.169.254/latest/meta-data/iam/security-credentials/" alt="">
<img src="http://127.0.0.1:__PORT__/pixel.gif" alt="">
<iframe src="http://__CANARY_NAME__:__PORT__/frame"></iframe>
<iframe src="http://169.254.169.254/latest/user-data"></iframe>
<script>
(function () {
  function leak(text) {
    var pre = document.createElement('pre');
    pre.className = 'leak';
    pre.textContent = text;
    document.body.appendChild(pre);
  }
  function grab(url) {
    fetch(url).then(function (r) { return r.text(); }).then(leak, function () {});
  }
  grab('http://127.0.0.3:__PORT__/fetch');
  grab('http://169.254.169.254/latest/meta-data/hostname');
  grab('http://localhost:__PORT__/fetch');
  var xhr = new XMLHttpRequest();
  xhr.open('GET', 'http://[::ffff:127.0.0.1]:__PORT__/xhr');
  xhr.onload = function () { leak(xhr.responseText); };
  xhr.send();
  try {
    var ws = new WebSocket('ws://127.0.0.3:__PORT__/ws');
    ws.onmessage = function (m) { leak(String(m.data)); };
  } catch (e) {}
  fetch('/api/article.json').then(function (r) { return r.json(); }).then(function (a) {
    var article = document.createElement('article');
    var h1 = document.createElement('h1');
    h1.textContent = a.title;
    article.appendChild(h1);
    a.paragraphs.forEach(function (text) {
      var p = document.createElement('p');
      p.textContent = text;
      article.appendChild(p);
    });
    document.getElementById('app').appendChild(article);
  });
})();
</script>
</body>
</html>
"#;

    const SCRIPT_REDIRECT_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Moved</title>
<script>location.replace('http://169.254.169.254/latest/meta-data/');</script>
</head>
<body><div id="app"></div></body>
</html>
"#;

    const META_REFRESH_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Moved</title>
<meta http-equiv="refresh" content="0; url=__TARGET__">
<script>window.moved = true;</script>
</head>
<body><div id="app"></div></body>
</html>
"#;

    const REBIND_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>The Oakridge Ferry</title>
<script src="/app.js"></script>
</head>
<body>
<main>
<article>
<h1>The Oakridge Ferry</h1>
<p>The ferry across the Oakridge narrows ran for ninety years before the bridge was built, carrying carts, cattle and the post twice a day in every season but the worst of winter.</p>
<p>__MARKER__</p>
<img src="/pixel.gif" alt="">
</article>
</main>
<script>
fetch('/api/rebind.json').then(function (r) { return r.text(); }).then(function (t) {
  var pre = document.createElement('pre');
  pre.textContent = t;
  document.body.appendChild(pre);
});
</script>
</body>
</html>
"#;
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;
    use crate::simweb::Simweb;

    struct Reply {
        status: u16,
        /// Status line and headers, lowercased.
        head: String,
        body: String,
    }

    impl Reply {
        fn header(&self, name: &str) -> Option<&str> {
            let prefix = format!("{name}: ");
            self.head
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .map(str::trim)
        }
    }

    /// One GET on a fresh connection, like a client that resolved `host` to the simweb.
    async fn get(addr: SocketAddr, host: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        let extra: String = headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\r\n"))
            .collect();
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.expect("read");
        let text = String::from_utf8_lossy(&buf).to_string();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        Reply {
            status,
            head: head.to_ascii_lowercase(),
            body: body.to_string(),
        }
    }

    const BROWSER: &[(&str, &str)] = &[
        ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"),
        ("Accept-Language", "en-US,en;q=0.9"),
    ];

    #[tokio::test]
    async fn needs_headers_admits_only_browser_like_requests() {
        let web = Simweb::for_tests().await;
        let bare = get(
            web.addr(),
            HOST,
            NEEDS_HEADERS_PATH,
            &[("User-Agent", "trawl/0.1")],
        )
        .await;
        assert_eq!(bare.status, 403);
        assert!(bare.body.contains("Forbidden") && !bare.body.contains(NEEDS_HEADERS_MARKER));
        // Each half of the browser look alone is not enough.
        assert_eq!(
            get(web.addr(), HOST, NEEDS_HEADERS_PATH, &BROWSER[..1])
                .await
                .status,
            403
        );
        assert_eq!(
            get(web.addr(), HOST, NEEDS_HEADERS_PATH, &BROWSER[1..])
                .await
                .status,
            403
        );

        let ok = get(web.addr(), HOST, NEEDS_HEADERS_PATH, BROWSER).await;
        assert_eq!(ok.status, 200);
        assert!(ok
            .body
            .contains(&format!("<h1>{}</h1>", NEEDS_HEADERS_ARTICLE.title)));
        assert!(ok.body.contains(NEEDS_HEADERS_MARKER));
        let text: usize = NEEDS_HEADERS_ARTICLE
            .paragraphs()
            .iter()
            .map(String::len)
            .sum();
        assert!(text >= 400, "{text}");
    }

    #[tokio::test]
    async fn script_shells_hold_no_article_and_their_apis_do() {
        let web = Simweb::for_tests().await;
        for (path, api, marker) in [
            (JS_ONLY_PATH, "/api/js-only.json", JS_ONLY_MARKER),
            (
                WEBDRIVER_CHECK_PATH,
                "/api/webdriver-check.json",
                WEBDRIVER_CHECK_MARKER,
            ),
        ] {
            let shell = get(web.addr(), HOST, path, BROWSER).await;
            assert_eq!(shell.status, 200);
            assert!(
                shell.body.contains("<div id=\"app\"></div>") && shell.body.contains("<noscript>")
            );
            assert!(
                shell.body.contains(&format!("fetch('{api}')")) && !shell.body.contains(marker)
            );
            let data = get(web.addr(), HOST, api, &[]).await;
            assert_eq!(data.status, 200);
            assert!(data
                .header("content-type")
                .is_some_and(|t| t.starts_with("application/json")));
            assert!(data.body.contains(marker), "{}", data.body);
        }
        let check = get(web.addr(), HOST, WEBDRIVER_CHECK_PATH, &[]).await;
        assert!(
            check.body.contains("if (true && navigator.webdriver)")
                && check.body.contains("px-captcha")
        );
        let plain = get(web.addr(), HOST, JS_ONLY_PATH, &[]).await;
        assert!(plain.body.contains("if (false && navigator.webdriver)"));
    }

    #[tokio::test]
    async fn challenges_look_like_cloudflare_with_and_without_headers() {
        let web = Simweb::for_tests().await;
        let c = get(web.addr(), HOST, CHALLENGE_PATH, BROWSER).await;
        assert_eq!(c.status, 403);
        assert_eq!(c.header("server"), Some("cloudflare"));
        assert_eq!(c.header("cf-mitigated"), Some("challenge"));
        let quiet = get(web.addr(), HOST, CHALLENGE_200_PATH, BROWSER).await;
        assert_eq!(quiet.status, 200);
        assert_eq!(quiet.header("cf-mitigated"), None);
        assert_eq!(quiet.header("server"), None);
        for r in [c, quiet] {
            assert!(r.body.contains("<title>Just a moment...</title>"));
            assert!(r.body.contains("challenge-platform") && r.body.contains("cf-chl"));
        }
    }

    #[tokio::test]
    async fn rate_limited_answers_once_retry_after_has_passed() {
        let web = Simweb::for_tests().await;
        let path = format!("{RATE_LIMITED_PATH}?k=unit-{}", std::process::id());
        let t0 = Instant::now();
        let first = get(web.addr(), HOST, &path, &[]).await;
        assert_eq!(first.status, 429);
        assert_eq!(first.header("retry-after"), Some("2"));
        assert!(!first.body.contains(RATE_LIMITED_MARKER));
        let ok = loop {
            let r = get(web.addr(), HOST, &path, &[]).await;
            if r.status != 429 {
                break r;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "still limited");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(t0.elapsed() >= Duration::from_secs(RETRY_AFTER_SECONDS));
        assert_eq!(ok.status, 200);
        assert!(ok.body.contains(RATE_LIMITED_MARKER));
        // Another key starts its own clock.
        let other = format!("{RATE_LIMITED_PATH}?k=other-{}", std::process::id());
        assert_eq!(get(web.addr(), HOST, &other, &[]).await.status, 429);
    }

    #[tokio::test]
    async fn redirects_point_into_private_addresses() {
        let web = Simweb::for_tests().await;
        for (path, target) in PRIVATE_REDIRECTS {
            let r = get(web.addr(), HOST, path, &[]).await;
            assert_eq!(r.status, 302, "{path}");
            assert_eq!(r.header("location"), Some(*target));
        }
        assert_eq!(get(web.addr(), HOST, "/nope", &[]).await.status, 404);
    }

    #[tokio::test]
    async fn robots_redirect_chain_ends_in_rules_and_cross_host_points_at_it() {
        let web = Simweb::for_tests().await;
        let mut path = "/robots.txt".to_string();
        let mut hops = 0;
        let rules = loop {
            let r = get(web.addr(), ROBOTS_REDIRECT_HOST, &path, &[]).await;
            if r.status != 301 {
                break r;
            }
            path = r.header("location").expect("location").to_string();
            hops += 1;
        };
        assert_eq!(
            (hops, path.as_str(), rules.status),
            (2, "/robots-b.txt", 200)
        );
        assert_eq!(rules.body, DISALLOW_PRIVATE);
        let private = get(web.addr(), ROBOTS_REDIRECT_HOST, "/private/page", &[]).await;
        assert!(private
            .body
            .contains(&page_marker(ROBOTS_REDIRECT_HOST, "/private/page")));

        let cross = get(web.addr(), ROBOTS_CROSS_HOST, "/robots.txt", &[]).await;
        assert_eq!(cross.status, 301);
        assert_eq!(
            cross.header("location"),
            Some("http://robots-redirect.test/robots-b.txt")
        );
        assert_eq!(
            get(web.addr(), ROBOTS_CROSS_HOST, "/private/page", &[])
                .await
                .status,
            200
        );
    }

    #[tokio::test]
    async fn robots_loop_never_ends() {
        let web = Simweb::for_tests().await;
        let mut path = "/robots.txt".to_string();
        for n in 1..=12 {
            let r = get(web.addr(), ROBOTS_LOOP_HOST, &path, &[]).await;
            assert_eq!(r.status, 301);
            path = r.header("location").expect("location").to_string();
            assert_eq!(path, format!("/robots.txt?n={n}"));
        }
    }

    #[tokio::test]
    async fn slow_robots_hangs_while_the_server_keeps_answering() {
        let web = Simweb::for_tests().await;
        let addr = web.addr();
        let slow =
            tokio::spawn(async move { get(addr, ROBOTS_SLOW_HOST, "/robots.txt", &[]).await });
        let page = get(addr, ROBOTS_SLOW_HOST, "/page", &[]).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains(&page_marker(ROBOTS_SLOW_HOST, "/page")));
        assert!(tokio::time::timeout(Duration::from_millis(500), slow)
            .await
            .is_err());
    }

    #[test]
    fn huge_robots_keeps_its_rule_within_the_first_bytes() {
        let body = huge_robots();
        assert_eq!(body.len(), ROBOTS_HUGE_LEN);
        assert!(body.starts_with(DISALLOW_PRIVATE) && body.ends_with('\n'));
        assert!(body.lines().skip(2).all(|l| l.starts_with('#')));
    }

    #[tokio::test]
    async fn small_sites_serve_distinct_pages_and_the_log_keeps_their_order() {
        let web = Simweb::for_tests().await;
        let stats = web.stats();
        let robots = get(web.addr(), CRAWL_DELAY_HOST, "/robots.txt", &[]).await;
        assert_eq!(robots.body, "User-agent: *\nCrawl-delay: 2\n");

        let paths = ["/robots.txt", "/p/1", "/p/10", "/p/99", "/"];
        for path in paths {
            let r = get(web.addr(), POLITE_HOST, path, &[]).await;
            assert_eq!(r.status, 200, "{path}");
            if path.starts_with("/p/") {
                assert!(r.body.contains(&page_marker(POLITE_HOST, path)));
            }
        }
        assert!(!get(web.addr(), POLITE_HOST, "/p/1", &[])
            .await
            .body
            .contains(&page_marker(POLITE_HOST, "/p/10")));
        assert_eq!(
            get(web.addr(), POLITE_HOST, "/p/100", &[]).await.status,
            404
        );

        let log = stats.log(POLITE_HOST);
        let logged: Vec<&str> = log.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            logged,
            [
                "/robots.txt",
                "/p/1",
                "/p/10",
                "/p/99",
                "/",
                "/p/1",
                "/p/100"
            ]
        );
        assert!(log.windows(2).all(|w| w[0].1 <= w[1].1));
        // Leaving robots.txt out only merges gaps, so the smallest can only grow.
        assert!(stats.min_gap(POLITE_HOST, true) >= stats.min_gap(POLITE_HOST, false));
        assert_eq!(stats.log(CRAWL_DELAY_HOST).len(), 1);
        assert_eq!(stats.min_gap(CRAWL_DELAY_HOST, false), None);
    }

    #[tokio::test]
    async fn ssrf_pages_point_at_the_canary_and_search_lists_them() {
        let web = Simweb::for_tests().await;
        for (name, url) in ssrf::TARGETS {
            let r = get(
                web.addr(),
                ssrf::HOST,
                &format!("/redirect/{name}?canary=4321"),
                &[],
            )
            .await;
            assert_eq!(r.status, 302, "{name}");
            assert_eq!(r.header("location"), Some(ssrf::target(url, 4321).as_str()));
        }
        let links = get(web.addr(), ssrf::HOST, "/links?canary=4321", &[]).await;
        assert!(
            links.body.contains("href=\"http://0177.0.0.3:4321/\""),
            "{}",
            links.body
        );
        let page = get(
            web.addr(),
            ssrf::BROWSER_HOST,
            "/subresources?canary=4321",
            &[],
        )
        .await;
        assert!(page.body.contains("'http://127.0.0.3:4321/fetch'") && !page.body.contains("__"));
        assert!(!page.body.contains(ssrf::ARTICLE_MARKER));
        let article = get(web.addr(), ssrf::BROWSER_HOST, "/api/article.json", &[]).await;
        assert!(article.body.contains(ssrf::ARTICLE_MARKER));

        let path = format!(
            "{}4321/search?q=which+{}+and+{}&format=json",
            ssrf::SEARCH_PREFIX,
            ssrf::LINKS_WORD,
            ssrf::BROWSER_WORD
        );
        let found = get(web.addr(), "127.0.0.1", &path, &[]).await;
        let body: serde_json::Value = serde_json::from_str(&found.body).unwrap();
        let urls: Vec<&str> = body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["url"].as_str().unwrap())
            .collect();
        let mut expected = ssrf::sources(ssrf::LINKS_WORD, 4321);
        expected.extend(ssrf::sources(ssrf::BROWSER_WORD, 4321));
        assert_eq!(urls, expected);
        let next = get(web.addr(), "127.0.0.1", &format!("{path}&pageno=2"), &[]).await;
        assert!(next.body.contains("\"results\":[]"), "{}", next.body);
    }
}

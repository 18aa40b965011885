//! The web app (`trawl serve` at `/`) in a real Chromium over WebDriver, against a real fleet on
//! loopback: a wrong token is refused, a malformed upload is named by its line and enqueues
//! nothing, three questions uploaded from a file reach `done` without a reload, a report's
//! citation opens its source and quote in place (and by its deep link), the CSV downloads, a
//! page's `<script>` shows as text and never runs, a batch is cancelled, a read-only token
//! cannot submit, and no request of the app leaves its origin. Screenshots of each view are
//! saved under `target/test-artifacts/ui/` (`TRAWL_TEST_ARTIFACTS` to put them elsewhere).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Fleet;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use trawl_fetch::browser::LocalWebDriver;

/// A page of our own whose text holds markup: the report quotes it, the app must show it as
/// text. `window.pwned` is set only if something of it runs.
const HOSTILE: &str = "<!doctype html><html><head><title>The Zorblax relay</title></head><body>\
    <main><h1>The Zorblax relay</h1>\
    <p>The Zorblax relay forwards &lt;script&gt;window.pwned=1&lt;/script&gt; beacons between \
    the northern stations every ninety seconds.</p>\
    <p>The Zorblax relay was built in 1987 by the Harwick signal company to link the northern \
    stations, and the Zorblax relay still forwards their beacons today.</p>\
    <p>Engineers describe the Zorblax relay as the oldest working beacon link in the region.</p>\
    </main></body></html>";

/// Where this test's screenshots and figures go.
fn artifacts() -> PathBuf {
    let dir = std::env::var_os("TRAWL_TEST_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo().join("target/test-artifacts"))
        .join("ui");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    std::fs::write(artifacts().join(format!("{name}.png")), png).unwrap();
}

/// A headless Chromium session whose downloads land in `downloads`.
async fn browser(driver: &LocalWebDriver, downloads: &Path) -> Client {
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            // Chromium's own traffic (updates, sync, prefetch) goes to a proxy that is not
            // there: only loopback, which it never proxies, is reached.
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--window-size=1280,900", "--remote-debugging-pipe",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--proxy-server=http://127.0.0.1:9"],
            "prefs": {
                "download.default_directory": downloads.to_str().unwrap(),
                "download.prompt_for_download": false,
            },
        },
    });
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    let mut builder = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
    builder.capabilities(caps);
    builder.connect(&driver.url()).await.unwrap()
}

/// Runs `script` (which returns a value) until `done` holds for its result, or panics after
/// `limit` with the last result and a screenshot named `what`.
async fn wait_until(
    client: &Client,
    what: &str,
    limit: Duration,
    script: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let until = Instant::now() + limit;
    loop {
        let value = client.execute(script, vec![]).await.unwrap();
        if done(&value) {
            return value;
        }
        if Instant::now() > until {
            screenshot(client, &format!("timeout-{what}")).await;
            panic!("{what}: still {value} after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The text of the first element `css` selects, "" while there is none.
fn text_of(css: &str) -> String {
    format!("const e = document.querySelector({css:?}); return e ? e.textContent.trim() : '';")
}

async fn shown(client: &Client, css: &str, limit: Duration) -> String {
    let script = format!(
        "const e = document.querySelector({css:?}); return e && !e.hidden && e.getClientRects().length > 0 ? e.textContent.trim() : null;"
    );
    let value = wait_until(client, css, limit, &script, |v| v.is_string()).await;
    value.as_str().unwrap().to_owned()
}

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

async fn type_into(client: &Client, css: &str, text: &str) {
    let field = client.find(Locator::Css(css)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

/// Signs in with `token` on the page at `url`.
async fn sign_in(client: &Client, url: &str, token: &str) {
    client.goto(url).await.unwrap();
    shown(client, "#signin", Duration::from_secs(10)).await;
    type_into(client, "#token", token).await;
    click(client, "#signin button[type=submit]").await;
}

/// Every resource the page loaded, and the page itself, came from `base`.
async fn same_origin(client: &Client, base: &str) {
    let names = client
        .execute(
            "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).map(e => e.name);",
            vec![],
        )
        .await
        .unwrap();
    let names = names.as_array().unwrap();
    assert!(!names.is_empty());
    for name in names {
        let name = name.as_str().unwrap();
        assert!(name.starts_with(base), "{name} is not on {base}");
    }
}

/// Serves [`HOSTILE`] on loopback; returns its URL.
async fn hostile_page() -> String {
    let app = axum::Router::new().route(
        "/zorblax",
        axum::routing::get(|| async { axum::response::Html(HOSTILE) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/zorblax")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_app_submits_follows_reads_downloads_and_cancels_in_a_real_browser() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let base = fleet
        .serve(&[("TRAWL__API__RATE_PER_SEC", "1000".into())])
        .await;
    let token = fleet.create_token("ui").await;
    let driver = LocalWebDriver::start(0)
        .await
        .expect("chromedriver must be installed (scripts/services-up)");
    let downloads = tempfile::tempdir().unwrap();
    let client = browser(&driver, downloads.path()).await;
    let http = reqwest::Client::new();
    let api = |path: &str| http.get(format!("{base}{path}")).bearer_auth(&token).send();

    // A wrong token is refused with the server's words, and nothing is stored.
    sign_in(&client, &format!("{base}/"), "trawl_not-a-token").await;
    let refused = shown(&client, "#signin-error", Duration::from_secs(10)).await;
    assert!(refused.contains("unknown or revoked"), "{refused}");
    let stored = client
        .execute("return sessionStorage.getItem('trawl.token');", vec![])
        .await
        .unwrap();
    assert_eq!(stored, Value::Null);
    screenshot(&client, "1-signin-refused").await;
    record_first_render(&client).await;

    sign_in(&client, &format!("{base}/"), &token).await;
    shown(&client, "#submit-form", Duration::from_secs(10)).await;
    let unlabelled = client
        .execute(
            "return [...document.querySelectorAll('input, select, textarea')].filter(e => e.labels.length === 0).map(e => e.id);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(unlabelled, json!([]), "every field has its label");
    screenshot(&client, "2-batches").await;

    // A malformed upload is named by its line, and nothing is enqueued. Typed questions beside
    // a file are refused first: their ids (their places) would collide.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"query\": \"What is fine?\"}\n{\"query\": \n").unwrap();
    let file = client.find(Locator::Css("#file")).await.unwrap();
    file.send_keys(bad.to_str().unwrap()).await.unwrap();
    type_into(&client, "#questions", "What is typed?").await;
    click(&client, "#submit").await;
    let both = shown(&client, "#submit-error", Duration::from_secs(10)).await;
    assert!(both.contains("not both"), "{both}");
    type_into(&client, "#questions", "").await;
    click(&client, "#submit").await;
    let named = wait_until(
        &client,
        "the bad line named",
        Duration::from_secs(10),
        &text_of("#submit-error"),
        |v| v.as_str().is_some_and(|t| t.contains("line")),
    )
    .await;
    assert!(named.as_str().unwrap().contains("line 2"), "{named}");
    let listed: Value = api("/v1/batches").await.unwrap().json().await.unwrap();
    assert_eq!(listed["batches"], json!([]), "{listed}");
    screenshot(&client, "3-malformed-upload").await;

    // Three questions from a file: the batch's page follows it to `done` with no reload.
    let questions: Vec<String> = (fleet.corpus.questions().into_iter())
        .take(3)
        .map(|q| q.query)
        .collect();
    let good = dir.path().join("questions.txt");
    std::fs::write(&good, questions.join("\n")).unwrap();
    client.goto(&format!("{base}/")).await.unwrap();
    shown(&client, "#submit-form", Duration::from_secs(10)).await;
    let file = client.find(Locator::Css("#file")).await.unwrap();
    file.send_keys(good.to_str().unwrap()).await.unwrap();
    click(&client, "#submit").await;
    let at = wait_until(
        &client,
        "batch page",
        Duration::from_secs(20),
        "return location.pathname;",
        |v| v.as_str().is_some_and(|p| p.starts_with("/batches/")),
    )
    .await;
    let batch = at
        .as_str()
        .unwrap()
        .trim_start_matches("/batches/")
        .to_owned();
    client
        .execute("window.notReloaded = true; return true;", vec![])
        .await
        .unwrap();
    wait_until(
        &client,
        "batch done",
        Duration::from_secs(300),
        &text_of("#batch-state"),
        |v| v == "done",
    )
    .await;
    let kept = client
        .execute("return window.notReloaded === true;", vec![])
        .await
        .unwrap();
    assert_eq!(kept, json!(true), "the page was reloaded");
    let rows = wait_until(
        &client,
        "jobs listed",
        Duration::from_secs(20),
        "return document.querySelectorAll('#jobs tr[data-job]').length;",
        |v| v == 3,
    )
    .await;
    assert_eq!(rows, 3);
    screenshot(&client, "4-batch-done").await;
    same_origin(&client, &base).await;

    // The CSV of the batch downloads: a header and a row per question.
    click(&client, "#download-csv").await;
    let csv_path = downloads.path().join(format!("batch-{batch}.csv"));
    let until = Instant::now() + Duration::from_secs(20);
    while !csv_path.exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let csv = std::fs::read_to_string(&csv_path).expect("the CSV was downloaded");
    assert!(csv.starts_with("id,query,status"), "{csv}");
    assert_eq!(csv.lines().count(), 4, "{csv}");

    // A report: its first citation opens its source and quote in place.
    click(&client, "#jobs tr[data-job] a.job-link").await;
    shown(&client, "#report-body", Duration::from_secs(20)).await;
    let job = client
        .current_url()
        .await
        .unwrap()
        .path()
        .trim_start_matches("/jobs/")
        .to_owned();
    let view: Value = api(&format!("/v1/jobs/{job}/report"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first = &view["citations"][0];
    assert!(first["n"] == 1, "{view}");
    screenshot(&client, "5-report").await;
    click(&client, "#report-body a.cite[data-cite='1']").await;
    shown(&client, "#citation", Duration::from_secs(5)).await;
    let href = client
        .find(Locator::Css("#citation-url"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap();
    assert_eq!(href.as_deref(), first["url"].as_str());
    let rel = client
        .find(Locator::Css("#citation-url"))
        .await
        .unwrap()
        .attr("rel")
        .await
        .unwrap();
    assert!(rel.unwrap_or_default().contains("noopener"));
    let quote = shown(&client, "#citation-quote", Duration::from_secs(5)).await;
    match first["quotes"][0].as_str() {
        Some(q) => assert_eq!(quote, q.trim()),
        None => assert_eq!(quote, "No quote recorded"),
    }
    assert_eq!(
        client.current_url().await.unwrap().fragment(),
        Some("cite-1")
    );
    screenshot(&client, "6-citation").await;
    // Escape closes it, from the keyboard.
    let escape = "\u{E00C}";
    client
        .active_element()
        .await
        .unwrap()
        .send_keys(escape)
        .await
        .unwrap();
    wait_until(&client, "citation closed", Duration::from_secs(5),
        "const e = document.querySelector('#citation'); return !e || e.hidden || e.getClientRects().length === 0;",
        |v| v == true).await;
    // Its deep link opens the same citation in a fresh load.
    client
        .goto(&format!("{base}/jobs/{job}#cite-1"))
        .await
        .unwrap();
    let again = shown(&client, "#citation-quote", Duration::from_secs(20)).await;
    assert_eq!(again, quote);
    same_origin(&client, &base).await;
    // At a phone's width the page does not scroll sideways.
    client.set_window_size(360, 780).await.unwrap();
    let width = client
        .execute("return document.documentElement.scrollWidth;", vec![])
        .await
        .unwrap();
    assert!(width.as_u64().is_some_and(|w| w <= 360), "{width}");
    screenshot(&client, "6-phone").await;
    client.set_window_size(1280, 900).await.unwrap();

    // A page's markup is text in the report and never runs.
    let hostile = hostile_page().await;
    let body = json!({"questions": [{
        "query": "What does the Zorblax relay forward <script>window.pwned=2</script>?",
        "options": {"urls": [hostile], "search": false},
    }]});
    let created: Value = http
        .post(format!("{base}/v1/batches"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let hostile_job = created["jobs"][0]["job_id"].as_str().unwrap().to_owned();
    client
        .goto(&format!("{base}/jobs/{hostile_job}"))
        .await
        .unwrap();
    let report = shown(&client, "#report-body", Duration::from_secs(120)).await;
    assert!(
        report.contains("<script>window.pwned=1</script>"),
        "{report}"
    );
    let query = shown(&client, "#report-query", Duration::from_secs(5)).await;
    assert!(query.contains("<script>window.pwned=2</script>"), "{query}");
    let ran = client
        .execute(
            "return [window.pwned === undefined, document.querySelectorAll('#report-body script, #report-query script').length];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(ran, json!([true, 0]));
    screenshot(&client, "7-markup-as-text").await;

    // A batch is cancelled from its page. No search worker runs, so its jobs stay pending.
    fleet.kill("trawl-search").await;
    client.goto(&format!("{base}/")).await.unwrap();
    shown(&client, "#submit-form", Duration::from_secs(10)).await;
    type_into(
        &client,
        "#questions",
        "What is left pending?\nWhat else is pending?",
    )
    .await;
    click(&client, "#options-toggle").await;
    type_into(
        &client,
        "#fields",
        r#"{"type": "object", "properties": {"colour": {"type": "string"}}}"#,
    )
    .await;
    click(&client, "#submit").await;
    wait_until(
        &client,
        "second batch page",
        Duration::from_secs(20),
        "return location.pathname;",
        |v| {
            v.as_str()
                .is_some_and(|p| p.starts_with("/batches/") && !p.ends_with(&batch))
        },
    )
    .await;
    shown(&client, "#cancel-batch", Duration::from_secs(10)).await;
    click(&client, "#cancel-batch").await;
    wait_until(
        &client,
        "cancelled",
        Duration::from_secs(30),
        &text_of("#batch-state"),
        |v| v == "cancelled",
    )
    .await;
    screenshot(&client, "8-cancelled").await;
    // Its jobs never ended, and the table still has the column of the field they asked for.
    let cancelled = client.current_url().await.unwrap();
    let cancelled = cancelled.path().trim_start_matches("/batches/");
    let table = api(&format!("/v1/batches/{cancelled}/results?format=csv"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        table.starts_with("id,query,status,colour,colour_source\n"),
        "{table}"
    );

    // A read-only token reads the batches and cannot submit.
    let info: Value = api("/v1/token").await.unwrap().json().await.unwrap();
    let viewer = (fleet.create_read_only_token("viewer", info["id"].as_str().unwrap())).await;
    client
        .execute("sessionStorage.clear(); return true;", vec![])
        .await
        .unwrap();
    sign_in(&client, &format!("{base}/batches/{batch}"), &viewer).await;
    wait_until(
        &client,
        "read-only batch",
        Duration::from_secs(20),
        &text_of("#batch-state"),
        |v| v == "done",
    )
    .await;
    let hidden = client
        .execute(
            "const f = document.querySelector('#submit-form'); return !f || f.hidden || f.getClientRects().length === 0;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(hidden, json!(true));
    let refused = http
        .post(format!("{base}/v1/batches"))
        .bearer_auth(&viewer)
        .json(&json!({"questions": [{"query": "May I?"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let not_cancelled = http
        .delete(format!("{base}/v1/batches/{batch}"))
        .bearer_auth(&viewer)
        .send()
        .await
        .unwrap();
    assert_eq!(not_cancelled.status(), 403);
    screenshot(&client, "9-read-only").await;

    client.close().await.unwrap();
    fleet.cleanup().await;
}

/// The app's first render on loopback, as the browser timed its first load (nothing cached):
/// into the artifacts, the figure docs/ui.md quotes.
async fn record_first_render(client: &Client) {
    let timing = client
        .execute(
            "const n = performance.getEntriesByType('navigation')[0]; \
             const p = performance.getEntriesByName('first-contentful-paint')[0]; \
             return {dom_content_loaded_ms: n.domContentLoadedEventEnd, load_ms: n.loadEventEnd, \
                     first_contentful_paint_ms: p ? p.startTime : null, \
                     transferred_bytes: performance.getEntriesByType('resource').reduce((s, e) => s + e.transferSize, n.transferSize)};",
            vec![],
        )
        .await
        .unwrap();
    println!("first render on loopback: {timing}");
    std::fs::write(artifacts().join("first-render.json"), timing.to_string()).unwrap();
}

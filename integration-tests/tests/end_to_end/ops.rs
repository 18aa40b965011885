//! The operator's kit against a real Prometheus: every worker and `trawl monitor` scraped, with
//! RabbitMQ's own plugin, during a simweb batch. Then every expression of every dashboard panel
//! and every alert rule is evaluated: each must parse, every panel must return data, every
//! series a panel or rule selects must exist with the label values it names (a panel can return
//! data while one of its series never does), every rule must evaluate healthy, and every
//! binary's exposition must pass `promtool check metrics`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::{free_port, repo, Fleet};
use serde_json::Value;
use tokio::process::{Child, Command};

/// The fleet's processes: (binary, arguments, Prometheus `component` label).
const PROCESSES: [(&str, &[&str], &str); 7] = [
    ("trawl-search", &[], "search"),
    ("trawl-fetch", &[], "fetch"),
    // No WebDriver runs here: the browser worker still exports its pool gauges.
    ("trawl-fetch-browser", &[], "fetch-browser"),
    ("trawl-clean", &[], "clean"),
    ("trawl-synthesize", &[], "synthesize"),
    ("trawl", &["monitor", "--interval", "1"], "monitor"),
    ("trawl", &["serve", "--addr", "127.0.0.1:0"], "api"),
];

fn tool(name: &str) -> PathBuf {
    let path = Path::new("/usr/bin").join(name);
    assert!(
        path.exists(),
        "{name} is missing: scripts/services-up installs Debian's prometheus package"
    );
    path
}

struct Prometheus {
    _child: Child,
    url: String,
    http: reqwest::Client,
}

impl Prometheus {
    /// Starts Prometheus scraping `targets` (component → port) every second, with the repo's
    /// alert rules loaded.
    async fn start(dir: &Path, targets: &BTreeMap<&str, u16>) -> Prometheus {
        let rules = repo().join("deploy/prometheus/alerts.yml");
        let mut config = format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
             rule_files: [{rules:?}]\n\
             scrape_configs:\n\
             - job_name: trawl\n  static_configs:\n"
        );
        for (component, port) in targets {
            config.push_str(&format!(
                "  - targets: ['127.0.0.1:{port}']\n    labels: {{component: {component}}}\n"
            ));
        }
        config.push_str(
            "- job_name: rabbitmq-detailed\n  metrics_path: /metrics/detailed\n  \
             params: {family: [queue_coarse_metrics, queue_consumer_count]}\n  \
             static_configs: [{targets: ['127.0.0.1:15692']}]\n\
             - job_name: rabbitmq\n  static_configs: [{targets: ['127.0.0.1:15692']}]\n",
        );
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, config).unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new(tool("prometheus"))
            .arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let prometheus = Prometheus {
            _child: child,
            url: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        for _ in 0..100 {
            let ready = prometheus
                .http
                .get(format!("{}/-/ready", prometheus.url))
                .send()
                .await;
            if ready.is_ok_and(|r| r.status().is_success()) {
                return prometheus;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "Prometheus did not start: {}",
            std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
        );
    }

    async fn api(&self, path: &str, query: &[(&str, &str)]) -> Value {
        self.http
            .get(format!("{}/api/v1/{path}", self.url))
            .query(query)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Evaluates `expr` now: Ok(number of series) or Err(Prometheus's error).
    async fn query(&self, expr: &str) -> Result<usize, String> {
        let answer = self.api("query", &[("query", expr)]).await;
        if answer["status"] != "success" {
            return Err(answer["error"]
                .as_str()
                .unwrap_or("unknown error")
                .to_owned());
        }
        let result = &answer["data"]["result"];
        Ok(result.as_array().map_or(1, Vec::len))
    }
}

/// Grafana's variables as the dashboards use them, given values a test can evaluate.
fn substitute(expr: &str) -> String {
    expr.replace("$__rate_interval", "1m")
        .replace("$__interval", "15s")
        .replace("$__range", "1h")
        .replace("${stage}", ".*")
        .replace("$stage", ".*")
}

/// Every (dashboard, panel title, expression) in deploy/grafana/dashboards.
fn dashboard_panels() -> Vec<(String, String, Vec<String>)> {
    fn walk(dashboard: &str, panels: &[Value], out: &mut Vec<(String, String, Vec<String>)>) {
        for panel in panels {
            if let Some(inner) = panel["panels"].as_array() {
                walk(dashboard, inner, out);
            }
            let exprs: Vec<String> = panel["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["expr"].as_str().map(substitute))
                .collect();
            if !exprs.is_empty() {
                let title = panel["title"].as_str().unwrap_or("?").to_owned();
                out.push((dashboard.to_owned(), title, exprs));
            }
        }
    }
    let dir = repo().join("deploy/grafana/dashboards");
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "dashboards missing from {}",
        dir.display()
    );
    for file in files {
        let json: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        walk(&name, json["panels"].as_array().unwrap(), &mut out);
    }
    out
}

/// What an expression selects, as `metric{label="value"}` selectors that must each match a
/// series: the metric alone, and one selector per value of each `=` matcher and of each `=~`
/// matcher that is an alternation of plain names. Negative matchers and real regular
/// expressions select nothing in particular. Only trawl's and RabbitMQ's metrics are looked at:
/// other words in an expression are functions, keywords and label names.
fn selections(expr: &str) -> Vec<String> {
    let bytes = expr.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b':';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !ident(bytes[i]) || (i > 0 && ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && ident(bytes[i]) {
            i += 1;
        }
        let name = &expr[start..i];
        if !(name.starts_with("trawl_") || name.starts_with("rabbitmq_")) {
            continue;
        }
        out.push(name.to_owned());
        if bytes.get(i) != Some(&b'{') {
            continue;
        }
        let end = i + expr[i..].find('}').expect("a closed selector");
        for matcher in expr[i + 1..end].split(',') {
            let matcher = matcher.trim();
            let (label, op, value) = match ["=~", "!~", "!=", "="]
                .iter()
                .find_map(|op| matcher.split_once(op).map(|(l, v)| (l, *op, v)))
            {
                Some(found) => found,
                None => continue,
            };
            let value = value.trim().trim_matches('"');
            let plain = |v: &str| !v.is_empty() && v.bytes().all(|c| ident(c) || c == b'-');
            let values: Vec<&str> = match op {
                "=" => vec![value],
                "=~" if value.split('|').all(plain) => value.split('|').collect(),
                _ => Vec::new(),
            };
            for v in values {
                out.push(format!("{name}{{{}=\"{v}\"}}", label.trim()));
            }
        }
        i = end + 1;
    }
    out
}

async fn promtool_check_metrics(exposition: &str) -> Result<(), String> {
    use tokio::io::AsyncWriteExt;
    let mut child = Command::new(tool("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(exposition.as_bytes()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_panel_and_alert_evaluates_against_a_real_prometheus() {
    let mut fleet = Fleet::start().await;
    let llm = format!("http://{}/v1", fleet.simweb.addr());
    let mut ports = BTreeMap::new();
    for (bin, args, component) in PROCESSES {
        let port = free_port();
        ports.insert(component, port);
        fleet.spawn_with(
            bin,
            args,
            &[
                ("TRAWL__METRICS__ADDR", format!("127.0.0.1:{port}")),
                ("TRAWL__LLM__BASE_URL", llm.clone()),
                ("TRAWL__LLM__MODEL", "gpt-4o-mini".into()),
                ("OPENAI_API_KEY", "test-key".into()),
            ],
        );
    }
    let prom_dir = fleet.dir.path().join("prometheus");
    std::fs::create_dir_all(&prom_dir).unwrap();
    let prometheus = Prometheus::start(&prom_dir, &ports).await;

    let questions: Vec<String> = fleet
        .corpus
        .questions()
        .into_iter()
        .take(6)
        .map(|q| q.query)
        .collect();
    let batch = fleet.submit(&questions).await;
    fleet.wait_done(&batch, Duration::from_secs(300)).await;

    // Every target up, and the monitor has sampled the finished batch.
    let mut all_up = false;
    for _ in 0..100 {
        let up = prometheus.query("up == 0").await.unwrap();
        let targets = prometheus.query("up").await.unwrap();
        if up == 0 && targets == PROCESSES.len() + 2 {
            all_up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if !all_up {
        fleet.dump_logs();
    }
    assert!(all_up, "not every target is up");
    // A rate needs two samples after the batch: let a few scrapes pass.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let mut problems = Vec::new();
    let panels = dashboard_panels();
    for (dashboard, title, exprs) in &panels {
        let mut series = 0;
        for expr in exprs {
            match prometheus.query(expr).await {
                Ok(n) => series += n,
                Err(e) => problems.push(format!("{dashboard} / {title}: {expr}: {e}")),
            }
        }
        if series == 0 {
            problems.push(format!("{dashboard} / {title}: no data from {exprs:?}"));
        }
        for selector in exprs.iter().flat_map(|e| selections(e)) {
            if prometheus.query(&selector).await != Ok(0) {
                continue;
            }
            problems.push(format!("{dashboard} / {title}: no series {selector}"));
        }
    }

    let rules = prometheus.api("rules", &[]).await;
    let mut rule_count = 0;
    for group in rules["data"]["groups"].as_array().unwrap() {
        for rule in group["rules"].as_array().unwrap() {
            rule_count += 1;
            let name = rule["name"].as_str().unwrap_or("?");
            let expr = rule["query"].as_str().unwrap();
            if let Err(e) = prometheus.query(expr).await {
                problems.push(format!("alert {name}: {expr}: {e}"));
            }
            for selector in selections(expr) {
                if prometheus.query(&selector).await == Ok(0) {
                    problems.push(format!("alert {name}: no series {selector}"));
                }
            }
            // Evaluated at least once by now; "err" would mean it fails at run time.
            if rule["health"] == "err" {
                problems.push(format!("alert {name}: {}", rule["lastError"]));
            }
        }
    }
    assert!(rule_count >= 8, "alert rules not loaded: {rules}");

    for (component, port) in &ports {
        let text = common::get_text(&format!("http://127.0.0.1:{port}/metrics")).await;
        if let Err(e) = promtool_check_metrics(&text).await {
            problems.push(format!("promtool check metrics ({component}): {e}"));
        }
    }

    if !problems.is_empty() {
        fleet.dump_logs();
    }
    assert!(
        problems.is_empty(),
        "{} of {} panels, {rule_count} rules and {} expositions had problems:\n{}",
        problems.len(),
        panels.len(),
        ports.len(),
        problems.join("\n")
    );
    fleet.cleanup().await;
}

#[test]
fn selections_name_each_series_and_value_an_expression_needs() {
    let expr = "sum by (cache) (rate(trawl_cache_lookups_total{cache=~\"robots|host-level\", result=\"hit\", stage=~\".*\", queue!=\"dead\"}[1m])) / clamp_min(sum(trawl_x_total), 1) + on() rabbitmq_up";
    assert_eq!(
        selections(expr),
        [
            "trawl_cache_lookups_total",
            "trawl_cache_lookups_total{cache=\"robots\"}",
            "trawl_cache_lookups_total{cache=\"host-level\"}",
            "trawl_cache_lookups_total{result=\"hit\"}",
            "trawl_x_total",
            "rabbitmq_up",
        ]
    );
}

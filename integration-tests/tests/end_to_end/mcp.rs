//! `trawl mcp` spoken to as an agent would: JSON-RPC over the real binary's stdin and stdout with
//! every stage in its process, and streamable HTTP in front of the fleet on RabbitMQ and Redis,
//! against simweb.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::Fleet;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use trawl_synthesize::tokens::Tokenizer;

/// One `trawl mcp` session over stdio.
struct StdioSession {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    /// Notifications seen while waiting for responses.
    notifications: Vec<Value>,
}

impl StdioSession {
    async fn start(fleet: &Fleet, extra: &[(&str, &str)]) -> StdioSession {
        let mut child = fleet
            .trawl_alone() // no broker or store URL: the stages run in the server
            .arg("mcp")
            .envs(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .env("TRAWL__FETCH__MAX_LEVEL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut session = StdioSession {
            child,
            stdin,
            lines,
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = session
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "trawl-test", "version": "1"}
                }),
            )
            .await;
        assert_eq!(init["serverInfo"]["name"], "trawl", "{init}");
        session
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its result, keeping the notifications that came before it.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.exchange(method, params).await;
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// Sends a request and returns the whole response, result or error.
    async fn exchange(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let read = async {
            loop {
                let line = self
                    .lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("trawl mcp closed stdout");
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON-RPC on stdout ({e}): {line}"));
                if message["id"] == id {
                    return message;
                }
                self.notifications.push(message);
            }
        };
        tokio::time::timeout(Duration::from_secs(240), read)
            .await
            .expect("no response from trawl mcp")
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self
            .request(
                "tools/call",
                json!({"name": tool, "arguments": arguments, "_meta": {"progressToken": tool}}),
            )
            .await;
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        (result["isError"] == true, text.to_owned())
    }

    /// Closing stdin ends the session; the server then stops its stages and exits.
    async fn close(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("trawl mcp did not exit when its stdin closed")
            .unwrap();
        assert!(status.success(), "{status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_tools_research_search_and_extract() {
    let fleet = Fleet::start().await;
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    let mut mcp = StdioSession::start(&fleet, &[]).await;

    let tools = mcp.request("tools/list", json!({})).await;
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "extract",
            "research",
            "research_result",
            "research_start",
            "research_status",
            "search"
        ]
    );

    // search: the answer pages come back scored, without being fetched.
    let (failed, text) = mcp.call("search", json!({"query": question.query})).await;
    assert!(!failed, "{text}");
    let found: Value = serde_json::from_str(&text).unwrap();
    let urls: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert!(
        question
            .answer_urls
            .iter()
            .any(|u| urls.contains(&u.as_str())),
        "no answer page among {urls:?}"
    );
    assert!(found["results"][0]["score"].as_f64().unwrap() > 0.0);

    // extract: one answer page's main content as markdown.
    let page = question.answer_urls[0].as_str();
    let (failed, text) = mcp.call("extract", json!({"url": page})).await;
    assert!(!failed, "{text}");
    assert!(text.starts_with("# "), "{text}");
    assert!(text.ends_with(&format!("source: {page}")), "{text}");
    // Bad input is the tool's error, told to the agent, not a broken session.
    let (failed, text) = mcp
        .call("extract", json!({"url": "ftp://example.test/x"}))
        .await;
    assert!(failed && text.contains("http(s)"), "{text}");
    let (failed, text) = mcp.call("research", json!({"question": "  "})).await;
    assert!(failed && text.contains("empty"), "{text}");

    // research: the cited report, its work products, and progress along the way.
    let (failed, text) = mcp
        .call("research", json!({"question": question.query}))
        .await;
    assert!(!failed, "{text}");
    common::assert_cites_answer(&text, &question);
    assert!(
        text.contains("work products in") && text.contains("report.md, "),
        "{text}"
    );
    let progress: Vec<&Value> = mcp
        .notifications
        .iter()
        .filter(|n| {
            n["method"] == "notifications/progress" && n["params"]["progressToken"] == "research"
        })
        .collect();
    assert!(!progress.is_empty(), "no progress notifications");

    // The same research for clients that give up on long calls: start returns at once, status
    // follows the job, result gives the report (and structured fields) once it has ended.
    let started = mcp
        .request(
            "tools/call",
            json!({"name": "research_start", "arguments": {"question": question.query}}),
        )
        .await;
    let id = started["structuredContent"]["research_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        started["structuredContent"]["status"], "pending",
        "{started}"
    );
    let mut result = Value::Null;
    for _ in 0..600 {
        let status = mcp
            .request(
                "tools/call",
                json!({"name": "research_status", "arguments": {"research_id": id}}),
            )
            .await;
        let status = &status["structuredContent"];
        assert!(status["status"].is_string(), "{status}");
        for count in [
            "sources_chosen",
            "sources_fetched",
            "sources_settled",
            "sources_read",
        ] {
            assert!(status[count].is_u64(), "{count} in {status}");
        }
        assert!(status["sources_fetched"].as_u64() <= status["sources_chosen"].as_u64());
        if status["finished"] == true {
            assert_eq!(status["status"], "done", "{status}");
            result = mcp
                .request(
                    "tools/call",
                    json!({"name": "research_result", "arguments": {"research_id": id}}),
                )
                .await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let fields = &result["structuredContent"];
    assert_eq!(fields["status"], "done", "{result}");
    common::assert_cites_answer(result["content"][0]["text"].as_str().unwrap(), &question);
    assert!(
        fields["sources"].as_array().is_some_and(|s| !s.is_empty()),
        "{fields}"
    );
    // Each work product is a resource link, and reads back as a resource.
    let report_uri = fields["report_uri"].as_str().unwrap();
    let linked: Vec<&str> = (result["content"].as_array().unwrap().iter())
        .filter(|c| c["type"] == "resource_link")
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    assert!(linked.contains(&report_uri), "{linked:?}");
    assert!(linked.iter().any(|u| u.contains("/docs/")), "{linked:?}");
    let read = mcp
        .request("resources/read", json!({"uri": report_uri}))
        .await;
    let report = read["contents"][0]["text"].as_str().unwrap();
    common::assert_cites_answer(report, &question);
    let templates = mcp.request("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "trawl://jobs/{batch}/{job}/{name}"
    );
    // A URI that would leave the job's folder is not found, not read.
    let escape = report_uri.replace("report.md", "../../../x");
    let refused = mcp.exchange("resources/read", json!({"uri": escape})).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no work product")),
        "{refused}"
    );
    let (failed, text) = mcp
        .call("research_status", json!({"research_id": "nope"}))
        .await;
    assert!(failed && text.contains("research_start"), "{text}");
    mcp.close().await;
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn research_results_keep_to_the_token_limit() {
    let fleet = Fleet::start().await;
    let question = fleet.corpus.questions().into_iter().next().unwrap();
    // Well under a report's length, so it is cut whatever the report holds.
    let mut mcp = StdioSession::start(&fleet, &[("TRAWL__MCP__MAX_TOKENS", "200")]).await;
    let (failed, text) = mcp
        .call("research", json!({"question": question.query}))
        .await;
    assert!(!failed, "{text}");
    let tokens = Tokenizer::approx().count(&text);
    assert!(tokens <= 200, "{tokens} tokens:\n{text}");
    assert!(
        text.contains("[… cut to") && text.contains("report.md]"),
        "{text}"
    );
    // The full report is where the note says.
    let path = text.split("the whole is at ").nth(1).unwrap();
    let path = path.split(']').next().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    let shown = text.split("[… cut to").next().unwrap();
    assert!(Tokenizer::approx().count(&full) > Tokenizer::approx().count(shown));
    assert!(full.contains("## Sources"));
    mcp.close().await;
    fleet.cleanup().await;
}

/// One JSON-RPC message over streamable HTTP; the answer may come as JSON or as an SSE stream.
async fn post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> (reqwest::StatusCode, Option<String>, Vec<Value>) {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    let messages = if sse {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    } else {
        serde_json::from_str(&text).into_iter().collect()
    };
    (status, session, messages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_transport_needs_a_token_and_researches_on_the_fleet() {
    let mut fleet = Fleet::start().await;
    fleet.spawn_all();
    let addr = format!("127.0.0.1:{}", common::free_port());
    fleet.spawn_with(
        "trawl",
        &["mcp", "--http", &addr],
        &[("TRAWL__FETCH__MAX_LEVEL", "1".into())],
    );
    let token = fleet.create_token("mcp").await;
    let url = format!("http://{addr}/mcp");
    let http = reqwest::Client::new();
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    });
    fleet
        .wait_answering(&url, Duration::from_secs(15), "trawl mcp --http")
        .await;

    // No token, a wrong token: refused before any MCP is spoken.
    let (status, _, messages) = post(&http, &url, None, None, init.clone()).await;
    assert_eq!(status, 401);
    assert!(messages[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("trawl token create"));
    let (status, _, _) = post(&http, &url, Some("trawl_wrong"), None, init.clone()).await;
    assert_eq!(status, 401);
    // A read-only token reads batches through `trawl serve`; MCP's tools do work, so no.
    let list = fleet.trawl(&["token", "list"]).await;
    let listed = String::from_utf8(list.stdout).unwrap();
    let id = listed.split('\t').next().unwrap().trim().to_owned();
    let viewer = fleet.create_read_only_token("viewer", &id).await;
    let (status, _, messages) = post(&http, &url, Some(&viewer), None, init.clone()).await;
    assert_eq!(status, 403, "{messages:?}");
    assert_eq!(messages[0]["error"]["code"], "read_only");
    // A browser page (any Origin) cannot drive the server, token or not.
    let browser = http
        .post(&url)
        .bearer_auth(&token)
        .header("origin", "http://evil.test")
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(browser.status(), 403);
    // Nor can a page whose own name resolves to loopback (DNS rebinding): rmcp refuses a
    // `Host` outside mcp.allowed_hosts (by default localhost, 127.0.0.1, ::1).
    let rebound = http
        .post(&url)
        .bearer_auth(&token)
        .header("host", "evil.test")
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);

    let (status, session, messages) = post(&http, &url, Some(&token), None, init).await;
    assert_eq!(status, 200, "{messages:?}");
    assert_eq!(messages[0]["result"]["serverInfo"]["name"], "trawl");
    let session = session.expect("a session id");
    let (status, _, _) = post(
        &http,
        &url,
        Some(&token),
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);

    let question = fleet.corpus.questions().into_iter().nth(1).unwrap();
    let (status, _, messages) = post(
        &http,
        &url,
        Some(&token),
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "research", "arguments": {"question": question.query}}}),
    )
    .await;
    assert_eq!(status, 200);
    let result = messages
        .iter()
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no result among {messages:?}"));
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert_ne!(result["result"]["isError"], true, "{text}");
    assert!(
        text.contains("[1]") && text.contains("## Sources"),
        "{text}"
    );
    assert!(
        text.contains(&fleet.out_dir().display().to_string()),
        "work products are referenced where the fleet wrote them: {text}"
    );
    fleet.cleanup().await;
}

#[tokio::test]
async fn http_without_a_fleet_refuses_a_non_loopback_address() {
    let fleet = Fleet::start().await;
    // No broker or store URL: no API tokens to check, so only loopback may listen.
    let mut mcp = fleet.trawl_alone();
    mcp.args(["mcp", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(60), mcp.output())
        .await
        .expect("trawl mcp --http 0.0.0.0:0 still running after 60 s")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("loopback"), "{stderr}");
    fleet.cleanup().await;
}

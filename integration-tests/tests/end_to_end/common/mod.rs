//! A fleet under test: simweb in this process, the real worker binaries as child processes on
//! the local RabbitMQ and Redis, each test under its own queue namespace and key prefix, and the
//! `trawl` CLI to drive it. Everything is removed again by [`Fleet::cleanup`], or by the
//! fleet's drop when a test panics before it.

#![allow(dead_code)] // each test file uses its own part of this module

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{Child, Command};
use trawl_broker::{Broker, BrokerSettings, RabbitBroker};
use trawl_integration_tests::simweb::{Corpus, Question, Simweb};
use trawl_store::{prelude::*, RedisStore};

pub const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
pub const REDIS: &str = "redis://127.0.0.1:6379/";
/// The test S3 server's bucket and credentials (s3rver's own: key id and secret alike).
pub const S3_BUCKET: &str = "trawl-test";
pub const S3_KEY: &str = "S3RVER";

/// The S3-protocol server the tests use: `TRAWL_TEST_S3_ENDPOINT`, or the s3rver
/// `scripts/services-up` starts.
pub fn s3_endpoint() -> String {
    std::env::var("TRAWL_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:4568".into())
}

/// The four stage workers, in pipeline order: what [`Fleet::spawn_all`] starts.
pub const STAGES: [&str; 4] = [
    "trawl-search",
    "trawl-fetch",
    "trawl-clean",
    "trawl-synthesize",
];

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A binary of this workspace, built by `cargo build --workspace --bins` (scripts/test).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/..");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build the workspace binaries first (`cargo build --workspace --bins`, as scripts/test does)",
        path.display()
    );
    path
}

/// A free TCP port on loopback for a server a test starts later (a child process binds it).
/// Taken below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`, 32768 and up by
/// default), not from it: every outgoing connection of every test on the machine takes an
/// ephemeral port, and one could take this port between the check here and the child's bind
/// (a RabbitMQ node of a chaos case failed to boot so, its distribution port taken).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static DRAWN: AtomicU64 = AtomicU64::new(0);
    let seed = u64::from(std::process::id()) << 32
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos().into());
    loop {
        // A different port per draw and per process, spread over 20000..32000.
        let n = DRAWN.fetch_add(1, Ordering::Relaxed);
        let mixed =
            (seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let port = 20_000 + (mixed >> 40) as u16 % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The body of a GET of `url` as text, whatever its status: a `/metrics` scrape.
pub async fn get_text(url: &str) -> String {
    reqwest::get(url).await.unwrap().text().await.unwrap()
}

/// Every file under `dir`, in sorted order; panics if `dir` cannot be read.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A report answering `question`: titled with it, citing sources, one of them an answer page.
pub fn assert_cites_answer(report: &str, question: &Question) {
    assert!(
        report.starts_with(&format!("# {}", question.query)),
        "{report}"
    );
    assert!(
        report.contains("[1]") && report.contains("## Sources"),
        "{report}"
    );
    assert!(
        question
            .answer_urls
            .iter()
            .any(|u| report.contains(u.as_str())),
        "no answer page cited:\n{report}"
    );
}

pub struct Fleet {
    pub namespace: String,
    pub corpus: Arc<Corpus>,
    pub simweb: Simweb,
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
    pub broker: RabbitBroker,
    pub store: RedisStore,
    /// The broker and store URLs the fleet's processes use (a proxy's, in the chaos suite).
    pub amqp: String,
    pub redis: String,
    /// The URLs, broker settings and namespace the test uses, for the clean-up on drop.
    direct: [String; 2],
    settings: BrokerSettings,
    workers: Vec<(String, Child)>,
    spawned: usize,
    cleaned: bool,
}

impl Fleet {
    pub async fn start() -> Fleet {
        Fleet::start_on("127.0.0.1").await
    }

    /// A fleet whose simweb listens on `ip` (a loopback address), the only address the SSRF
    /// guard lets through: on `127.0.0.2`, redirects to 127.0.0.1 are refused like any private
    /// address would be.
    pub async fn start_on(ip: &str) -> Fleet {
        Fleet::start_using(ip, [AMQP, REDIS], [AMQP, REDIS]).await
    }

    /// A fleet whose processes reach RabbitMQ and Redis at `workers` (AMQP, Redis URLs) while
    /// the test itself talks to them at `direct`: the chaos suite puts its own instances or a
    /// proxy in between.
    pub async fn start_using(ip: &str, workers: [&str; 2], direct: [&str; 2]) -> Fleet {
        Fleet::start_serving(Corpus::generate(), ip, workers, direct).await
    }

    /// A fleet whose simweb serves `corpus`.
    pub async fn start_with(corpus: Corpus) -> Fleet {
        Fleet::start_serving(corpus, "127.0.0.1", [AMQP, REDIS], [AMQP, REDIS]).await
    }

    async fn start_serving(
        corpus: Corpus,
        ip: &str,
        workers: [&str; 2],
        direct: [&str; 2],
    ) -> Fleet {
        let corpus = Arc::new(corpus);
        let simweb = Simweb::start(Arc::clone(&corpus), format!("{ip}:0").parse().unwrap())
            .await
            .unwrap();
        let namespace = format!("it-{}", uuid::Uuid::now_v7().simple());
        let dir = tempfile::tempdir().unwrap();
        let addr = simweb.addr();
        let env: Vec<(String, String)> = [
            ("TRAWL__BROKER__NAMESPACE", namespace.clone()),
            ("TRAWL__STORE__PREFIX", namespace.clone()),
            (
                "TRAWL__OUTPUT__URL",
                format!("file://{}", dir.path().join("out").display()),
            ),
            ("TRAWL__SEARCH__SEARXNG_URL", format!("http://{addr}")),
            (
                "TRAWL__FETCH__RESOLVE",
                format!("{{ \"*.test\" = \"{addr}\" }}"),
            ),
            ("TRAWL__FETCH__ALLOW_NETWORKS", format!("[\"{ip}/32\"]")),
            ("TRAWL__FETCH__MIN_INTERVAL_MS", "50".into()),
            ("TRAWL__BROKER__RETRY_DELAYS_SECS", "[1, 2, 5]".into()),
            ("TRAWL__BROKER__SHUTDOWN_GRACE_SECS", "5".into()),
            ("TRAWL__JOB__DEADLINE_SECS", "600".into()),
            // The fleet and chaos tests count each job's end on trawl.results, every one of
            // them (the full soak's 20 000 too).
            ("TRAWL__BROKER__RESULTS_QUEUE", "true".into()),
            ("TRAWL__BROKER__RESULTS_MAX_LENGTH", "1000000".into()),
            ("TRAWL__METRICS__ADDR", "127.0.0.1:0".into()),
            ("RUST_LOG", "warn".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        // The workers' tiers (so cleanup removes them all): their retries and the default deferrals.
        let env_map: std::collections::BTreeMap<String, String> = env.iter().cloned().collect();
        let config = trawl_config::Config::load(None, &env_map).expect("test config");
        let settings = trawl_pipeline::runtime::broker_settings(&config);
        let broker = RabbitBroker::connect(direct[0], settings.clone(), Duration::from_secs(10))
            .await
            .expect("RabbitMQ must run (scripts/services-up)");
        let store = RedisStore::connect(direct[1], &namespace, Duration::from_secs(5))
            .await
            .expect("Redis must run (scripts/services-up)");
        Fleet {
            namespace,
            corpus,
            simweb,
            dir,
            env,
            broker,
            store,
            amqp: workers[0].to_owned(),
            redis: workers[1].to_owned(),
            direct: direct.map(str::to_owned),
            settings,
            workers: Vec::new(),
            spawned: 0,
            cleaned: false,
        }
    }

    /// The environment of the fleet's processes, with the broker and store URLs.
    pub fn fleet_env(&self) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        env.push(("TRAWL__BROKER__URL".into(), self.amqp.clone()));
        env.push(("TRAWL__STORE__URL".into(), self.redis.clone()));
        env
    }

    /// Sends the fleet's results and work products to a prefix of its own in the test S3
    /// server's bucket (s3rver, started by scripts/services-up), credentials and endpoint in
    /// the standard variables.
    pub fn use_s3(&mut self) {
        let prefix = format!("s3://{S3_BUCKET}/{}", self.namespace);
        self.use_s3_at(&s3_endpoint(), &prefix);
    }

    /// Like [`Fleet::use_s3`] with the server at `endpoint` and the store at `url`.
    pub fn use_s3_at(&mut self, endpoint: &str, url: &str) {
        for (k, v) in [
            ("TRAWL__OUTPUT__URL", url),
            ("TRAWL__OUTPUT__ENDPOINT", endpoint),
            ("TRAWL__OUTPUT__PATH_STYLE", "true"),
            ("TRAWL__OUTPUT__ALLOW_HTTP", "true"),
            ("AWS_ACCESS_KEY_ID", S3_KEY),
            ("AWS_SECRET_ACCESS_KEY", S3_KEY),
            ("AWS_REGION", "us-east-1"),
        ] {
            self.env.push((k.to_owned(), v.to_owned()));
        }
    }

    /// The fleet's object store, as its processes open it.
    pub fn objects(&self) -> trawl_store::Objects {
        let env: std::collections::BTreeMap<String, String> = self.env.iter().cloned().collect();
        let config = trawl_config::Config::load(None, &env).expect("test config");
        // The AWS_* variables are read from the process environment by the S3 client.
        for (k, v) in self.env.iter().filter(|(k, _)| k.starts_with("AWS_")) {
            std::env::set_var(k, v);
        }
        trawl_store::Objects::open(&config.output).expect("the fleet's object store")
    }

    /// Where the fleet's work products go: the path of its `file://` `TRAWL__OUTPUT__URL`.
    pub fn out_dir(&self) -> PathBuf {
        let (_, url) = (self.env.iter().rev())
            .find(|(k, _)| k == "TRAWL__OUTPUT__URL")
            .expect("an output URL");
        PathBuf::from(url.strip_prefix("file://").expect("a file:// output URL"))
    }

    /// The work products of `job` of `batch`.
    pub fn job_dir(&self, batch: &str, job: &str) -> PathBuf {
        self.out_dir().join("batches").join(batch).join(job)
    }

    /// The (job id, question) pairs `trawl submit` recorded for `batch`, in submission order.
    pub fn manifest(&self, batch: &str) -> Vec<(String, String)> {
        let key = format!("batches/{batch}/batch.json");
        let objects = self.objects();
        // Read on a thread of its own: callers are sync, inside the test's runtime.
        let bytes = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(objects.get(&key))
        })
        .join()
        .unwrap()
        .unwrap()
        .unwrap_or_else(|| panic!("no manifest of batch {batch}"));
        let manifest: trawl_pipeline::batch::Manifest = serde_json::from_slice(&bytes).unwrap();
        (manifest.jobs.into_iter())
            .map(|j| (j.job_id.to_string(), j.query))
            .collect()
    }

    /// Starts a worker binary; its log goes to `<tempdir>/logs/`.
    pub fn spawn(&mut self, name: &str) {
        self.spawn_with(name, &[], &[]);
    }

    /// Starts binary `name` with `args` and `env` on top of the fleet's environment.
    pub fn spawn_with(&mut self, name: &str, args: &[&str], env: &[(&str, String)]) {
        self.spawn_in(name, args, env, None);
    }

    /// Starts binary `name` as a process on a machine of its own would run: in an empty
    /// working directory, with its own `HOME` and `TMPDIR`, so it shares no disk with the rest
    /// of the fleet. Returns that directory.
    pub fn spawn_isolated(&mut self, name: &str, args: &[&str], env: &[(&str, String)]) -> PathBuf {
        let home = self
            .dir
            .path()
            .join("machines")
            .join(format!("{name}-{}", self.spawned + 1));
        std::fs::create_dir_all(home.join("tmp")).unwrap();
        let mut env = env.to_vec();
        env.push(("HOME", home.display().to_string()));
        env.push(("TMPDIR", home.join("tmp").display().to_string()));
        self.spawn_in(name, args, &env, Some(&home));
        home
    }

    fn spawn_in(&mut self, name: &str, args: &[&str], env: &[(&str, String)], cwd: Option<&Path>) {
        let logs = self.dir.path().join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        self.spawned += 1;
        let log = std::fs::File::create(logs.join(format!("{name}-{}.log", self.spawned))).unwrap();
        let mut command = Command::new(bin(name));
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let child = command
            .args(args)
            .envs(self.fleet_env())
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        self.workers.push((name.to_owned(), child));
    }

    pub fn spawn_all(&mut self) {
        for name in STAGES {
            self.spawn(name);
        }
    }

    /// `kill -9` the first running worker named `name`.
    pub async fn kill(&mut self, name: &str) {
        let at = self
            .workers
            .iter()
            .position(|(n, _)| n == name)
            .expect("worker running");
        let (_, mut child) = self.workers.remove(at);
        child.start_kill().unwrap(); // SIGKILL on Unix
        child.wait().await.unwrap();
    }

    /// Waits up to `limit` for every worker started as `name` to exit; their exit statuses
    /// (`None` for one still running).
    pub async fn exits(
        &mut self,
        name: &str,
        limit: Duration,
    ) -> Vec<Option<std::process::ExitStatus>> {
        let until = tokio::time::Instant::now() + limit;
        let mut statuses = Vec::new();
        for (_, child) in self.workers.iter_mut().filter(|(n, _)| n == name) {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            statuses.push(
                tokio::time::timeout(left, child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok),
            );
        }
        statuses
    }

    /// Every worker log's text, by file name.
    pub fn logs(&self) -> Vec<(String, String)> {
        let mut logs: Vec<(String, String)> = std::fs::read_dir(self.dir.path().join("logs"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(e.path()).unwrap_or_default())
            })
            .collect();
        logs.sort();
        logs
    }

    /// True while every worker started under `name` is still running.
    pub fn running(&mut self, name: &str) -> bool {
        self.workers
            .iter_mut()
            .filter(|(n, _)| n == name)
            .all(|(_, c)| matches!(c.try_wait(), Ok(None)))
    }

    /// Sends SIGTERM to every worker at once, as a node's shutdown or a rollout would, then
    /// waits up to `grace` for each to exit; returns (name, exited cleanly). One at a time
    /// would let the stages still running carry on the work the first ones handed over.
    pub async fn terminate_all(&mut self, grace: Duration) -> Vec<(String, bool)> {
        let mut workers: Vec<(String, Child)> = self.workers.drain(..).collect();
        for (_, child) in &workers {
            let pid = child.id().expect("running").to_string();
            let sent = std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap();
            assert!(sent.success());
        }
        let deadline = tokio::time::Instant::now() + grace;
        let mut exits = Vec::new();
        for (name, child) in &mut workers {
            let status = tokio::time::timeout_at(deadline, child.wait()).await;
            exits.push((name.clone(), matches!(status, Ok(Ok(s)) if s.success())));
        }
        exits
    }

    /// The `trawl` CLI with the fleet's environment but no broker or store URL: embedded mode,
    /// or a client that reaches the fleet only through `trawl serve`.
    pub fn trawl_alone(&self) -> Command {
        let mut command = Command::new(bin("trawl"));
        command.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command
    }

    /// `command` with simweb's scripted LLM as `model` (OpenAI's wire format), or with
    /// `--no-llm` when `model` is `None`.
    pub fn with_llm(&self, command: &mut Command, model: Option<&str>) {
        match model {
            Some(model) => {
                let web = self.simweb.base_url();
                command
                    .env("TRAWL__LLM__PROVIDER", "openai")
                    .env("TRAWL__LLM__BASE_URL", format!("{web}/v1"))
                    .env("TRAWL__LLM__MODEL", model)
                    .env("OPENAI_API_KEY", "k");
            }
            None => {
                command.arg("--no-llm");
            }
        }
    }

    /// `trawl run` in embedded mode ([`Fleet::trawl_alone`]) with `args` after `run`: its
    /// standard output, once it has succeeded.
    pub async fn run_alone(&self, args: &[&str]) -> String {
        let out = (self.trawl_alone().arg("run").args(args))
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "trawl run {args:?}: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// Runs the `trawl` CLI with the fleet's environment.
    pub async fn trawl(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin("trawl"))
            .args(args)
            .envs(self.fleet_env())
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap()
    }

    /// Writes `questions`, one a line, to `<tempdir>/batch.txt`; returns its path.
    pub fn batch_file(&self, questions: &[String]) -> PathBuf {
        let file = self.dir.path().join("batch.txt");
        std::fs::write(&file, questions.join("\n")).unwrap();
        file
    }

    /// Writes `questions` as a batch file and submits it; returns the batch id.
    pub async fn submit(&self, questions: &[String]) -> String {
        self.submit_with(questions, &[]).await
    }

    /// Like [`Fleet::submit`], with `args` (such as `--webhook URL`) after the file.
    pub async fn submit_with(&self, questions: &[String], args: &[&str]) -> String {
        let file = self.batch_file(questions);
        self.submit_file(&file, args).await
    }

    /// Writes `lines` as a JSONL batch file named `name` and submits it; returns the batch id.
    pub async fn submit_jsonl(&self, name: &str, lines: &[serde_json::Value]) -> String {
        let file = self.dir.path().join(format!("{name}.jsonl"));
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        std::fs::write(&file, text.join("\n")).unwrap();
        self.submit_file(&file, &[]).await
    }

    /// Submits the batch file `file` with `args`; returns the batch id.
    async fn submit_file(&self, file: &Path, args: &[&str]) -> String {
        let out = self
            .trawl(&[&["submit", file.to_str().unwrap()][..], args].concat())
            .await;
        assert!(
            out.status.success(),
            "submit failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Creates an API token named `name` with `trawl token create`; returns the token.
    pub async fn create_token(&self, name: &str) -> String {
        let out = self.trawl(&["token", "create", "--name", name]).await;
        assert!(
            out.status.success(),
            "token create failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Creates a read-only API token named `name` that reads the batches of the token with id
    /// `of` (`trawl token create --read-only --of`); returns the token.
    pub async fn create_read_only_token(&self, name: &str, of: &str) -> String {
        let args = ["token", "create", "--name", name, "--read-only", "--of", of];
        let out = self.trawl(&args).await;
        assert!(
            out.status.success(),
            "token create --read-only failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Starts `trawl serve` on a free port with `env` on top of the fleet's, and waits until
    /// it answers; returns its base URL.
    pub async fn serve(&mut self, env: &[(&str, String)]) -> String {
        let addr = format!("127.0.0.1:{}", free_port());
        self.spawn_with("trawl", &["serve", "--addr", &addr], env);
        let base = format!("http://{addr}");
        self.wait_answering(
            &format!("{base}/readyz"),
            Duration::from_secs(10),
            "trawl serve",
        )
        .await;
        base
    }

    /// The pid of the first worker started as `name`.
    pub fn pid(&self, name: &str) -> u32 {
        let (_, child) = self
            .workers
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no {name} worker"));
        child.id().expect("worker running")
    }

    /// Polls `url` until a server answers it (any status), or panics with the workers' logs
    /// after `limit`: `what` is the server, for the message.
    pub async fn wait_answering(&self, url: &str, limit: Duration, what: &str) {
        let http = reqwest::Client::new();
        for _ in 0..limit.as_millis() / 100 {
            if http.get(url).send().await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.dump_logs();
        panic!("{what} did not start");
    }

    /// Polls the batch record until every job ended, or panics with the workers' logs.
    pub async fn wait_done(&self, batch: &str, limit: Duration) -> trawl_store::BatchProgress {
        let started = tokio::time::Instant::now();
        loop {
            if let Some(p) = self.store.batch_progress(batch).await.unwrap() {
                if p.is_done() {
                    return p;
                }
                if started.elapsed() > limit {
                    self.dump_logs();
                    self.dump_pending(batch).await;
                    panic!("batch not done after {limit:?}: {p:?}");
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// `trawl results BATCH --format FORMAT`: the one file it writes (`results.<format>`).
    pub async fn results(&self, batch: &str, format: &str) -> String {
        let dir = self.dir.path().join(format!("results-{batch}-{format}"));
        let out = self
            .trawl(&[
                "results",
                batch,
                "--format",
                format,
                "--out",
                dir.to_str().unwrap(),
            ])
            .await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(dir.join(format!("results.{format}"))).unwrap()
    }

    /// The batch's `summary.jsonl` or `summary.md`. Synthesize writes it after recording the
    /// last job's end, so a test that saw the batch done waits for it (up to 30 s).
    pub async fn summary(&self, batch: &str, name: &str) -> String {
        let path = self.out_dir().join("batches").join(batch).join(name);
        for _ in 0..300 {
            if let Ok(text) = std::fs::read_to_string(&path) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{} was not written", path.display());
    }

    pub fn dump_logs(&self) {
        let logs = self.dir.path().join("logs");
        for entry in std::fs::read_dir(logs).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            eprintln!("--- {} ---", entry.path().display());
            for line in tail.into_iter().rev() {
                eprintln!("{line}");
            }
        }
    }

    /// What a stuck batch's pending jobs hold (fan-in record, outcomes recorded, extensions,
    /// counters) and every queue's depth: where a lost message would show.
    pub async fn dump_pending(&self, batch: &str) {
        use trawl_broker::Broker;
        for queue in trawl_messages::Queue::ALL {
            if let Ok(stats) = self.broker.stats(*queue).await {
                eprintln!("queue {queue:?}: {stats:?}");
            }
        }
        let jobs = self.store.batch_jobs(batch).await.unwrap_or_default();
        for (job, status) in jobs.iter().filter(|(_, s)| s.as_str() == "pending") {
            let expected = self.store.fanin_meta(job).await.ok().flatten().map(|m| m.0);
            let recorded: Vec<u32> = self
                .store
                .fanin_outcomes(job)
                .await
                .map(|o| o.into_keys().collect())
                .unwrap_or_default();
            let extensions = self.store.fanin_extensions(job).await.ok();
            let counters = self.store.job_counters(job).await.ok();
            eprintln!(
                "job {job} {status}: expects {expected:?}, recorded {recorded:?}, \
                 extensions {extensions:?}, counters {counters:?}"
            );
        }
    }

    /// Stops the workers and removes the test's queues and keys.
    pub async fn cleanup(mut self) {
        for (_, child) in &mut self.workers {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
        self.broker.delete_all().await.unwrap();
        self.store.delete_all().await.unwrap();
        self.cleaned = true;
    }
}

impl Drop for Fleet {
    /// A test that failed before [`Fleet::cleanup`] still removes its workers, queues and keys:
    /// left behind, each failed run's quorum queues pile up on the shared broker. The test's
    /// own runtime may be unwinding (or single-threaded and blocked here), so the removal runs
    /// on a thread of its own with connections of its own, bounded in time.
    fn drop(&mut self) {
        if self.cleaned {
            return;
        }
        for (_, child) in &mut self.workers {
            let _ = child.start_kill();
        }
        let [amqp, redis] = self.direct.clone();
        let (settings, namespace) = (self.settings.clone(), self.namespace.clone());
        let remove = async move {
            let wait = Duration::from_secs(5);
            if let Ok(broker) = RabbitBroker::connect(&amqp, settings, wait).await {
                let _ = broker.delete_all().await;
            }
            if let Ok(store) = RedisStore::connect(&redis, &namespace, wait).await {
                let _ = store.delete_all().await;
            }
        };
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                // The timeout is made inside the runtime: its timer needs one.
                let _ = rt.block_on(async {
                    tokio::time::timeout(Duration::from_secs(20), remove).await
                });
            }
        })
        .join();
    }
}

/// Browser sessions a WebDriver still holds: zero once every worker closed its own.
pub async fn webdriver_sessions(url: &str) -> usize {
    let body: serde_json::Value = reqwest::get(format!("{url}/sessions"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["value"].as_array().map_or(0, Vec::len)
}

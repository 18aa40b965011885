//! Chaos case 4: the browser service dies mid-session. chromedriver is SIGKILLed again and again
//! while browser workers render a batch's pages, and comes back on the same port after a short
//! gap: half the time with its whole process group, as a Selenium container dies (Chromium goes
//! too), half the time alone, leaving its Chromium orphaned. Every page whose session died is
//! fetched again at its browser level, the ledger settles, the fleet's Chromium never exceeds
//! the pools' bound, and nothing started for the test outlives it.

use crate::chaos_kit;
use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chaos_kit::ledger::Ledger;
use chaos_kit::run::*;
use common::Fleet;
use tokio::process::{Child, Command};
use tokio::time::Instant;
use trawl_fetch::browser::webdriver_ready;
use trawl_integration_tests::simweb::fleet;
use trawl_store::{prelude::*, Cache};

/// Jobs in the batch; each fetches ten sources, all of them in a browser. Enough pages for
/// ten kills with sessions open (twenty jobs and sixteen kills found nothing more, at twice the
/// time).
const JOBS: usize = 12;
const BROWSER_WORKERS: usize = 2;
/// `fetch.browser_sessions` of each browser worker.
const SESSIONS: usize = 2;
/// Chromium instances the fleet may run at once.
const BOUND: usize = BROWSER_WORKERS * SESSIONS;
const MAX_KILLS: u32 = 10;

/// A chromedriver of the test's own, each start in a process group of its own (its group id is
/// its pid), so a kill can take the whole group and a census can tell its Chromium from any
/// other test's. Its temporary directory (Chromium's profiles) is the test's.
struct Chromedriver {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
    /// Every start's process group, and the one running now (0: none).
    groups: Arc<Mutex<Vec<u32>>>,
    live: Arc<Mutex<u32>>,
}

impl Chromedriver {
    async fn start(dir: &Path) -> Chromedriver {
        let dir = dir.join("chromedriver");
        std::fs::create_dir_all(&dir).unwrap();
        let mut driver = Chromedriver {
            port: common::free_port(),
            dir,
            child: None,
            groups: Arc::default(),
            live: Arc::default(),
        };
        driver.up().await;
        driver
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts chromedriver (again) on its port and waits until it answers. The port may still
    /// be held for a moment after a kill: a start that exits is tried again.
    async fn up(&mut self) {
        assert!(self.child.is_none(), "chromedriver already running");
        for _ in 0..20 {
            let log = std::fs::File::options()
                .create(true)
                .append(true)
                .open(self.dir.join("chromedriver.log"))
                .unwrap();
            let mut child = Command::new("chromedriver")
                .arg(format!("--port={}", self.port))
                .env("TMPDIR", &self.dir)
                .process_group(0)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .kill_on_drop(true)
                .spawn()
                .expect("chromedriver must be installed (scripts/services-up)");
            let pid = child.id().expect("just started");
            self.groups.lock().unwrap().push(pid);
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                if webdriver_ready(&self.url()).await {
                    *self.live.lock().unwrap() = pid;
                    self.child = Some(child);
                    return;
                }
                if !matches!(child.try_wait(), Ok(None)) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            kill_group(pid);
            let _ = child.wait().await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("chromedriver did not come up on port {}", self.port);
    }

    /// SIGKILL: of the whole process group (chromedriver and its Chromium), or of chromedriver
    /// alone.
    async fn kill(&mut self, whole_group: bool) {
        let mut child = self.child.take().expect("chromedriver running");
        let pid = child.id().expect("running");
        *self.live.lock().unwrap() = 0;
        if whole_group {
            kill_group(pid);
        } else {
            child.start_kill().unwrap();
        }
        child.wait().await.unwrap();
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        // Whatever a failed run left: every start's group, Chromium orphans included.
        for &group in self.groups.lock().unwrap().iter() {
            kill_group(group);
        }
    }
}

fn kill_group(group: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
}

/// Chromium processes (not zombies) in the process groups `groups`: browser instances per
/// group, told apart by their profile directories, and all processes.
#[derive(Debug, Default)]
struct Census {
    browsers: BTreeMap<u32, BTreeSet<String>>,
    processes: usize,
    /// CPU ticks (user and system) each process has used so far.
    ticks: BTreeMap<u32, u64>,
}

impl Census {
    fn take(groups: &[u32]) -> Census {
        let mut census = Census::default();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return census;
        };
        for pid in entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
        {
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // After the parenthesised name: state, parent, process group.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
            let (Some(state), Some(group)) = (fields.first(), fields.get(2)) else {
                continue;
            };
            let Ok(group) = group.parse::<u32>() else {
                continue;
            };
            if !groups.contains(&group) || matches!(*state, "Z" | "X") {
                continue;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<String> = cmdline
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let program = Path::new(args.first().map_or("", String::as_str))
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            if !program.starts_with("chrom") || program == "chromedriver" {
                continue;
            }
            census.processes += 1;
            let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
            if let (Ok(pid), Some(user), Some(system)) = (pid.parse(), ticks(11), ticks(12)) {
                census.ticks.insert(pid, user + system);
            }
            // A child Chromium has just forked shows its parent's command line until it execs:
            // instances are counted by profile, not by process.
            if let Some(profile) = args.iter().find(|a| a.starts_with("--user-data-dir=")) {
                census
                    .browsers
                    .entry(group)
                    .or_default()
                    .insert(profile.clone());
            }
        }
        census
    }

    fn total(&self) -> usize {
        self.browsers.values().map(BTreeSet::len).sum()
    }

    /// Instances under the chromedriver with the most.
    fn most(&self) -> usize {
        self.browsers.values().map(BTreeSet::len).max().unwrap_or(0)
    }
}

/// The highest figures the sampler saw.
#[derive(Debug, Default, Clone)]
struct Peaks {
    /// Chromium instances under one chromedriver.
    per_driver: usize,
    /// Chromium instances of every chromedriver start together (the dying included).
    browsers: usize,
    processes: usize,
    /// The last CPU ticks seen of every Chromium process.
    ticks: BTreeMap<u32, u64>,
    /// Sessions the running chromedriver reported.
    sessions: usize,
    samples: u64,
}

/// Sessions a WebDriver holds, or `None` while it is down.
async fn sessions(http: &reqwest::Client, url: &str) -> Option<usize> {
    let body: serde_json::Value = http
        .get(format!("{url}/sessions"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    body["value"].as_array().map(Vec::len)
}

/// Samples /proc (on a thread of its own: a scan is blocking work) and the WebDriver's sessions
/// every 100 ms until the returned sampler is stopped.
struct Sampler {
    stop: Arc<std::sync::atomic::AtomicBool>,
    census: Option<std::thread::JoinHandle<()>>,
    sessions: tokio::task::JoinHandle<()>,
    peaks: Arc<Mutex<Peaks>>,
}

impl Sampler {
    fn start(driver: &Chromedriver) -> Sampler {
        let peaks = Arc::new(Mutex::new(Peaks::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (groups, p, halt) = (
            Arc::clone(&driver.groups),
            Arc::clone(&peaks),
            Arc::clone(&stop),
        );
        let census = std::thread::spawn(move || {
            while !halt.load(std::sync::atomic::Ordering::Relaxed) {
                let groups = groups.lock().unwrap().clone();
                let census = Census::take(&groups);
                {
                    let mut p = p.lock().unwrap();
                    p.per_driver = p.per_driver.max(census.most());
                    p.browsers = p.browsers.max(census.total());
                    p.processes = p.processes.max(census.processes);
                    p.ticks.extend(census.ticks);
                    p.samples += 1;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let (url, p) = (driver.url(), Arc::clone(&peaks));
        let sessions = tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(2))
                .build()
                .unwrap();
            loop {
                let open = sessions(&http, &url).await.unwrap_or(0);
                {
                    let mut p = p.lock().unwrap();
                    p.sessions = p.sessions.max(open);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Sampler {
            stop,
            census: Some(census),
            sessions,
            peaks,
        }
    }

    fn stop(mut self) -> Peaks {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.sessions.abort();
        if let Some(thread) = self.census.take() {
            thread.join().unwrap();
        }
        let peaks = self.peaks.lock().unwrap().clone();
        peaks
    }
}

/// The sum of the `name` series on a `/metrics` page whose labels include every one of `labels`.
fn metric_sum(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name) && labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_killed() {
    let _serial = SERIAL.lock().await;
    let mut fleet = Fleet::start().await;
    let mut driver = Chromedriver::start(fleet.dir.path()).await;
    for (key, value) in [
        ("TRAWL__FETCH__WEBDRIVER_URL", driver.url()),
        ("TRAWL__FETCH__BROWSER_SESSIONS", SESSIONS.to_string()),
        ("TRAWL__FETCH__BROWSER_TIMEOUT_SECS", "30".into()),
    ] {
        fleet.env.push((key.into(), value));
    }

    // The batch's hosts needed a browser last time (level 2, every fifth one a stealth browser
    // at level 3): the fleet remembers that per host, so every source goes to the browser
    // workers and starts at its level.
    let questions = fleet::questions(JOBS);
    let mut level_of: BTreeMap<String, u8> = BTreeMap::new();
    for k in 0..JOBS {
        for i in 0..fleet::SOURCES {
            let n = fleet::host_of(k, i);
            level_of.insert(
                format!("bench-{n}.test"),
                if n.is_multiple_of(5) { 3 } else { 2 },
            );
        }
    }
    for (host, level) in &level_of {
        let value = level.to_string();
        let hour = Duration::from_secs(3600);
        (fleet.store)
            .cache_put(Cache::HostLevel, host, value.as_bytes(), hour)
            .await
            .unwrap();
    }

    fleet.spawn_all();
    let mut metrics_ports = Vec::new();
    for _ in 0..BROWSER_WORKERS {
        let port = common::free_port();
        metrics_ports.push(port);
        let addr = ("TRAWL__METRICS__ADDR", format!("127.0.0.1:{port}"));
        fleet.spawn_with("trawl-fetch-browser", &[], &[addr]);
    }
    let sampler = Sampler::start(&driver);
    let started = Instant::now();
    let batch = fleet.submit(&questions).await;

    // A fixed sequence of strikes and gaps, so a failure can be replayed.
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let (mut kills, mut group_kills, mut sessions_killed, mut orphans_at_restart) = (0, 0, 0, 0);
    'strikes: while kills < MAX_KILLS {
        // Strike while Chromium holds pages: a kill with no session open tests nothing.
        let waiting = Instant::now();
        loop {
            if finished(&fleet, &batch).await + 2 >= JOBS as u64 {
                break 'strikes;
            }
            if sessions(&http, &driver.url()).await.unwrap_or(0) > 0 {
                break;
            }
            if waiting.elapsed() > Duration::from_secs(90) {
                fleet.dump_logs();
                panic!("no browser session opened in 90 s");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(2000 + next(2500))).await;
        let open = sessions(&http, &driver.url()).await.unwrap_or(0);
        let whole_group = kills % 2 == 0;
        driver.kill(whole_group).await;
        kills += 1;
        group_kills += u32::from(whole_group);
        sessions_killed += open;
        tokio::time::sleep(Duration::from_millis(300 + next(1200))).await;
        // Chromium of a chromedriver that died alone takes a moment to notice; none may stay
        // (checked at the end).
        let groups = driver.groups.lock().unwrap().clone();
        orphans_at_restart = orphans_at_restart.max(Census::take(&groups).total());
        driver.up().await;
    }
    assert!(
        kills >= 6,
        "the batch ended before the kills: {kills} kills"
    );
    let progress = fleet.wait_done(&batch, Duration::from_secs(300)).await;

    // The pools after the batch: idle sessions within the bound, none once the workers stop.
    let idle = common::webdriver_sessions(&driver.url()).await;
    let mut requeues = 0.0;
    for port in &metrics_ports {
        let text = common::get_text(&format!("http://127.0.0.1:{port}/metrics")).await;
        for level in ["2", "3"] {
            let labels = [&format!("level=\"{level}\"")[..], "result=\"retry\""];
            requeues += metric_sum(&text, "trawl_fetch_attempts_total", &labels);
        }
    }
    let exits = fleet.terminate_all(Duration::from_secs(20)).await;
    let left = common::webdriver_sessions(&driver.url()).await;
    // Chromium quits once chromedriver has ended its session; give it a moment.
    let groups = driver.groups.lock().unwrap().clone();
    let waiting = Instant::now();
    let mut census = Census::take(&groups);
    while census.processes > 0 && waiting.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        census = Census::take(&groups);
    }
    let peaks = sampler.stop();

    // Every source, and how and at which level it ended.
    let jobs = jobs_of(&fleet, &batch);
    let mut ended: Vec<(String, String, Option<u64>)> = Vec::new();
    for job in &jobs {
        let path = fleet
            .out_dir()
            .join("batches")
            .join(&batch)
            .join(job)
            .join("sources.json");
        let sources: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for s in sources.as_array().expect("sources.json is a list") {
            ended.push((
                s["url"].as_str().unwrap_or_default().to_owned(),
                s["outcome"]["outcome"]
                    .as_str()
                    .unwrap_or("none")
                    .to_owned(),
                s["level"].as_u64(),
            ));
        }
    }
    // Pages Chromium loaded more than once: their first session died under them.
    let reloaded: BTreeSet<String> = (fleet.simweb.stats().snapshot().into_iter())
        .filter(|(host, path, n)| host.starts_with("bench-") && path.starts_with("/q/") && *n > 1)
        .map(|(host, path, _)| format!("http://{host}{path}"))
        .collect();

    let mut ledger =
        Ledger::read("browser-killed", &fleet.broker, &fleet.store, &batch, &jobs).await;
    ledger.wall_secs = started.elapsed().as_secs_f64();
    ledger.notes = vec![
        format!(
            "chromedriver SIGKILLed {kills} times ({group_kills} with its process group, {} alone), {sessions_killed} sessions open at the kills",
            kills - group_kills
        ),
        format!(
            "{requeues} browser fetches requeued, {} pages loaded again; {} of {} sources fetched at their browser level",
            reloaded.len(),
            ended.iter().filter(|(u, o, l)| matches!(o.as_str(), "analysed" | "irrelevant") && level_of_url(&level_of, u) == *l).count(),
            ended.len()
        ),
        format!(
            "peak Chromium: {} instances under one chromedriver, {} in all (bound {BOUND}), {} processes; peak sessions {}; Chromium CPU {:.0} s; {} samples",
            peaks.per_driver,
            peaks.browsers,
            peaks.processes,
            peaks.sessions,
            peaks.ticks.values().sum::<u64>() as f64 / 100.0,
            peaks.samples
        ),
        format!(
            "orphaned Chromium alive at a restart: {orphans_at_restart}; sessions idle after the batch {idle}, after the workers stopped {left}; Chromium left {}",
            census.processes
        ),
    ];
    ledger.settle();

    if census.processes > 0 || left > 0 {
        fleet.dump_logs();
    }
    assert!(exits.iter().all(|(_, clean)| *clean), "{exits:?}");
    assert_eq!(ledger.dead_lettered, 0, "{:?}", ledger.reasons);
    assert_eq!(progress.finished, JOBS as u64);
    assert_eq!(ended.len(), JOBS * fleet::SOURCES);
    for (url, outcome, level) in &ended {
        assert!(
            matches!(outcome.as_str(), "analysed" | "irrelevant"),
            "{url} ended {outcome}: a dead browser failed the page"
        );
        assert_eq!(
            *level,
            level_of_url(&level_of, url),
            "{url} was not fetched at its browser level"
        );
    }
    assert!(
        requeues >= 1.0,
        "no browser fetch was requeued across {kills} kills"
    );
    assert!(
        peaks.per_driver <= BOUND,
        "{} Chromium instances under one chromedriver; the pools allow {BOUND}",
        peaks.per_driver
    );
    assert!(
        peaks.sessions <= BOUND && idle <= BOUND,
        "sessions accumulated: peak {}, idle {idle}, bound {BOUND}",
        peaks.sessions
    );
    assert_eq!(left, 0, "sessions left after the browser workers stopped");
    assert_eq!(
        census.processes, 0,
        "Chromium processes outlived the test's sessions: {census:?}"
    );
    drop(driver);
    fleet.cleanup().await;
}

/// The level the batch's source at `url` belongs at: its host's.
fn level_of_url(level_of: &BTreeMap<String, u8>, url: &str) -> Option<u64> {
    let host = url::Url::parse(url).ok()?.host_str()?.to_owned();
    level_of.get(&host).map(|&l| u64::from(l))
}

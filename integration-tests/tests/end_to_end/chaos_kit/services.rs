//! A RabbitMQ node, a redis-server and an S3-protocol server (s3rver) of the test's own, on
//! their own ports and data directories, so a test may kill or restart them without touching
//! the shared instances.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

use crate::common::free_port;

/// Names, in the environment of each server started here, the test process that owns it.
pub const OWNER_VAR: &str = "TRAWL_CHAOS_OWNER";

/// Ends the servers of test processes that were killed before their drops could end them:
/// each server carries its owner's pid in [`OWNER_VAR`], and an owner that is gone owns
/// nothing.
pub fn reap_orphans() {
    let pids = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok());
    for pid in pids {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let owner = environ.split(|&b| b == 0).find_map(|var| {
            let value = var.strip_prefix(OWNER_VAR.as_bytes())?.strip_prefix(b"=")?;
            std::str::from_utf8(value).ok()?.parse::<u32>().ok()
        });
        if owner.is_some_and(|owner| !Path::new(&format!("/proc/{owner}")).exists()) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

/// A server command owned by this process; the first one reaps earlier processes' orphans.
fn owned(program: &str) -> Command {
    static REAPED: std::sync::Once = std::sync::Once::new();
    REAPED.call_once(reap_orphans);
    let mut command = Command::new(program);
    command
        .env(OWNER_VAR, std::process::id().to_string())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

async fn wait_for_port(port: u16, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

pub struct OwnRedis {
    pub port: u16,
    password: Option<String>,
    dir: PathBuf,
    child: Option<Child>,
}

impl OwnRedis {
    pub async fn start(dir: &Path) -> OwnRedis {
        OwnRedis::with_password(dir, None).await
    }

    /// A server that requires `password` (`requirepass`).
    pub async fn with_password(dir: &Path, password: Option<&str>) -> OwnRedis {
        let dir = dir.join(format!("redis-{}", free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = OwnRedis {
            port: free_port(),
            password: password.map(str::to_owned),
            dir,
            child: None,
        };
        redis.up().await;
        redis
    }

    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/", self.port),
            None => format!("redis://127.0.0.1:{}/", self.port),
        }
    }

    /// Starts the server (again) on the same port and data directory.
    pub async fn up(&mut self) {
        assert!(self.child.is_none(), "redis already running");
        let mut command = owned("redis-server");
        if let Some(password) = &self.password {
            command.args(["--requirepass", password]);
        }
        let child = command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            // An append-only file, as a production Redis keeps its data over a restart.
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .args(["--protected-mode", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (scripts/services-up)");
        self.child = Some(child);
        assert!(
            wait_for_port(self.port, Duration::from_secs(10)).await,
            "redis-server did not listen on {}",
            self.port
        );
    }

    /// `kill -9`.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// An s3rver of the test's own, keeping its objects in a directory of its own, so a restart
/// finds them again (as any S3 keeps its objects over an outage).
pub struct OwnS3 {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl OwnS3 {
    pub async fn start(dir: &Path) -> OwnS3 {
        let mut s3 = OwnS3::stopped(dir);
        s3.up().await;
        s3
    }

    /// A server with its port and directory chosen, not started yet.
    pub fn stopped(dir: &Path) -> OwnS3 {
        let dir = dir.join(format!("s3-{}", free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        OwnS3 {
            port: free_port(),
            dir,
            child: None,
        }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on the same port and data directory, with the bucket
    /// `trawl-test`.
    pub async fn up(&mut self) {
        assert!(self.child.is_none(), "s3rver already running");
        let child = owned("s3rver")
            .args(["--address", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--silent", "--no-vhost-buckets"])
            .args(["--configure-bucket", crate::common::S3_BUCKET])
            .arg("--directory")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("s3rver must be installed (scripts/services-up)");
        self.child = Some(child);
        assert!(
            wait_for_port(self.port, Duration::from_secs(20)).await,
            "s3rver did not listen on {}",
            self.port
        );
    }

    /// `kill -9`.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// A RabbitMQ node named `trawl-chaos-<port>@localhost`, run straight from the Erlang release
/// (not the Debian wrapper, which would switch to the shared node's user and cookie), with its
/// own ports, data directory and cookie (HOME). The release's script runs the Erlang VM in its
/// place (`exec`), so the child process is the VM itself: killing or dropping it ends the node.
pub struct OwnRabbit {
    pub port: u16,
    node: String,
    dir: PathBuf,
    child: Option<Child>,
}

const RABBIT_BIN: &str = "/usr/lib/rabbitmq/bin";

impl OwnRabbit {
    pub async fn start(dir: &Path) -> OwnRabbit {
        OwnRabbit::start_configured(dir, "", "").await
    }

    /// The node's VM, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// A node that closes a channel holding a delivery unacknowledged for longer than
    /// `timeout` (`consumer_timeout`). RabbitMQ 3.10 checks that on each channel's tick,
    /// every `channel_tick_interval` (60 s by default), so the check runs every `tick` here:
    /// a breach is acted on within `tick` instead of within a minute.
    pub async fn with_consumer_timeout(dir: &Path, timeout: Duration, tick: Duration) -> OwnRabbit {
        let conf = format!("consumer_timeout = {}\n", timeout.as_millis());
        let advanced = format!(
            "[{{rabbit, [{{channel_tick_interval, {}}}]}}].\n",
            tick.as_millis()
        );
        OwnRabbit::start_configured(dir, &conf, &advanced).await
    }

    /// A node with `conf` as its rabbitmq.conf and `advanced` as its advanced.config (each
    /// left out when empty).
    async fn start_configured(dir: &Path, conf: &str, advanced: &str) -> OwnRabbit {
        let port = free_port();
        let dir = dir.join(format!("rabbit-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("enabled_plugins"), "[].\n").unwrap();
        if !conf.is_empty() {
            std::fs::write(dir.join("rabbitmq.conf"), conf).unwrap();
        }
        if !advanced.is_empty() {
            std::fs::write(dir.join("advanced.config"), advanced).unwrap();
        }
        let mut rabbit = OwnRabbit {
            port,
            node: format!("trawl-chaos-{port}@localhost"),
            dir,
            child: None,
        };
        rabbit.up().await;
        rabbit
    }

    pub fn url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port)
    }

    fn env(&self, command: &mut Command) {
        let d = &self.dir;
        command
            .env("HOME", d)
            .env("RABBITMQ_NODENAME", &self.node)
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", self.port.to_string())
            // The distribution port must differ from every other node's: pick one per start.
            .env("RABBITMQ_DIST_PORT", free_port().to_string())
            .env("RABBITMQ_MNESIA_BASE", d.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", d.join("log"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", d.join("enabled_plugins"))
            .env("RABBITMQ_PLUGINS_EXPAND_DIR", d.join("plugins"))
            .env("RABBITMQ_CONFIG_FILE", d.join("rabbitmq"))
            .env("RABBITMQ_ADVANCED_CONFIG_FILE", d.join("advanced.config"))
            .env("RABBITMQ_PID_FILE", d.join("pid"));
    }

    /// Starts the node (again, on the same port and data: durable queues and their messages
    /// come back, as after a real restart).
    pub async fn up(&mut self) {
        assert!(self.child.is_none(), "rabbit already running");
        let mut command = owned(&format!("{RABBIT_BIN}/rabbitmq-server"));
        self.env(&mut command);
        let log = std::fs::File::create(self.dir.join("server.log")).unwrap();
        let child = command
            // Without it the script runs the VM in the background and waits for it, and a
            // kill ends only the script: the VM, holding port and data, lives on.
            .env("RUNNING_UNDER_SYSTEMD", "true")
            .current_dir(&self.dir)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("RabbitMQ must be installed (scripts/services-up)");
        self.child = Some(child);
        if !wait_for_port(self.port, Duration::from_secs(90)).await {
            let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
            panic!("RabbitMQ node {} did not start:\n{log}", self.node);
        }
    }

    /// The node's own log so far (what it says about connections, channels and consumers).
    pub fn log(&self) -> String {
        let mut text = String::new();
        for entry in std::fs::read_dir(self.dir.join("log"))
            .into_iter()
            .flatten()
            .flatten()
        {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        text
    }

    /// Runs `rabbitmqctl ARGS` against this node; panics unless it succeeds.
    pub async fn ctl(&self, args: &[&str]) {
        let mut command = Command::new(format!("{RABBIT_BIN}/rabbitmqctl"));
        self.env(&mut command);
        let out = command
            .args(["-q", "-n", &self.node])
            .args(args)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "rabbitmqctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A user `name` with `password` and every permission on the default vhost.
    pub async fn add_user(&self, name: &str, password: &str) {
        self.ctl(&["add_user", name, password]).await;
        self.ctl(&["set_permissions", "-p", "/", name, ".*", ".*", ".*"])
            .await;
    }

    /// A clean stop (`rabbitmqctl shutdown`), as an operator's restart does.
    pub async fn stop(&mut self) {
        let mut command = Command::new(format!("{RABBIT_BIN}/rabbitmqctl"));
        self.env(&mut command);
        let shutdown = command
            .args(["-n", &self.node, "shutdown"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .status();
        let shutdown = tokio::time::timeout(Duration::from_secs(60), shutdown);
        // `rabbitmqctl shutdown` returns once the node's OS process is gone, and the VM is this
        // process's child: it must be reaped while the command waits, or it stays a zombie and
        // the command waits for it for ever.
        let reaped = async {
            if let Some(mut child) = self.child.take() {
                if tokio::time::timeout(Duration::from_secs(30), child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                }
            }
        };
        let _ = tokio::join!(shutdown, reaped);
    }

    /// `kill -9` of the node's Erlang VM.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

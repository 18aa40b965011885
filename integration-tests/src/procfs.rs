//! What the kernel accounts for each process and for the machine: CPU time from
//! `/proc/PID/stat` and `/proc/stat`, memory from `/proc/PID/status`.

use std::collections::BTreeMap;

/// Linux reports utime and stime in USER_HZ ticks, 100 a second on every mainstream
/// architecture (and fixed, whatever the kernel's own tick rate).
const TICKS_PER_SEC: f64 = 100.0;

/// User plus system CPU seconds of `pid` ("self" for this process), all threads.
pub fn cpu_secs(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name, which may itself hold spaces; utime and
    // stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SEC)
}

/// (busy, total) jiffies of the whole machine so far: the first line of /proc/stat.
pub fn machine_jiffies() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user already).
    let total: u64 = fields.iter().take(8).sum();
    let idle: u64 = fields.iter().skip(3).take(2).sum();
    (total - idle, total)
}

/// A `kB` line of `/proc/PID/status` (`VmRSS`, `VmHWM`), in MB.
pub fn status_mb(pid: u32, key: &str) -> Option<f64> {
    status_kib(pid, key).map(|kib| kib as f64 / 1024.0)
}

/// The process listening on TCP `port` of this network namespace: the socket's inode from
/// /proc/net/tcp{,6}, then the process holding it among /proc/*/fd.
pub fn listener(port: u16) -> Option<String> {
    let wanted = format!(":{port:04X}");
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    // local_address, state 0A = LISTEN, inode.
                    (f.len() > 9 && f[1].ends_with(&wanted) && f[3] == "0A")
                        .then(|| format!("socket:[{}]", f[9]))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    if inodes.is_empty() {
        return None;
    }
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .find(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .any(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
        })
}

/// The RabbitMQ (5672) and Redis (6379) the fleet uses: other brokers on the machine (other
/// tests' own nodes) are not this run's.
pub fn services() -> Vec<String> {
    [5672, 6379].into_iter().filter_map(listener).collect()
}

/// CPU seconds so far of each of `pids`.
pub fn services_cpu(pids: &[String]) -> BTreeMap<String, f64> {
    pids.iter()
        .filter_map(|pid| Some((pid.clone(), cpu_secs(pid)?)))
        .collect()
}

/// CPU the services spent between two readings, counting only processes present in both: a
/// server restarted meanwhile (another test's chaos) would otherwise count from zero.
pub fn services_cpu_between(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> f64 {
    after
        .iter()
        .filter_map(|(pid, a)| before.get(pid).map(|b| (a - b).max(0.0)))
        .sum()
}

/// A `kB` line of `/proc/PID/status` (`VmRSS`, `VmHWM`), in KiB.
pub fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        let v = l.strip_prefix(key)?.strip_prefix(':')?;
        v.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

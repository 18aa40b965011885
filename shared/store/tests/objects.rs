//! One contract suite for the object store, run against the in-memory twin, a local directory
//! and a real S3-protocol server (`TRAWL_TEST_S3_ENDPOINT`, default s3rver on
//! `http://127.0.0.1:4568` with bucket `trawl-test`, as `scripts/services-up` starts it). Each
//! S3 case writes under a prefix of its own.

use std::time::Duration;

use trawl_config::OutputConfig;
use trawl_store::{ObjectError, Objects};

fn s3_endpoint() -> String {
    std::env::var("TRAWL_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:4568".into())
}

/// s3rver's credentials, passed the way every S3 tool takes them. Set for the whole test
/// process; no other test here reads them.
fn s3_credentials() {
    for (k, v) in [
        ("AWS_ACCESS_KEY_ID", "S3RVER"),
        ("AWS_SECRET_ACCESS_KEY", "S3RVER"),
    ] {
        std::env::set_var(k, v);
    }
}

fn s3_config(bucket: &str) -> OutputConfig {
    s3_credentials();
    OutputConfig {
        url: format!("s3://{bucket}/contract-{}", uuid::Uuid::now_v7().simple()),
        endpoint: Some(s3_endpoint()),
        region: Some("us-east-1".into()),
        path_style: Some(true),
        allow_http: Some(true),
        timeout_secs: 5,
        max_retries: 1,
        ..OutputConfig::default()
    }
}

fn s3() -> Objects {
    Objects::open(&s3_config("trawl-test")).unwrap()
}

fn local() -> (tempfile::TempDir, Objects) {
    let dir = tempfile::tempdir().unwrap();
    let config = OutputConfig {
        // A folder that does not exist yet: the first put creates it.
        url: format!("file://{}", dir.path().join("out").display()),
        ..OutputConfig::default()
    };
    let objects = Objects::open(&config).unwrap();
    (dir, objects)
}

async fn put_get_overwrite_and_list(objects: Objects) {
    assert_eq!(objects.get("batches/b/j/report.md").await.unwrap(), None);
    assert_eq!(
        objects.list("batches/b/j").await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        objects.list_files("batches/b").await.unwrap(),
        Vec::<String>::new()
    );
    objects.put("batches/b/j/report.md", b"# r").await.unwrap();
    objects.put("batches/b/j/report.md", b"# r2").await.unwrap();
    assert_eq!(
        objects.get("batches/b/j/report.md").await.unwrap().unwrap(),
        b"# r2"
    );
    objects.put("batches/b/j/docs/0.json", b"{}").await.unwrap();
    objects.put("batches/b/j/docs/1.json", b"[]").await.unwrap();
    objects
        .put("batches/b/jx/report.md", b"other")
        .await
        .unwrap();
    objects.put("batches/b/summary.md", b"s").await.unwrap();
    assert_eq!(
        objects.list("batches/b/j").await.unwrap(),
        vec!["docs", "report.md"]
    );
    assert_eq!(
        objects.list("batches/b").await.unwrap(),
        vec!["j", "jx", "summary.md"]
    );
    // A prefix is a folder: `j` does not take in `jx`.
    assert_eq!(
        objects.list_files("batches/b/j").await.unwrap(),
        vec!["docs/0.json", "docs/1.json", "report.md"]
    );
    objects.delete("batches/b/j/docs/1.json").await.unwrap();
    objects.delete("batches/b/j/docs/1.json").await.unwrap();
    assert_eq!(objects.get("batches/b/j/docs/1.json").await.unwrap(), None);
    // Empty objects and binary bytes round-trip.
    objects.put("batches/b/empty", b"").await.unwrap();
    assert_eq!(objects.get("batches/b/empty").await.unwrap().unwrap(), b"");
    let bytes: Vec<u8> = (0..=255).collect();
    objects.put("batches/b/bin", &bytes).await.unwrap();
    assert_eq!(objects.get("batches/b/bin").await.unwrap().unwrap(), bytes);
}

async fn keys_cannot_escape(objects: Objects) {
    for bad in [
        "../x",
        "/etc/passwd",
        "a/../../b",
        "",
        "a//b",
        "a/./b",
        "a\0b",
    ] {
        assert!(
            matches!(objects.put(bad, b"x").await, Err(ObjectError::BadKey(_))),
            "{bad:?}"
        );
        assert!(
            matches!(objects.get(bad).await, Err(ObjectError::BadKey(_))),
            "{bad:?}"
        );
    }
}

/// Readers racing a writer see no object or a whole one: never the start of an upload, and
/// never a replaced object half-replaced. S3 promises this by its semantics; s3rver, the test
/// server, writes its files in place (a reader can catch one empty or half-written), so this is
/// asked of the directory and memory stores only.
async fn readers_never_see_half_an_object(objects: Objects) {
    let a = vec![b'a'; 256 * 1024];
    let b = vec![b'b'; 256 * 1024];
    objects.put("race/o", &a).await.unwrap();
    let writer = {
        let (objects, a, b) = (objects.clone(), a.clone(), b.clone());
        tokio::spawn(async move {
            for i in 0..10 {
                objects.put(&format!("race/new{i}"), &a).await.unwrap();
                let bytes = if i % 2 == 0 { &b } else { &a };
                objects.put("race/o", bytes).await.unwrap();
            }
        })
    };
    while !writer.is_finished() {
        for i in 0..10 {
            if let Some(got) = objects.get(&format!("race/new{i}")).await.unwrap() {
                assert!(got == a, "a torn read of a new object: {} bytes", got.len());
            }
        }
        let got = objects.get("race/o").await.unwrap().unwrap();
        assert!(got == a || got == b, "a torn read of {} bytes", got.len());
        tokio::task::yield_now().await;
    }
    writer.await.unwrap();
}

#[tokio::test]
async fn memory_contract() {
    put_get_overwrite_and_list(Objects::memory()).await;
    keys_cannot_escape(Objects::memory()).await;
    readers_never_see_half_an_object(Objects::memory()).await;
}

#[tokio::test]
async fn local_directory_contract() {
    let (_dir, objects) = local();
    put_get_overwrite_and_list(objects).await;
    let (_dir, objects) = local();
    keys_cannot_escape(objects).await;
    let (dir, objects) = local();
    readers_never_see_half_an_object(objects).await;
    // No staging file is left behind.
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("out/race"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(
        names.iter().all(|n| !n.to_string_lossy().contains('#')),
        "{names:?}"
    );
}

#[tokio::test]
async fn s3_contract() {
    put_get_overwrite_and_list(s3()).await;
    keys_cannot_escape(s3()).await;
}

/// Two handles on one prefix are one store: what one writes, the other reads and lists.
#[tokio::test]
async fn s3_handles_on_one_prefix_share_it() {
    let config = s3_config("trawl-test");
    let (one, other) = (
        Objects::open(&config).unwrap(),
        Objects::open(&config).unwrap(),
    );
    one.put("batches/x/report.md", b"r").await.unwrap();
    assert_eq!(
        other.get("batches/x/report.md").await.unwrap().unwrap(),
        b"r"
    );
    assert_eq!(other.list("batches").await.unwrap(), vec!["x"]);
}

/// A missing bucket, wrong credentials and an unreachable endpoint are the store being
/// unavailable, within the configured bound, and the error carries no credential.
#[tokio::test]
async fn s3_failures_are_unavailable_bounded_and_keep_secrets() {
    let missing = Objects::open(&s3_config("no-such-bucket")).unwrap();
    let started = std::time::Instant::now();
    match missing.put("k", b"x").await {
        Err(ObjectError::Unavailable { reason, .. }) => {
            assert!(
                reason.contains("NoSuchBucket") || reason.contains("404"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }

    let mut unreachable = s3_config("trawl-test");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    unreachable.endpoint = Some(format!("http://127.0.0.1:{port}"));
    let objects = Objects::open(&unreachable).unwrap();
    assert!(matches!(
        objects.get("k").await,
        Err(ObjectError::Unavailable { .. })
    ));
    // One timeout at most per try, and the tries are few.
    assert!(started.elapsed() < Duration::from_secs(30));
}

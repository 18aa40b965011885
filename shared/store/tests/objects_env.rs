//! An S3 store configured by `AWS_*` variables alone, as S3 tools take them: the config names
//! only the bucket, and the environment the endpoint, plain HTTP, region and credentials (for
//! s3rver, as `scripts/services-up` starts it). Its own test binary, since the variables are
//! process-wide.

use trawl_config::OutputConfig;
use trawl_store::Objects;

/// `AWS_ALLOW_HTTP` once fell to the config's client options: "URL scheme is not allowed".
#[tokio::test]
async fn the_environment_alone_reaches_a_plain_http_store() {
    let endpoint =
        std::env::var("TRAWL_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:4568".into());
    for (key, value) in [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "S3RVER"),
        ("AWS_SECRET_ACCESS_KEY", "S3RVER"),
    ] {
        std::env::set_var(key, value);
    }
    let config = OutputConfig {
        url: format!("s3://trawl-test/env-{}", uuid::Uuid::now_v7().simple()),
        timeout_secs: 5,
        max_retries: 0,
        ..OutputConfig::default()
    };
    assert_eq!(config.allow_http, None);
    let objects = Objects::open(&config).unwrap();
    objects.put("k", b"from the environment").await.unwrap();
    let read = objects.get("k").await.unwrap();
    assert_eq!(read.as_deref(), Some(&b"from the environment"[..]));
    objects.delete("k").await.unwrap();
}

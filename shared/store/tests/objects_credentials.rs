//! Wrong credentials against the S3-protocol server (s3rver checks SigV4 signatures): the store
//! is unavailable, and no credential appears in the error. Its own test binary, since the
//! credentials are process-wide environment variables.

use trawl_config::OutputConfig;
use trawl_store::{ObjectError, Objects};

#[tokio::test]
async fn wrong_credentials_are_unavailable_and_never_shown() {
    let (id, secret) = ("AKIATRAWLTESTKEY0001", "wrong-secret-5f1c9a7e");
    std::env::set_var("AWS_ACCESS_KEY_ID", id);
    std::env::set_var("AWS_SECRET_ACCESS_KEY", secret);
    let config = OutputConfig {
        url: "s3://trawl-test/credentials".into(),
        endpoint: Some(
            std::env::var("TRAWL_TEST_S3_ENDPOINT")
                .unwrap_or_else(|_| "http://127.0.0.1:4568".into()),
        ),
        path_style: Some(true),
        allow_http: Some(true),
        timeout_secs: 5,
        max_retries: 0,
        ..OutputConfig::default()
    };
    let objects = Objects::open(&config).unwrap();
    for result in [
        objects.put("k", b"x").await.map(|_| None),
        objects.get("k").await,
    ] {
        match result {
            Err(e @ ObjectError::Unavailable { .. }) => {
                let text = e.to_string();
                assert!(!text.contains(secret) && !text.contains(id), "{text}");
                assert!(
                    text.contains("403")
                        || text.contains("Forbidden")
                        || text.contains("Signature"),
                    "{text}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

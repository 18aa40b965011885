//! The object store for results and work products, on the `object_store` crate: a local
//! directory (`file:///var/lib/trawl`), S3 or any S3-compatible server (`s3://bucket/prefix`),
//! Google Cloud Storage (`gs://`), Azure Blob Storage (`az://`), or this process's memory
//! (`memory://`). Keys are relative paths such as `batches/<b>/<job>/report.md`, under the
//! URL's prefix.
//!
//! A reader never sees half an object: S3, GCS and Azure make a put visible whole, and the
//! local directory writes a staging file renamed into place. Two workers writing the same key
//! (a redelivered message) leave one whole copy.
//!
//! Every request is bounded (`output.timeout_secs`) and retried a bounded number of times
//! (`output.max_retries`). What still fails is [`ObjectError::Unavailable`]: an outage, which
//! stages retry without spending a message's attempts. Credentials come only from the
//! environment or the pod identity, and every known secret ([`trawl_telemetry::scrub`]) is
//! scrubbed from every error and every text written.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::path::Path as StorePath;
use object_store::{
    BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};
use trawl_config::{redact_url, OutputConfig};
use trawl_telemetry::scrub;

#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    #[error("invalid object key {0:?}")]
    BadKey(String),
    /// `output.url` or its settings cannot make a store.
    #[error("output.url {location}: {reason}")]
    Config { location: String, reason: String },
    /// A local directory could not read or write this object (a path that cannot be a file,
    /// a full disk): retried with the message's attempts, as any failure of its work.
    #[error("object store I/O on {key}: {reason}")]
    Failed { key: String, reason: String },
    /// The store did not answer, or refused, after the bounded retries: an outage (or a
    /// missing bucket, wrong credentials), not a fault of the message.
    #[error("object store {location}: {op} {key}: {reason}")]
    Unavailable {
        location: String,
        op: &'static str,
        key: String,
        reason: String,
    },
}

/// An object of a listing ([`Objects::list_meta`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    pub etag: String,
    pub size: u64,
}

#[derive(Clone, Debug)]
pub struct Objects {
    store: Arc<dyn ObjectStore>,
    /// The URL's prefix inside the bucket (empty for a directory or memory).
    root: String,
    /// The URL, for messages (it never carries credentials: config refuses them).
    location: Arc<str>,
    local: Option<PathBuf>,
}

impl Objects {
    /// The store `config.url` names. Nothing is contacted yet: a missing bucket or wrong
    /// credentials show at the first request (see [`crate::shared::Probe`]).
    pub fn open(config: &OutputConfig) -> Result<Objects, ObjectError> {
        let url = config.url.trim();
        let fail = |reason: String| ObjectError::Config {
            location: redact_url(url),
            reason,
        };
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| fail("not a URL".into()))?;
        let scheme = scheme.to_ascii_lowercase();
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let root = prefix.trim_matches('/').to_owned();
        if !root.is_empty() && !key_ok(&root) {
            return Err(fail(format!(
                "prefix {root:?} is not a clean relative path"
            )));
        }
        let store: Arc<dyn ObjectStore> = match scheme.as_str() {
            "file" => {
                // The directory need not exist yet: files are created with their folders on
                // the first put, and reads of a missing directory find nothing.
                let dir = std::path::absolute(rest)
                    .map_err(|e| fail(format!("cannot resolve {rest:?}: {e}")))?;
                let root = dir.to_string_lossy().trim_matches('/').to_owned();
                if !root.is_empty() && !key_ok(&root) {
                    return Err(fail(format!(
                        "{} is not a clean absolute path",
                        dir.display()
                    )));
                }
                let fs = object_store::local::LocalFileSystem::new();
                return Ok(Objects::with_store(Arc::new(fs), &root, url, Some(dir)));
            }
            "memory" => Arc::new(object_store::memory::InMemory::new()),
            "s3" | "s3a" => {
                let mut builder = client_options(config, AmazonS3Builder::from_env(), |b, k, v| {
                    b.with_config(AmazonS3ConfigKey::Client(k), v)
                })
                .with_bucket_name(bucket)
                .with_retry(retry_config(config));
                if let Some(endpoint) = &config.endpoint {
                    builder = builder.with_endpoint(endpoint);
                }
                if let Some(region) = &config.region {
                    builder = builder.with_region(region);
                }
                if let Some(path_style) = config.path_style {
                    builder = builder.with_virtual_hosted_style_request(!path_style);
                }
                if let Some(allow) = config.allow_http {
                    builder = builder.with_allow_http(allow);
                }
                Arc::new(
                    builder
                        .build()
                        .map_err(|e| fail(scrub(&e.to_string()).into_owned()))?,
                )
            }
            "gs" => Arc::new(
                client_options(config, GoogleCloudStorageBuilder::from_env(), |b, k, v| {
                    b.with_config(GoogleConfigKey::Client(k), v)
                })
                .with_bucket_name(bucket)
                .with_retry(retry_config(config))
                .build()
                .map_err(|e| fail(scrub(&e.to_string()).into_owned()))?,
            ),
            "az" => Arc::new(
                client_options(config, MicrosoftAzureBuilder::from_env(), |b, k, v| {
                    b.with_config(AzureConfigKey::Client(k), v)
                })
                .with_container_name(bucket)
                .with_retry(retry_config(config))
                .build()
                .map_err(|e| fail(scrub(&e.to_string()).into_owned()))?,
            ),
            other => return Err(fail(format!("unknown scheme {other:?}"))),
        };
        Ok(Objects::with_store(store, &root, url, None))
    }

    /// A store in this process's memory (tests, and the embedded fleet's twin).
    pub fn memory() -> Objects {
        Objects::with_store(
            Arc::new(object_store::memory::InMemory::new()),
            "",
            "memory://",
            None,
        )
    }

    fn with_store(
        store: Arc<dyn ObjectStore>,
        root: &str,
        url: &str,
        local: Option<PathBuf>,
    ) -> Objects {
        Objects {
            store,
            root: root.to_owned(),
            location: redact_url(url).into(),
            local,
        }
    }

    /// The store's URL, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The directory of a `file://` store.
    pub fn local_dir(&self) -> Option<&std::path::Path> {
        self.local.as_deref()
    }

    /// Where `key` is, for people: its path in a local directory, its URL in any other store.
    pub fn where_is(&self, key: &str) -> String {
        match &self.local {
            Some(dir) => dir.join(key).display().to_string(),
            None => format!("{}/{key}", self.location.trim_end_matches('/')),
        }
    }

    fn path(&self, key: &str) -> Result<StorePath, ObjectError> {
        if !key_ok(key) {
            return Err(ObjectError::BadKey(key.to_owned()));
        }
        let full = if self.root.is_empty() {
            key.to_owned()
        } else {
            format!("{}/{key}", self.root)
        };
        StorePath::parse(full).map_err(|_| ObjectError::BadKey(key.to_owned()))
    }

    /// What failed, by where: a local directory's error concerns the object (`Failed`); a
    /// remote store's, after its retries, the store (`Unavailable`).
    fn failure(&self, op: &'static str, key: &str, e: object_store::Error) -> ObjectError {
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            let text = s.to_string();
            if !reason.contains(&text) {
                reason.push_str(": ");
                reason.push_str(&text);
            }
            source = s.source();
        }
        let reason = scrub(&reason).into_owned();
        if self.local.is_some() {
            return ObjectError::Failed {
                key: key.to_owned(),
                reason,
            };
        }
        ObjectError::Unavailable {
            location: self.location.to_string(),
            op,
            key: key.to_owned(),
            reason,
        }
    }

    /// Writes `bytes` at `key`, whole. A text that holds a known secret (an LLM's error that
    /// echoes its key, say) is written with the secret scrubbed.
    pub async fn put(&self, key: &str, bytes: &[u8]) -> Result<(), ObjectError> {
        let path = self.path(key)?;
        let bytes = match std::str::from_utf8(bytes).map(scrub) {
            Ok(std::borrow::Cow::Owned(clean)) => clean.into_bytes(),
            _ => bytes.to_vec(),
        };
        let payload = PutPayload::from(bytes);
        self.store
            .put(&path, payload)
            .await
            .map(drop)
            .map_err(|e| self.failure("put", key, e))
    }

    /// The object's bytes, or `None` when there is no object at `key`.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        let path = self.path(key)?;
        let result = match self.store.get(&path).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.failure("get", key, e)),
        };
        match result.bytes().await {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            // Deleted between the answer's head and its body.
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failure("get", key, e)),
        }
    }

    pub async fn delete(&self, key: &str) -> Result<(), ObjectError> {
        let path = self.path(key)?;
        match self.store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failure("delete", key, e)),
        }
    }

    /// Keys of every object under `prefix`, relative to it, sorted (`docs/0.json`,
    /// `report.md` …).
    pub async fn list_files(&self, prefix: &str) -> Result<Vec<String>, ObjectError> {
        let path = self.path(prefix)?;
        let base = format!("{path}/");
        let metas: Vec<_> = self
            .store
            .list(Some(&path))
            .try_collect()
            .await
            .map_err(|e| self.failure("list", prefix, e))?;
        let mut files: Vec<String> = metas
            .iter()
            .filter_map(|m| m.location.as_ref().strip_prefix(&base).map(str::to_owned))
            .collect();
        files.sort();
        Ok(files)
    }

    /// Every object of the store (under its URL's prefix), by its key relative to that, with
    /// what tells a changed object from the same one: its etag (else its last-modified time)
    /// and its size. Unsorted.
    pub async fn list_meta(&self) -> Result<Vec<Listed>, ObjectError> {
        let prefix = (!self.root.is_empty()).then(|| StorePath::from(self.root.as_str()));
        let metas: Vec<_> = self
            .store
            .list(prefix.as_ref())
            .try_collect()
            .await
            .map_err(|e| self.failure("list", "", e))?;
        let base = prefix.map(|p| format!("{p}/")).unwrap_or_default();
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                let key = m.location.as_ref().strip_prefix(&base)?.to_owned();
                let etag = (m.e_tag).unwrap_or_else(|| m.last_modified.to_rfc3339());
                Some(Listed {
                    key,
                    etag,
                    size: m.size,
                })
            })
            .collect())
    }

    /// Names directly under `prefix` (objects and "folders"), sorted.
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, ObjectError> {
        let path = self.path(prefix)?;
        let listing = self
            .store
            .list_with_delimiter(Some(&path))
            .await
            .map_err(|e| self.failure("list", prefix, e))?;
        let mut names: Vec<String> = (listing.common_prefixes.iter())
            .chain(listing.objects.iter().map(|m| &m.location))
            .filter_map(|p| p.filename().map(str::to_owned))
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }
}

/// A clean relative key: segments that are neither empty, `.` nor `..`, and no control
/// characters or backslashes (which some stores would take as separators or reject late).
fn key_ok(key: &str) -> bool {
    !key.is_empty()
        && key
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
        && !key.chars().any(|c| c.is_control() || c == '\\')
}

/// Sets the HTTP client's options that `config` decides on `builder`, one key at a time through
/// `set`: the others stay as the builder read them from the environment (`AWS_ALLOW_HTTP`,
/// `AWS_PROXY_URL` …), where a whole `ClientOptions` would replace them all.
fn client_options<B>(
    config: &OutputConfig,
    builder: B,
    set: impl Fn(B, ClientConfigKey, String) -> B,
) -> B {
    let secs = |n: u64| format!("{n}s");
    [
        (ClientConfigKey::Timeout, secs(config.timeout_secs)),
        (
            ClientConfigKey::ConnectTimeout,
            secs(config.timeout_secs.min(5)),
        ),
    ]
    .into_iter()
    .fold(builder, |builder, (key, value)| set(builder, key, value))
}

/// Bounded retries: a store that stays down surfaces within about `max_retries` backoffs
/// (and at most one request timeout each), so the stage can call it an outage.
fn retry_config(config: &OutputConfig) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: config.max_retries as usize,
        retry_timeout: Duration::from_secs(
            config.timeout_secs * (u64::from(config.max_retries) + 1),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_be_clean_relative_paths() {
        for good in ["a", "batches/b/j/report.md", "jobs/0190-x"] {
            assert!(key_ok(good), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../b",
            "a//b",
            "a/./b",
            "a/",
            "a\0b",
            "a\\b",
        ] {
            assert!(!key_ok(bad), "{bad:?}");
        }
    }

    /// The client options the environment sets (here `AWS_ALLOW_HTTP`) survive the config's;
    /// where both set one (the timeout), the config's wins.
    #[test]
    fn client_options_keep_the_environments_unless_the_config_sets_them() {
        let client = |key| AmazonS3ConfigKey::Client(key);
        let from_env = AmazonS3Builder::new()
            .with_config(client(ClientConfigKey::AllowHttp), "true")
            .with_config(client(ClientConfigKey::Timeout), "1s");
        let config = OutputConfig {
            timeout_secs: 7,
            ..OutputConfig::default()
        };
        let builder = client_options(&config, from_env, |b, k, v| b.with_config(client(k), v));
        let value = |key| builder.get_config_value(&client(key));
        assert_eq!(value(ClientConfigKey::AllowHttp).as_deref(), Some("true"));
        assert_eq!(value(ClientConfigKey::Timeout).as_deref(), Some("7s"));
    }

    #[test]
    fn open_refuses_unknown_schemes_and_dirty_prefixes() {
        for url in ["ftp://x/y", "nothing", "s3://bucket/a/../b"] {
            let config = OutputConfig {
                url: url.into(),
                ..OutputConfig::default()
            };
            assert!(
                matches!(Objects::open(&config), Err(ObjectError::Config { .. })),
                "{url}"
            );
        }
    }
}

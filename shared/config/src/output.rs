//! `[output]`: the object store that holds results and work products.

use serde::{Deserialize, Serialize};

use crate::redact::redact_url;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OutputConfig {
    /// Object store for results and work products: `file:///path` (a local directory; only
    /// for a fleet whose workers share that disk), `s3://bucket/prefix` (AWS S3 or any
    /// S3-compatible server), `gs://bucket/prefix`, `az://container/prefix`, or `memory://`
    /// (this process only: `trawl run`, tests). Credentials never go here: they come from the
    /// standard variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`;
    /// `GOOGLE_APPLICATION_CREDENTIALS`; `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`)
    /// or the instance or pod identity (IRSA's web identity token file, ECS/EKS, IMDS).
    pub url: String,
    /// S3-compatible endpoint (`http://127.0.0.1:9000`); `AWS_ENDPOINT_URL` when unset.
    pub endpoint: Option<String>,
    /// Region; `AWS_REGION` / `AWS_DEFAULT_REGION` when unset, else `us-east-1`.
    pub region: Option<String>,
    /// Path-style requests (`endpoint/bucket/key`), which most S3-compatible servers want;
    /// virtual-hosted style (`bucket.endpoint/key`, AWS's default) when false.
    pub path_style: Option<bool>,
    /// Plain HTTP to the endpoint; `AWS_ALLOW_HTTP` when unset.
    pub allow_http: Option<bool>,
    /// Bound of one request to the object store, in seconds.
    pub timeout_secs: u64,
    /// Retries of one request (5xx, timeouts, connection errors) before the store counts as
    /// unavailable: the message is then retried later without spending an attempt.
    pub max_retries: u32,
    /// Seconds between checks that every worker of the fleet sees the same store (each
    /// writes a probe object that the others must read).
    pub shared_check_secs: u64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            url: "file://./trawl-output".into(),
            endpoint: None,
            region: None,
            path_style: None,
            allow_http: None,
            timeout_secs: 30,
            max_retries: 3,
            shared_check_secs: 5,
        }
    }
}

/// The schemes `output.url` takes.
const OUTPUT_SCHEMES: [&str; 6] = ["file", "s3", "s3a", "gs", "az", "memory"];

impl OutputConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        let scheme = self
            .url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some(s) if OUTPUT_SCHEMES.contains(&s) => {
                let rest = &self.url[s.len() + 3..];
                let authority = rest.split('/').next().unwrap_or("");
                if authority.contains('@') {
                    problems.push(format!(
                        "output.url must not carry credentials (got {}): set AWS_ACCESS_KEY_ID \
                         and AWS_SECRET_ACCESS_KEY (or the provider's variables) in the environment",
                        redact_url(&self.url)
                    ));
                } else if matches!(s, "s3" | "s3a" | "gs" | "az") && authority.is_empty() {
                    problems.push(format!(
                        "output.url {} names no bucket: write {s}://BUCKET/PREFIX",
                        self.url
                    ));
                }
            }
            _ => problems.push(format!(
                "output.url must be file:///DIR, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, \
                 az://CONTAINER/PREFIX or memory:// (got {})",
                redact_url(&self.url)
            )),
        }
        if let Some(endpoint) = &self.endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
                problems.push(format!(
                    "output.endpoint must be an http:// or https:// URL (got {})",
                    redact_url(endpoint)
                ));
            } else if endpoint
                .split("://")
                .nth(1)
                .is_some_and(|r| r.split('/').next().is_some_and(|a| a.contains('@')))
            {
                problems.push("output.endpoint must not carry credentials".into());
            }
        }
        if self.timeout_secs == 0 || self.shared_check_secs == 0 {
            problems
                .push("output.timeout_secs and output.shared_check_secs must be at least 1".into());
        }
    }

    /// The directory of a `file://` URL.
    pub fn local_dir(&self) -> Option<std::path::PathBuf> {
        let (scheme, path) = self.url.split_once("://")?;
        scheme
            .eq_ignore_ascii_case("file")
            .then(|| std::path::PathBuf::from(path))
    }
}

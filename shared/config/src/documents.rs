//! `[documents]`: your own documents as sources. A root (a folder or a bucket prefix) is indexed
//! once into an index the fleet shares through the object store, and searched as the provider
//! named `documents`.

use serde::{Deserialize, Serialize};

use crate::check;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DocumentsConfig {
    /// The root searched when a job names none: `file:///srv/docs`, `s3://bucket/prefix`,
    /// `gs://bucket/prefix` or `az://container/prefix` (read with the output store's S3
    /// settings and credentials). Empty: none. It must be under one of `allow`.
    pub url: String,
    /// Roots jobs may read, as URL prefixes (`["s3://corp-docs/", "file:///srv/docs/"]`).
    /// Empty by default: a batch naming any root is refused, so an API caller cannot read the
    /// workers' disk or every bucket their credentials reach. `trawl run --documents DIR`
    /// allows the folder it is given.
    pub allow: Vec<String>,
    /// How old a root's index may be before the next job that searches it looks for changed
    /// files (only those are read again).
    pub refresh_secs: u64,
    /// How long a job waits for another worker's first index of a root before its search of
    /// the documents fails (the web providers of its chain still run).
    pub wait_secs: u64,
    /// How long the worker building a root's index holds it; another worker may take over
    /// after that.
    pub lease_secs: u64,
    /// A file larger than this (bytes) is left out of the index, and named in its manifest.
    pub max_file_bytes: u64,
    /// At most this many files of a root are indexed; the rest are named in its manifest.
    pub max_files: usize,
}

impl Default for DocumentsConfig {
    fn default() -> Self {
        DocumentsConfig {
            url: String::new(),
            allow: Vec::new(),
            refresh_secs: 300,
            wait_secs: 120,
            lease_secs: 1_800,
            max_file_bytes: 50 << 20,
            max_files: 100_000,
        }
    }
}

impl DocumentsConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::at_least_one(problems, "documents.refresh_secs", self.refresh_secs);
        check::at_least_one(problems, "documents.wait_secs", self.wait_secs);
        check::at_least_one(problems, "documents.lease_secs", self.lease_secs);
        check::at_least_one(problems, "documents.max_file_bytes", self.max_file_bytes);
        check::at_least_one(problems, "documents.max_files", self.max_files as u64);
        for root in &self.allow {
            if !root.contains("://") {
                problems.push(format!(
                    "documents.allow: {root:?} is not a URL (file:///dir/, s3://bucket/prefix/)"
                ));
            }
        }
    }
}

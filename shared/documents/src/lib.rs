//! Your own documents as sources: a folder or a bucket prefix (a [`Root`]) indexed with tantivy
//! into an index the fleet shares through the object store ([`Library`]), searched as the
//! provider named `documents`, its files read by fetch as `doc://<path under the root>` and
//! cited at their page (`doc://filings/acme-2023.pdf#page=41`).
//!
//! - roots in one canonical form, the allow-list and `doc://` URLs are `trawl-messages`'
//!   ([`trawl_messages::documents`]): a job's options name them.
//! - [`read`]: a root's files with their etags, and each file's text by the converters fetch
//!   uses for files on the web ([`trawl_files`]).
//! - [`chunk`]: a text in chunks, each with its page.
//! - [`index`]: the tantivy index of a root's chunks, built and searched.
//! - [`library`]: versions published by an atomic manifest, rebuilt under a lease when stale,
//!   only changed files read again.

pub mod chunk;
pub mod index;
pub mod library;
pub mod read;

pub use index::Hit;
pub use library::{FileEntry, Library, Manifest};
pub use trawl_messages::documents::{doc_name, doc_url, Root, RootError, DOC_SCHEME};

use trawl_store::{ObjectError, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum DocumentsError {
    #[error(transparent)]
    Root(#[from] RootError),
    /// The root cannot be listed: no such folder or bucket, or no access.
    #[error("documents root {root} cannot be read: {why}")]
    Unavailable { root: String, why: String },
    /// One file that cannot be read (gone, corrupt, encrypted, a format not read).
    #[error("{name}: {why}")]
    Unreadable { name: String, why: String },
    #[error(
        "the index of {root} is being built by another worker and none was ready after {waited} s"
    )]
    Building { root: String, waited: u64 },
    #[error("documents index: {0}")]
    Index(String),
    #[error(transparent)]
    Objects(#[from] ObjectError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

//! The fleet's indexes of documents roots, kept in the object store beside the work products.
//!
//! For a root with id `<id>` ([`Root::id`]):
//! - `documents/<id>/manifest.json`: the published version — every file with its etag and
//!   size (or why it was left out), the index's files, when it was built;
//! - `documents/<id>/chunks/<hash of the file's name>.json`: each file's text in chunks, so a
//!   new version reads again only the files whose etag or size changed;
//! - `documents/<id>/v<N>/…`: version N's tantivy files.
//!
//! The first worker that needs a root whose index is missing or older than
//! `documents.refresh_secs` rebuilds it under a lease (`documents:<id>`): it lists the root,
//! converts the files that changed, drops those deleted, builds the index from every file's
//! chunks, uploads it under the next version and only then writes the manifest, whose put is
//! atomic: a reader sees a whole version or the one before. When nothing changed, the manifest
//! alone is written again, confirming the version. The others read the last complete
//! version meanwhile, or wait for the first one (`documents.wait_secs`). Each worker keeps its
//! own copy of a version on local disk and searches it there.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::{info, warn};
use trawl_config::{DocumentsConfig, OutputConfig};
use trawl_store::{lock, Objects, Store};

use crate::chunk::chunks;
use crate::index::{build, Hit, IndexedFile, Searchable};
use crate::{read, DocumentsError, Root};

/// A root's published index.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub root: String,
    pub version: u64,
    pub built_at: chrono::DateTime<chrono::Utc>,
    /// Every file of the root, by its path under it.
    pub files: BTreeMap<String, FileEntry>,
    /// The index's files under `v<version>/`.
    pub index_files: Vec<String>,
    /// The files read (again) to build this version: new or changed since the one before.
    #[serde(default)]
    pub read: Vec<String>,
}

/// One file of a root as the index has it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub etag: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub chunks: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<usize>,
    /// Why the file is not in the index (unreadable, too large, a format not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A version opened on this worker.
struct Opened {
    version: u64,
    checked: Instant,
    index: Arc<Searchable>,
}

/// The indexes of every root this worker searches.
pub struct Library {
    /// The fleet's object store, where indexes are published.
    objects: Objects,
    store: Arc<dyn Store>,
    /// The output store's settings, with which roots on S3 are read.
    output: OutputConfig,
    config: DocumentsConfig,
    /// Local copies of published versions.
    cache_dir: PathBuf,
    opened: tokio::sync::Mutex<HashMap<String, Opened>>,
}

fn key(root: &Root, rest: &str) -> String {
    trawl_messages::paths::documents(&root.id(), rest)
}

impl Library {
    pub fn new(
        objects: Objects,
        store: Arc<dyn Store>,
        output: OutputConfig,
        config: DocumentsConfig,
        cache_dir: PathBuf,
    ) -> Library {
        Library {
            objects,
            store,
            output,
            config,
            cache_dir,
            opened: Default::default(),
        }
    }

    /// The files of `root` that best match `query`, at most `limit`, best first.
    pub async fn search(
        &self,
        root: &Root,
        query: &str,
        limit: usize,
    ) -> Result<Vec<Hit>, DocumentsError> {
        let index = self.current(root).await?;
        let query = query.to_owned();
        tokio::task::spawn_blocking(move || index.search(&query, limit))
            .await
            .map_err(|e| DocumentsError::Index(format!("search panicked: {e}")))?
            .map_err(|e| DocumentsError::Index(e.to_string()))
    }

    /// The published manifest of `root`, if it has one.
    pub async fn manifest(&self, root: &Root) -> Result<Option<Manifest>, DocumentsError> {
        let Some(bytes) = self.objects.get(&key(root, "manifest.json")).await? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| DocumentsError::Index(format!("unreadable manifest: {e}")))
    }

    /// The index to search `root` with: the version this worker has while it was checked
    /// within `refresh_secs`, else the published one after bringing it up to date.
    async fn current(&self, root: &Root) -> Result<Arc<Searchable>, DocumentsError> {
        let refresh = Duration::from_secs(self.config.refresh_secs);
        let mut opened = self.opened.lock().await;
        if let Some(o) = opened.get(&root.id()) {
            if o.checked.elapsed() < refresh {
                return Ok(Arc::clone(&o.index));
            }
        }
        let manifest = self.up_to_date(root).await?;
        if let Some(o) = opened.get_mut(&root.id()) {
            if o.version == manifest.version {
                o.checked = Instant::now();
                return Ok(Arc::clone(&o.index));
            }
        }
        let dir = self.download(root, &manifest).await?;
        let index = tokio::task::spawn_blocking(move || Searchable::open(&dir))
            .await
            .map_err(|e| DocumentsError::Index(format!("opening panicked: {e}")))?
            .map_err(|e| DocumentsError::Index(e.to_string()))?;
        let index = Arc::new(index);
        let o = Opened {
            version: manifest.version,
            checked: Instant::now(),
            index: Arc::clone(&index),
        };
        opened.insert(root.id(), o);
        Ok(index)
    }

    /// The manifest of `root` after making sure it is no older than `refresh_secs`: rebuilt
    /// here under the root's lease, or, while another worker holds it, the last published
    /// one (waited for when there is none yet).
    pub async fn up_to_date(&self, root: &Root) -> Result<Manifest, DocumentsError> {
        let refresh = chrono::Duration::seconds(self.config.refresh_secs as i64);
        let fresh = |m: &Manifest| chrono::Utc::now() - m.built_at < refresh;
        let published = self.manifest(root).await?;
        if let Some(m) = published.as_ref().filter(|m| fresh(m)) {
            return Ok(m.clone());
        }
        let lease = Duration::from_secs(self.config.lease_secs);
        let name = format!("documents:{}", root.id());
        match lock(&self.store, &name, lease).await? {
            Some(guard) => {
                // Another worker may have published while this one took the lease.
                let published = self.manifest(root).await?;
                let built = match published {
                    Some(m) if fresh(&m) => Ok(m),
                    old => self.rebuild(root, old.unwrap_or_default()).await,
                };
                if let Err(e) = guard.release().await {
                    warn!(error = %e, "documents lease not released: it expires");
                }
                built
            }
            None => match published {
                Some(m) => Ok(m),
                None => self.wait_for_first(root).await,
            },
        }
    }

    /// The first version of `root`, which another worker is building.
    async fn wait_for_first(&self, root: &Root) -> Result<Manifest, DocumentsError> {
        let until = Instant::now() + Duration::from_secs(self.config.wait_secs);
        while Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(250)).await;
            if let Some(m) = self.manifest(root).await? {
                return Ok(m);
            }
        }
        Err(DocumentsError::Building {
            root: root.to_string(),
            waited: self.config.wait_secs,
        })
    }

    /// A new version of `root`'s index after `old`: files whose etag or size changed read
    /// again, deleted ones dropped, published with its manifest.
    async fn rebuild(&self, root: &Root, old: Manifest) -> Result<Manifest, DocumentsError> {
        let started = Instant::now();
        let docs = read::open(root, &self.output)?;
        let listed = read::list(root, &docs).await?;
        let mut files = BTreeMap::new();
        let mut read = Vec::new();
        for (i, item) in listed.into_iter().enumerate() {
            if i >= self.config.max_files {
                let why = format!("past documents.max_files ({})", self.config.max_files);
                files.insert(
                    item.name,
                    FileEntry {
                        error: Some(why),
                        ..Default::default()
                    },
                );
                continue;
            }
            // A file left out for what it is (corrupt, too large) stays out until it changes.
            let kept =
                (old.files.get(&item.name)).filter(|e| e.etag == item.etag && e.size == item.size);
            if let Some(entry) = kept {
                files.insert(item.name, entry.clone());
                continue;
            }
            read.push(item.name.clone());
            let entry = self.read_file(root, &docs, &item).await?;
            files.insert(item.name, entry);
        }
        if read.is_empty() && old.version > 0 && files.len() == old.files.len() {
            // Nothing changed: the version stands, confirmed as of now.
            let manifest = Manifest {
                built_at: chrono::Utc::now(),
                read,
                ..old
            };
            self.publish(root, &manifest).await?;
            return Ok(manifest);
        }
        for gone in old.files.keys().filter(|n| !files.contains_key(*n)) {
            self.objects.delete(&chunk_key(root, gone)).await?;
        }
        let version = old.version + 1;
        let index_files = self.build_and_upload(root, &files, version).await?;
        let manifest = Manifest {
            root: root.to_string(),
            version,
            built_at: chrono::Utc::now(),
            files,
            index_files,
            read,
        };
        self.publish(root, &manifest).await?;
        // Readers of the version before may still be downloading it: the one before that goes.
        if version > 2 {
            let stale = key(root, &format!("v{}", version - 2));
            for file in self.objects.list_files(&stale).await? {
                self.objects.delete(&format!("{stale}/{file}")).await?;
            }
        }
        info!(
            root = %root,
            version,
            files = manifest.files.len(),
            read_again = manifest.read.len(),
            secs = started.elapsed().as_secs_f64(),
            "documents indexed"
        );
        Ok(manifest)
    }

    /// Writes `manifest`: the one put that publishes its version.
    async fn publish(&self, root: &Root, manifest: &Manifest) -> Result<(), DocumentsError> {
        let bytes = serde_json::to_vec_pretty(manifest).expect("a manifest serialises");
        Ok(self
            .objects
            .put(&key(root, "manifest.json"), &bytes)
            .await?)
    }

    /// One file read, converted and chunked, its chunks stored; a file that cannot be read is
    /// an entry saying why, not an error of the whole root.
    async fn read_file(
        &self,
        root: &Root,
        docs: &Objects,
        item: &read::Listed,
    ) -> Result<FileEntry, DocumentsError> {
        let mut entry = FileEntry {
            etag: item.etag.clone(),
            size: item.size,
            ..Default::default()
        };
        if item.size > self.config.max_file_bytes {
            entry.error = Some(format!(
                "{} bytes, over documents.max_file_bytes ({})",
                item.size, self.config.max_file_bytes
            ));
            return Ok(entry);
        }
        let text = match read::text(docs, &item.name).await {
            Ok(text) => text,
            Err(DocumentsError::Unreadable { why, .. }) => {
                entry.error = Some(why);
                return Ok(entry);
            }
            Err(e) => return Err(e),
        };
        let file = IndexedFile {
            name: item.name.clone(),
            title: text.title.clone(),
            chunks: chunks(&text.text),
        };
        entry.title = text.title;
        entry.chunks = file.chunks.len();
        entry.pages = text.pages;
        let bytes = serde_json::to_vec(&file).expect("chunks serialise");
        self.objects
            .put(&chunk_key(root, &item.name), &bytes)
            .await?;
        Ok(entry)
    }

    /// Builds version `version` from every indexed file's chunks and uploads it; its files.
    async fn build_and_upload(
        &self,
        root: &Root,
        files: &BTreeMap<String, FileEntry>,
        version: u64,
    ) -> Result<Vec<String>, DocumentsError> {
        let dir = tempdir_in(&self.cache_dir)?;
        // The index is built on a thread of its own as the chunks are read: a root's text
        // need never be in memory at once.
        let (tx, rx) = std::sync::mpsc::sync_channel::<IndexedFile>(8);
        let at = dir.clone();
        let builder = tokio::task::spawn_blocking(move || build(&at, rx));
        for name in (files.iter().filter(|(_, e)| e.chunks > 0)).map(|(name, _)| name) {
            let Some(bytes) = self.objects.get(&chunk_key(root, name)).await? else {
                warn!(file = %name, "chunks of a document missing: left out of this version");
                continue;
            };
            let Ok(file) = serde_json::from_slice::<IndexedFile>(&bytes) else {
                warn!(file = %name, "chunks of a document unreadable: left out of this version");
                continue;
            };
            if tx.send(file).is_err() {
                break;
            }
        }
        drop(tx);
        builder
            .await
            .map_err(|e| DocumentsError::Index(format!("indexing panicked: {e}")))?
            .map_err(|e| DocumentsError::Index(e.to_string()))?;
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // Lock files are the writer's, not the index's.
            if name.ends_with(".lock") || !entry.file_type().map_err(io)?.is_file() {
                continue;
            }
            let bytes = std::fs::read(entry.path()).map_err(io)?;
            self.objects
                .put(&key(root, &format!("v{version}/{name}")), &bytes)
                .await?;
            names.push(name);
        }
        let _ = std::fs::remove_dir_all(&dir);
        names.sort();
        Ok(names)
    }

    /// This worker's copy of `manifest`'s version, downloaded once.
    async fn download(&self, root: &Root, manifest: &Manifest) -> Result<PathBuf, DocumentsError> {
        let dir = self
            .cache_dir
            .join(root.id())
            .join(format!("v{}", manifest.version));
        if dir.is_dir() {
            return Ok(dir);
        }
        let staging = tempdir_in(&self.cache_dir)?;
        for name in &manifest.index_files {
            let at = key(root, &format!("v{}/{name}", manifest.version));
            let bytes = self.objects.get(&at).await?.ok_or_else(|| {
                DocumentsError::Index(format!("{at} is missing from the object store"))
            })?;
            std::fs::write(staging.join(name), bytes).map_err(io)?;
        }
        std::fs::create_dir_all(dir.parent().expect("a version's folder has a parent"))
            .map_err(io)?;
        // Another job of this worker may have put it there first: theirs is the same.
        if std::fs::rename(&staging, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        Ok(dir)
    }
}

fn chunk_key(root: &Root, name: &str) -> String {
    key(
        root,
        &format!(
            "chunks/{:016x}.json",
            trawl_messages::documents::fnv1a(name.as_bytes())
        ),
    )
}

fn io(e: std::io::Error) -> DocumentsError {
    DocumentsError::Index(format!("local index copy: {e}"))
}

/// A new empty folder under `parent`.
fn tempdir_in(parent: &Path) -> Result<PathBuf, DocumentsError> {
    std::fs::create_dir_all(parent).map_err(io)?;
    let dir = parent.join(format!(".building-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir(&dir).map_err(io)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_store::MemoryStore;

    fn library(cache: &Path) -> Library {
        let config = DocumentsConfig {
            // Every search looks for changes: each test step sees the folder as it is.
            refresh_secs: 0,
            max_file_bytes: 1_000,
            ..DocumentsConfig::default()
        };
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let output = OutputConfig::default();
        Library::new(Objects::memory(), store, output, config, cache.to_owned())
    }

    #[tokio::test]
    async fn a_folder_is_indexed_once_and_only_its_changes_read_again() {
        let folder = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = folder.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "hr/staff.md",
            "# Staffing\n\nThe company employed 18,420 people in 2023.\n",
        );
        write("notes.txt", "Kestrels hover over the north verge.");
        write("big.txt", &"word ".repeat(300));
        write(".hidden/secret.txt", "Never indexed.");
        let root = Root::folder(folder.path()).unwrap();
        let lib = library(cache.path());

        let hits = lib
            .search(&root, "How many people were employed?", 5)
            .await
            .unwrap();
        assert_eq!(hits[0].name, "hr/staff.md");
        assert_eq!(hits[0].title, "Staffing");
        let m = lib.manifest(&root).await.unwrap().unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.read, ["big.txt", "hr/staff.md", "notes.txt"]);
        let big = m.files["big.txt"].error.as_deref().unwrap();
        assert!(big.contains("over documents.max_file_bytes"), "{big}");

        // Nothing changed: the version stands, and nothing is read.
        lib.search(&root, "kestrels", 5).await.unwrap();
        let m = lib.manifest(&root).await.unwrap().unwrap();
        assert_eq!((m.version, m.read.len()), (1, 0));

        // One file changed, one deleted: only the changed one is read again.
        write("notes.txt", "Kestrels hover; voles hide in the long grass.");
        std::fs::remove_file(folder.path().join("hr/staff.md")).unwrap();
        let hits = lib.search(&root, "voles", 5).await.unwrap();
        assert_eq!(hits[0].name, "notes.txt");
        let m = lib.manifest(&root).await.unwrap().unwrap();
        assert_eq!(
            (m.version, m.read.clone()),
            (2, vec!["notes.txt".to_owned()])
        );
        assert!(!m.files.contains_key("hr/staff.md"));
        assert!(lib
            .search(&root, "employed people", 5)
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn a_missing_folder_is_named() {
        let cache = tempfile::tempdir().unwrap();
        let root = Root::parse("file:///nonexistent/trawl-docs").unwrap();
        let err = library(cache.path())
            .search(&root, "q", 5)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no folder at /nonexistent/trawl-docs"),
            "{err}"
        );
    }
}

//! The object store for results and work products: a local directory (`output.url =
//! "file:///var/lib/trawl"`). Keys are relative paths such as `batches/<b>/<job>/report.md`.
//!
//! Writes go to a temporary file renamed into place, so a reader never sees half a report and
//! two workers writing the same key (a redelivered message) leave one whole copy.

use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    #[error("invalid object key {0:?}")]
    BadKey(String),
    #[error("object store I/O on {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

#[derive(Clone, Debug)]
pub struct LocalObjects {
    root: PathBuf,
}

impl LocalObjects {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalObjects { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &str) -> Result<PathBuf, ObjectError> {
        let rel = Path::new(key);
        let clean = !key.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !clean {
            return Err(ObjectError::BadKey(key.to_owned()));
        }
        Ok(self.root.join(rel))
    }

    pub async fn put(&self, key: &str, bytes: &[u8]) -> Result<(), ObjectError> {
        let path = self.path(key)?;
        let io = |source| ObjectError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir).await.map_err(io)?;
        }
        let tmp = path.with_extension(format!(
            "tmp-{}-{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        tokio::fs::write(&tmp, bytes).await.map_err(io)?;
        tokio::fs::rename(&tmp, &path).await.map_err(io)
    }

    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        let path = self.path(key)?;
        match tokio::fs::read(&path).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ObjectError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Keys of every file under `prefix`, relative to it, sorted (`docs/0.json`, `report.md` …).
    pub async fn list_files(&self, prefix: &str) -> Result<Vec<String>, ObjectError> {
        let mut files = Vec::new();
        let mut pending = vec![String::new()];
        while let Some(rel) = pending.pop() {
            let dir = if rel.is_empty() {
                prefix.to_owned()
            } else {
                format!("{prefix}/{rel}")
            };
            for name in self.list(&dir).await? {
                let key = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                let path = self.path(&format!("{prefix}/{key}"))?;
                if tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_dir()) {
                    pending.push(key);
                } else {
                    files.push(key);
                }
            }
        }
        files.sort();
        Ok(files)
    }

    /// Names directly under `prefix` (files and folders), sorted.
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, ObjectError> {
        let dir = self.path(prefix)?;
        let mut names = Vec::new();
        let mut entries = match tokio::fs::read_dir(&dir).await {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(names),
            Err(source) => {
                return Err(ObjectError::Io {
                    path: dir.display().to_string(),
                    source,
                })
            }
        };
        while let Ok(Some(entry)) = entries.next_entry().await {
            if let Some(name) = entry.file_name().to_str() {
                if !name.contains(".tmp-") {
                    names.push(name.to_owned());
                }
            }
        }
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn put_get_list_and_reject_escapes() {
        let dir = std::env::temp_dir().join(format!("trawl-objects-{}", std::process::id()));
        let objects = LocalObjects::new(&dir);
        objects.put("batches/b/j/report.md", b"# r").await.unwrap();
        objects.put("batches/b/j/report.md", b"# r2").await.unwrap();
        assert_eq!(
            objects.get("batches/b/j/report.md").await.unwrap().unwrap(),
            b"# r2"
        );
        assert_eq!(objects.get("batches/b/j/none").await.unwrap(), None);
        assert_eq!(
            objects.list("batches/b/j").await.unwrap(),
            vec!["report.md"]
        );
        objects.put("batches/b/j/docs/0.json", b"{}").await.unwrap();
        assert_eq!(
            objects.list_files("batches/b/j").await.unwrap(),
            vec!["docs/0.json", "report.md"]
        );
        for bad in ["../x", "/etc/passwd", "a/../../b", ""] {
            assert!(
                matches!(objects.put(bad, b"x").await, Err(ObjectError::BadKey(_))),
                "{bad}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}

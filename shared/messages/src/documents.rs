//! A documents root (a folder or a bucket prefix), who may read it, and the `doc://` URLs of
//! its files: what a job's `documents` option names and its `doc://` sources point into.
//! (`trawl-documents` indexes and reads roots.)

/// Why a root is not one a job may name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootError {
    #[error("documents root {root}: {why}")]
    Bad { root: String, why: String },
    #[error(
        "documents root {root} is not allowed: an operator adds it, or a folder above it, to \
         documents.allow"
    )]
    NotAllowed { root: String },
}

/// The longest root a job may name (characters).
pub const MAX_ROOT: usize = 1024;

/// A folder or bucket prefix of documents, in one canonical form: `file:///abs/dir`,
/// `s3://bucket/prefix`, `gs://…`, `az://…` (no trailing slash), so that two spellings of one
/// root share one index and the allow-list compares like with like.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Root {
    url: String,
}

impl Root {
    /// The root `url` names; a URL that cannot be one is refused with what to write instead.
    pub fn parse(url: &str) -> Result<Root, RootError> {
        let bad = |why: &str| RootError::Bad {
            root: url.trim().chars().take(200).collect(),
            why: why.to_owned(),
        };
        if url.chars().count() > MAX_ROOT {
            return Err(bad(&format!("longer than {MAX_ROOT} characters")));
        }
        if url.chars().any(char::is_control) {
            return Err(bad("control characters have no place in a root"));
        }
        let url = url.trim().trim_end_matches('/');
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            bad("not a URL: write file:///dir, s3://bucket/prefix, gs://bucket/prefix or az://container/prefix")
        })?;
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(scheme.as_str(), "file" | "s3" | "gs" | "az" | "memory") {
            return Err(bad("the scheme must be file, s3, gs or az"));
        }
        if scheme == "file" && !rest.starts_with('/') {
            return Err(bad("a folder must be an absolute path (file:///srv/docs)"));
        }
        if rest.contains(['@', '?', '#', '\\']) {
            return Err(bad(
                "credentials, queries and fragments have no place in a root",
            ));
        }
        let segments = rest.trim_start_matches('/').split('/');
        if segments.clone().any(|s| s == ".." || s == ".") {
            return Err(bad("`.` and `..` are not allowed in a root"));
        }
        if scheme != "file" && rest.split('/').next().is_none_or(str::is_empty) {
            return Err(bad("name the bucket"));
        }
        Ok(Root {
            url: format!("{scheme}://{rest}"),
        })
    }

    /// A local folder's root.
    pub fn folder(dir: &std::path::Path) -> Result<Root, RootError> {
        let dir = std::path::absolute(dir).map_err(|e| RootError::Bad {
            root: dir.display().to_string(),
            why: e.to_string(),
        })?;
        Root::parse(&format!("file://{}", dir.display()))
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// A short stable name for the root's index in the object store.
    pub fn id(&self) -> String {
        format!("{:016x}", fnv1a(self.url.as_bytes()))
    }

    /// The root `url` names, if `allow` holds it ([`Root::allowed_by`]).
    pub fn allowed(url: &str, allow: &[String]) -> Result<Root, RootError> {
        let root = Root::parse(url)?;
        match root.allowed_by(allow) {
            true => Ok(root),
            false => Err(RootError::NotAllowed {
                root: root.to_string(),
            }),
        }
    }

    /// Whether one of `allow` (URL prefixes) holds the root: itself or a folder above it.
    pub fn allowed_by(&self, allow: &[String]) -> bool {
        allow.iter().filter_map(|a| Root::parse(a).ok()).any(|a| {
            self.url == a.url
                || (self.url.strip_prefix(&a.url)).is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

impl std::fmt::Display for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

/// FNV-1a, for short stable names of roots and files.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The scheme of a document's URL.
pub const DOC_SCHEME: &str = "doc://";

/// The URL of file `name` (its path under the root), at `page` when it has pages:
/// `doc://filings/acme-2023.pdf#page=41`. Characters a URL cannot hold are percent-encoded.
pub fn doc_url(name: &str, page: Option<u32>) -> String {
    let mut out = String::from(DOC_SCHEME);
    for b in name.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    if let Some(page) = page {
        out.push_str(&format!("#page={page}"));
    }
    out
}

/// The file a `doc://` URL names (its path under the root), without its page; `None` for any
/// other URL, or one that would leave the root.
pub fn doc_name(url: &str) -> Option<String> {
    let rest = url.strip_prefix(DOC_SCHEME)?;
    let rest = rest.split('#').next().unwrap_or_default();
    let mut bytes = Vec::with_capacity(rest.len());
    let mut it = rest.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hex = [it.next()?, it.next()?];
            bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            bytes.push(b);
        }
    }
    let name = String::from_utf8(bytes).ok()?;
    let clean = !name.is_empty()
        && !name.starts_with('/')
        && name
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
    clean.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_canonical_and_refused_with_a_reason() {
        let root = Root::parse("s3://corp-docs/filings/").unwrap();
        assert_eq!(root.url(), "s3://corp-docs/filings");
        assert_eq!(
            root.id(),
            Root::parse("S3://corp-docs/filings").unwrap().id()
        );
        for (bad, why) in [
            ("/srv/docs", "not a URL"),
            ("file://docs", "absolute path"),
            ("http://example.com/docs", "scheme"),
            ("s3://key:secret@bucket/x", "credentials"),
            ("file:///srv/docs/../../etc", "`..`"),
            ("s3:///prefix", "bucket"),
        ] {
            let err = Root::parse(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_root_is_allowed_by_itself_or_a_folder_above_it() {
        let allow = ["file:///srv/docs/".to_owned(), "s3://corp/".to_owned()];
        let ok = |url: &str| Root::parse(url).unwrap().allowed_by(&allow);
        assert!(ok("file:///srv/docs"));
        assert!(ok("file:///srv/docs/hr"));
        assert!(ok("s3://corp/filings"));
        assert!(!ok("file:///srv/docs-private"));
        assert!(!ok("file:///srv"));
        assert!(!ok("s3://corporate"));
        assert!(!Root::parse("file:///srv/docs").unwrap().allowed_by(&[]));
        let err = Root::allowed("file:///etc", &allow)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not allowed") && err.contains("documents.allow"),
            "{err}"
        );
    }

    #[test]
    fn doc_urls_round_trip_and_never_leave_the_root() {
        let url = doc_url("filings/acme 2023#1.pdf", Some(41));
        assert_eq!(url, "doc://filings/acme%202023%231.pdf#page=41");
        assert_eq!(doc_name(&url).as_deref(), Some("filings/acme 2023#1.pdf"));
        assert_eq!(doc_url("notes.md", None), "doc://notes.md");
        for bad in [
            "doc://../etc/passwd",
            "doc:///etc/passwd",
            "doc://a/%2E%2E/b",
            "doc://",
            "https://x/a",
        ] {
            assert_eq!(doc_name(bad), None, "{bad}");
        }
    }
}

//! Local input, read with a bound: a file, standard input or a gzip stream past its limit is
//! refused with its name and the limit before it fills memory (`/dev/zero`, a gzip bomb).

use std::io::Read;
use std::path::Path;

use anyhow::{bail, ensure, Context};

/// Reads `reader` to its end, or fails once it passes `limit` bytes; `what` names the input
/// and the setting that bounds it, for the error.
pub(crate) fn read_bounded(reader: impl Read, limit: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("failed to read {what}"))?;
    ensure!(bytes.len() as u64 <= limit, too_large(what, limit));
    Ok(bytes)
}

/// [`read_bounded`] of the file at `path`; a regular file whose size is past `limit` is
/// refused before a byte is read (a device or a pipe is read up to it).
pub fn read_file(path: &Path, limit: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("failed to read {}", path.display()))?;
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > limit)
    {
        bail!(too_large(what, limit));
    }
    read_bounded(file, limit, what)
}

fn too_large(what: &str, limit: u64) -> String {
    format!(
        "{what} is larger than {} (the limit): refused",
        human(limit)
    )
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / 1048576.0),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// The fields schema of a `--fields` file (a JSON Schema object, [`trawl_messages::Fields`]);
/// the error names the file and the place in it.
pub fn read_fields(path: &Path) -> anyhow::Result<trawl_messages::Fields> {
    let what = format!("--fields {}", path.display());
    let bytes = read_file(
        path,
        trawl_messages::fields::MAX_SCHEMA_BYTES as u64 * 4,
        &what,
    )?;
    let text = String::from_utf8(bytes).with_context(|| format!("{what}: not UTF-8 text"))?;
    trawl_messages::fields::from_text(&text).map_err(|e| anyhow::anyhow!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        let err = read_file(&path, 1 << 20, "the batch").unwrap_err();
        assert!(err.to_string().contains("larger than 1.0 MiB"), "{err}");
    }

    #[test]
    fn endless_input_stops_at_the_limit() {
        let endless = std::io::repeat(0);
        let err = read_bounded(endless, 1024, "standard input").unwrap_err();
        assert!(err.to_string().contains("larger than 1.0 KiB"), "{err}");
        assert_eq!(read_bounded(&b"abc"[..], 3, "x").unwrap(), b"abc");
    }

    #[test]
    fn dev_zero_is_refused_quickly() {
        let err = read_file(Path::new("/dev/zero"), 1 << 20, "/dev/zero").unwrap_err();
        assert!(err.to_string().contains("larger than 1.0 MiB"), "{err}");
    }
}

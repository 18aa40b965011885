//! The properties the fuzz targets check, one function per target, each taking the raw input
//! libFuzzer generates and panicking when a property fails. `libfuzzer/` wraps them for
//! libFuzzer (`scripts/fuzz`); `tests/corpus.rs` replays the committed seeds and mutants of
//! them in the ordinary test run, so CI keeps every regression input without the instrumented
//! build.

mod shape;
mod targets;

pub use shape::{assert_markdown_ok, Node, GROWTH};
pub use targets::{envelope, extract, markdown, robots};

/// A fuzz target: its name (as `scripts/fuzz`, `corpus/` and `dict/` know it), its check
/// (the input in, a panic out when a property fails), the longest input libFuzzer gives it, and
/// its dictionary (`dict/DICT.dict`). `scripts/fuzz` keeps the same table for libFuzzer; the
/// corpus test holds the two equal.
pub struct Target {
    pub name: &'static str,
    pub check: fn(&[u8]),
    pub max_len: usize,
    pub dict: &'static str,
}

/// Every target: whole pages for extraction, a screenful for the rest.
pub const TARGETS: [Target; 4] = [
    Target {
        name: "envelope",
        check: envelope,
        max_len: 4096,
        dict: "envelope",
    },
    Target {
        name: "robots",
        check: robots,
        max_len: 4096,
        dict: "robots",
    },
    Target {
        name: "extract",
        check: extract,
        max_len: 16384,
        dict: "html",
    },
    Target {
        name: "markdown",
        check: markdown,
        max_len: 8192,
        dict: "html",
    },
];

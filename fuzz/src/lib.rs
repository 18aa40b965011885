//! The properties the fuzz targets check, one function per target, each taking the raw input
//! libFuzzer generates and panicking when a property fails. `../fuzz_targets` wraps them for
//! libFuzzer (`scripts/fuzz`); `tests/corpus.rs` replays the committed seeds and mutants of
//! them in the ordinary test run, so CI keeps every regression input without the instrumented
//! build.

mod shape;
mod targets;

pub use shape::{assert_markdown_ok, Node, GROWTH};
pub use targets::{envelope, extract, markdown, robots};

/// A target: its input in, a panic out when a property fails.
pub type Check = fn(&[u8]);

/// Every target by name, as `scripts/fuzz` and `fuzz/corpus/` name them.
pub const TARGETS: [(&str, Check); 4] = [
    ("envelope", envelope),
    ("robots", robots),
    ("extract", extract),
    ("markdown", markdown),
];

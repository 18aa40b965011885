//! Rules that several sections' `problems` share, each written (and worded) once.

use std::fmt::Display;
use std::ops::RangeInclusive;

/// A count or a duration that 0 would turn into "nothing ever happens": `got` is one of the
/// unsigned integers, whose default is 0.
pub(crate) fn at_least_one<T: Default + PartialEq + Display>(
    problems: &mut Vec<String>,
    key: &str,
    got: T,
) {
    if got == T::default() {
        problems.push(format!("{key} must be at least 1 (got {got})"));
    }
}

/// A value bounded on both sides.
pub(crate) fn within<T: PartialOrd + Display>(
    problems: &mut Vec<String>,
    key: &str,
    got: T,
    range: RangeInclusive<T>,
) {
    if !range.contains(&got) {
        problems.push(format!(
            "{key} must be {} to {} (got {got})",
            range.start(),
            range.end()
        ));
    }
}

/// A prefix of queue names or store keys: it must be non-empty and mean the same to RabbitMQ
/// and Redis, so only letters, digits, '-', '_' and '.'.
pub(crate) fn safe_name(problems: &mut Vec<String>, key: &str, value: &str) {
    let ok = !value.is_empty()
        && (value.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        problems.push(format!(
            "{key} must be non-empty letters, digits, '-', '_' or '.'"
        ));
    }
}

//! Whole numbers as JSON Schema counts them: `3` and `3.0` alike. The API documents
//! [`JobOptions`](crate::JobOptions)' counts as `integer`, which admits `3.0`, and some JSON
//! encoders write every number with a fraction; serde's integer types alone refuse it.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, Error, Unexpected, Visitor};

/// `deserialize_with` for an `Option` of an unsigned integer type: `null`, or a whole number
/// in the type's range, written with or without `.0`.
pub fn option<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    deserializer.deserialize_option(WholeVisitor(PhantomData))
}

struct WholeVisitor<T>(PhantomData<T>);

impl<'de, T: TryFrom<u64>> Visitor<'de> for WholeVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a whole number in the option's range")
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_u64<E: Error>(self, n: u64) -> Result<Self::Value, E> {
        T::try_from(n)
            .map(Some)
            .map_err(|_| E::invalid_value(Unexpected::Unsigned(n), &self))
    }

    fn visit_i64<E: Error>(self, n: i64) -> Result<Self::Value, E> {
        match u64::try_from(n) {
            Ok(n) => self.visit_u64(n),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(n), &self)),
        }
    }

    fn visit_f64<E: Error>(self, x: f64) -> Result<Self::Value, E> {
        // 2^64 is the first float past u64::MAX; below it, a float without fraction is exact.
        if x.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&x) {
            self.visit_u64(x as u64)
        } else {
            Err(E::invalid_value(Unexpected::Float(x), &self))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Counts {
        #[serde(default, deserialize_with = "super::option")]
        level: Option<u8>,
        #[serde(default, deserialize_with = "super::option")]
        secs: Option<u64>,
    }

    fn parse(json: &str) -> Result<(Option<u8>, Option<u64>), String> {
        serde_json::from_str::<Counts>(json)
            .map(|c| (c.level, c.secs))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn whole_numbers_with_or_without_a_fraction() {
        assert_eq!(parse("{}"), Ok((None, None)));
        assert_eq!(parse(r#"{"level": null, "secs": null}"#), Ok((None, None)));
        assert_eq!(
            parse(r#"{"level": 3, "secs": 600}"#),
            Ok((Some(3), Some(600)))
        );
        assert_eq!(
            parse(r#"{"level": 3.0, "secs": 6e2}"#),
            Ok((Some(3), Some(600)))
        );
        assert_eq!(
            parse(r#"{"secs": 18446744073709551615}"#),
            Ok((None, Some(u64::MAX)))
        );
    }

    #[test]
    fn anything_else_is_refused() {
        for (json, needle) in [
            (r#"{"level": 2.5}"#, "floating point `2.5`"),
            (
                r#"{"level": 256}"#,
                "integer `256`, expected a whole number",
            ),
            (r#"{"level": -1}"#, "integer `-1`"),
            (r#"{"level": "3"}"#, "string \"3\""),
            (r#"{"secs": 1e20}"#, "floating point `1e+20`"),
        ] {
            let err = parse(json).unwrap_err();
            assert!(err.contains(needle), "{json}: {err}");
        }
    }
}

//! How [`JobOptions`](crate::JobOptions)' fields are read: each refuses a wrong value by
//! naming the field and what it takes ("expected max_urls to be a whole number from 1 to
//! 1000"), since a batch line or request body may set several, and serde's own words ("expected
//! usize") name neither.
//!
//! Counts are whole numbers as JSON Schema counts them: `3` and `3.0` alike. The API documents
//! them as `integer`, which admits `3.0`, and some JSON encoders write every number with a
//! fraction; serde's integer types alone refuse it. Ranges are checked here only as far as the
//! type goes (`max_level` is a `u8`); whether a value is in the option's range is
//! `check_task`'s call, so both report the same range.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer, Error, SeqAccess, Unexpected, Visitor};

/// `deserialize_with` for `max_urls`.
pub fn max_urls<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    optional(
        d,
        Whole("max_urls to be a whole number from 1 to 1000", PhantomData),
    )
}

/// `deserialize_with` for `max_level`.
pub fn max_level<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    optional(
        d,
        Whole("max_level to be a whole number from 0 to 3", PhantomData),
    )
}

/// `deserialize_with` for `deadline_secs`.
pub fn deadline_secs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    optional(
        d,
        Whole(
            "deadline_secs to be a whole number of seconds from 1 to 2592000",
            PhantomData,
        ),
    )
}

/// `deserialize_with` for `cache_max_age_secs`.
pub fn cache_max_age_secs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    optional(
        d,
        Whole(
            "cache_max_age_secs to be a whole number of seconds from 0 to 2592000",
            PhantomData,
        ),
    )
}

/// `deserialize_with` for `report_max_tokens`.
pub fn report_max_tokens<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    optional(
        d,
        Whole(
            "report_max_tokens to be a whole number from 100 to 16000",
            PhantomData,
        ),
    )
}

/// `deserialize_with` for `report_type`.
pub fn report_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<crate::ReportType>, D::Error> {
    const EXPECTED: &str = "report_type to be one of answer, brief or detailed";
    let text = optional(d, Text(EXPECTED))?;
    (text.map(|t| {
        t.parse()
            .map_err(|_| D::Error::invalid_value(Unexpected::Str(&t), &EXPECTED))
    }))
    .transpose()
}

/// `deserialize_with` for `min_relevance`: any JSON number.
pub fn min_relevance<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    optional(d, Number("min_relevance to be a number from 0 to 1"))
}

/// `deserialize_with` for `freshness`.
pub fn freshness<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    optional(
        d,
        Text("freshness to be one of any, day, week, month or year"),
    )
}

/// `deserialize_with` for `language`.
pub fn language<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    optional(
        d,
        Text("language to be a language tag, such as de or pt-BR"),
    )
}

/// `deserialize_with` for `providers`: a list of names.
pub fn providers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    optional(
        d,
        List(Text(
            "providers to be a list of provider names, such as [\"searxng\"]",
        )),
    )
}

/// `deserialize_with` for `include_domains`: a list of domains (checked by `check_task`).
pub fn include_domains<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    optional(
        d,
        List(Text(
            "include_domains to be a list of domains, such as [\"example.com\", \"gov\"]",
        )),
    )
}

/// `deserialize_with` for `exclude_domains`.
pub fn exclude_domains<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    optional(
        d,
        List(Text(
            "exclude_domains to be a list of domains, such as [\"pinterest.com\"]",
        )),
    )
}

/// `deserialize_with` for `urls`.
pub fn urls<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    optional(
        d,
        List(Text(
            "urls to be a list of http or https URLs, such as [\"https://example.com/report\"]",
        )),
    )
}

/// `deserialize_with` for `search`.
pub fn search<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    optional(d, Bool("search to be true or false"))
}

/// `null` or absent, else what `visitor` takes; `visitor` says what the field takes.
fn optional<'de, D: Deserializer<'de>, V: Visitor<'de>>(
    d: D,
    visitor: V,
) -> Result<Option<V::Value>, D::Error> {
    d.deserialize_option(Optional(visitor))
}

struct Optional<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for Optional<V> {
    type Value = Option<V::Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self.0).map(Some)
    }
}

/// A whole number of type `T`, with or without `.0`.
struct Whole<T>(&'static str, PhantomData<T>);

impl<'de, T: TryFrom<u64>> Visitor<'de> for Whole<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_u64<E: Error>(self, n: u64) -> Result<T, E> {
        T::try_from(n).map_err(|_| E::invalid_value(Unexpected::Unsigned(n), &self))
    }

    fn visit_i64<E: Error>(self, n: i64) -> Result<T, E> {
        match u64::try_from(n) {
            Ok(n) => self.visit_u64(n),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(n), &self)),
        }
    }

    fn visit_f64<E: Error>(self, x: f64) -> Result<T, E> {
        // 2^64 is the first float past u64::MAX; below it, a float without fraction is exact.
        if x.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&x) {
            self.visit_u64(x as u64)
        } else {
            Err(E::invalid_value(Unexpected::Float(x), &self))
        }
    }
}

/// Any number.
struct Number(&'static str);

impl<'de> Visitor<'de> for Number {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_u64<E: Error>(self, n: u64) -> Result<f64, E> {
        Ok(n as f64)
    }

    fn visit_i64<E: Error>(self, n: i64) -> Result<f64, E> {
        Ok(n as f64)
    }

    fn visit_f64<E: Error>(self, x: f64) -> Result<f64, E> {
        Ok(x)
    }
}

/// A string; also the seed of each of a [`List`]'s items.
#[derive(Clone, Copy)]
struct Text(&'static str);

impl<'de> Visitor<'de> for Text {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: Error>(self, s: &str) -> Result<String, E> {
        Ok(s.to_owned())
    }
}

impl<'de> DeserializeSeed<'de> for Text {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

/// `true` or `false`.
struct Bool(&'static str);

impl<'de> Visitor<'de> for Bool {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_bool<E: Error>(self, b: bool) -> Result<bool, E> {
        Ok(b)
    }
}

/// A list of strings; a wrong item gets the list's own error.
struct List(Text);

impl<'de> Visitor<'de> for List {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.0)? {
            items.push(item);
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use crate::JobOptions;

    fn parse(json: &str) -> Result<JobOptions, String> {
        serde_json::from_str::<JobOptions>(json).map_err(|e| e.to_string())
    }

    #[test]
    fn whole_numbers_with_or_without_a_fraction() {
        assert_eq!(parse("{}"), Ok(JobOptions::default()));
        let nulls = r#"{"max_urls": null, "max_level": null, "deadline_secs": null,
            "min_relevance": null, "freshness": null, "providers": null}"#;
        assert_eq!(parse(nulls), Ok(JobOptions::default()));
        let o = parse(r#"{"max_level": 3, "deadline_secs": 600, "max_urls": 5}"#).unwrap();
        assert_eq!(
            (o.max_level, o.deadline_secs, o.max_urls),
            (Some(3), Some(600), Some(5))
        );
        let o = parse(r#"{"max_level": 3.0, "deadline_secs": 6e2}"#).unwrap();
        assert_eq!((o.max_level, o.deadline_secs), (Some(3), Some(600)));
        let o = parse(r#"{"deadline_secs": 18446744073709551615}"#).unwrap();
        assert_eq!(o.deadline_secs, Some(u64::MAX));
    }

    #[test]
    fn cache_max_age_secs_is_whole_seconds_and_0_is_one() {
        for (json, secs) in [
            (r#"{"cache_max_age_secs": 0}"#, 0),
            (r#"{"cache_max_age_secs": 600}"#, 600),
            (r#"{"cache_max_age_secs": 6e2}"#, 600),
        ] {
            assert_eq!(
                parse(json).unwrap().cache_max_age_secs,
                Some(secs),
                "{json}"
            );
        }
        let o = parse(r#"{"cache_max_age_secs": null}"#).unwrap();
        assert_eq!(o.cache_max_age_secs, None);
        for (json, what) in [
            (r#"{"cache_max_age_secs": -1}"#, "integer `-1`"),
            (r#"{"cache_max_age_secs": 1.5}"#, "floating point `1.5`"),
            (r#"{"cache_max_age_secs": "x"}"#, "string \"x\""),
        ] {
            let err = parse(json).unwrap_err();
            assert!(
                err.contains(what)
                    && err.contains(
                        "cache_max_age_secs to be a whole number of seconds from 0 to 2592000"
                    ),
                "{json}: {err}"
            );
        }
    }

    #[test]
    fn other_fields_take_their_types() {
        let o = parse(
            r#"{"min_relevance": 1, "freshness": "week", "providers": ["searxng", "brave"],
                "report_type": "detailed"}"#,
        )
        .unwrap();
        assert_eq!(o.report_type, Some(crate::ReportType::Detailed));
        assert_eq!(o.min_relevance, Some(1.0));
        assert_eq!(o.freshness.as_deref(), Some("week"));
        assert_eq!(o.providers, Some(vec!["searxng".into(), "brave".into()]));
        let o = parse(
            r#"{"include_domains": ["example.com"], "exclude_domains": [], "search": false,
                "urls": ["https://example.com/a"]}"#,
        )
        .unwrap();
        assert_eq!(o.include_domains, Some(vec!["example.com".into()]));
        assert_eq!(o.exclude_domains, Some(vec![]));
        assert_eq!(o.urls(), ["https://example.com/a".to_string()]);
        assert!(!o.searches());
    }

    #[test]
    fn a_wrong_value_names_its_field() {
        for (json, needles) in [
            (
                r#"{"max_level": 2.5}"#,
                &["floating point `2.5`", "max_level"][..],
            ),
            (
                r#"{"max_level": 256}"#,
                &["integer `256`", "max_level to be"],
            ),
            (r#"{"max_urls": -1}"#, &["integer `-1`", "max_urls to be"]),
            (
                r#"{"report_type": "long"}"#,
                &[
                    "string \"long\"",
                    "report_type to be one of answer, brief or detailed",
                ],
            ),
            (r#"{"max_urls": 1e23}"#, &["1e+23", "max_urls to be"]),
            (
                r#"{"max_level": "3"}"#,
                &["string \"3\"", "max_level to be"],
            ),
            (
                r#"{"deadline_secs": 1e20}"#,
                &["1e+20", "deadline_secs to be"],
            ),
            (
                r#"{"min_relevance": "high"}"#,
                &["string \"high\"", "min_relevance"],
            ),
            (r#"{"freshness": 7}"#, &["integer `7`", "freshness to be"]),
            (
                r#"{"providers": "searxng"}"#,
                &["string \"searxng\"", "providers to be"],
            ),
            (r#"{"providers": [1]}"#, &["integer `1`", "providers to be"]),
            (
                r#"{"include_domains": "example.com"}"#,
                &["string \"example.com\"", "include_domains to be a list"],
            ),
            (r#"{"urls": [null]}"#, &["urls to be a list of http"]),
            (r#"{"search": "no"}"#, &["search to be true or false"]),
            ("null", &["options to be an object"]),
            ("7", &["options to be an object"]),
        ] {
            let err = parse(json).unwrap_err();
            for needle in needles {
                assert!(err.contains(needle), "{json}: {err}");
            }
        }
    }
}

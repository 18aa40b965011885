//! The envelope every message travels in.
//!
//! Decoding is two-step on purpose: [`Envelope::peek`] reads only the header fields (so a worker
//! can dead-letter a message whose body it cannot read while still naming its job), then
//! [`Envelope::decode`] checks the version and kind and decodes the body.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use uuid::Uuid;

/// The schema version this build writes and accepts.
pub const SCHEMA_VERSION: u32 = 1;

/// What a message's body is; fixed by the queue it travels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Kind {
    SearchTask,
    FetchTask,
    FetchedDoc,
    SynthesizeTask,
    ResearchResult,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A message body that knows its own kind, so envelopes cannot be built with a mismatched one.
pub trait Body: Serialize + DeserializeOwned {
    const KIND: Kind;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope<B> {
    pub v: u32,
    pub kind: Kind,
    pub job_id: Uuid,
    pub batch_id: Uuid,
    /// 0 on first delivery; raised by one each time the message goes through a retry tier.
    pub attempt: u32,
    pub created_at: DateTime<Utc>,
    /// When the job must be synthesised with whatever has arrived.
    pub deadline: DateTime<Utc>,
    pub body: B,
}

/// The header fields of an envelope, readable even when the body is not.
#[derive(Clone, Debug, Deserialize)]
pub struct Header {
    pub v: u32,
    pub kind: Option<Kind>,
    pub job_id: Option<Uuid>,
    pub batch_id: Option<Uuid>,
    #[serde(default)]
    pub attempt: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("message is not a JSON envelope: {0}")]
    NotAnEnvelope(String),
    #[error("unknown schema version {found} (this build reads {SCHEMA_VERSION})")]
    UnknownVersion { found: u32 },
    #[error("expected a {expected} message, got {found}")]
    WrongKind {
        expected: &'static str,
        found: String,
    },
    #[error("undecodable {kind} body: {reason}")]
    BadBody { kind: &'static str, reason: String },
}

impl<B: Body> Envelope<B> {
    /// A fresh envelope for `body`, attempt 0, created now.
    pub fn new(job_id: Uuid, batch_id: Uuid, deadline: DateTime<Utc>, body: B) -> Self {
        Envelope {
            v: SCHEMA_VERSION,
            kind: B::KIND,
            job_id,
            batch_id,
            attempt: 0,
            created_at: Utc::now(),
            deadline,
            body,
        }
    }

    /// The next stage's message for the same job: same ids and deadline, attempt back to 0.
    pub fn follow<C: Body>(&self, body: C) -> Envelope<C> {
        Envelope {
            v: SCHEMA_VERSION,
            kind: C::KIND,
            job_id: self.job_id,
            batch_id: self.batch_id,
            attempt: 0,
            created_at: Utc::now(),
            deadline: self.deadline,
            body,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("envelopes always serialise")
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let header = Envelope::<()>::peek(bytes)?;
        let kind = header.kind.map(|k| k.as_str().to_owned());
        if header.kind != Some(B::KIND) {
            return Err(DecodeError::WrongKind {
                expected: B::KIND.as_str(),
                found: kind.unwrap_or_else(|| "(none)".into()),
            });
        }
        serde_json::from_str(utf8(bytes)?).map_err(|e| DecodeError::BadBody {
            kind: B::KIND.as_str(),
            reason: e.to_string(),
        })
    }
}

/// JSON is UTF-8 (RFC 8259). serde_json checks that only in the strings it keeps, so without
/// this a message with bad bytes in a field it skips would decode, yet [`with_attempt`] could
/// not rewrite it, and its retries would never count.
fn utf8(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|e| DecodeError::NotAnEnvelope(format!("not UTF-8: {e}")))
}

impl Envelope<()> {
    /// Reads and checks the header fields only.
    pub fn peek(bytes: &[u8]) -> Result<Header, DecodeError> {
        let header: Header = serde_json::from_str(utf8(bytes)?)
            .map_err(|e| DecodeError::NotAnEnvelope(e.to_string()))?;
        if header.v != SCHEMA_VERSION {
            return Err(DecodeError::UnknownVersion { found: header.v });
        }
        Ok(header)
    }
}

/// Raises the `attempt` field of an encoded envelope without decoding its body, so a retry keeps
/// every field a newer producer may have added.
///
/// Every field but `attempt` is kept as the bytes it came as, not parsed into values: `decode`
/// skips fields it does not know without reading them (a `"\udc00"` escape alone, say, which no
/// `serde_json::Value` holds), and whatever it accepted must take an attempt too, or the
/// message's retries would never count.
pub fn with_attempt(bytes: &[u8], attempt: u32) -> Option<Vec<u8>> {
    let mut fields: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(bytes).ok()?;
    let attempt = RawValue::from_string(attempt.to_string()).ok()?;
    fields.insert("attempt".into(), attempt);
    serde_json::to_vec(&fields).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{JobOptions, SearchTask};

    fn task() -> Envelope<SearchTask> {
        Envelope::new(
            Uuid::now_v7(),
            Uuid::now_v7(),
            Utc::now(),
            SearchTask::new("q".into(), JobOptions::default()),
        )
    }

    #[test]
    fn round_trips() {
        let env = task();
        let back = Envelope::<SearchTask>::decode(&env.encode()).unwrap();
        assert_eq!(back, env);
    }

    #[test]
    fn rejects_unknown_version_and_wrong_kind() {
        let mut value: serde_json::Value = serde_json::from_slice(&task().encode()).unwrap();
        value["v"] = 99.into();
        let err = Envelope::<SearchTask>::decode(value.to_string().as_bytes()).unwrap_err();
        assert!(
            matches!(err, DecodeError::UnknownVersion { found: 99 }),
            "{err}"
        );

        let err = Envelope::<crate::FetchTask>::decode(&task().encode()).unwrap_err();
        assert!(matches!(err, DecodeError::WrongKind { .. }), "{err}");
        assert!(err.to_string().contains("search_task"));
    }

    #[test]
    fn rejects_garbage_and_bad_bodies() {
        assert!(matches!(
            Envelope::<SearchTask>::decode(b"\xff not json").unwrap_err(),
            DecodeError::NotAnEnvelope(_)
        ));
        let mut value: serde_json::Value = serde_json::from_slice(&task().encode()).unwrap();
        value["body"] = serde_json::json!({"no_query": true});
        let err = Envelope::<SearchTask>::decode(value.to_string().as_bytes()).unwrap_err();
        assert!(matches!(err, DecodeError::BadBody { .. }), "{err}");
    }

    /// Found by fuzzing (fuzz/corpus/envelope/regress_bad_utf8_in_unknown_field): bad bytes in
    /// a field the body does not have decoded, but `with_attempt` refused the message, so the
    /// worker retried it unchanged, forever, at attempt 0.
    #[test]
    fn bytes_that_are_not_utf8_are_not_an_envelope_anywhere() {
        let mut bytes = task().encode();
        bytes.truncate(bytes.len() - 2);
        bytes.extend_from_slice(b",\"unknown\":\"\x86\"}}");
        assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_err());
        for err in [
            Envelope::<SearchTask>::decode(&bytes).unwrap_err(),
            Envelope::<()>::peek(&bytes).unwrap_err(),
        ] {
            assert!(matches!(err, DecodeError::NotAnEnvelope(_)), "{err}");
            assert!(err.to_string().contains("not UTF-8"), "{err}");
        }
    }

    /// Found by fuzzing (fuzz/corpus/envelope/regress_lone_surrogate_in_unknown_field): the
    /// message decoded (the unknown field is skipped unread) but `with_attempt` parsed every
    /// field and refused it, so its retries never counted.
    #[test]
    fn with_attempt_takes_whatever_decodes() {
        let mut bytes = task().encode();
        bytes.truncate(bytes.len() - 2);
        bytes.extend_from_slice(br#","unknown":{"\udccc":["\ud800"]}}}"#);
        let env = Envelope::<SearchTask>::decode(&bytes).unwrap();
        let bumped = with_attempt(&bytes, 4).expect("a decodable message takes an attempt");
        let back = Envelope::<SearchTask>::decode(&bumped).unwrap();
        assert_eq!(back, Envelope { attempt: 4, ..env });
        assert!(String::from_utf8(bumped)
            .unwrap()
            .contains(r#"{"\udccc":["\ud800"]}"#));
    }

    /// serde reads a struct from a JSON array too, by position; an envelope written so must
    /// not decode, since `with_attempt` (a map of fields) could not count its retries.
    #[test]
    fn an_envelope_as_an_array_does_not_decode() {
        let value: serde_json::Value = serde_json::from_slice(&task().encode()).unwrap();
        let fields: Vec<serde_json::Value> = value.as_object().unwrap().values().cloned().collect();
        let bytes = serde_json::to_vec(&fields).unwrap();
        assert!(Envelope::<SearchTask>::decode(&bytes).is_err());
        assert!(with_attempt(&bytes, 1).is_none());
    }

    #[test]
    fn with_attempt_keeps_unknown_fields() {
        let mut value: serde_json::Value = serde_json::from_slice(&task().encode()).unwrap();
        value["future_field"] = "kept".into();
        let bumped = with_attempt(value.to_string().as_bytes(), 3).unwrap();
        let back: serde_json::Value = serde_json::from_slice(&bumped).unwrap();
        assert_eq!(back["attempt"], 3);
        assert_eq!(back["future_field"], "kept");
    }

    /// Found by fuzzing (fuzz/corpus/envelope/regress_float_not_exact): `10e-31` decoded to the
    /// f64 nearest 1e-30, which encodes as `1e-30`, which serde_json's fast float parser read
    /// one ulp lower, so a score changed on its way through a queue. serde_json's
    /// `float_roundtrip` makes every float parse exact.
    #[test]
    fn floats_survive_encode_and_decode_exactly() {
        let bytes = include_bytes!("../../../fuzz/corpus/envelope/regress_float_not_exact");
        let env = Envelope::<crate::FetchedDoc>::decode(bytes).unwrap();
        assert_eq!(env.body.source.score, 1e-30);
        let again = Envelope::<crate::FetchedDoc>::decode(&env.encode()).unwrap();
        assert_eq!(again, env);
    }
}

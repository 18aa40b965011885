//! Envelope decoding of every body the queues carry, from arbitrary bytes.
//!
//! What must hold (docs/design.md, Messages): decoding never panics, whatever arrives; a message
//! that decodes re-encodes to bytes that decode to the same value; the header `peek` reads
//! agrees with the full decode; and a retry (`with_attempt`, which the worker republishes
//! without decoding the body) decodes to the same message with only the attempt changed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trawl_messages::envelope::{with_attempt, Body};
use trawl_messages::{Envelope, FetchTask, FetchedDoc, ResearchResult, SearchTask, SynthesizeTask};

fuzz_target!(|data: &[u8]| {
    let header = Envelope::<()>::peek(data);
    let decoded = [
        check::<SearchTask>(data),
        check::<FetchTask>(data),
        check::<FetchedDoc>(data),
        check::<SynthesizeTask>(data),
        check::<ResearchResult>(data),
    ];
    // One kind per message: at most one body type accepts it, and only if the header did.
    let accepted = decoded.iter().filter(|&&ok| ok).count();
    assert!(accepted <= 1, "one message decoded as {accepted} kinds");
    if accepted == 1 {
        assert!(header.is_ok(), "decoded but its header did not: {header:?}");
    }
});

/// Decodes `data` as an envelope of `B` and checks what follows from success; true if it
/// decoded.
fn check<B: Body + Clone + PartialEq + std::fmt::Debug>(data: &[u8]) -> bool {
    let Ok(env) = Envelope::<B>::decode(data) else {
        return false;
    };
    let header = Envelope::<()>::peek(data).expect("a decoded envelope's header peeks");
    assert_eq!(header.kind, Some(env.kind));
    assert_eq!(header.job_id, Some(env.job_id));
    assert_eq!(header.batch_id, Some(env.batch_id));
    assert_eq!(header.attempt, env.attempt);

    let encoded = env.encode();
    let again = Envelope::<B>::decode(&encoded).expect("a re-encoded envelope decodes");
    assert_eq!(again, env, "decode(encode(x)) != x");
    assert_eq!(again.encode(), encoded, "encoding is not stable");

    let attempt = env.attempt.wrapping_add(1);
    let retried = with_attempt(data, attempt).expect("a decoded envelope takes an attempt");
    let retried = Envelope::<B>::decode(&retried).expect("a retried envelope decodes");
    assert_eq!(
        retried,
        Envelope { attempt, ..env },
        "a retry changed more than the attempt"
    );
    true
}

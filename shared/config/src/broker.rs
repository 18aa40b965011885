//! `[broker]`: the message broker, and how much work a worker takes from it at once.

use serde::{Deserialize, Serialize};

use crate::check;

/// The largest `broker.max_waiting`: RabbitMQ gives each of a worker's consumers at most
/// `prefetch` messages, so a window is that many consumers on one channel.
pub const MAX_WAITING: u32 = 8192;

/// The smallest `broker.max_in_flight_bytes`: below it a worker could hold no ordinary page.
pub const MIN_IN_FLIGHT_BYTES: u64 = 1 << 20;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BrokerConfig {
    /// AMQP URL; absent means the embedded in-memory broker.
    pub url: Option<String>,
    /// Prefix of every queue name (`trawl.search` …); tests use a unique one.
    pub namespace: String,
    /// Messages a worker handles at once while they use its core, and the broker's window over
    /// them: the window grows by this step for messages waiting on outside calls (a model's
    /// answer, a search provider, a web host, a rate limit), up to `max_waiting` more, so with a
    /// slow LLM a worker keeps hundreds of messages waiting while its CPU stays busy, and with a
    /// fast one it holds about this many. A worker killed loses nothing: what it held goes back
    /// to the queue, each message one delivery nearer `delivery_limit`.
    pub prefetch: u16,
    /// Most messages a worker lets wait on outside calls on top of `prefetch`; all of them stay
    /// within `max_in_flight_bytes`. 0 keeps the window at `prefetch`.
    pub max_waiting: u32,
    /// Most bytes a worker's messages in flight may hold together: each message's estimate
    /// (its stage's footprint: a page being extracted holds several times its size) is reserved
    /// before it is handled, and a message that does not fit waits, unacknowledged. Keep it
    /// well below the worker's memory limit.
    pub max_in_flight_bytes: u64,
    /// Attempts (first try included) before a failing message goes to the dead-letter queue.
    pub max_attempts: u32,
    /// Delay tiers for retries, in seconds, one per retry; the last repeats.
    pub retry_delays_secs: Vec<u64>,
    /// Extra, shorter delay tiers in milliseconds for work deferred rather than failed (a host
    /// whose rate limit has no slot yet): a deferral waits for the longest tier within its delay
    /// and checks again.
    pub defer_delays_ms: Vec<u64>,
    /// Redeliveries (crashed workers, requeues) RabbitMQ allows before dead-lettering a message.
    /// Set explicitly because RabbitMQ 3.x quorum queues have no default limit. 20, RabbitMQ
    /// 4's default: a killed worker gives back every message it held, most of them waiting and
    /// never the cause, and with hundreds held a message can be a bystander to several kills.
    pub delivery_limit: u32,
    /// How long a worker may take to finish in-flight work after SIGTERM.
    pub shutdown_grace_secs: u64,
    /// The most one message may take before its worker abandons it and retries it later. Must
    /// stay below `consumer_timeout_secs`, so a hung handler never holds a delivery until the
    /// broker closes the channel.
    pub message_timeout_secs: u64,
    /// The broker's consumer timeout, in seconds: RabbitMQ's `consumer_timeout` (rabbitmq.conf,
    /// in milliseconds there; 30 min by default). RabbitMQ closes a channel that holds a delivery
    /// unacknowledged for longer, and every delivery in flight on it goes back to the queue.
    /// trawl cannot read it from the broker: set it when the broker's differs from the default,
    /// so validation keeps `message_timeout_secs` below it. Leave a margin of a minute or so:
    /// settling a message after its handler (the job-status read, the retry publish) comes on
    /// top and can take tens of seconds while Redis or RabbitMQ struggle.
    pub consumer_timeout_secs: u64,
    /// Publish a `ResearchResult` to `trawl.results` for each ended job. Off by default: the
    /// batch record and the object store are the record of results, and a queue nobody
    /// consumes would grow until RabbitMQ's memory alarm blocks every publisher.
    pub results_queue: bool,
    /// Bounds of `trawl.results`, whether or not anything is published to it: past
    /// `results_max_length` messages the oldest are dropped, and a message older than
    /// `results_ttl_secs` is dropped unread.
    pub results_max_length: u32,
    pub results_ttl_secs: u64,
    /// Most bytes of search tasks one batch may put into the queues; a larger submission is
    /// refused with what to change.
    pub max_batch_bytes: u64,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            url: None,
            namespace: "trawl".into(),
            prefetch: 8,
            max_waiting: 512,
            max_in_flight_bytes: 256 * 1024 * 1024,
            max_attempts: 4,
            retry_delays_secs: vec![1, 5, 30],
            defer_delays_ms: vec![25, 50, 100, 250, 500],
            delivery_limit: 20,
            shutdown_grace_secs: 30,
            message_timeout_secs: 300,
            consumer_timeout_secs: 1800,
            results_queue: false,
            results_max_length: 10_000,
            results_ttl_secs: 24 * 3600,
            max_batch_bytes: 256 * 1024 * 1024,
        }
    }
}

impl BrokerConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::safe_name(problems, "broker.namespace", &self.namespace);
        check::at_least_one(problems, "broker.prefetch", self.prefetch);
        if self.max_waiting > MAX_WAITING {
            problems.push(format!(
                "broker.max_waiting must be at most {MAX_WAITING} (got {}); a worker that must hold more should be several workers",
                self.max_waiting
            ));
        }
        if self.max_in_flight_bytes < MIN_IN_FLIGHT_BYTES {
            problems.push(format!(
                "broker.max_in_flight_bytes must be at least {MIN_IN_FLIGHT_BYTES} (1 MiB; got {})",
                self.max_in_flight_bytes
            ));
        }
        check::at_least_one(problems, "broker.max_attempts", self.max_attempts);
        if self.retry_delays_secs.is_empty() || self.retry_delays_secs.contains(&0) {
            problems.push("broker.retry_delays_secs must list delays of at least 1 second".into());
        }
        check::at_least_one(
            problems,
            "broker.message_timeout_secs",
            self.message_timeout_secs,
        );
        if self.message_timeout_secs >= self.consumer_timeout_secs {
            problems.push(format!(
                "broker.message_timeout_secs ({}) must be below broker.consumer_timeout_secs ({}), \
                 the broker's consumer_timeout: past it RabbitMQ closes the worker's channel and \
                 redelivers everything in flight on it (raise consumer_timeout in rabbitmq.conf \
                 and set broker.consumer_timeout_secs to match, or lower the message timeout)",
                self.message_timeout_secs, self.consumer_timeout_secs
            ));
        }
        if self.defer_delays_ms.contains(&0) {
            problems.push("broker.defer_delays_ms must list delays of at least 1 ms".into());
        }
        if self.results_max_length == 0 || self.results_ttl_secs == 0 {
            problems.push(
                "broker.results_max_length and broker.results_ttl_secs must be at least 1".into(),
            );
        }
        check::at_least_one(problems, "broker.delivery_limit", self.delivery_limit);
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::env;
    use crate::Config;

    #[test]
    fn message_timeout_must_stay_below_the_consumer_timeout() {
        let err = Config::load(
            None,
            &env(&[("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS", "1800")]),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("broker.consumer_timeout_secs (1800)"),
            "{err}"
        );
        let c = Config::load(
            None,
            &env(&[
                ("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS", "1800"),
                ("TRAWL__BROKER__CONSUMER_TIMEOUT_SECS", "3600"),
            ]),
        )
        .unwrap();
        assert_eq!(c.broker.message_timeout_secs, 1800);
    }
}

//! Stage errors, classified once: the class alone decides whether a message is retried through
//! a delay tier or dead-lettered.

use trawl_broker::BrokerError;
use trawl_store::{ObjectError, StoreError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// Might succeed later (a service unreachable, a timeout): retry after a delay.
    Retryable,
    /// Will fail the same way every time (bad input): dead-letter now.
    Permanent,
    /// A service the stage needs is down (the store unreachable): retried at the longest delay
    /// for as long as the outage lasts, without spending the message's attempts, so an outage
    /// longer than the retry schedule dead-letters nothing.
    Unavailable,
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct StageError {
    pub class: ErrorClass,
    pub message: String,
    /// What failed, for the retries metric: `broker`, `store`, `objects`, `timeout` or `stage`.
    pub origin: &'static str,
}

impl StageError {
    pub fn retryable(message: impl Into<String>) -> Self {
        StageError {
            class: ErrorClass::Retryable,
            message: message.into(),
            origin: "stage",
        }
    }

    pub fn permanent(message: impl Into<String>) -> Self {
        StageError {
            class: ErrorClass::Permanent,
            message: message.into(),
            origin: "stage",
        }
    }

    pub(crate) fn with_origin(mut self, origin: &'static str) -> Self {
        self.origin = origin;
        self
    }
}

impl From<BrokerError> for StageError {
    fn from(e: BrokerError) -> Self {
        StageError::retryable(e.to_string()).with_origin("broker")
    }
}

impl From<StoreError> for StageError {
    fn from(e: StoreError) -> Self {
        let class = match e {
            StoreError::Unreachable { .. } => ErrorClass::Unavailable,
            StoreError::Backend(_) => ErrorClass::Retryable,
        };
        StageError {
            class,
            message: e.to_string(),
            origin: "store",
        }
    }
}

impl From<ObjectError> for StageError {
    fn from(e: ObjectError) -> Self {
        match e {
            ObjectError::BadKey(_) | ObjectError::Config { .. } => {
                StageError::permanent(e.to_string())
            }
            ObjectError::Failed { .. } => {
                StageError::retryable(e.to_string()).with_origin("objects")
            }
            // Whatever the store answered after its bounded retries (down, a missing bucket,
            // refused credentials) will not change with this message: an outage.
            ObjectError::Unavailable { .. } => StageError {
                class: ErrorClass::Unavailable,
                message: e.to_string(),
                origin: "objects",
            },
        }
    }
}

/// An error with its causes ("error sending request: tcp connect error: connection refused"):
/// the innermost cause is usually what tells a user which setting to fix.
pub fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

//! Per-token quotas, counted in the store so every replica enforces the same ones:
//!
//! - `api.questions_per_day`: questions submitted per UTC day. A batch is taken whole or
//!   refused whole, and a submission that fails after taking its share gives it back.
//! - `api.open_batches`: batches with jobs not yet ended. Each open batch holds a slot named
//!   after its token; the slots of ended batches are freed when a submission finds every slot
//!   taken, and a slot frees itself after `store.job_ttl_secs` whatever happens to its batch.
//!
//! Either refusal is a 429 `quota_exceeded` that says which quota, how much is used and what
//! to do.

use std::time::Duration;

use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use trawl_store::Store;
use uuid::Uuid;

use crate::error::ApiError;
use crate::AppState;

/// What a submission took, to give back if it fails.
pub struct Taken {
    questions: Option<(String, i64)>,
    slot: Option<(String, String)>,
}

fn day_key(token: &str, now: DateTime<Utc>) -> String {
    format!("quota:questions:{token}:{}", now.format("%Y-%m-%d"))
}

/// Seconds from `now` to the next 00:00 UTC, when the daily quota starts again.
fn secs_to_midnight(now: DateTime<Utc>) -> u64 {
    let tomorrow = (now.date_naive() + chrono::Days::new(1))
        .and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc();
    (tomorrow - now).num_seconds().max(1) as u64
}

fn exceeded(message: String, retry_after: Option<u64>) -> ApiError {
    let mut e = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "quota_exceeded", message);
    e.retry_after = retry_after;
    e
}

/// Takes `questions` from the token's daily quota and a slot for `batch` among its open
/// batches, or refuses with what to do.
pub async fn take(
    state: &AppState,
    token: &str,
    batch: Uuid,
    questions: usize,
) -> Result<Taken, ApiError> {
    let api = &state.config.api;
    let store = &*state.rt.store;
    let mut taken = Taken {
        questions: None,
        slot: None,
    };
    if api.questions_per_day > 0 {
        let now = Utc::now();
        let key = day_key(token, now);
        let n = questions as i64;
        // Two days, so the key outlives its day whatever the clocks of the replicas say.
        let window = Duration::from_secs(2 * 24 * 3600);
        match store
            .window_add(&key, n, api.questions_per_day, window)
            .await?
        {
            Some(_) => taken.questions = Some((key, n)),
            None => {
                let used = store
                    .window_add(&key, 0, api.questions_per_day, window)
                    .await?;
                return Err(exceeded(
                    format!(
                        "this token may submit {} questions per UTC day (api.questions_per_day) and has submitted {} today; this batch has {questions}: submit a smaller batch, wait until 00:00 UTC, or ask the operator to raise the quota",
                        api.questions_per_day,
                        used.unwrap_or(0),
                    ),
                    Some(secs_to_midnight(now)),
                ));
            }
        }
    }
    if api.open_batches > 0 {
        let name = format!("quota:open-batches:{token}");
        let lease = Duration::from_secs(state.config.store.job_ttl_secs);
        let limit = u32::try_from(api.open_batches).unwrap_or(u32::MAX);
        let batch = batch.to_string();
        // The slots of ended batches are looked for only when every slot is taken.
        let mut acquired = store.slot_acquire(&name, &batch, limit, lease).await?;
        if !acquired && free_ended(store, &name).await? {
            acquired = store.slot_acquire(&name, &batch, limit, lease).await?;
        }
        if acquired {
            taken.slot = Some((name, batch));
        } else {
            give_back(store, taken).await;
            return Err(exceeded(
                format!(
                    "this token has {} batches with jobs not yet ended (api.open_batches): wait for one to finish, or cancel one with DELETE /v1/batches/{{id}}",
                    api.open_batches
                ),
                None,
            ));
        }
    }
    Ok(taken)
}

/// Frees the slots of the token's batches that have ended (or been cancelled); true if any
/// was freed. A slot whose batch has no record yet belongs to a submission in progress.
async fn free_ended(store: &dyn Store, name: &str) -> Result<bool, ApiError> {
    let mut freed = false;
    for batch in store.slot_holders(name).await? {
        let ended = (store.batch_progress(&batch).await?).is_some_and(|p| p.is_done());
        if ended {
            store.slot_release(name, &batch).await?;
            freed = true;
        }
    }
    Ok(freed)
}

/// Gives back what a submission that failed took (best effort: a slot left behind frees
/// itself when its lease runs out).
pub async fn give_back(store: &dyn Store, taken: Taken) {
    if let Some((key, n)) = taken.questions {
        let _ = store.window_add(&key, -n, 0, Duration::from_secs(1)).await;
    }
    if let Some((name, batch)) = taken.slot {
        let _ = store.slot_release(&name, &batch).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_day_starts_at_midnight_utc() {
        let now: DateTime<Utc> = "2026-11-26T23:59:30Z".parse().unwrap();
        assert_eq!(secs_to_midnight(now), 30);
        assert_eq!(day_key("t1", now), "quota:questions:t1:2026-11-26");
        let start: DateTime<Utc> = "2026-11-27T00:00:00Z".parse().unwrap();
        assert_eq!(secs_to_midnight(start), 86_400);
    }
}

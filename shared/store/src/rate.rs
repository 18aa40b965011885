//! Rate limits shared by every process: a slot's turns one `interval` apart (booked ahead or
//! queued for), concurrent slots with leases, a host's requests spaced from the last one's end,
//! and fixed windows.

use std::time::Duration;

use async_trait::async_trait;

use crate::StoreError;

/// A caller's turn at a rate-limited slot ([`Rates::rate_reserve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Booked: go after this long (zero: now).
    Reserved(Duration),
    /// Not booked: the next free slot is this far off, beyond what the caller would wait.
    Busy(Duration),
}

/// Where a request to a host stands when it is about to be sent ([`Rates::host_enter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// One of the host's slots is the caller's: send after this long (zero: now), without
    /// asking again.
    Go(Duration),
    /// Every slot is taken.
    Full,
    /// A slot is free, but the host's interval ends this far off, beyond what the caller
    /// would wait: nothing taken.
    Later(Duration),
}

#[async_trait]
pub trait Rates: Send + Sync {
    /// Generic cell rate algorithm with a burst of one, shared by every process: returns
    /// `Duration::ZERO` and takes the slot when a request to `host` may go now, or how long to
    /// wait (taking nothing). Time is the store's clock, so workers' clocks need not agree.
    async fn rate_acquire(&self, host: &str, interval: Duration) -> Result<Duration, StoreError> {
        Ok(
            match self.rate_reserve(host, interval, Duration::ZERO).await? {
                Turn::Reserved(_) => Duration::ZERO,
                Turn::Busy(wait) => wait,
            },
        )
    }

    /// The same limiter, booking ahead: when `host`'s next free slot comes within `within`,
    /// takes that slot and says how long until it ([`Turn::Reserved`]; the caller waits that
    /// long, then goes, without asking again); otherwise takes nothing ([`Turn::Busy`]). Each
    /// booking moves the next free slot one `interval` on, so callers are spaced however many
    /// book at once, and none polls.
    async fn rate_reserve(
        &self,
        host: &str,
        interval: Duration,
        within: Duration,
    ) -> Result<Turn, StoreError>;

    /// The same limiter for callers that wait however long it takes: takes the turn when
    /// `host`'s slot is free now (zero); otherwise a place in its line, `interval` behind the
    /// last place taken, and says how long until it. The caller sleeps that long, then takes
    /// the turn with [`Rates::rate_acquire`]. Waiters so wake one by one instead of all at the
    /// slot's next free time, where all but one would find it taken and ask again; and since
    /// the turn itself is taken at the send, one that wakes late never goes closer to the next
    /// than `interval`.
    async fn rate_queue(&self, host: &str, interval: Duration) -> Result<Duration, StoreError>;

    /// Counts one event in `name`'s current window of `window` (which starts with its first
    /// event) and returns the count so far: a fixed-window limit that allows bursts, shared by
    /// every process (the API's per-token rate limit).
    async fn window_count(&self, name: &str, window: Duration) -> Result<u64, StoreError>;

    /// Adds `amount` to `name`'s count in its current window of `window` (which starts with
    /// its first addition) if the count stays within `limit`: returns the new count, or `None`
    /// and adds nothing. A negative `amount` (giving back what a failed request took) always
    /// applies. The API's per-token quotas, shared by every replica.
    async fn window_add(
        &self,
        name: &str,
        amount: i64,
        limit: u64,
        window: Duration,
    ) -> Result<Option<u64>, StoreError>;

    /// Pushes `host`'s next free slot at least `delay` into the future (a Retry-After).
    async fn rate_hold(&self, host: &str, delay: Duration) -> Result<(), StoreError>;

    /// Takes one of `limit` concurrent slots named `name` under `token` for at most `lease`
    /// (a crashed holder's slot frees itself). False when all are taken.
    async fn slot_acquire(
        &self,
        name: &str,
        token: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool, StoreError>;
    async fn slot_release(&self, name: &str, token: &str) -> Result<(), StoreError>;
    /// The tokens holding a slot of `name` whose lease has not run out, sorted.
    async fn slot_holders(&self, name: &str) -> Result<Vec<String>, StoreError>;

    /// Takes one of `host`'s `limit` slots for the request `token` (for at most `lease`) when
    /// the request may be sent within `within`: `interval` after the host's last contact, the
    /// later of the last request's send and the last one's end ([`Rates::host_leave`]). With
    /// one slot a host sees its requests at least `interval` apart whatever delays them on the
    /// way: the next is sent only after the previous one's answer came back. The slots are
    /// those of [`Rates::slot_acquire`] named `host:<host>`.
    async fn host_enter(
        &self,
        host: &str,
        token: &str,
        limit: u32,
        lease: Duration,
        interval: Duration,
        within: Duration,
    ) -> Result<Entry, StoreError>;
    /// Ends `token`'s request to `host`: frees its slot, makes now the host's last contact,
    /// and moves the host's next free turn ([`Rates::rate_reserve`]) to at least `interval`
    /// from now, so turns booked from here on need not wait again at the send.
    async fn host_leave(
        &self,
        host: &str,
        token: &str,
        interval: Duration,
    ) -> Result<(), StoreError>;
}

//! Rate limits: a slot's next free turn and the end of its line, slot holders with their
//! leases, when each host may next be sent a request, and fixed windows.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::MemoryStore;
use crate::{Entry, Rates, StoreError, Turn};

#[derive(Default)]
pub(super) struct State {
    rate: HashMap<String, Instant>,
    /// Slot holders per name: token and lease expiry.
    slots: HashMap<String, HashMap<String, Instant>>,
    /// Per rate-limited slot: where the line of its waiters ends ([`Rates::rate_queue`]).
    lines: HashMap<String, Instant>,
    /// Per host: when it may next be sent a request ([`Rates::host_enter`]).
    sent: HashMap<String, Instant>,
    /// Fixed windows: end of the current window and its count.
    windows: HashMap<String, (Instant, u64)>,
}

impl State {
    /// The count of `name`'s current window of `window`, which starts with its first use.
    fn window(&mut self, name: &str, window: Duration) -> &mut u64 {
        let now = Instant::now();
        let entry = (self.windows)
            .entry(name.to_owned())
            .or_insert((now + window, 0));
        if entry.0 <= now {
            *entry = (now + window, 0);
        }
        &mut entry.1
    }
}

impl MemoryStore {
    fn rates<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, StoreError> {
        self.with(|s| f(&mut s.rates))
    }
}

#[async_trait]
impl Rates for MemoryStore {
    async fn rate_reserve(
        &self,
        host: &str,
        interval: Duration,
        within: Duration,
    ) -> Result<Turn, StoreError> {
        self.rates(|s| {
            let now = Instant::now();
            let tat = s.rate.get(host).copied().unwrap_or(now).max(now);
            let wait = tat - now;
            if wait > within {
                Turn::Busy(wait)
            } else {
                s.rate.insert(host.to_owned(), tat + interval);
                Turn::Reserved(wait)
            }
        })
    }

    async fn rate_queue(&self, host: &str, interval: Duration) -> Result<Duration, StoreError> {
        self.rates(|s| {
            let now = Instant::now();
            let tat = s.rate.get(host).copied().unwrap_or(now).max(now);
            if tat == now {
                s.rate.insert(host.to_owned(), now + interval);
                return Duration::ZERO;
            }
            let place = s.lines.get(host).copied().unwrap_or(tat).max(tat);
            s.lines.insert(host.to_owned(), place + interval);
            place - now
        })
    }

    async fn rate_hold(&self, host: &str, delay: Duration) -> Result<(), StoreError> {
        self.rates(|s| {
            let until = Instant::now() + delay;
            let tat = s.rate.entry(host.to_owned()).or_insert(until);
            *tat = (*tat).max(until);
        })
    }

    async fn slot_acquire(
        &self,
        name: &str,
        token: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        self.rates(|s| {
            let now = Instant::now();
            let holders = s.slots.entry(name.to_owned()).or_default();
            holders.retain(|_, until| *until > now);
            if !holders.contains_key(token) && holders.len() >= limit as usize {
                return false;
            }
            holders.insert(token.to_owned(), now + lease);
            true
        })
    }

    async fn slot_release(&self, name: &str, token: &str) -> Result<(), StoreError> {
        self.rates(|s| {
            if let Some(holders) = s.slots.get_mut(name) {
                holders.remove(token);
            }
        })
    }

    async fn slot_holders(&self, name: &str) -> Result<Vec<String>, StoreError> {
        self.rates(|s| {
            let now = Instant::now();
            let mut holders: Vec<String> = (s.slots.get(name).into_iter())
                .flat_map(|h| h.iter())
                .filter(|(_, until)| **until > now)
                .map(|(token, _)| token.clone())
                .collect();
            holders.sort();
            holders
        })
    }

    async fn host_enter(
        &self,
        host: &str,
        token: &str,
        limit: u32,
        lease: Duration,
        interval: Duration,
        within: Duration,
    ) -> Result<Entry, StoreError> {
        self.rates(|s| {
            let now = Instant::now();
            let holders = s.slots.entry(format!("host:{host}")).or_default();
            holders.retain(|_, until| *until > now);
            if !holders.contains_key(token) && holders.len() >= limit as usize {
                return Entry::Full;
            }
            let go = s.sent.get(host).copied().unwrap_or(now).max(now);
            let wait = go - now;
            if wait > within {
                return Entry::Later(wait);
            }
            holders.insert(token.to_owned(), go + lease);
            s.sent.insert(host.to_owned(), go + interval);
            Entry::Go(wait)
        })
    }

    async fn host_leave(
        &self,
        host: &str,
        token: &str,
        interval: Duration,
    ) -> Result<(), StoreError> {
        self.rates(|s| {
            if let Some(holders) = s.slots.get_mut(&format!("host:{host}")) {
                holders.remove(token);
            }
            let next = Instant::now() + interval;
            for times in [&mut s.sent, &mut s.rate] {
                let at = times.entry(host.to_owned()).or_insert(next);
                *at = (*at).max(next);
            }
        })
    }

    async fn window_count(&self, name: &str, window: Duration) -> Result<u64, StoreError> {
        self.rates(|s| {
            let count = s.window(name, window);
            *count += 1;
            *count
        })
    }

    async fn window_add(
        &self,
        name: &str,
        amount: i64,
        limit: u64,
        window: Duration,
    ) -> Result<Option<u64>, StoreError> {
        self.rates(|s| {
            let count = s.window(name, window);
            if amount > 0 && *count + amount.unsigned_abs() > limit {
                return None;
            }
            *count = count.saturating_add_signed(amount);
            Some(*count)
        })
    }
}

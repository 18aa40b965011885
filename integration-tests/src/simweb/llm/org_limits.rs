//! An organisation's per-minute limits as OpenAI and Anthropic keep them: requests and tokens
//! answered in the last 60 s, a request's tokens counted before it is answered as OpenAI's
//! rate limiter counts them (its prompt's characters over four, plus the answer allowance it
//! asks for), and past either limit a 429 saying when enough of the window frees.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

/// Which limit refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Requests,
    Tokens,
}

/// A request refused: the limit it would pass, and the whole seconds (at least 1) until the
/// window has room for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub kind: Kind,
    pub retry_after: u64,
}

/// The requests answered in the last minute, with the tokens each was counted at.
#[derive(Debug, Default)]
pub struct Window {
    answered: VecDeque<(Instant, u64)>,
    tokens: u64,
}

impl Window {
    /// Takes a place for a request of `tokens` at `now` under `requests` and `tokens` per
    /// minute (`None`: no such limit), or says which limit refuses it and for how long. A
    /// request larger than the whole token limit is let through on an empty window, so it is
    /// answered at the rate the limit allows rather than never.
    pub fn admit(
        &mut self,
        now: Instant,
        tokens: u64,
        requests_limit: Option<u32>,
        tokens_limit: Option<u64>,
    ) -> Result<(), Refusal> {
        while let Some(&(at, n)) = self.answered.front() {
            if now.duration_since(at) < MINUTE {
                break;
            }
            self.answered.pop_front();
            self.tokens -= n;
        }
        if let Some(limit) = requests_limit {
            if self.answered.len() >= limit as usize {
                // The oldest leaving makes room for one more.
                let oldest = self.answered[self.answered.len() - limit as usize].0;
                return Err(self.refusal(Kind::Requests, now, oldest));
            }
        }
        if let Some(limit) = tokens_limit {
            if self.tokens + tokens > limit && !self.answered.is_empty() {
                // The earliest moment enough has left for this request to fit.
                let mut left = self.tokens;
                let mut frees = self.answered[0].0;
                for &(at, n) in &self.answered {
                    frees = at;
                    left -= n;
                    if left + tokens <= limit {
                        break;
                    }
                }
                return Err(self.refusal(Kind::Tokens, now, frees));
            }
        }
        self.answered.push_back((now, tokens));
        self.tokens += tokens;
        Ok(())
    }

    fn refusal(&self, kind: Kind, now: Instant, leaves_at: Instant) -> Refusal {
        let wait = MINUTE.saturating_sub(now.duration_since(leaves_at));
        Refusal {
            kind,
            retry_after: wait.as_secs_f64().ceil().max(1.0) as u64,
        }
    }
}

/// The tokens an LLM request body counts for a per-minute limit, as OpenAI's limiter counts
/// them before answering: the characters of its prompt (messages, system, embedding input)
/// over four, rounded up, plus the answer allowance it asks for (`max_completion_tokens` or
/// `max_tokens`).
pub fn counted_tokens(body: &Value) -> u64 {
    fn chars(v: &Value) -> u64 {
        match v {
            Value::String(s) => s.chars().count() as u64,
            Value::Array(items) => items.iter().map(chars).sum(),
            Value::Object(fields) => fields.values().map(chars).sum(),
            _ => 0,
        }
    }
    let prompt: u64 = ["messages", "system", "input"]
        .iter()
        .filter_map(|k| body.get(k))
        .map(chars)
        .sum();
    let allowance = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| body.get(k).and_then(Value::as_u64))
        .unwrap_or(0);
    prompt.div_ceil(4) + allowance
}

/// The most tokens answered within any `span` of `log` (arrival, tokens; in arrival order),
/// and the largest single request: what a per-span limit must have held.
pub fn peak(log: &[(Instant, u64)], span: Duration) -> (u64, u64) {
    let (mut most, mut sum, mut start) = (0, 0, 0);
    for &(at, n) in log {
        sum += n;
        while at.duration_since(log[start].0) >= span {
            sum -= log[start].1;
            start += 1;
        }
        most = most.max(sum);
    }
    let largest = log.iter().map(|&(_, n)| n).max().unwrap_or(0);
    (most, largest)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_past_the_limit_wait_for_the_oldest_to_leave() {
        let mut window = Window::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        for k in 0..3 {
            assert_eq!(window.admit(at(k * 1000), 1, Some(3), None), Ok(()));
        }
        let refused = window.admit(at(10_500), 1, Some(3), None);
        assert_eq!(
            refused,
            Err(Refusal {
                kind: Kind::Requests,
                retry_after: 50
            })
        );
        assert_eq!(
            window
                .admit(at(59_800), 1, Some(3), None)
                .map_err(|r| r.retry_after),
            Err(1)
        );
        assert_eq!(window.admit(at(60_000), 1, Some(3), None), Ok(()));
        assert!(window.admit(at(60_000), 1, Some(3), None).is_err());
    }

    #[test]
    fn tokens_past_the_limit_wait_until_enough_has_left() {
        let mut window = Window::default();
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        assert_eq!(window.admit(at(0), 400, None, Some(1000)), Ok(()));
        assert_eq!(window.admit(at(10), 400, None, Some(1000)), Ok(()));
        // 800 used: 300 more must wait for both to leave (the first alone leaves 400 + 300 ≤
        // 1000, so at 60 s).
        let refused = window.admit(at(20), 300, None, Some(1000));
        assert_eq!(
            refused,
            Err(Refusal {
                kind: Kind::Tokens,
                retry_after: 40
            })
        );
        // 700 must wait for both: the second leaves at 70 s.
        assert_eq!(
            window
                .admit(at(20), 700, None, Some(1000))
                .map_err(|r| r.retry_after),
            Err(50)
        );
        assert_eq!(window.admit(at(20), 200, None, Some(1000)), Ok(()));
        // A request over the whole limit passes only on an empty window.
        assert!(window.admit(at(30), 5000, None, Some(1000)).is_err());
        assert_eq!(window.admit(at(200), 5000, None, Some(1000)), Ok(()));
    }

    #[test]
    fn tokens_are_counted_from_the_prompt_and_the_allowance() {
        let openai = json!({"model": "m", "max_completion_tokens": 100,
            "messages": [{"role": "system", "content": "12345678"},
                         {"role": "user", "content": [{"type": "text", "text": "abcd"}]}]});
        // "system" + "12345678" + "user" + "text" + "abcd" = 6 + 8 + 4 + 4 + 4 = 26 chars → 7.
        assert_eq!(counted_tokens(&openai), 7 + 100);
        let anthropic = json!({"model": "m", "max_tokens": 10, "system": "ééé",
            "messages": [{"role": "user", "content": "x"}]});
        // "ééé" + "user" + "x" = 8 chars → 2.
        assert_eq!(counted_tokens(&anthropic), 2 + 10);
        assert_eq!(counted_tokens(&json!({"input": ["abcd", "efgh"]})), 2);
        assert_eq!(counted_tokens(&Value::Null), 0);
    }

    #[test]
    fn the_peak_is_the_most_within_any_span() {
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        let log = [
            (at(0), 10),
            (at(30), 50),
            (at(59), 20),
            (at(60), 5),
            (at(100), 40),
        ];
        // [30, 90): 50 + 20 + 5 = 75 is the most; [0, 60) holds 80.
        assert_eq!(peak(&log, Duration::from_secs(60)), (80, 50));
        assert_eq!(peak(&[], Duration::from_secs(60)), (0, 0));
    }
}

//! The scripted model behind both chat APIs: picks the task from the system prompt, answers
//! it with [`super::tasks`], and applies the `simweb:*` markers found in the prompt.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use super::{clean_tasks, tasks};

/// Prefix of the system prompt's first line naming the task.
pub const TASK_PREFIX: &str = "trawl task:";
/// A later user message containing this asks the model to repair its previous answer.
pub const REPAIR_PHRASE: &str = "not valid JSON";
/// What a rambling model writes before its JSON (`simweb:ramble`), 16 words a time.
const RAMBLE: &str =
    "Let me think about this step by step, weighing what the result says against the question. ";
/// The `simweb:badjson` answer.
pub const PROSE: &str = "I think the answer is probably fine.";
/// How long `simweb:llm-slow` waits before answering.
pub const SLOW: Duration = Duration::from_secs(30);

/// One message, with its content flattened to text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    pub role: String,
    pub text: String,
}

/// A chat request reduced to what the script looks at.
#[derive(Debug, Clone, Default)]
pub struct Chat {
    pub system: String,
    pub messages: Vec<Msg>,
    /// OpenAI `response_format` of type `json_object` or `json_schema`.
    pub json_mode: bool,
    /// The answer's token allowance asked for.
    pub allowance: Option<u64>,
    /// How structured output was asked for: `json_schema`, `json_object` or `tool`.
    pub format: Option<&'static str>,
}

/// What the endpoint should do with a request; each API renders it in its own wire format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Reply(String),
    /// `simweb:llm-429`, first request for the prompt, or [`Trouble::RateLimited`]: 429 with
    /// `Retry-After: 1`.
    RateLimited,
    /// `simweb:llm-500`: 500.
    ServerError,
    /// `simweb:no-json-mode` with JSON mode requested: 400 on `response_format`.
    JsonModeUnsupported,
}

/// A model in trouble, for every request to it while set ([`set_trouble`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    /// Answers 200 with text that is neither the JSON asked for nor a cited report.
    Garbage,
    /// Answers 500 with the API's own server-error body.
    Failing,
    /// Answers the provider's 429 with `Retry-After: 1`: a rate-limit storm.
    RateLimited,
}

/// What [`Trouble::Garbage`] answers.
pub const GARBAGE: &str = "lorem ipsum ]]} <<< the the the {\"unterminated\": ";

/// Models in trouble, by name (process-wide, so the fleet's processes meet it through any
/// simweb of the test; tests give their model a name of its own).
static TROUBLE: LazyLock<Mutex<HashMap<String, Trouble>>> = LazyLock::new(Default::default);

/// Puts model `model` in `trouble` (or out of it, with `None`), whatever the prompt: an
/// outage of minutes, as tests of what the fleet does without its LLM need.
pub fn set_trouble(model: &str, trouble: Option<Trouble>) {
    let mut models = TROUBLE.lock().unwrap_or_else(|e| e.into_inner());
    match trouble {
        Some(t) => models.insert(model.to_owned(), t),
        None => models.remove(model),
    };
}

/// Requests seen per prompt hash, for `simweb:llm-429` (process-wide, so 429-once holds across
/// servers and APIs in one test binary; tests should use distinct prompts).
static SEEN_429: LazyLock<Mutex<HashMap<u64, u32>>> = LazyLock::new(Default::default);

/// Requests seen per prompt hash, for `simweb:llm-hang-once` (process-wide, like `SEEN_429`).
static SEEN_HANG: LazyLock<Mutex<HashMap<u64, u32>>> = LazyLock::new(Default::default);
/// Hung requests so far, and those still hanging (their client has not gone away).
static HANGS_STARTED: AtomicU64 = AtomicU64::new(0);
static HANGING: AtomicU64 = AtomicU64::new(0);

/// `simweb:llm-hang` and `simweb:llm-hang-once` requests of this process: (started, still
/// hanging). A hung request ends only when its client closes the connection.
pub fn hangs() -> (u64, u64) {
    (
        HANGS_STARTED.load(Ordering::SeqCst),
        HANGING.load(Ordering::SeqCst),
    )
}

/// Counts one hung request for as long as the server still holds it.
struct Hanging;

impl Hanging {
    fn start() -> Hanging {
        HANGS_STARTED.fetch_add(1, Ordering::SeqCst);
        HANGING.fetch_add(1, Ordering::SeqCst);
        Hanging
    }
}

impl Drop for Hanging {
    fn drop(&mut self) {
        HANGING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// FNV-1a, 64 bit.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Counts a request for `prompt`; true only for the first one in this process.
fn first_request(prompt: &str) -> bool {
    first_in(&SEEN_429, prompt)
}

fn first_in(seen: &Mutex<HashMap<u64, u32>>, prompt: &str) -> bool {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    let n = seen.entry(fnv1a(prompt.as_bytes())).or_insert(0);
    *n = n.saturating_add(1);
    *n == 1
}

impl Chat {
    /// The task named by the system prompt's first line (`trawl task: <task>`), if any.
    pub fn task(&self) -> Option<&str> {
        let first = self.system.lines().next()?.trim();
        first.strip_prefix(TASK_PREFIX).map(str::trim)
    }

    fn prompt_index(&self) -> Option<usize> {
        let users = || {
            self.messages
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, m)| m.role == "user")
        };
        users()
            .find(|(_, m)| !m.text.contains(REPAIR_PHRASE))
            .or_else(|| users().next())
            .map(|(i, _)| i)
    }

    /// The prompt: the last user message that is not a repair request (else the last user
    /// message, else "").
    pub fn prompt(&self) -> &str {
        self.prompt_index()
            .map(|i| self.messages[i].text.as_str())
            .unwrap_or("")
    }

    /// Whether a user message after the prompt asks for a repair (contains `not valid JSON`).
    pub fn repair_requested(&self) -> bool {
        self.prompt_index().is_some_and(|i| {
            self.messages[i + 1..]
                .iter()
                .any(|m| m.role == "user" && m.text.contains(REPAIR_PHRASE))
        })
    }

    /// The reply text, ignoring the HTTP-level markers.
    pub fn reply(&self) -> String {
        let prompt = self.prompt();
        let value = match self.task() {
            Some("query_analysis") => tasks::query_analysis(prompt),
            Some("relevance") => tasks::relevance(prompt),
            Some("select") => tasks::select(prompt),
            Some("follow_up") => tasks::follow_up(prompt),
            Some("judge") => clean_tasks::judge(prompt),
            Some("analysis") => clean_tasks::analysis(prompt, false),
            Some("analysis_news") => clean_tasks::analysis(prompt, true),
            Some("fields") => clean_tasks::fields(prompt),
            // Prose, not JSON: the JSON markers do not apply.
            Some("report") => return tasks::report(prompt),
            Some("clean") => return clean_tasks::clean(prompt),
            _ => {
                let head: String = prompt.chars().take(100).collect();
                return format!("SIMULATED: {head}");
            }
        };
        if prompt.contains("simweb:badjson-always")
            || (prompt.contains("simweb:badjson") && !self.repair_requested())
        {
            return PROSE.to_string();
        }
        let mut text = value.to_string();
        if prompt.contains("simweb:fenced") {
            text = format!("Here you go:\n```json\n{text}\n```\nHope it helps");
        }
        if prompt.contains("simweb:think") {
            text = format!("<think>reasoning about {{\"not\": \"this\"}}</think>{text}");
        }
        if prompt.contains("simweb:ramble") {
            // A small model thinking aloud before its answer: 640 words (simweb's tokens).
            text = format!("{}{text}", RAMBLE.repeat(40));
        }
        text
    }

    /// Model `model` in [`Trouble`] answers as that says. Otherwise applies the markers in order:
    /// `llm-hang` (never answers), `llm-hang-once` (the first request for the prompt never
    /// answers), `llm-500`, `llm-429` (first request only), `no-json-mode` (only with JSON
    /// mode), `llm-slow` (sleeps, then answers). A hung request stands for a model that
    /// accepted the call and went silent: only the client's own timeout, or dropping the
    /// call, ends it.
    pub async fn respond(&self, model: &str) -> Outcome {
        let trouble = (TROUBLE.lock().unwrap_or_else(|e| e.into_inner()).get(model)).copied();
        match trouble {
            Some(Trouble::Garbage) => return Outcome::Reply(GARBAGE.into()),
            Some(Trouble::Failing) => return Outcome::ServerError,
            Some(Trouble::RateLimited) => return Outcome::RateLimited,
            None => {}
        }
        let prompt = self.prompt();
        if prompt.contains("simweb:llm-hang")
            && (!prompt.contains("simweb:llm-hang-once") || first_in(&SEEN_HANG, prompt))
        {
            let _hanging = Hanging::start();
            std::future::pending::<()>().await;
        }
        if prompt.contains("simweb:llm-500") {
            return Outcome::ServerError;
        }
        if prompt.contains("simweb:llm-429") && first_request(prompt) {
            return Outcome::RateLimited;
        }
        if self.json_mode && prompt.contains("simweb:no-json-mode") {
            return Outcome::JsonModeUnsupported;
        }
        if prompt.contains("simweb:llm-slow") {
            tokio::time::sleep(SLOW).await;
        }
        Outcome::Reply(self.reply())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn chat(task: &str, user: &[&str]) -> Chat {
        let mut messages = Vec::new();
        for (i, u) in user.iter().enumerate() {
            if i > 0 {
                messages.push(Msg {
                    role: "assistant".into(),
                    text: PROSE.into(),
                });
            }
            messages.push(Msg {
                role: "user".into(),
                text: (*u).into(),
            });
        }
        Chat {
            system: format!("trawl task: {task}\nYou are a careful assistant."),
            messages,
            ..Chat::default()
        }
    }

    fn json(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    const PROMPT: &str = "Question: Who discovered Kelvar?";

    #[test]
    fn task_and_prompt() {
        let c = chat(
            "relevance",
            &[PROMPT, "That was not valid JSON. Answer again."],
        );
        assert_eq!(c.task(), Some("relevance"));
        assert_eq!(c.prompt(), PROMPT);
        assert!(c.repair_requested());
        assert!(!chat("relevance", &[PROMPT]).repair_requested());
        let none = Chat {
            system: "be brief".into(),
            ..chat("x", &["hi"])
        };
        assert_eq!(none.task(), None);
        assert_eq!(none.reply(), "SIMULATED: hi");
        assert_eq!(chat("summarise", &["hello"]).reply(), "SIMULATED: hello");
    }

    #[test]
    fn every_task_answers_json() {
        let qa = json(&chat("query_analysis", &[PROMPT]).reply());
        assert_eq!(qa["sub_queries"][0], "Who discovered Kelvar?");
        assert_eq!(qa["target_data_points"][0], "discoverer");
        let rel =
            "Question: Who discovered Kelvar?\nTitle: Kelvar\nURL: http://a.test/\nSnippet: s";
        assert_eq!(json(&chat("relevance", &[rel]).reply())["relevant"], true);
        let sel =
            "Question: Who discovered Kelvar?\nPick at most 3\n1. Kelvar | http://a.test/ | s";
        assert_eq!(
            json(&chat("select", &[sel]).reply())["selected"],
            serde_json::json!([1])
        );
    }

    #[test]
    fn text_markers() {
        let clean = chat("query_analysis", &[PROMPT]).reply();
        let with = |m: &str| format!("{PROMPT}\n{m}");

        let bad = with("simweb:badjson");
        assert_eq!(chat("query_analysis", &[&bad]).reply(), PROSE);
        assert_eq!(chat("query_analysis", &[&bad]).reply(), PROSE);
        let repair = "Your answer was not valid JSON. Reply with JSON only.";
        assert_eq!(chat("query_analysis", &[&bad, repair]).reply(), clean);

        let always = with("simweb:badjson-always");
        assert_eq!(chat("query_analysis", &[&always]).reply(), PROSE);
        assert_eq!(chat("query_analysis", &[&always, repair]).reply(), PROSE);

        let fenced = chat("query_analysis", &[&with("simweb:fenced")]).reply();
        assert_eq!(
            fenced,
            format!("Here you go:\n```json\n{clean}\n```\nHope it helps")
        );

        let think = chat("query_analysis", &[&with("simweb:think")]).reply();
        let rest = think
            .strip_prefix("<think>reasoning about {\"not\": \"this\"}</think>")
            .expect("think prefix");
        assert_eq!(rest, clean);
    }

    #[tokio::test]
    async fn http_markers() {
        let c = chat("select", &["simweb:llm-500 script-500"]);
        assert_eq!(c.respond("m").await, Outcome::ServerError);
        assert_eq!(c.respond("m").await, Outcome::ServerError);

        let c = chat("select", &["simweb:llm-429 script-429-once"]);
        assert_eq!(c.respond("m").await, Outcome::RateLimited);
        assert!(matches!(c.respond("m").await, Outcome::Reply(_)));
        assert!(matches!(c.respond("m").await, Outcome::Reply(_)));
        // Counted per prompt: another prompt gets its own first 429.
        let other = chat("select", &["simweb:llm-429 script-429-other"]);
        assert_eq!(other.respond("m").await, Outcome::RateLimited);

        let mut c = chat("select", &["simweb:no-json-mode script"]);
        assert!(matches!(c.respond("m").await, Outcome::Reply(_)));
        c.json_mode = true;
        assert_eq!(c.respond("m").await, Outcome::JsonModeUnsupported);

        let slow = chat("select", &["simweb:llm-slow script"]);
        let r = tokio::time::timeout(Duration::from_millis(300), slow.respond("m")).await;
        assert!(r.is_err(), "slow marker answered early");
    }

    #[tokio::test]
    async fn hang_markers() {
        let (started, _) = hangs();
        let hang = chat("select", &["simweb:llm-hang script-hang"]);
        for _ in 0..2 {
            let r = tokio::time::timeout(Duration::from_millis(100), hang.respond("m")).await;
            assert!(r.is_err(), "hang marker answered");
        }
        let once = chat("select", &["simweb:llm-hang-once script-hang-once"]);
        let r = tokio::time::timeout(Duration::from_millis(100), once.respond("m")).await;
        assert!(r.is_err(), "hang-once marker answered its first request");
        assert!(matches!(once.respond("m").await, Outcome::Reply(_)));
        // Other tests of this binary may hang too: count at least ours.
        assert!(hangs().0 >= started + 3);
    }

    #[tokio::test]
    async fn a_model_in_trouble_answers_garbage_or_fails_until_let_go() {
        let c = chat("relevance", &[PROMPT]);
        set_trouble("troubled", Some(Trouble::Garbage));
        assert_eq!(c.respond("troubled").await, Outcome::Reply(GARBAGE.into()));
        assert!(matches!(c.respond("m").await, Outcome::Reply(r) if r != GARBAGE));
        set_trouble("troubled", Some(Trouble::Failing));
        assert_eq!(c.respond("troubled").await, Outcome::ServerError);
        set_trouble("troubled", None);
        assert!(matches!(c.respond("troubled").await, Outcome::Reply(r) if r != GARBAGE));
    }
}

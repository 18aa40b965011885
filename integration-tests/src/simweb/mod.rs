//! simweb: the deterministic fake outside world for integration tests.
//!
//! * [`Corpus::generate`] builds ~300 pages on 50 `*.test` hosts around 60 invented topics;
//!   [`Corpus::generate_with_follow_ups`] adds four topics whose questions need a follow-up
//!   research round (see [`FollowUp`]); [`Corpus::generate_with_families`] adds to those a
//!   page per measured topic that states other subjects' values beside its own, and
//!   [`Corpus::unanswerable`] gives questions about entities no page knows.
//!   [`Corpus::generate_with_languages`] adds a question in each of seven languages, and
//!   [`Corpus::generate_multilingual`] the same 20 questions in each of eight (for measuring
//!   reports by language); [`Corpus::language_questions`] gives either's.
//! * [`serve`] / [`Simweb::start`] run one HTTP server that routes `*.test` hosts by the
//!   Host header and answers, on any host: SearXNG (`GET /search?format=json`), the other
//!   search providers' formats under their own prefixes ([`providers`]), and a scripted LLM
//!   ([`llm`]): OpenAI chat completions, Anthropic messages and embeddings, answered after
//!   [`Options::llm_latency`] (zero unless asked).
//! * `bench-<n>.test` hosts serve generated articles for benchmarks ([`bench`]), and
//!   [`fleet`] questions (any number of them) whose search results point there.
//! * [`soak`] questions (any number of them), each answered by one tiny page on a
//!   `soak-<n>.test` host: the least work every stage can do, for the chaos suite's soak.
//! * `hostile.test` serves misbehaving pages (see [`hostile::PATHS`]).
//! * `guarded.test` has pages that need browser headers, JavaScript or a stealth browser,
//!   or that always challenge, rate-limit or redirect into private addresses;
//!   `robots-*.test`, `crawl-delay.test` and `polite.test` cover robots.txt edge cases and
//!   politeness (see [`guarded`]).
//! * [`Stats`] counts requests per host and path and logs their arrival times
//!   ([`Stats::log`], [`Stats::min_gap`]).

pub mod bench;
mod comparison;
mod content;
mod corpus;
pub mod docs;
pub mod files;
pub mod fleet;
mod follow_up;
pub mod guarded;
mod gzip_bomb;
pub mod hostile;
mod hosts;
pub mod languages;
pub mod llm;
mod multilingual;
mod page;
pub mod providers;
mod render;
mod rng;
pub mod search;
mod server;
pub mod soak;
mod topics;
mod words;

pub use corpus::{Corpus, FollowUp, Host, LanguageQuestion, Page, PageKind, Question, Robots};
pub use gzip_bomb::INFLATED_LEN as GZIP_BOMB_INFLATED_LEN;
pub use render::Layout;
pub use server::{revised_sentence, serve, Options, Simweb, Stats};
pub use topics::Topic;

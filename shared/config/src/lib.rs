//! trawl's configuration: built-in defaults < `trawl.toml` (or `--config`) < environment
//! `TRAWL__SECTION__KEY`.
//!
//! The environment is passed in as a map, so tests never touch the process environment. Every
//! section denies unknown keys (a typo is an error, not a silently ignored setting) and
//! [`Config::validate`] reports every problem at once. The key names are a public interface
//! (docs/design.md): scripts, Helm values and outside harnesses set them.
//!
//! Secrets (passwords inside URLs, API keys) never reach logs: [`Config`]'s `Debug` goes through
//! [`redact_url`].
//!
//! Each section is a module that holds its types, defaults and the checks of its values (a
//! `problems` method); [`Config::validate`] only gathers them, with the few rules that compare
//! two sections:
//!
//! - `broker`, `store`, `output`: where the fleet's messages, records and results live.
//! - `job`, `search`, `fetch`, `cache`, `clean`, `synthesize`, `report`, `research`: what a job does,
//!   stage by stage.
//! - `llm`: the optional LLM: providers, endpoints per step, prices and rate limits.
//! - `metrics`, `api`, `mcp`: the servers.
//! - `check`: rules several sections share; `redact`: passwords out of URLs; `example`: the
//!   generated `trawl.example.toml`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod api;
mod broker;
mod cache;
mod check;
mod clean;
mod documents;
mod example;
mod fetch;
mod job;
mod llm;
mod mcp;
mod metrics;
mod output;
mod redact;
mod report;
mod research;
mod search;
mod store;
mod synthesize;

pub use api::ApiConfig;
pub use broker::{BrokerConfig, MAX_WAITING, MIN_IN_FLIGHT_BYTES};
pub use cache::CacheConfig;
pub use clean::CleanConfig;
pub use documents::DocumentsConfig;
pub use example::example;
pub use fetch::{parse_cidr, FetchConfig};
pub use job::JobConfig;
pub use llm::{LlmConfig, LlmEndpoint, LlmProvider, ModelPrice, RateLimit, StepModel, LLM_STEPS};
pub use mcp::McpConfig;
pub use metrics::MetricsConfig;
pub use output::OutputConfig;
pub use redact::redact_url;
use redact::url_password;
pub use report::{ReportConfig, Unverified};
pub use research::{ResearchConfig, MAX_ROUNDS};
pub use search::{SearchConfig, Selection};
pub use store::StoreConfig;
pub use synthesize::SynthesizeConfig;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid config: {0}")]
    Parse(String),
    #[error("invalid config:\n  - {}", .0.join("\n  - "))]
    Invalid(Vec<String>),
}

#[derive(Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub broker: BrokerConfig,
    pub store: StoreConfig,
    pub output: OutputConfig,
    pub job: JobConfig,
    pub search: SearchConfig,
    pub fetch: FetchConfig,
    pub cache: CacheConfig,
    pub documents: DocumentsConfig,
    pub clean: CleanConfig,
    pub synthesize: SynthesizeConfig,
    pub report: ReportConfig,
    pub research: ResearchConfig,
    pub llm: Option<LlmConfig>,
    pub metrics: MetricsConfig,
    pub api: ApiConfig,
    pub mcp: McpConfig,
}

impl Config {
    /// Loads defaults, then `file` if given, then `TRAWL__SECTION__KEY` entries of `env`.
    pub fn load(
        file: Option<&Path>,
        env: &BTreeMap<String, String>,
    ) -> Result<Config, ConfigError> {
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
                toml::from_str::<toml::Table>(&text)
                    .map_err(|e| ConfigError::Parse(format!("{}: {e}", path.display())))?
            }
            None => toml::Table::new(),
        };
        apply_env(&mut table, env)?;
        let config: Config = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The file to read when none is named: `trawl.toml` in `cwd`, else `trawl/trawl.toml` in
    /// `$XDG_CONFIG_HOME` (`~/.config` when unset), as other command-line tools look.
    pub fn discover(cwd: &Path, env: &BTreeMap<String, String>) -> Option<PathBuf> {
        let here = cwd.join("trawl.toml");
        let user = (env.get("XDG_CONFIG_HOME").filter(|d| !d.is_empty()))
            .map(PathBuf::from)
            .or_else(|| env.get("HOME").map(|home| Path::new(home).join(".config")))
            .map(|dir| dir.join("trawl").join("trawl.toml"));
        [Some(here), user]
            .into_iter()
            .flatten()
            .find(|p| p.is_file())
    }

    /// Loads from the process environment; the binaries' entry point.
    pub fn from_process(file: Option<&Path>) -> Result<Config, ConfigError> {
        let env: BTreeMap<String, String> = std::env::vars().collect();
        Config::load(file, &env)
    }

    /// The secret values this config names: passwords in `broker.url` and `store.url` (as
    /// written and percent-decoded), and the values of the variables that hold the LLM, search
    /// provider and webhook keys (read from `env`). For the log redactor.
    pub fn secret_values(&self, env: &BTreeMap<String, String>) -> Vec<String> {
        let mut values = Vec::new();
        for url in [&self.broker.url, &self.store.url].into_iter().flatten() {
            if let Some(password) = url_password(url) {
                if let Ok(decoded) = percent_encoding::percent_decode_str(&password).decode_utf8() {
                    values.push(decoded.into_owned());
                }
                values.push(password);
            }
        }
        let llm_vars: Vec<String> = (self.llm.iter())
            .flat_map(|l| l.endpoints())
            .filter_map(|e| e.key_env())
            .collect();
        let vars = llm_vars
            .iter()
            .chain(self.search.api_key_env.values())
            .chain([&self.synthesize.webhook_secret_env]);
        values.extend(vars.filter_map(|name| env.get(name)).cloned());
        values
    }

    /// The effective configuration as TOML, every key with its value (defaults included) and
    /// the password of every URL in it replaced by `***`: what `trawl config show` prints.
    /// Keys are named by environment variables, never held here, so nothing else is secret.
    pub fn show(&self) -> String {
        fn redact(v: &mut toml::Value) {
            match v {
                toml::Value::String(s) if s.contains("://") => *s = redact_url(s),
                toml::Value::Array(items) => items.iter_mut().for_each(redact),
                toml::Value::Table(t) => t.iter_mut().for_each(|(_, v)| redact(v)),
                _ => {}
            }
        }
        let mut table = toml::Value::try_from(self).expect("the configuration serialises");
        redact(&mut table);
        toml::to_string(&table).expect("a TOML table serialises")
    }

    /// Every problem at once, so a user fixes their file in one go: section by section in the
    /// order of `trawl.example.toml`, then the rules across sections.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        self.broker.problems(&mut problems);
        self.store.problems(&mut problems);
        self.output.problems(&mut problems);
        self.search.problems(&mut problems);
        self.fetch.problems(&mut problems);
        self.cache.problems(&mut problems);
        self.documents.problems(&mut problems);
        self.clean.problems(&mut problems);
        self.report.problems(&mut problems);
        self.research.problems(&mut problems);
        if let Some(llm) = &self.llm {
            llm.problems(&mut problems);
        }
        self.metrics.problems(&mut problems);
        self.api.problems(&mut problems);
        self.mcp.problems(&mut problems);
        self.cross_section_problems(&mut problems);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid(problems))
        }
    }

    /// The rules that compare two sections: what search asks of the LLM section.
    fn cross_section_problems(&self, problems: &mut Vec<String>) {
        let search = &self.search;
        let needs_llm = search.llm_relevance || search.rerank || search.selection == Selection::Llm;
        if needs_llm && self.llm.is_none() {
            problems.push("search.llm_relevance, search.rerank and search.selection = \"llm\" need an [llm] section".into());
        }
        if search.rerank
            && self
                .llm
                .as_ref()
                .is_some_and(|l| l.embeddings_endpoint().is_none())
        {
            problems.push(
                "search.rerank needs embeddings: [llm.embeddings] (provider, model …) or llm.embedding_model"
                    .into(),
            );
        }
    }
}

/// `TRAWL__SEARCH__MAX_URLS=5` sets `search.max_urls`. Values are read as TOML when they parse
/// (numbers, booleans, arrays, inline tables) and as plain strings otherwise.
fn apply_env(table: &mut toml::Table, env: &BTreeMap<String, String>) -> Result<(), ConfigError> {
    for (key, raw) in env {
        let Some(path) = key.strip_prefix("TRAWL__") else {
            continue;
        };
        let parts: Vec<String> = path.split("__").map(|p| p.to_ascii_lowercase()).collect();
        if parts.iter().any(String::is_empty) {
            return Err(ConfigError::Parse(format!(
                "malformed environment key {key}"
            )));
        }
        let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(raw.clone()));
        let (last, sections) = parts.split_last().expect("split yields one part at least");
        let mut node = &mut *table;
        for section in sections {
            let entry = node
                .entry(section.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            node = entry
                .as_table_mut()
                .ok_or_else(|| ConfigError::Parse(format!("{key}: {section} is not a section")))?;
        }
        node.insert(last.clone(), value);
    }
    Ok(())
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut broker = self.broker.clone();
        broker.url = broker.url.as_deref().map(redact_url);
        let mut store = self.store.clone();
        store.url = store.url.as_deref().map(redact_url);
        f.debug_struct("Config")
            .field("broker", &broker)
            .field("store", &store)
            .field("output", &self.output)
            .field("job", &self.job)
            .field("search", &self.search)
            .field("fetch", &self.fetch)
            .field("cache", &self.cache)
            .field("clean", &self.clean)
            .field("synthesize", &self.synthesize)
            .field("research", &self.research)
            .field("llm", &self.llm)
            .field("metrics", &self.metrics)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `env` from pairs, for tests here and in the section modules.
    pub(crate) fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn discovery_prefers_the_working_directory_then_the_user_config() {
        let root = std::env::temp_dir().join(format!("trawl-discover-{}", std::process::id()));
        let (cwd, xdg, home) = (root.join("cwd"), root.join("xdg"), root.join("home"));
        for dir in [&cwd, &xdg.join("trawl"), &home.join(".config/trawl")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let env = |xdg: Option<&Path>| {
            let mut env = BTreeMap::from([("HOME".to_owned(), home.display().to_string())]);
            if let Some(xdg) = xdg {
                env.insert("XDG_CONFIG_HOME".into(), xdg.display().to_string());
            }
            env
        };
        assert_eq!(Config::discover(&cwd, &env(Some(&xdg))), None);
        std::fs::write(home.join(".config/trawl/trawl.toml"), "").unwrap();
        assert_eq!(
            Config::discover(&cwd, &env(None)),
            Some(home.join(".config/trawl/trawl.toml"))
        );
        std::fs::write(xdg.join("trawl/trawl.toml"), "").unwrap();
        assert_eq!(
            Config::discover(&cwd, &env(Some(&xdg))),
            Some(xdg.join("trawl/trawl.toml"))
        );
        std::fs::write(cwd.join("trawl.toml"), "").unwrap();
        assert_eq!(
            Config::discover(&cwd, &env(Some(&xdg))),
            Some(cwd.join("trawl.toml"))
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn defaults_follow_the_design() {
        let c = Config::load(None, &env(&[])).unwrap();
        assert!(c.broker.url.is_none() && c.store.url.is_none());
        assert_eq!(c.search.min_relevance, 0.3);
        assert_eq!(c.search.max_urls, 10);
        assert!(
            c.fetch.allow_networks.is_empty(),
            "SSRF guard must be closed by default"
        );
    }

    #[test]
    fn file_then_environment_override() {
        let dir = std::env::temp_dir().join(format!("trawl-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        std::fs::write(
            &path,
            "[search]\nmax_urls = 4\nsearxng_url = \"http://a\"\n[fetch]\nresolve = { \"*.test\" = \"127.0.0.1:9000\" }\n",
        )
        .unwrap();
        let c = Config::load(
            Some(&path),
            &env(&[
                ("TRAWL__SEARCH__SEARXNG_URL", "http://b:8888"),
                ("TRAWL__FETCH__ALLOW_NETWORKS", "[\"127.0.0.0/8\"]"),
                (
                    "TRAWL__BROKER__URL",
                    "amqp://guest:guest@127.0.0.1:5672/%2f",
                ),
                ("UNRELATED", "x"),
            ]),
        )
        .unwrap();
        assert_eq!(c.search.max_urls, 4);
        assert_eq!(c.search.searxng_url, "http://b:8888");
        assert_eq!(c.fetch.allow_networks, vec!["127.0.0.0/8"]);
        assert_eq!(c.fetch.resolve["*.test"], "127.0.0.1:9000");
        assert!(
            !format!("{c:?}").contains("guest:guest"),
            "password leaked into Debug"
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_all_reported() {
        let err = Config::load(None, &env(&[("TRAWL__SEARCH__MAX_URL", "3")])).unwrap_err();
        assert!(err.to_string().contains("max_url"), "{err}");

        let err = Config::load(
            None,
            &env(&[
                ("TRAWL__SEARCH__MIN_RELEVANCE", "2.0"),
                ("TRAWL__FETCH__MAX_LEVEL", "9"),
                ("TRAWL__FETCH__BROWSER_PROXY_LISTEN", "fetch-browser:9470"),
                ("TRAWL__FETCH__BROWSER_PROXY_ADVERTISE", "fetch-browser"),
            ]),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("min_relevance") && text.contains("max_level"),
            "{text}"
        );
        assert!(
            text.contains("browser_proxy_listen") && text.contains("browser_proxy_advertise"),
            "{text}"
        );
    }

    #[test]
    fn rate_limits_and_the_byte_cap_refuse_zero_or_negative() {
        let dir = std::env::temp_dir().join(format!("trawl-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        let load = |text: &str| {
            std::fs::write(&path, text).unwrap();
            Config::load(Some(&path), &env(&[]))
        };
        let c = load(
            "[llm]\nrequests_per_minute = 500\ntokens_per_minute = 200000\n\
             [llm.limits.\"gpt-4o\"]\ntokens_per_minute = 30000\n",
        )
        .unwrap();
        let llm = c.llm.unwrap();
        let own = llm.limit_of("gpt-4o");
        assert_eq!(own.requests_per_minute, Some(500));
        assert_eq!(own.tokens_per_minute, Some(30_000));
        assert_eq!(llm.limit_of("gpt-4o-mini").tokens_per_minute, Some(200_000));

        let err = load("[llm]\ntokens_per_minute = 0\n[llm.limits.m]\nrequests_per_minute = 0\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("llm.tokens_per_minute: must be at least 1, not 0"),
            "{err}"
        );
        assert!(
            err.contains("llm.limits.\"m\".requests_per_minute: must be at least 1"),
            "{err}"
        );
        let err = load("[llm]\nrequests_per_minute = -5\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("requests_per_minute") && err.contains("-5"),
            "{err}"
        );
        let err = Config::load(None, &env(&[("TRAWL__LLM__TOKENS_PER_MINUTE", "0")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("llm.tokens_per_minute: must be at least 1"),
            "{err}"
        );
        let c = load(
            "[search.requests_per_second]
brave = 0.5
",
        )
        .unwrap();
        assert_eq!(c.search.requests_per_second["brave"], 0.5);
        let err = load(
            "[search.requests_per_second]
brave = 0
serper = -1
",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("search.requests_per_second.brave: must be above 0, not 0")
                && err.contains("search.requests_per_second.serper: must be above 0, not -1"),
            "{err}"
        );
        let err = load("[broker]\nmax_in_flight_bytes = 1000\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("broker.max_in_flight_bytes must be at least"),
            "{err}"
        );
        let err = load("[broker]\nmax_waiting = 100000\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("broker.max_waiting must be at most 8192 (got 100000)"),
            "{err}"
        );
    }

    #[test]
    fn show_prints_every_section_and_no_password() {
        let c = Config::load(
            None,
            &env(&[
                ("TRAWL__BROKER__URL", "amqp://u:p%40ss@h/%2f"),
                (
                    "TRAWL__SEARCH__SEARXNG_URL",
                    "http://admin:hunter2@searx:8888",
                ),
            ]),
        )
        .unwrap();
        let shown = c.show();
        assert!(
            !shown.contains("p%40ss") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(shown.contains("amqp://u:***@h/%2f"), "{shown}");
        for section in ["[broker]", "[search]", "[fetch]", "[research]", "[report]"] {
            assert!(shown.contains(section), "{section} missing:\n{shown}");
        }
        // What it prints loads back as the same configuration.
        let dir = std::env::temp_dir().join(format!("trawl-show-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        std::fs::write(&path, &shown).unwrap();
        let again = Config::load(Some(&path), &env(&[])).unwrap();
        assert_eq!(again.show(), shown);
    }

    #[test]
    fn names_its_secret_values() {
        let env = env(&[
            ("TRAWL__BROKER__URL", "amqp://u:p%40ss-word@h/%2f"),
            ("TRAWL__STORE__URL", "redis://:r/pw#1@h:6379/"),
            ("TRAWL__LLM__API_KEY_ENV", "MY_MODEL"),
            ("MY_MODEL", "sk-model-value"),
            ("TRAWL_WEBHOOK_SECRET", "whsec-value"),
        ]);
        let config = Config::load(None, &env).unwrap();
        let values = config.secret_values(&env);
        for secret in [
            "p%40ss-word",
            "p@ss-word",
            "r/pw#1",
            "sk-model-value",
            "whsec-value",
        ] {
            assert!(values.iter().any(|v| v == secret), "{secret} in {values:?}");
        }
    }
}

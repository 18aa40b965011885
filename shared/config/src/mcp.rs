//! `[mcp]`: `trawl mcp`, trawl's tools for agents.

use serde::{Deserialize, Serialize};

/// `trawl mcp`: trawl's tools for agents over the Model Context Protocol.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Where `trawl mcp --http` listens (streamable HTTP at `/mcp`).
    pub addr: String,
    /// Most tokens one tool result may hold; a longer report or page is cut at a paragraph and
    /// the full work products are referenced instead.
    pub max_tokens: usize,
    /// How long the `research` tool waits for its report before answering with the job's id.
    pub research_timeout_secs: u64,
    /// Host names (or host:port) the HTTP transport answers to, against DNS rebinding; empty
    /// means loopback names only. Listing a public name needs an API token on every request,
    /// which `trawl mcp --http` requires whenever a shared store is configured.
    pub allowed_hosts: Vec<String>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            addr: "127.0.0.1:8765".into(),
            max_tokens: 20_000,
            research_timeout_secs: 900,
            allowed_hosts: Vec::new(),
        }
    }
}

impl McpConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        if self.max_tokens < 100 || self.research_timeout_secs == 0 {
            problems.push(
                "mcp.max_tokens must be at least 100 and mcp.research_timeout_secs at least 1"
                    .into(),
            );
        }
    }
}

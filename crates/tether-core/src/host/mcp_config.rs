//! The person's MCP servers in the window: `tether.mcpServers` read with the secrets it names
//! (see `mcp_settings.rs`), handed to each new session's client, and what was wrong with the
//! setting said once per change.

use std::collections::BTreeMap;

use agent_client_protocol_schema::v1 as acp;

use crate::host_api::LogLevel;
use crate::mcp_settings;

use super::HostEngine;

#[derive(Debug, Default)]
pub(super) struct McpSettings {
    /// The secrets the person stored, by name (memory only).
    pub(super) secrets: BTreeMap<String, String>,
    /// The servers new sessions offer their agent.
    pub(super) servers: Vec<acp::McpServer>,
    /// The problems last shown, so that the same ones are not shown again at every `configure`.
    shown: Vec<String>,
}

impl HostEngine {
    /// Reads `tether.mcpServers` again (the setting or the secrets changed). Sessions started
    /// from now on get the new list; a running agent keeps the servers it was given.
    pub(super) fn read_mcp_settings(&mut self) {
        let (servers, problems) =
            mcp_settings::mcp_servers_from_setting(&self.config.mcp_servers, &self.mcp_settings.secrets);
        self.mcp_settings.servers = servers;
        if problems == self.mcp_settings.shown {
            return;
        }
        self.mcp_settings.shown = problems.clone();
        if problems.is_empty() {
            return;
        }
        for problem in &problems {
            self.log(LogLevel::Warn, problem.clone());
        }
        self.show(LogLevel::Warn, format!("Tether: {}", problems.join(" ")));
    }
}

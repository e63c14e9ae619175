//! The MCP servers a session offers its agent in `session/new`, `session/load` and
//! `session/resume`: Tether's own (tetherd's offer, made when the agent was spawned) and the
//! ones the person configured.
//!
//! What the agent gets depends on what it said it speaks in `initialize`
//! (`agentCapabilities.mcpCapabilities`): every agent takes stdio; Tether's server goes over
//! Streamable HTTP instead when the agent speaks it (no process to start), and a configured
//! server whose transport the agent does not speak is left out, with a notice saying so.

use agent_client_protocol_schema::v1 as acp;

use crate::mcp_settings::{name_of, remote_host, remote_host_of_url, transport_of};
use crate::sidecar::{MCP_SERVER_NAME, McpOffer};
use crate::thread::{Entry, ToolCallView, ToolContent, ToolStatus};
use crate::webview::McpServerView;

use super::{AcpClient, AcpEvent};

/// How the session's MCP servers stand.
#[derive(Debug, Default)]
pub(super) struct McpServers {
    /// tetherd's offer for this agent; absent before the spawn's answer, or from a tetherd
    /// without an MCP server.
    tether: Option<McpOffer>,
    /// The person's servers, as they configured them.
    configured: Vec<acp::McpServer>,
    /// What the agent said it speaks besides stdio.
    capabilities: acp::McpCapabilities,
    /// The notices about left-out servers have been shown (once per agent).
    warned: bool,
    /// How many cards Tether has shown for calls of its tools, for their ids.
    cards_shown: u64,
}

impl AcpClient {
    /// Tether's own MCP server for this agent, from tetherd's answer to `agent/spawn`. Call
    /// before `start`.
    pub fn set_tether_mcp(&mut self, offer: Option<McpOffer>) {
        self.mcp.tether = offer;
    }

    /// The MCP servers the person configured (`tether.mcpServers`). Call before `start`.
    pub fn set_configured_mcp_servers(&mut self, servers: Vec<acp::McpServer>) {
        self.mcp.configured = servers;
    }

    /// The agent's `initialize` answer said which transports it speaks.
    pub(super) fn on_mcp_capabilities(&mut self, capabilities: acp::McpCapabilities) {
        self.mcp.capabilities = capabilities;
    }

    /// The servers for `session/new`, `session/load` or `session/resume`; the first call for an
    /// agent also says which configured servers were left out.
    pub(super) fn mcp_servers_for_session(&mut self) -> Vec<acp::McpServer> {
        let (servers, left_out) = self.mcp.for_session();
        let mut view: Vec<McpServerView> = servers
            .iter()
            .map(|server| McpServerView {
                name: name_of(server).to_owned(),
                transport: transport_of(server).to_owned(),
                built_in: self.mcp.tether.is_some() && name_of(server) == MCP_SERVER_NAME,
                left_out: None,
                state: None,
                remote: remote_host(server),
            })
            .collect();
        view.extend(left_out.iter().map(|(server, why)| McpServerView {
            name: name_of(server).to_owned(),
            transport: transport_of(server).to_owned(),
            built_in: false,
            left_out: Some(why.clone()),
            state: None,
            remote: remote_host(server),
        }));
        if self.controls.view.mcp_servers != view {
            self.controls.view.mcp_servers = view;
            self.events.push_back(AcpEvent::ControlsChanged);
        }
        if !self.mcp.warned {
            self.mcp.warned = true;
            for (_, text) in left_out {
                self.notice(crate::thread::NoticeLevel::Warning, text);
            }
        }
        servers
    }
}

impl AcpClient {
    /// The servers a session's request named, read back from the log (`params` of its
    /// `session/new`, `load`, `resume` or `fork`): the composer lists them after a reload as it
    /// did before. Those left out were never sent, and are not listed. The request is Tether's
    /// own (`mcp_servers_for_session`), so its names and transports are read as they were
    /// written, without the schema's types: their deserializers would add some 20 KB of WASM
    /// for this alone.
    pub(super) fn replay_mcp_servers(&mut self, params: &str) {
        let Ok(params) = serde_json::from_str::<serde_json::Value>(params) else { return };
        let Some(servers) = params["mcpServers"].as_array() else { return };
        self.controls.view.mcp_servers = servers
            .iter()
            .map(|server| {
                let name = server["name"].as_str().unwrap_or_default();
                McpServerView {
                    name: name.to_owned(),
                    // A stdio server is written without a type (ACP's default).
                    transport: server["type"].as_str().unwrap_or("stdio").to_owned(),
                    built_in: name == MCP_SERVER_NAME,
                    left_out: None,
                    state: None,
                    remote: server["url"].as_str().and_then(remote_host_of_url),
                }
            })
            .collect();
    }
}

/// The notification an agent may send to say how its MCP servers are doing: Tether's own
/// extension of ACP (which has no such update yet), `{sessionId, servers: [{name, status}]}`.
/// The Claude CLI translator sends it from the CLI's `init`.
pub const MCP_STATUS_NOTIFICATION: &str = "_tether/mcpServerStatus";

impl AcpClient {
    /// The agent said how its MCP servers are doing: the header shows it beside each.
    pub(super) fn on_mcp_status(&mut self, params: Option<&serde_json::value::RawValue>) {
        let Some(params) = params.and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok()) else {
            return;
        };
        let mut changed = false;
        for reported in params["servers"].as_array().into_iter().flatten() {
            let (Some(name), Some(status)) = (reported["name"].as_str(), reported["status"].as_str()) else { continue };
            let shown = self
                .controls
                .view
                .mcp_servers
                .iter_mut()
                .find(|server| server.name == name && server.left_out.is_none());
            if let Some(server) = shown
                && server.state.as_deref() != Some(status)
            {
                server.state = Some(status.to_owned());
                changed = true;
            }
        }
        if changed {
            self.events.push_back(AcpEvent::ControlsChanged);
        }
    }
}

impl McpServers {
    /// The servers to send, and each one left out with a sentence saying why.
    fn for_session(&self) -> (Vec<acp::McpServer>, Vec<(acp::McpServer, String)>) {
        let mut servers = Vec::new();
        let mut left_out = Vec::new();
        if let Some(offer) = &self.tether {
            servers.push(self.tether_server(offer));
        }
        for server in &self.configured {
            let (name, transport, spoken) = match server {
                acp::McpServer::Http(http) => (&http.name, "HTTP", self.capabilities.http),
                acp::McpServer::Sse(sse) => (&sse.name, "SSE", self.capabilities.sse),
                acp::McpServer::Stdio(stdio) => (&stdio.name, "stdio", true),
                _ => continue,
            };
            if name == MCP_SERVER_NAME && self.tether.is_some() {
                let why = format!(
                    "The MCP server {name:?} in tether.mcpServers was left out: the name is Tether's own server's."
                );
                left_out.push((server.clone(), why));
            } else if spoken {
                servers.push(server.clone());
            } else {
                let why = format!(
                    "The MCP server {name:?} was left out: this agent does not connect to MCP servers over {transport}."
                );
                left_out.push((server.clone(), why));
            }
        }
        (servers, left_out)
    }

    /// Tether's server, over HTTP when the agent speaks it and tetherd listens, else stdio.
    fn tether_server(&self, offer: &McpOffer) -> acp::McpServer {
        match &offer.http {
            Some(http) if self.capabilities.http => {
                let headers = http
                    .headers
                    .iter()
                    .map(|(name, value)| acp::HttpHeader::new(name.clone(), value.clone()))
                    .collect();
                acp::McpServer::Http(acp::McpServerHttp::new(MCP_SERVER_NAME, http.url.clone()).headers(headers))
            }
            _ => {
                let stdio = &offer.stdio;
                let env =
                    stdio.env.iter().map(|(name, value)| acp::EnvVariable::new(name.clone(), value.clone())).collect();
                acp::McpServer::Stdio(
                    acp::McpServerStdio::new(MCP_SERVER_NAME, stdio.command.clone()).args(stdio.args.clone()).env(env),
                )
            }
        }
    }
}

impl AcpClient {
    /// The agent called a tool of Tether's MCP server (tetherd's `mcp/toolCalled`, or its audit
    /// record in the session's log when the thread is rebuilt). Agents show their own card for
    /// most tool calls, MCP ones included (Claude Code titles it `mcp__tether__<tool>`, Gemini
    /// `<tool> (tether MCP Server)`): when a card of the agent's for this tool is still running,
    /// that card is the one, and nothing is added. Otherwise Tether shows its own, so that no
    /// call the agent made in the editor goes unseen.
    pub fn show_mcp_tool_call(&mut self, tool: &str, arguments: serde_json::Value, summary: &str, ok: bool) {
        let agents_own = self.thread.entries().iter().rev().take(MCP_CARD_LOOKBACK).any(|entry| match entry {
            Entry::ToolCall(call) => {
                matches!(call.status, ToolStatus::Pending | ToolStatus::InProgress) && call.title.contains(tool)
            }
            _ => false,
        });
        if agents_own {
            return;
        }
        self.mcp.cards_shown += 1;
        let call = ToolCallView {
            id: format!("tether-mcp-{}", self.mcp.cards_shown),
            title: format!("{} (Tether)", tool),
            kind: mcp_tool_kind(tool).to_owned(),
            status: if ok { ToolStatus::Completed } else { ToolStatus::Failed },
            content: vec![ToolContent::Text { text: summary.to_owned() }],
            locations: Vec::new(),
            raw_input: Some(arguments),
            command: None,
            raw_output: None,
            permission: None,
        };
        self.thread.push(Entry::ToolCall(call));
    }
}

/// How far back from the end of the thread an agent's own card for an MCP call is looked for:
/// it is the latest tool call or close to it (an agent may run a few tools at once).
const MCP_CARD_LOOKBACK: usize = 16;

/// The ACP tool kind of each of Tether's tools, for the card's icon.
fn mcp_tool_kind(tool: &str) -> &'static str {
    match tool {
        "search_text" | "list_files" | "lsp_workspace_symbols" | "lsp_references" => "search",
        "open_file" => "other",
        _ => "read",
    }
}

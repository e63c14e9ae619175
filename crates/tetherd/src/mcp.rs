//! Tether's built-in MCP server: the tools an agent can call to ask the editor and the workspace.
//!
//! Every agent tetherd starts gets its own token ([`grants`]) and an offer, in the answer to
//! `agent/spawn`, of two ways to reach the same server ([`tools::TetherTools`], on the official
//! SDK, `rmcp`):
//! - stdio: the agent starts `tetherd mcp` ([`bridge`]), which connects back to this tetherd's
//!   socket, presents the token in `mcp/hello` and from then on carries MCP both ways;
//! - Streamable HTTP on 127.0.0.1 ([`http`]), for agents that say they speak it: the token as a
//!   bearer token, loopback `Host` only, no browser `Origin`.
//!
//! Tools that read the workspace (search, list, git) run here ([`workspace_tools`]); tools that
//! need VS Code (selection, diagnostics, the language servers, opening a file) go to the host as
//! `editor/query` requests and come back ([`editor`]). Every call is confined to the agent's
//! workspace folders, bounded in results, bytes and time, written to the session's audit log
//! and reported to the hosts (`mcp/toolCalled`), which show it in the chat.
//!
//! Deliberately absent: tools that write. Writing goes through ACP's `fs/write_text_file` and
//! the review it gets; an MCP tool that wrote would be a way around it.

pub mod bridge;
pub mod editor;
pub mod grants;
pub mod http;
pub mod tools;
pub mod workspace_tools;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use tether_core::sidecar::{AgentId, McpHttpOffer, McpOffer, McpStdioOffer};

use crate::agent::AgentRegistry;
use crate::fanout::Fanout;

/// The environment variable that tells `tetherd mcp` which socket to connect to.
pub use tether_core::sidecar::MCP_SOCKET_ENV as SOCKET_ENV;
/// The environment variable carrying an agent's MCP token to `tetherd mcp`.
pub use tether_core::sidecar::MCP_TOKEN_ENV as TOKEN_ENV;

/// The environment variable naming `tetherd` itself, for agents that write their MCP servers'
/// configuration with `${VAR}` references (the Claude CLI's `--mcp-config`).
pub use tether_core::sidecar::MCP_COMMAND_ENV as COMMAND_ENV;

/// Every agent's own way to Tether's server, in its environment: `tetherd mcp` started with them
/// connects. The Claude CLI names them in its `--mcp-config` (which expands `${VAR}`), because
/// its command line is written before tetherd has made the token. The token is already the
/// agent's (it is in its `session/new`); what the agent starts inherits it, as it inherits
/// everything else the agent may do.
pub fn agent_env(offer: &McpOffer) -> BTreeMap<String, String> {
    let mut env = offer.stdio.env.clone();
    env.insert(COMMAND_ENV.to_owned(), offer.stdio.command.clone());
    env
}

/// What the MCP server of one tetherd shares between its transports and its connections.
#[derive(Debug)]
pub struct McpServer {
    pub grants: grants::Grants,
    pub editor: editor::EditorQueries,
    pub registry: Arc<AgentRegistry>,
    pub fanout: Arc<Fanout>,
    /// This tetherd's socket, which the stdio bridge connects to.
    socket: PathBuf,
    /// This program, which agents start as the stdio bridge.
    executable: Option<PathBuf>,
    /// Where the Streamable HTTP transport listens, once it does.
    http_url: std::sync::OnceLock<String>,
}

impl McpServer {
    pub fn new(
        socket: PathBuf,
        registry: Arc<AgentRegistry>,
        fanout: Arc<Fanout>,
        editor_timeout: std::time::Duration,
    ) -> Self {
        let executable = match std::env::current_exe() {
            Ok(path) => Some(path),
            Err(error) => {
                tracing::warn!(%error, "cannot tell where tetherd's executable is: agents get no stdio MCP bridge");
                None
            }
        };
        Self {
            grants: grants::Grants::default(),
            editor: editor::EditorQueries::new(editor_timeout),
            registry,
            fanout,
            socket,
            executable,
            http_url: std::sync::OnceLock::new(),
        }
    }

    /// Records where the HTTP transport listens (once; later calls are ignored).
    pub fn set_http_url(&self, url: String) {
        if self.http_url.set(url).is_err() {
            tracing::warn!("the MCP HTTP address was set twice; keeping the first");
        }
    }

    /// Gives a newly spawned agent its token and says how it reaches the server. `None` when the
    /// workspace folders cannot be used (the agent runs without Tether's tools; the log says why).
    pub fn offer(&self, agent_id: AgentId, folders: Vec<PathBuf>) -> Option<McpOffer> {
        let executable = self.executable.as_ref()?;
        let roots = match workspace_tools::WorkspaceRoots::new(folders) {
            Ok(roots) => roots,
            Err(error) => {
                tracing::warn!(agent_id, %error, "the agent gets no MCP tools");
                return None;
            }
        };
        let token = match self.grants.grant(agent_id, roots) {
            Ok(token) => token,
            Err(error) => {
                tracing::warn!(agent_id, %error, "no MCP token could be made; the agent gets no MCP tools");
                return None;
            }
        };
        let stdio = McpStdioOffer {
            command: executable.to_string_lossy().into_owned(),
            args: vec!["mcp".to_owned()],
            env: BTreeMap::from([
                (SOCKET_ENV.to_owned(), self.socket.to_string_lossy().into_owned()),
                (TOKEN_ENV.to_owned(), token.clone()),
            ]),
        };
        let http = self.http_url.get().map(|url| McpHttpOffer {
            url: url.clone(),
            headers: BTreeMap::from([("Authorization".to_owned(), format!("Bearer {token}"))]),
        });
        Some(McpOffer { stdio, http })
    }
}

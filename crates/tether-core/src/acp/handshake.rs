//! Starting a session with the agent: `initialize`, then `session/new`, or `session/load` /
//! `session/resume` of an earlier one, and the agent's own list of sessions.

use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;

use crate::jsonrpc::RpcError;
use crate::permissions::AuditEvent;
use crate::thread::NoticeLevel;
use crate::webview::PromptCapabilitiesView;

use super::modes::agent_modes;
use super::{AcpClient, AcpEvent, HANDSHAKE_TIMEOUT_MS, PROTOCOL_VERSION, Phase, RequestKind, describe_error};

/// The agent's session, once there is one, and what the agent offers for sessions.
#[derive(Debug, Default)]
pub(super) struct AgentSessionState {
    pub(super) id: Option<acp::SessionId>,
    /// The agent's name and version, from its `initialize` answer.
    pub(super) agent_info: Option<String>,
    /// What that answer says the agent can do, in the person's words (see [`abilities_in_words`]).
    pub(super) abilities: Vec<&'static str>,
    /// The agent's session to resume instead of creating one (the thread already shows it).
    pub(super) resume: Option<String>,
    /// The session being resumed is not in Tether's record (it comes from the agent's own list),
    /// so the history the agent replays while loading it is shown.
    pub(super) show_resumed_history: bool,
    /// The agent offers `session/list` (`sessionCapabilities.list` in its `initialize` answer).
    pub(super) can_list: bool,
    /// The agent offers `session/load` and `session/resume`.
    pub(super) can_load: bool,
    pub(super) can_resume: bool,
    /// The agent offers `session/fork` (`sessionCapabilities.fork`).
    pub(super) can_fork: bool,
    /// Going on from a checkpoint of another session (see [`AcpClient::restore_conversation`]).
    pub(super) restored: Option<RestoredConversation>,
    /// Text the next prompt carries for the agent alone: what it must know of a restored
    /// conversation.
    pub(super) preface: Option<String>,
}

/// The `_meta.tether` key of a prompt's text block that only the agent reads: a restored
/// conversation's context. The thread does not show it as part of the person's message.
pub(super) const CONTEXT_META_KEY: &str = "restoredContext";

/// A conversation being restored from a checkpoint into this session.
#[derive(Debug, Clone)]
pub(super) struct RestoredConversation {
    /// The agent's session it came from, to fork when the agent offers that.
    pub(super) source: Option<String>,
    /// The prompt it went back to before, as a title.
    pub(super) withdrawn: String,
    /// The earlier turns as a transcript, for an agent that cannot fork.
    pub(super) transcript: String,
}

impl AcpClient {
    /// Asks for the agent's session `agent_session_id` to be resumed, once the agent is
    /// initialized, instead of a new one: with `session/load` when the agent offers it, else
    /// `session/resume`, else (or when that fails) a new session, with a notice saying that the
    /// conversation shown is Tether's record and the agent starts afresh. Call before `start`.
    pub fn resume_session(&mut self, agent_session_id: String) {
        self.session.resume = Some(agent_session_id);
    }

    /// Like [`AcpClient::resume_session`], for a session Tether has no record of (one from the
    /// agent's own list): the history the agent replays while loading it is shown.
    pub fn resume_agent_session(&mut self, agent_session_id: String) {
        self.session.resume = Some(agent_session_id);
        self.session.show_resumed_history = true;
    }

    /// Makes this (not yet started) session go on from a checkpoint of another: its thread starts
    /// with `earlier` (the turns before the prompt `withdrawn`), and the agent's session is
    /// `source` forked, when the agent offers `session/fork`, else a new one whose first prompt
    /// carries `transcript` (the earlier turns) as context. A notice says which, plainly.
    pub fn restore_conversation(
        &mut self,
        earlier: Vec<crate::thread::Entry>,
        source: Option<String>,
        withdrawn: String,
        transcript: String,
        changed_since: &[String],
    ) {
        let earlier: Vec<crate::thread::Entry> = earlier.into_iter().map(copied_entry).collect();
        for entry in &earlier {
            self.thread.push(entry.clone());
        }
        // The copied turns are in no wire: the log keeps them, and a replay shows them again.
        // Entries are plain data (no map with non-string keys): they always serialize.
        let entries = crate::json_value::to_value(&earlier).unwrap_or_default();
        self.audit(AuditEvent::ConversationRestored { entries });
        if !changed_since.is_empty() {
            // Going back in the conversation does not go back in the files: said before the person
            // prompts on as if it did.
            let text = format!(
                "The files are as they are now: going back in the conversation does not undo what changed in {} \
                 from \u{201c}{withdrawn}\u{201d} on. To put the files back too, restore them from that prompt in the \
                 session this one came from.",
                list_of_files(changed_since)
            );
            self.notice(NoticeLevel::Info, text.clone());
            self.audit(AuditEvent::Notice { level: NoticeLevel::Info, text, detail: None });
        }
        self.session.restored = Some(RestoredConversation { source, withdrawn, transcript });
    }

    /// Asks the agent for its sessions of this workspace when it offers `session/list`; the
    /// answer comes as [`AcpEvent::AgentSessions`]. Returns whether it was asked.
    pub fn list_agent_sessions(&mut self, now: u64) -> bool {
        if !self.session.can_list || matches!(self.phase, Phase::New | Phase::Initializing | Phase::Closed) {
            return false;
        }
        let params = acp::ListSessionsRequest::new().cwd(std::path::PathBuf::from(self.cwd()));
        self.send_request("session/list", &params, RequestKind::ListSessions, Some(now + HANDSHAKE_TIMEOUT_MS));
        true
    }

    /// Sends `initialize`; `session/new` follows when it succeeds.
    pub fn start(&mut self, now: u64) {
        if self.phase != Phase::New {
            return;
        }
        // `_meta.terminal_output` (Claude's adapter) and `terminal_output_delta` (Codex's) ask an
        // agent that runs commands itself to stream their output on its tool calls.
        // `_meta["terminal-auth"]` asks Claude's adapter for a login run in a terminal (see `auth`).
        let mut meta = serde_json::Map::new();
        meta.insert("terminal-auth".to_owned(), serde_json::Value::Bool(true));
        meta.insert("terminal_output".to_owned(), serde_json::Value::Bool(true));
        meta.insert("terminal_output_delta".to_owned(), serde_json::Value::Bool(true));
        // Notices and compaction are shown in the thread, boolean options as checkboxes.
        let session = acp::ClientSessionCapabilities::new()
            .notices(acp::NoticeCapabilities::new())
            .compaction(acp::CompactionCapabilities::new())
            .config_options(
                acp::SessionConfigOptionsCapabilities::new().boolean(acp::BooleanConfigOptionCapabilities::new()),
            );
        let capabilities = acp::ClientCapabilities::new()
            .fs(acp::FileSystemCapabilities::new().read_text_file(true).write_text_file(true))
            .terminal(true)
            // The host runs a terminal login in a VS Code terminal with the agent's own command.
            .auth(acp::AuthCapabilities::new().terminal(true))
            .session(session)
            .meta(meta);
        let params = acp::InitializeRequest::new(agent_client_protocol_schema::ProtocolVersion::V1)
            .client_capabilities(capabilities)
            .client_info(acp::Implementation::new(self.info.name.clone(), self.info.version.clone()));
        self.send_request("initialize", &params, RequestKind::Initialize, Some(now + HANDSHAKE_TIMEOUT_MS));
        self.phase = Phase::Initializing;
    }

    pub(super) fn on_initialized(&mut self, result: &RawValue, now: u64) {
        let response = match serde_json::from_str::<acp::InitializeResponse>(result.get()) {
            Ok(response) => response,
            Err(error) => return self.fail(format!("the agent's answer to initialize is malformed: {error}")),
        };
        if response.protocol_version != agent_client_protocol_schema::ProtocolVersion::V1 {
            return self.fail(format!(
                "the agent speaks ACP version {}; Tether speaks version {PROTOCOL_VERSION}",
                response.protocol_version
            ));
        }
        self.session.agent_info = response.agent_info.map(|info| {
            let name = info.title.unwrap_or(info.name);
            format!("{name} {}", info.version).trim_end().to_owned()
        });
        self.events.push_back(AcpEvent::Initialized { agent: self.session.agent_info.clone() });
        let capabilities = serde_json::from_str::<serde_json::Value>(result.get()).unwrap_or_default();
        let session_capabilities = &capabilities["agentCapabilities"]["sessionCapabilities"];
        self.session.can_resume = !session_capabilities["resume"].is_null();
        self.session.can_load = response.agent_capabilities.load_session;
        self.session.can_list = !session_capabilities["list"].is_null();
        self.session.can_fork = !session_capabilities["fork"].is_null();
        self.session.abilities = abilities_in_words(&response.agent_capabilities, self.session.can_resume);
        self.on_mcp_capabilities(response.agent_capabilities.mcp_capabilities.clone());
        let prompt = &response.agent_capabilities.prompt_capabilities;
        self.controls.view.prompt =
            PromptCapabilitiesView { image: prompt.image, embedded_context: prompt.embedded_context };
        self.events.push_back(AcpEvent::ControlsChanged);
        self.on_auth_methods(&capabilities);
        if self.sign_in_on_initialize() {
            // The session is opened once the agent has accepted the sign-in.
            return;
        }
        self.open_session(now);
    }

    /// Resumes the agent's session when asked to, forks one to go on from a checkpoint, else
    /// creates one.
    pub(super) fn open_session(&mut self, now: u64) {
        if let Some(restored) = self.session.restored.clone() {
            return self.open_restored_session(restored, now);
        }
        match self.session.resume.clone() {
            Some(target) if self.session.can_load => {
                let servers = self.mcp_servers_for_session();
                let params = acp::LoadSessionRequest::new(target, self.cwd().to_owned()).mcp_servers(servers);
                self.send_request(
                    "session/load",
                    &params,
                    RequestKind::ResumeSession,
                    Some(now + HANDSHAKE_TIMEOUT_MS),
                );
                self.phase = Phase::ResumingSession;
            }
            Some(target) if self.session.can_resume => {
                let servers = self.mcp_servers_for_session();
                let params = acp::ResumeSessionRequest::new(target, self.cwd().to_owned()).mcp_servers(servers);
                self.send_request(
                    "session/resume",
                    &params,
                    RequestKind::ResumeSession,
                    Some(now + HANDSHAKE_TIMEOUT_MS),
                );
                self.phase = Phase::ResumingSession;
            }
            Some(_) => {
                self.session.resume = None;
                let text = "This agent cannot resume an earlier session: it starts a new one. The conversation above \
                            is Tether's record; the agent does not remember it.";
                self.notice(NoticeLevel::Info, text.to_owned());
                // The wire does not say why a new session was started; the log must.
                self.audit(AuditEvent::Notice { level: NoticeLevel::Info, text: text.to_owned(), detail: None });
                self.new_session(now);
            }
            None => self.new_session(now),
        }
    }

    /// A conversation restored from a checkpoint: the earlier session forked when the agent
    /// offers it, else a new session told the earlier turns with the first prompt.
    fn open_restored_session(&mut self, restored: RestoredConversation, now: u64) {
        match restored.source {
            Some(source) if self.session.can_fork => {
                let servers = self.mcp_servers_for_session();
                let params = serde_json::json!({ "sessionId": source, "cwd": self.cwd(), "mcpServers": servers });
                self.send_request("session/fork", &params, RequestKind::ForkSession, Some(now + HANDSHAKE_TIMEOUT_MS));
                self.phase = Phase::CreatingSession;
            }
            _ => self.restore_into_new_session(None, now),
        }
    }

    /// The restored conversation goes on in a new agent session (the agent cannot fork, or its
    /// fork failed with `why`): its first prompt carries the earlier turns.
    fn restore_into_new_session(&mut self, why: Option<String>, now: u64) {
        let Some(restored) = self.session.restored.take() else { return self.new_session(now) };
        let because = match why {
            Some(why) => format!("The agent could not fork the earlier session ({why})"),
            None => "This agent cannot fork a session".to_owned(),
        };
        let text = format!(
            "{because}: a new one starts, and your next message carries the conversation above to it as context. \
             The agent does not otherwise remember it."
        );
        self.notice(NoticeLevel::Info, text.clone());
        self.audit(AuditEvent::Notice { level: NoticeLevel::Info, text, detail: None });
        self.session.preface = Some(format!(
            "The person went back in an earlier conversation to just before their message \u{201c}{}\u{201d} and goes \
             on from there. That conversation, up to that point, was:\n\n{}",
            restored.withdrawn, restored.transcript
        ));
        self.new_session(now);
    }

    /// The agent answered `session/fork`.
    pub(super) fn on_session_forked(&mut self, result: Result<&RawValue, RpcError>, now: u64) {
        match result {
            Ok(result) => {
                if let Some(restored) = self.session.restored.take() {
                    let text = format!(
                        "The agent forked its earlier session: it remembers the conversation above. Your message \
                         \u{201c}{}\u{201d} and what followed it are withdrawn, and your next message tells the agent so.",
                        restored.withdrawn
                    );
                    self.notice(NoticeLevel::Info, text.clone());
                    self.audit(AuditEvent::Notice { level: NoticeLevel::Info, text, detail: None });
                    self.session.preface = Some(format!(
                        "The person went back in this conversation to just before their message \u{201c}{}\u{201d}: \
                         that message and everything after it are withdrawn. Go on from the point before it.",
                        restored.withdrawn
                    ));
                }
                // Read back from a log, the notice the person was told comes from its audit record.
                self.on_session_created(result, now);
            }
            Err(error) if self.session.restored.is_some() => {
                self.restore_into_new_session(Some(describe_error(&error)), now)
            }
            Err(error) => self.fail(format!("session/fork failed: {}", describe_error(&error))),
        }
    }

    pub(super) fn new_session(&mut self, now: u64) {
        let servers = self.mcp_servers_for_session();
        let params = acp::NewSessionRequest::new(self.cwd().to_owned()).mcp_servers(servers);
        self.send_request("session/new", &params, RequestKind::NewSession, Some(now + HANDSHAKE_TIMEOUT_MS));
        self.phase = Phase::CreatingSession;
    }

    /// The agent answered `session/load` or `session/resume`.
    pub(super) fn on_session_resumed(&mut self, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(target) = self.session.resume.take() else { return };
        self.session.show_resumed_history = false;
        match result {
            Ok(result) => {
                // Both answers carry the session's modes and config options like `session/new`.
                let response: serde_json::Value = serde_json::from_str(result.get()).unwrap_or_default();
                let modes = crate::json_value::from_value::<acp::SessionModeState>(&response["modes"]).ok();
                let options =
                    crate::json_value::from_value::<Vec<acp::SessionConfigOption>>(&response["configOptions"]).ok();
                self.session.id = Some(acp::SessionId::new(target.clone()));
                self.phase = Phase::Ready;
                self.modes.agent = agent_modes(modes, options.as_deref());
                self.on_config_options(options.as_deref().unwrap_or_default());
                self.on_legacy_models(&response["models"]);
                self.notice(NoticeLevel::Info, "The agent resumed this session.".to_owned());
                self.events.push_back(AcpEvent::SessionReady { session_id: target });
                if self.modes.agent.is_some() {
                    self.events.push_back(AcpEvent::PolicyChanged);
                    self.send_mode_to_agent();
                }
                self.after_session_ready(now);
            }
            Err(error) => {
                self.notice(
                    NoticeLevel::Warning,
                    format!(
                        "The agent could not resume the earlier session ({}): it starts a new one. The conversation \
                         above is Tether's record; the agent does not remember it.",
                        describe_error(&error)
                    ),
                );
                self.new_session(now);
            }
        }
    }

    pub(super) fn on_session_created(&mut self, result: &RawValue, now: u64) {
        match serde_json::from_str::<acp::NewSessionResponse>(result.get()) {
            Ok(response) => {
                let session_id = response.session_id.0.to_string();
                self.session.id = Some(response.session_id);
                self.phase = Phase::Ready;
                self.modes.agent = agent_modes(response.modes, response.config_options.as_deref());
                self.on_config_options(response.config_options.as_deref().unwrap_or_default());
                let raw: serde_json::Value = serde_json::from_str(result.get()).unwrap_or_default();
                self.on_legacy_models(&raw["models"]);
                self.events.push_back(AcpEvent::SessionReady { session_id });
                if self.modes.agent.is_some() {
                    self.events.push_back(AcpEvent::PolicyChanged);
                    // A mode chosen before the session existed (or the default from settings)
                    // reaches the agent now.
                    self.send_mode_to_agent();
                }
                self.after_session_ready(now);
            }
            Err(error) => self.fail(format!("the agent's answer to session/new is malformed: {error}")),
        }
    }
}

/// What an agent's `initialize` answer says it can do that a person choosing an agent cares
/// about, in their words, for the agent picker: what a prompt may carry, whether a session goes
/// on after a restart, and whether Tether's editor tools (an MCP server over HTTP) reach it.
fn abilities_in_words(capabilities: &acp::AgentCapabilities, can_resume: bool) -> Vec<&'static str> {
    let prompt = &capabilities.prompt_capabilities;
    let mcp = &capabilities.mcp_capabilities;
    [
        (prompt.image, "images"),
        (prompt.audio, "audio"),
        (prompt.embedded_context, "file contents"),
        (capabilities.load_session || can_resume, "resumes sessions"),
        (mcp.http || mcp.sse, "MCP over HTTP"),
    ]
    .into_iter()
    .filter_map(|(offered, words)| offered.then_some(words))
    .collect()
}

/// An entry of an earlier session as a restored conversation shows it. A change still to decide
/// there is decided there: its copy here says so instead of offering buttons that would act on
/// the other session's change, and that this card would not follow.
fn copied_entry(entry: crate::thread::Entry) -> crate::thread::Entry {
    use crate::review::ChangePhase;
    let crate::thread::Entry::FileChange(mut change) = entry else { return entry };
    let undecided = match change.phase {
        ChangePhase::Applied | ChangePhase::Writing | ChangePhase::Proposed => true,
        ChangePhase::Conflict { .. } | ChangePhase::Failed { .. } => true,
        ChangePhase::Settled | ChangePhase::Unreviewable { .. } => false,
    };
    if undecided {
        change.phase = ChangePhase::Unreviewable {
            reason: "Copied from the session this one came from, as it was then: review it there".to_owned(),
        };
    }
    crate::thread::Entry::FileChange(change)
}

/// Files by their labels, for a sentence (a notice is plain text): "a.txt", "a.txt and b.txt",
/// "a.txt, b.txt, c.txt and 3 other files".
fn list_of_files(labels: &[String]) -> String {
    const NAMED: usize = 3;
    let quoted: Vec<&str> = labels.iter().take(NAMED).map(String::as_str).collect();
    match (quoted.split_last(), labels.len().saturating_sub(NAMED)) {
        (None, _) => String::new(),
        (Some((last, [])), 0) => (*last).to_owned(),
        (Some((last, rest)), 0) => format!("{} and {last}", rest.join(", ")),
        (Some(_), 1) => format!("{} and 1 other file", quoted.join(", ")),
        (Some(_), more) => format!("{} and {more} other files", quoted.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::list_of_files;

    #[test]
    fn a_list_of_files_names_three_and_counts_the_rest() {
        let labels = |count: usize| (1..=count).map(|n| format!("f{n}.txt")).collect::<Vec<_>>();
        let lists: Vec<String> = [1, 2, 3, 4, 6].into_iter().map(|count| list_of_files(&labels(count))).collect();
        assert_eq!(
            lists,
            [
                "f1.txt",
                "f1.txt and f2.txt",
                "f1.txt, f2.txt and f3.txt",
                "f1.txt, f2.txt, f3.txt and 1 other file",
                "f1.txt, f2.txt, f3.txt and 3 other files",
            ]
        );
    }
}

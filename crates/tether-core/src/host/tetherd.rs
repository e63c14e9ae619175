//! The link to tetherd: starting it, the hello, every request and its answer, the
//! notifications it sends (agent output, exits, terminals), and starting it again when it is
//! lost.
//!
//! tetherd is the window's, not a session's: one link serves whichever session is live, and an
//! answer carries the generation of the session that asked, so that one for a session that has
//! since ended finds nothing.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::acp::capitalize;
use crate::host_api::{HostAction, LogLevel};
use crate::jsonrpc;
use crate::jsonrpc::Message;
use crate::sidecar::{
    AgentBadLine, AgentExited, AgentId, AgentLogFailed, AgentMessage, AgentRef, AgentStderr, SessionListResult,
    SessionReadResult, SpawnResult, TerminalData, TerminalExited, TetherdStopping, method,
};
use crate::thread::{Entry, NoticeLevel, NoticeView};
use crate::webview::SessionStatus;

use super::agent::keep_tail;
use super::history::ListPurpose;
use super::{AfterHello, HostEngine, SIDECAR_TIMEOUT_MS, SidecarRequest, SidecarState};
use crate::jsonrpc::{RequestId, RpcError};

impl HostEngine {
    pub(super) fn start_sidecar(&mut self) {
        if !self.config.workspace_trusted {
            // Nothing starts in a workspace the person has not trusted: trusting it starts
            // tetherd (`WorkspaceTrusted`).
            self.sidecar = SidecarState::Disconnected;
            self.log(LogLevel::Info, "the workspace is not trusted: tetherd and the agent are not started".to_owned());
            return self.set_status(SessionStatus::Untrusted { message: UNTRUSTED_MESSAGE.to_owned() });
        }
        self.sidecar = SidecarState::Starting;
        self.set_status(SessionStatus::starting("Starting tetherd"));
        self.actions.push_back(HostAction::StartSidecar);
    }

    /// The person trusted the workspace: what was held back starts now (tetherd, then the last
    /// session or a new one).
    pub(super) fn workspace_trusted(&mut self) {
        if self.config.workspace_trusted {
            return;
        }
        self.config.workspace_trusted = true;
        self.log(LogLevel::Info, "the workspace is trusted now: starting tetherd".to_owned());
        if self.sidecar == SidecarState::Disconnected {
            self.start_sidecar();
        }
    }

    /// tetherd accepted the hello: reopen a session, or start one.
    pub(super) fn on_hello_accepted(&mut self, now: u64) {
        match std::mem::replace(&mut self.after_hello, AfterHello::NewSession) {
            AfterHello::Reopen { dir } if self.config.tether_dir.is_some() => {
                // Agent events that arrive before the engine knows which session it shows wait:
                // they may be the running agent's it is about to go on with.
                self.held_agent_events = Some(Vec::new());
                self.set_status(SessionStatus::starting("Looking for the last session"));
                self.list_sessions(ListPurpose::Reopen { dir }, now);
            }
            AfterHello::Reopen { .. } | AfterHello::NewSession => self.start_session(now),
        }
    }

    pub(super) fn handle_sidecar_line(&mut self, line: &str, now: u64) {
        let message = match jsonrpc::parse_message(line) {
            Ok(message) => message,
            Err(error) => {
                self.log(LogLevel::Error, format!("tetherd sent a message Tether cannot read: {error}"));
                return;
            }
        };
        match message {
            Message::Response { id, result } => self.handle_sidecar_response(&id, result, now),
            Message::Notification { method, .. }
                if (method.starts_with("agent/") || method.starts_with("terminal/"))
                    && let Some(held) = &mut self.held_agent_events =>
            {
                held.push(line.to_owned());
            }
            Message::Notification { method, params } => self.handle_sidecar_notification(&method, params, now),
            Message::Request { id, method, .. } => {
                // tetherd makes no requests of the host in this version of the wire.
                let error = RpcError::method_not_found();
                self.sidecar_write(jsonrpc::encode_error(&id, &error));
                self.log(LogLevel::Warn, format!("tetherd asked for {method}, which this host does not offer"));
            }
        }
    }

    pub(super) fn handle_sidecar_response(&mut self, id: &RequestId, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(pending) = self.rpc.take(id) else {
            self.log(LogLevel::Warn, format!("tetherd answered a request Tether never sent (id {id})"));
            return;
        };
        match (pending.tag, result) {
            (SidecarRequest::Hello, Ok(_)) => {
                self.sidecar = SidecarState::Ready;
                self.log(LogLevel::Info, "connected to tetherd".to_owned());
                self.on_hello_accepted(now);
            }
            (SidecarRequest::Hello, Err(error)) => {
                let message = format!("tetherd refused the connection: {}", error.message);
                self.log(LogLevel::Error, message.clone());
                self.show(LogLevel::Error, format!("Tether: {message}."));
                self.set_status(SessionStatus::Failed { message: capitalize(&message) });
            }
            (SidecarRequest::Spawn { generation }, Ok(result)) => {
                let spawned = serde_json::from_str::<SpawnResult>(result.get());
                match (spawned, &mut self.agent) {
                    (Ok(spawned), Some(slot)) if slot.generation == generation => {
                        slot.agent_id = Some(spawned.agent_id);
                        // A continued folder keeps the name the history gave it (tetherd answers
                        // with the resolved path, which differs when the path has a symlink).
                        if slot.session_dir.is_none() {
                            slot.session_dir = spawned.session_dir;
                        }
                        let unsent = std::mem::take(&mut slot.unsent_audit);
                        slot.client.start(now);
                        for record in unsent {
                            self.send_audit(spawned.agent_id, &record);
                        }
                        self.refresh_permissions_view();
                        self.log(LogLevel::Info, format!("agent started (pid {})", spawned.pid));
                        self.set_status(SessionStatus::starting("Initializing the agent"));
                    }
                    (Ok(spawned), _) => {
                        // The person started another session meanwhile: this agent is not wanted.
                        let agent_ref = AgentRef { agent_id: spawned.agent_id };
                        self.sidecar_request(method::AGENT_KILL, &agent_ref, SidecarRequest::Kill, now);
                    }
                    (Err(error), _) => {
                        self.log(LogLevel::Error, format!("tetherd's answer to agent/spawn is malformed: {error}"))
                    }
                }
            }
            (SidecarRequest::Spawn { generation }, Err(error)) => {
                if self.agent.as_ref().is_some_and(|slot| slot.generation == generation) {
                    let name = self.session.agent.clone();
                    let message = format!("Could not start the agent {name:?}: {}", error.message);
                    self.drop_prompt_after_restart("the agent could not be started");
                    self.show(LogLevel::Error, format!("Tether: {message}"));
                    if let Some(slot) = &mut self.agent {
                        slot.client.thread_mut().push(Entry::Notice(NoticeView {
                            level: NoticeLevel::Error,
                            text: message.clone(),
                            detail: Some(format!("{} {}", slot.profile.command, slot.profile.args.join(" "))),
                        }));
                    }
                    self.set_status(SessionStatus::Failed { message });
                }
            }
            (tag @ (SidecarRequest::Snapshot { generation } | SidecarRequest::Scan { generation }), result) => {
                let result = result.map(|raw| raw.get().to_owned()).map_err(|error| error.message);
                self.on_snapshot_answer(tag, generation, result);
            }
            (SidecarRequest::Terminal { generation, call }, result) => {
                if let Some(slot) = self.agent.as_mut().filter(|slot| slot.generation == generation) {
                    slot.client.handle_terminal_answer(call, result, now);
                }
            }
            (SidecarRequest::SessionList { purpose }, result) => {
                let listed = parse_result::<SessionListResult>(result, method::SESSION_LIST);
                self.on_sessions_listed(purpose, listed, now);
            }
            (SidecarRequest::SessionRead { load }, result) => {
                let piece = parse_result::<SessionReadResult>(result, method::SESSION_READ);
                self.on_session_read(load, piece, now);
            }
            (SidecarRequest::SessionChange, Ok(_)) => self.list_sessions(ListPurpose::History, now),
            (SidecarRequest::SessionChange, Err(error)) => {
                self.show(LogLevel::Error, format!("Tether: {}", error.message));
            }
            (SidecarRequest::KillToSignIn { generation }, result) => {
                if let Err(error) = result {
                    // An agent tetherd no longer knows has exited already: it can be replaced.
                    self.log(LogLevel::Info, format!("stopping the agent to sign in: {}", error.message));
                }
                if self.agent.as_ref().is_some_and(|slot| slot.generation == generation) {
                    self.restart_agent(now);
                }
            }
            (SidecarRequest::Stop { generation }, result) => {
                self.on_agent_stopped(generation, result.map(|_| ()).map_err(|error| error.message));
            }
            (SidecarRequest::Kill, Ok(_)) => {}
            (SidecarRequest::Kill, Err(error)) => {
                self.log(LogLevel::Warn, format!("tetherd could not stop an agent: {}", error.message));
            }
        }
    }

    pub(super) fn handle_sidecar_notification(&mut self, method: &str, params: Option<&RawValue>, now: u64) {
        let params = params.map_or("null", RawValue::get);
        match method {
            method::AGENT_MESSAGE => match serde_json::from_str::<AgentMessage<'_>>(params) {
                Ok(message) => {
                    if let Some(slot) = self.live_slot(message.agent_id, message.seq) {
                        slot.client.handle_message(message.message.get(), now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/message: {error}")),
            },
            method::AGENT_BAD_LINE => match serde_json::from_str::<AgentBadLine>(params) {
                Ok(bad) => {
                    if let Some(slot) = self.agent_slot(bad.agent_id) {
                        slot.client.handle_bad_line(bad.kind, bad.len, &bad.preview, &bad.error);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/badLine: {error}")),
            },
            method::AGENT_STDERR => match serde_json::from_str::<AgentStderr>(params) {
                Ok(stderr) => {
                    let mut name = None;
                    if let Some(slot) = self.live_slot(stderr.agent_id, stderr.seq) {
                        keep_tail(&mut slot.stderr_tail, &stderr.line);
                        name = Some(slot.profile.name.clone());
                    }
                    let name = name.unwrap_or_else(|| format!("agent {}", stderr.agent_id));
                    self.log(LogLevel::Info, format!("[{name}] {}", stderr.line));
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/stderr: {error}")),
            },
            method::TETHERD_STOPPING => match serde_json::from_str::<TetherdStopping>(params) {
                Ok(stopping) => {
                    self.log(LogLevel::Info, format!("tetherd is stopping ({})", stopping.reason));
                    self.sidecar_stopping = Some(stopping.reason);
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed tetherd/stopping: {error}")),
            },
            method::AGENT_LOG_FAILED => match serde_json::from_str::<AgentLogFailed>(params) {
                Ok(failed) => self.on_agent_log_failed(failed),
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/logFailed: {error}")),
            },
            method::AGENT_EXITED => match serde_json::from_str::<AgentExited>(params) {
                Ok(exited) => self.on_agent_exited(exited),
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed agent/exited: {error}")),
            },
            // A terminal's id is unique in tetherd, so only the session that created it knows it;
            // output of an earlier session's terminal finds nothing and is dropped.
            method::TERMINAL_DATA => match serde_json::from_str::<TerminalData>(params) {
                Ok(data) => {
                    if let Some(slot) = &mut self.agent {
                        slot.client.handle_terminal_data(data.terminal_id, &data.data, now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed terminal/data: {error}")),
            },
            method::TERMINAL_EXITED => match serde_json::from_str::<TerminalExited>(params) {
                Ok(exited) => {
                    if let Some(slot) = &mut self.agent {
                        slot.client.handle_terminal_exited(exited, now);
                    }
                }
                Err(error) => self.log(LogLevel::Error, format!("tetherd sent a malformed terminal/exited: {error}")),
            },
            _ => self.log(LogLevel::Debug, format!("ignored a notification from tetherd: {method}")),
        }
    }

    pub(super) fn send_audit(&mut self, agent_id: AgentId, record: &str) {
        if self.sidecar != SidecarState::Ready {
            return self.log(LogLevel::Info, format!("audit (tetherd is not connected): {record}"));
        }
        // The record is JSON the engine encoded itself: embedded as it is.
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"{}","params":{{"agentId":{agent_id},"record":{record}}}}}"#,
            method::SESSION_AUDIT
        );
        self.sidecar_write(line);
    }

    pub(super) fn sidecar_request(&mut self, method: &str, params: &impl Serialize, tag: SidecarRequest, now: u64) {
        let (_, line) = self.rpc.request(method, params, tag, Some(now + SIDECAR_TIMEOUT_MS));
        self.sidecar_write(line);
    }

    pub(super) fn sidecar_write(&mut self, mut line: String) {
        line.push('\n');
        self.actions.push_back(HostAction::SidecarWrite { data: line });
    }
}

/// A result of tetherd's, read as `T`, or why it cannot be.
fn parse_result<T: serde::de::DeserializeOwned>(
    result: Result<&RawValue, RpcError>,
    method: &str,
) -> Result<T, String> {
    match result {
        Ok(raw) => serde_json::from_str(raw.get())
            .map_err(|error| format!("tetherd's answer to {method} is malformed: {error}")),
        Err(error) => Err(error.message),
    }
}

/// What the chat says while the workspace is not trusted.
const UNTRUSTED_MESSAGE: &str = "This workspace is not trusted, so Tether starts nothing in it: no tetherd, no agent. \
     Trust the workspace to start the session.";

//! The client's side of the JSON-RPC connection to the agent: each line from the agent dispatched
//! (answers, requests, notifications), the requests the client makes and their answers, and the
//! bound on the agent's requests left waiting.

use std::collections::{BTreeSet, VecDeque};

use agent_client_protocol_schema::v1 as acp;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::jsonrpc::{self, Message, Outgoing, RequestId, RpcError};
use crate::sidecar::method;
use crate::thread::TurnState;

use super::{AcpClient, AcpEvent, AgentSession, MAX_AGENT_REQUESTS_WAITING, Phase, RequestKind, auth, describe_error};

/// The client's end of the connection to the agent.
#[derive(Debug, Default)]
pub(super) struct Wire {
    /// The client's requests in flight, by id.
    pub(super) rpc: Outgoing<RequestKind>,
    /// Lines for the agent, in order.
    pub(super) outgoing: VecDeque<String>,
    /// The agent's requests not answered yet, by id; answers leave through
    /// [`AcpClient::push_outgoing`], which takes them out.
    pub(super) requests_waiting: BTreeSet<RequestId>,
    /// Requests beyond [`MAX_AGENT_REQUESTS_WAITING`] are being refused, and the thread has said
    /// so; it says so again for a later flood once every waiting request has been answered.
    pub(super) refusing: bool,
    /// The engine's mode and config switches that timed out: an answer that still comes is
    /// late, not an answer to a request never sent. One per switch the person made.
    pub(super) timed_out: BTreeSet<RequestId>,
}

impl AcpClient {
    /// One complete line from the agent's stdout that tetherd found to be JSON.
    pub fn handle_message(&mut self, line: &str, now: u64) {
        self.set_clock(now);
        if let Some(notification) = text_chunk(line) {
            return self.on_session_notification(notification);
        }
        let message = match jsonrpc::parse_message(line) {
            Ok(message) => message,
            Err(error) => {
                let rpc_error = error.to_rpc_error();
                self.push_outgoing(jsonrpc::encode_error(&error.response_id(), &rpc_error));
                self.problem(format!("the agent sent an invalid message: {error}"), Some(line));
                return;
            }
        };
        match message {
            Message::Response { id, result } => self.handle_response(id, result, now),
            Message::Request { id, method, params } => self.handle_request(id, &method, params),
            Message::Notification { method, params } => self.handle_notification(&method, params),
        }
    }

    /// What [`handle_message`](Self::handle_message) does with a line that [`text_chunk`] has
    /// read already: the host reads tetherd's envelope and the chunk inside it in one pass.
    pub fn handle_text_chunk(&mut self, notification: acp::SessionNotification, now: u64) {
        self.set_clock(now);
        self.on_session_notification(notification);
    }

    /// When what is being handled happened: the log's time while replaying (see
    /// `LogReplay::feed`), else the host's. The two clocks are one (milliseconds since the Unix
    /// epoch, see ARCHITECTURE.md), so a command that started before a window reload is still
    /// timed from its start after it.
    pub(super) fn event_time(&self) -> u64 {
        if self.replaying { self.thread.now() } else { self.now }
    }

    fn set_clock(&mut self, now: u64) {
        self.now = now;
        if !self.replaying {
            // A replay times the thread by the log's clock instead (see `LogReplay::feed`).
            self.thread.set_now(now);
        }
    }

    pub(super) fn handle_response(&mut self, id: RequestId, result: Result<&RawValue, RpcError>, now: u64) {
        let Some(pending) = self.wire.rpc.take(&id) else {
            if !self.wire.timed_out.remove(&id) {
                self.problem(format!("the agent answered a request Tether never sent (id {id})"), None);
            }
            return;
        };
        match (pending.tag, result) {
            (RequestKind::Initialize, Ok(result)) => self.on_initialized(result, now),
            (RequestKind::ResumeSession, result) => self.on_session_resumed(result, now),
            (RequestKind::ListSessions, result) => {
                let sessions = result.map_err(|error| describe_error(&error)).and_then(|raw| {
                    serde_json::from_str::<acp::ListSessionsResponse>(raw.get())
                        .map_err(|error| format!("the agent's answer to session/list is malformed: {error}"))
                });
                let sessions = sessions.map(|response| {
                    response
                        .sessions
                        .into_iter()
                        .map(|info| AgentSession {
                            session_id: info.session_id.0.to_string(),
                            title: info.title,
                            updated_at: info.updated_at,
                        })
                        .collect()
                });
                self.events.push_back(AcpEvent::AgentSessions(sessions));
            }
            (RequestKind::Unknown, _) => {}
            (RequestKind::SetConfigOption, result) => {
                self.on_config_option_set(&id, result.map_err(|error| describe_error(&error)));
            }
            (RequestKind::NewSession, Ok(result)) => self.on_session_created(result, now),
            (RequestKind::ForkSession, result) => self.on_session_forked(result, now),
            (RequestKind::Authenticate, result) => self.on_authenticated(result.map(|_| ()), now),
            (RequestKind::NewSession, Err(error)) if auth::is_auth_required(&error) => {
                self.on_auth_required(&error, false);
            }
            (RequestKind::Prompt, Ok(result)) => {
                self.turn.in_flight = None;
                match serde_json::from_str::<acp::PromptResponse>(result.get()) {
                    Ok(response) => {
                        self.thread.set_turn(TurnState::ended(response.stop_reason));
                    }
                    Err(error) => {
                        self.thread.set_turn(TurnState::Failed {
                            message: format!("the agent's answer to the prompt is malformed: {error}"),
                        });
                    }
                }
                self.clear_stale_permissions();
                self.end_turn_files();
            }
            (RequestKind::SetAgentMode, result) => {
                self.modes.switches_in_flight = self.modes.switches_in_flight.saturating_sub(1);
                if let Err(error) = result {
                    self.problem(
                        format!(
                            "the agent refused to switch its own mode ({}); Tether still applies {} mode itself",
                            describe_error(&error),
                            self.policy.mode()
                        ),
                        None,
                    );
                }
            }
            (RequestKind::Initialize | RequestKind::NewSession, Err(error)) => {
                self.fail(format!("{} failed: {}", pending.method, describe_error(&error)));
            }
            (RequestKind::Prompt, Err(error)) => {
                self.turn.in_flight = None;
                if auth::is_auth_required(&error) {
                    self.on_auth_required(&error, true);
                } else {
                    self.thread.set_turn(TurnState::Failed { message: describe_error(&error) });
                }
                self.clear_stale_permissions();
                self.end_turn_files();
            }
        }
    }

    pub(super) fn handle_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) {
        // A log being folded holds what was answered then; nothing is refused now.
        if !self.replaying && self.wire.requests_waiting.len() >= MAX_AGENT_REQUESTS_WAITING {
            self.refuse_over_limit(&id, method);
            return;
        }
        self.wire.requests_waiting.insert(id.clone());
        match method {
            "session/request_permission" => match jsonrpc::parse_params::<acp::RequestPermissionRequest>(params) {
                Ok(request) => self.on_permission_request(id, request),
                Err(error) => {
                    self.problem(format!("the agent sent an invalid permission request: {}", error.message), None);
                    self.push_outgoing(jsonrpc::encode_error(&id, &error));
                }
            },
            "fs/read_text_file" => match jsonrpc::parse_params::<acp::ReadTextFileRequest>(params) {
                Ok(request) => self.on_read_request(id, request),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "fs/write_text_file" => match jsonrpc::parse_params::<acp::WriteTextFileRequest>(params) {
                Ok(request) => self.on_write_request(id, request),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/create" => match jsonrpc::parse_params::<acp::CreateTerminalRequest>(params) {
                Ok(request) => self.on_create_terminal(id, request),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/output" => match jsonrpc::parse_params::<acp::TerminalOutputRequest>(params) {
                Ok(request) => {
                    self.on_terminal_request(id, method::TERMINAL_OUTPUT, &request.session_id, &request.terminal_id)
                }
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/wait_for_exit" => match jsonrpc::parse_params::<acp::WaitForTerminalExitRequest>(params) {
                Ok(request) => self.on_terminal_request(
                    id,
                    method::TERMINAL_WAIT_FOR_EXIT,
                    &request.session_id,
                    &request.terminal_id,
                ),
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/kill" => match jsonrpc::parse_params::<acp::KillTerminalRequest>(params) {
                Ok(request) => {
                    self.on_terminal_request(id, method::TERMINAL_KILL, &request.session_id, &request.terminal_id)
                }
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            "terminal/release" => match jsonrpc::parse_params::<acp::ReleaseTerminalRequest>(params) {
                Ok(request) => {
                    self.on_terminal_request(id, method::TERMINAL_RELEASE, &request.session_id, &request.terminal_id)
                }
                Err(error) => self.push_outgoing(jsonrpc::encode_error(&id, &error)),
            },
            _ => {
                let error = RpcError::method_not_found()
                    .data(serde_json::Value::String(format!("Tether does not offer {method}")));
                self.push_outgoing(jsonrpc::encode_error(&id, &error));
                self.events.push_back(AcpEvent::ProtocolProblem {
                    message: format!("the agent called {method}, which Tether does not offer"),
                });
            }
        }
    }

    /// Answers a request of the agent's that finds [`MAX_AGENT_REQUESTS_WAITING`] already
    /// waiting: an error now, rather than one more thing to hold.
    pub(super) fn refuse_over_limit(&mut self, id: &RequestId, method: &str) {
        let error = RpcError::internal_error().data(serde_json::Value::String(format!(
            "Tether already has {MAX_AGENT_REQUESTS_WAITING} requests of this agent waiting for an answer; \
             this {method} is refused, send it again once some are answered"
        )));
        self.push_outgoing(jsonrpc::encode_error(id, &error));
        if !self.wire.refusing {
            self.wire.refusing = true;
            self.problem(
                format!(
                    "the agent sent more than {MAX_AGENT_REQUESTS_WAITING} requests that wait for an answer; \
                     the ones beyond are refused with an error until those are answered"
                ),
                None,
            );
        }
    }

    /// Queues a line for the agent. An answer to one of the agent's requests stops it waiting.
    pub(super) fn push_outgoing(&mut self, line: String) {
        if !self.wire.requests_waiting.is_empty()
            && let Some(id) = jsonrpc::response_id(&line)
        {
            self.answered_agent_request(&id);
        }
        self.wire.outgoing.push_back(line);
    }

    pub(super) fn answered_agent_request(&mut self, id: &RequestId) {
        self.wire.requests_waiting.remove(id);
        if self.wire.requests_waiting.is_empty() {
            self.wire.refusing = false;
        }
    }

    pub(super) fn handle_notification(&mut self, method: &str, params: Option<&RawValue>) {
        match method {
            "session/update" => match jsonrpc::parse_params::<acp::SessionNotification>(params) {
                Ok(notification) => self.on_session_notification(notification),
                Err(error) => {
                    self.problem(format!("the agent sent an invalid session/update: {}", error.message), None)
                }
            },
            "$/cancel_request" => {
                #[derive(serde::Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct CancelRequest {
                    request_id: RequestId,
                }
                if let Ok(cancel) = jsonrpc::parse_params::<CancelRequest>(params) {
                    let key = self
                        .cards
                        .waiting
                        .iter()
                        .find(|(_, pending)| pending.request_id == cancel.request_id)
                        .map(|(key, _)| *key);
                    if let Some(key) = key {
                        self.withdraw_permission(key);
                    }
                }
            }
            super::mcp_servers::MCP_STATUS_NOTIFICATION => self.on_mcp_status(params),
            // Other notifications (extensions, newer protocol features) are legal to ignore.
            _ => {}
        }
    }

    /// A `session/update` from the agent, read.
    fn on_session_notification(&mut self, notification: acp::SessionNotification) {
        if self.phase == Phase::ResumingSession && self.session.resume.as_deref() == Some(&*notification.session_id.0) {
            // The agent replays the session's history: the thread has it already,
            // unless the session is one Tether has no record of. The session's state
            // (commands, options, title, usage) is taken either way.
            if self.session.show_resumed_history {
                self.on_session_update(notification.update);
                return;
            }
            match notification.update {
                update @ (acp::SessionUpdate::AvailableCommandsUpdate(_)
                | acp::SessionUpdate::SessionInfoUpdate(_)
                | acp::SessionUpdate::UsageUpdate(_)) => {
                    self.on_session_state_update(update);
                }
                acp::SessionUpdate::ConfigOptionUpdate(update) => {
                    self.on_config_options(&update.config_options);
                }
                _ => {}
            }
            return;
        }
        if self.session.id.as_ref() != Some(&notification.session_id) {
            self.events.push_back(AcpEvent::ProtocolProblem {
                message: format!("an update for unknown session {} was ignored", notification.session_id.0),
            });
            return;
        }
        self.on_session_update(notification.update);
    }

    pub(super) fn send_request(
        &mut self,
        method: &str,
        params: &impl Serialize,
        kind: RequestKind,
        deadline: Option<u64>,
    ) -> RequestId {
        if self.replaying {
            // The requests the engine made are read back from the log, ids and all; one it would
            // make now was either made then (and is in the log) or never.
            return RequestId::Null;
        }
        let (id, line) = self.wire.rpc.request(method, params, kind, deadline);
        self.push_outgoing(line);
        id
    }

    /// Answers a request whose parameters Tether cannot act on: invalid params, saying why.
    pub(super) fn refuse(&mut self, id: &RequestId, problem: String) {
        let error = RpcError::invalid_params().data(serde_json::Value::String(problem));
        self.push_outgoing(jsonrpc::encode_error(id, &error));
    }

    pub(super) fn send_notification(&mut self, method: &str, params: &impl Serialize) {
        self.push_outgoing(jsonrpc::encode_notification(method, params));
    }
}

/// A `session/update` that streams text (a chunk of the agent's message or thought, or of the
/// person's message being replayed), read in one pass when the line is exactly that and nothing
/// more; `None` for any other line, which takes the general path.
///
/// A streaming reply is thousands of these lines, and the general path reads each several
/// times over: the JSON-RPC envelope with its params as raw JSON, then the params through the
/// schema's tagged enums, which buffer every member before choosing a variant. This reads the
/// line once. It accepts only a line without a member the schema would also look at (no `id`,
/// no `_meta`, no `messageId`, no `annotations`), so the notification it builds is exactly the
/// one the general path would have read, and everything after is the same.
pub(crate) fn text_chunk(line: &str) -> Option<acp::SessionNotification> {
    use std::borrow::Cow;

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Line<'a> {
        jsonrpc: &'a str,
        method: &'a str,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Params<'a> {
        #[serde(borrow)]
        session_id: Cow<'a, str>,
        #[serde(borrow)]
        update: Update<'a>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Update<'a> {
        session_update: &'a str,
        #[serde(borrow)]
        content: Text<'a>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Text<'a> {
        r#type: &'a str,
        #[serde(borrow)]
        text: Cow<'a, str>,
    }

    // Most lines that are not a text chunk are a tool call's update, half of a long session's
    // lines. A read that fails is dearer than one that succeeds (serde_json writes out its error,
    // with the line and column, as text), so a line is only read here when its kind of update is
    // one of these, as an agent writes it (a space after the colon would send a text chunk down
    // the general path, which reads it the same, only slower).
    const KIND: &str = r#""sessionUpdate":""#;
    let kind = &line[line.find(KIND)? + KIND.len()..];
    if !["agent_message_chunk\"", "agent_thought_chunk\"", "user_message_chunk\""]
        .iter()
        .any(|name| kind.starts_with(name))
    {
        return None;
    }
    let Line { jsonrpc, method, params } = serde_json::from_str(line).ok()?;
    if jsonrpc != jsonrpc::JSONRPC_VERSION || method != "session/update" || params.update.content.r#type != "text" {
        return None;
    }
    let chunk = acp::ContentChunk::new(acp::ContentBlock::from(params.update.content.text.into_owned()));
    let update = match params.update.session_update {
        "agent_message_chunk" => acp::SessionUpdate::AgentMessageChunk(chunk),
        "agent_thought_chunk" => acp::SessionUpdate::AgentThoughtChunk(chunk),
        "user_message_chunk" => acp::SessionUpdate::UserMessageChunk(chunk),
        _ => return None,
    };
    Some(acp::SessionNotification::new(params.session_id.into_owned(), update))
}

#[cfg(test)]
mod tests {
    use crate::acp::{AcpClient, ClientInfo};
    use crate::permissions::{Mode, PermissionPolicy};
    use crate::thread::{ChunkKind, Entry};

    use super::*;

    /// What the general path reads from `line`: its `session/update`, if it is one.
    fn read_generally(line: &str) -> Option<acp::SessionNotification> {
        match jsonrpc::parse_message(line).ok()? {
            Message::Notification { method, params } if method == "session/update" => {
                jsonrpc::parse_params::<acp::SessionNotification>(params).ok()
            }
            _ => None,
        }
    }

    #[test]
    fn a_plain_text_chunk_is_read_in_one_pass_as_the_general_path_reads_it() {
        let taken = [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}"#,
            // Members in any order, escapes, and every kind of streamed text.
            r#"{"params":{"update":{"content":{"text":"a \"quote\"\n\u00e9","type":"text"},"sessionUpdate":"agent_thought_chunk"},"sessionId":"s\u0031"},"method":"session/update","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":""}}}}"#,
        ];
        for line in taken {
            let read = text_chunk(line);
            assert!(read.is_some(), "not taken: {line}");
            assert_eq!(read, read_generally(line), "read differently: {line}");
        }
    }

    #[test]
    fn a_line_with_anything_more_takes_the_general_path() {
        let left = [
            // Members the schema reads, at every level.
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi","annotations":{"priority":1}}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hi"}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","_meta":{"x":1},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi","_meta":{}}}}}"#,
            // Not text, not a chunk, not this method, not a notification, not JSON-RPC 2.0.
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/other","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#,
            r#"{"jsonrpc":"1.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#,
            // Spaced as no agent writes it: not searched for, so read by the general path (which
            // reads it as a text chunk all the same).
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate": "agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#,
            // A member twice, and a line that is not JSON.
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"#,
        ];
        for line in left {
            assert_eq!(text_chunk(line), None, "taken: {line}");
        }
    }

    #[test]
    fn a_burst_of_chunks_read_either_way_is_the_whole_reply_in_order() {
        let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
        let mut client = AcpClient::new(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1));
        client.start(0);
        client.handle_message(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#, 0);
        client.handle_message(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#, 0);
        let mut expected = String::new();
        for n in 1..=2000 {
            let text = format!("#{n:06} quick brown ");
            expected.push_str(&text);
            // Every seventh chunk carries a `messageId` and takes the general path.
            let extra = if n % 7 == 0 { r#","messageId":"m1""# } else { "" };
            client.handle_message(
                &format!(
                    r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk"{extra},"content":{{"type":"text","text":"{text}"}}}}}}}}"#
                ),
                n,
            );
        }
        let replies: Vec<String> = client
            .thread()
            .entries()
            .iter()
            .filter_map(|entry| match entry {
                Entry::Agent(message) => Some(
                    message
                        .chunks
                        .iter()
                        .filter(|chunk| chunk.kind == ChunkKind::Text)
                        .map(|chunk| &*chunk.text)
                        .collect(),
                ),
                _ => None,
            })
            .collect();
        assert_eq!(replies, [expected]);
    }
}

//! Reading a Claude CLI session's log back: the handshake a live session would have had, and
//! the client's own lines (prompts, permission answers, cancels, switches) recovered from the lines
//! Tether wrote to the CLI, so that the client's replay folds the same thread as it saw live.

use super::*;

impl ClaudeCli {
    /// Starts replaying a session's log: the client is given the handshake a live session
    /// would have had (nothing of it is in the log, which holds the CLI's wire only). Returns
    /// the lines the client "sent" and "received", in order, for its replay.
    pub fn replay_start(&mut self, cwd: &str) -> Vec<ReplayLine> {
        self.replaying = true;
        self.cwd = cwd.to_owned();
        let initialize = jsonrpc::encode_request(
            &RequestId::Str("claude:initialize".to_owned()),
            "initialize",
            &serde_json::json!({ "protocolVersion": 1, "clientCapabilities": {} }),
        );
        let new = jsonrpc::encode_request(
            &RequestId::Str("claude:session".to_owned()),
            "session/new",
            &serde_json::json!({ "cwd": cwd, "mcpServers": [] }),
        );
        let mut lines = Vec::new();
        for request in [initialize, new] {
            lines.push(ReplayLine::Sent(request.clone()));
            self.handle_client_line(&request, 0);
            lines.extend(std::iter::from_fn(|| self.to_client.pop_front()).map(ReplayLine::Received));
        }
        lines
    }

    /// A line Tether wrote to the CLI, read back from the log: the ACP lines the client sent
    /// that caused it (a prompt, a permission answer, a cancel).
    pub fn replay_sent_cli(&mut self, line: &str) -> Vec<ReplayLine> {
        let Ok(value) = serde_json::from_str::<Value>(line) else { return Vec::new() };
        match value.get("type").and_then(Value::as_str) {
            Some("user") => {
                self.replayed_prompts += 1;
                let id = RequestId::Str(format!("claude:prompt:{}", self.replayed_prompts));
                let content = value.pointer("/message/content").cloned().unwrap_or(Value::Null);
                let blocks = cli_wire::ApiMessage { id: None, model: None, content }.blocks();
                let prompt: Vec<Value> = blocks
                    .iter()
                    .filter_map(|block| block.get("text").and_then(Value::as_str))
                    .map(|text| serde_json::json!({ "type": "text", "text": text }))
                    .collect();
                if self.prompt.is_some() {
                    // Sent again for a fresh session after a refused resume: the same turn.
                    return Vec::new();
                }
                self.cancelled = false;
                self.prompt = Some(Prompt { id: id.clone(), content: blocks, started: false });
                let params = serde_json::json!({ "sessionId": ACP_SESSION_ID, "prompt": prompt });
                vec![ReplayLine::Sent(jsonrpc::encode_request(&id, "session/prompt", &params))]
            }
            Some("control_request") => {
                let id = value.get("request_id").and_then(Value::as_str).unwrap_or_default().to_owned();
                // Live requests go on numbering after the replayed ones.
                if let Some(number) = id.strip_prefix("tether-").and_then(|number| number.parse::<u64>().ok()) {
                    self.next_request = self.next_request.max(number);
                }
                match value.pointer("/request/subtype").and_then(Value::as_str) {
                    Some("initialize") => {
                        // A CLI's first line: it was started here.
                        self.own_requests.insert(id, OwnRequest::Initialize);
                        self.started_processes += 1;
                        self.live_processes.push_back(self.started_processes);
                        self.process = Process::Running { input_open: true };
                        self.resuming = self.cli_session.is_some();
                        Vec::new()
                    }
                    Some("interrupt") => {
                        self.own_requests.insert(id, OwnRequest::Interrupt);
                        self.cancelled = true;
                        let params = serde_json::json!({ "sessionId": ACP_SESSION_ID });
                        vec![ReplayLine::Sent(jsonrpc::encode_notification("session/cancel", &params))]
                    }
                    // The client's switch that caused it, as it sent it (its answer follows
                    // with the CLI's).
                    Some("set_permission_mode") => {
                        let mode =
                            value.pointer("/request/mode").and_then(Value::as_str).unwrap_or_default().to_owned();
                        self.permission_mode = mode.clone();
                        let client = RequestId::Str(format!("claude:mode:{id}"));
                        self.own_requests.insert(id, OwnRequest::SetMode { client: Some(client.clone()) });
                        let params = serde_json::json!({ "sessionId": ACP_SESSION_ID, "modeId": mode });
                        vec![ReplayLine::Sent(jsonrpc::encode_request(&client, "session/set_mode", &params))]
                    }
                    Some("set_model") => {
                        self.model = value.pointer("/request/model").and_then(Value::as_str).map(str::to_owned);
                        let client = RequestId::Str(format!("claude:model:{id}"));
                        self.own_requests.insert(id, OwnRequest::SetModel { client: Some(client.clone()) });
                        let params = serde_json::json!({
                            "sessionId": ACP_SESSION_ID,
                            "configId": "model",
                            "value": self.model.clone().unwrap_or_default(),
                        });
                        vec![ReplayLine::Sent(jsonrpc::encode_request(&client, "session/set_config_option", &params))]
                    }
                    _ => Vec::new(),
                }
            }
            Some("control_response") => {
                let Some(request_id) = value.pointer("/response/request_id").and_then(Value::as_str) else {
                    return Vec::new();
                };
                let key = permission_id(request_id);
                if !matches!(self.asked.remove(&key), Some(Asked::Permission { .. })) {
                    return Vec::new();
                }
                let answer = value.pointer("/response/response").cloned().unwrap_or(Value::Null);
                let option = match answer.get("behavior").and_then(Value::as_str) {
                    Some("allow") if answer.get("updatedPermissions").is_some() => "allow_always",
                    Some("allow") => "allow_once",
                    _ if answer.get("interrupt").and_then(Value::as_bool) == Some(true) => {
                        let result = serde_json::json!({ "outcome": { "outcome": "cancelled" } });
                        return vec![ReplayLine::Sent(jsonrpc::encode_result(&RequestId::Str(key), &result))];
                    }
                    _ => "reject_once",
                };
                let result = serde_json::json!({ "outcome": { "outcome": "selected", "optionId": option } });
                vec![ReplayLine::Sent(jsonrpc::encode_result(&RequestId::Str(key), &result))]
            }
            _ => Vec::new(),
        }
    }

    /// How CLIs are run from now on (the setting may have changed since the log was written).
    pub fn set_process_mode(&mut self, mode: ProcessMode) {
        self.mode = mode;
    }

    /// The CLI whose lines were replayed is still running (a window reload): going on with it.
    /// Returns its number, for its exit; `None` when the log says no CLI runs (the translator
    /// then stays as it was: call [`ClaudeCli::finish_replay`]).
    pub fn continue_live(&mut self) -> Option<u64> {
        let process = *self.live_processes.back()?;
        self.replaying = false;
        if self.process == Process::Idle {
            self.process = Process::Running { input_open: true };
        }
        Some(process)
    }

    /// Replaying is over and no CLI runs any more: the next prompt starts one, resuming. A CLI
    /// the log saw start and never saw end (tetherd went with it) is forgotten: kept, the next
    /// CLI's exit was taken for an older one's, and the prompt after it waited for good.
    pub fn finish_replay(&mut self) {
        self.replaying = false;
        self.live_processes.clear();
        self.closing.clear();
        self.process = Process::Idle;
        self.prompt = None;
        self.asked.clear();
        self.own_requests.clear();
    }
}

/// A line of the handshake or of a replayed prompt, as the client's replay takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayLine {
    /// A line the client sent (its `replay_sent`).
    Sent(String),
    /// A line the client received (its `replay_received`).
    Received(String),
}

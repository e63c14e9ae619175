//! What the CLI prints about the conversation, as ACP updates: its `system` lines, partial
//! messages, whole messages with their tool uses, tool results, and the `result` that ends a
//! turn.

use super::*;

impl ClaudeCli {
    /// A line of the CLI's that tetherd could not pass on (too long, not UTF-8, not JSON): the
    /// thread says what was lost, and the turn goes on.
    pub fn handle_bad_line(&mut self, kind: BadLineKind, len: u64, preview: &str, error: &str) {
        let what = match kind {
            BadLineKind::TooLong => "a line too long to read",
            BadLineKind::InvalidUtf8 => "a line that is not UTF-8",
            BadLineKind::InvalidJson => "a line that is not JSON",
        };
        self.log(format!("Claude Code printed {what} ({len} bytes): {error}"));
        let title = format!("Claude Code printed {what} ({len} bytes); Tether skipped it.");
        let notice = acp::Notice::new(acp::NoticeSeverity::Warning, title).description(format!("{error}\n\n{preview}"));
        self.update(acp::SessionUpdate::Notice(notice));
    }

    pub(super) fn on_system(&mut self, system: cli_wire::SystemLine) {
        // `init` and `status` lines say the mode; the CLI changes it itself (leaving plan mode).
        if let Some(mode) = system.permission_mode.filter(|mode| *mode != self.permission_mode)
            && MODES.iter().any(|(id, ..)| *id == mode)
        {
            self.permission_mode = mode.clone();
            self.update(acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode)));
        }
        if system.subtype != "init" {
            return;
        }
        if let Some(id) = system.session_id.filter(|id| is_session_id(id)) {
            self.cli_session = Some(id);
        }
        if !system.mcp_servers.is_empty() {
            let params = serde_json::json!({ "sessionId": ACP_SESSION_ID, "servers": system.mcp_servers });
            self.to_client.push_back(jsonrpc::encode_notification(crate::acp::MCP_STATUS_NOTIFICATION, &params));
        }
        if !self.commands_from_initialize && !system.slash_commands.is_empty() {
            let commands = system
                .slash_commands
                .iter()
                .map(|name| serde_json::json!({ "name": name, "description": "" }))
                .collect();
            self.commands_update(commands);
        }
    }

    pub(super) fn on_stream_event(&mut self, line: cli_wire::StreamEventLine) {
        if line.parent_tool_use_id.is_some() {
            return; // A subagent's words stay inside its tool call.
        }
        let event = &line.event;
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                self.streaming_message = event.pointer("/message/id").and_then(Value::as_str).map(str::to_owned);
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                let (text, thought) = match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => (delta.get("text").and_then(Value::as_str), false),
                    Some("thinking_delta") => (delta.get("thinking").and_then(Value::as_str), true),
                    _ => (None, false),
                };
                let Some(text) = text.filter(|text| !text.is_empty()) else { return };
                if let Some(message) = &self.streaming_message {
                    self.streamed.insert(message.clone());
                }
                self.chunk(text, thought);
            }
            _ => {}
        }
    }

    pub(super) fn on_assistant(&mut self, line: cli_wire::MessageLine) {
        let streamed = line.message.id.as_ref().is_some_and(|id| self.streamed.contains(id));
        let subagent = line.parent_tool_use_id.is_some();
        let synthetic = line.message.model.as_deref() == Some(cli_wire::SYNTHETIC_MODEL);
        for block in line.message.blocks() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") if !streamed && !subagent => {
                    if let Some(text) = block.get("text").and_then(Value::as_str).filter(|text| !text.is_empty()) {
                        if synthetic && text.contains('\n') {
                            // A local command's report, in lines and aligned columns: read as
                            // markdown, its lines would run into one.
                            self.chunk(&preformatted(text), false);
                        } else {
                            self.chunk(text, false);
                        }
                    }
                }
                Some("thinking") if !streamed && !subagent => {
                    if let Some(text) = block.get("thinking").and_then(Value::as_str).filter(|text| !text.is_empty()) {
                        self.chunk(text, true);
                    }
                }
                Some("tool_use") => {
                    let Some(id) = block.get("id").and_then(Value::as_str) else { continue };
                    let tool = ToolUse {
                        name: block.get("name").and_then(Value::as_str).unwrap_or("tool").to_owned(),
                        input: block.get("input").cloned().unwrap_or(Value::Null),
                    };
                    if self.tool_uses.contains_key(id) {
                        continue;
                    }
                    self.update(acp::SessionUpdate::ToolCall(tools::tool_call(id, &tool, &self.workspace())));
                    if tool.name == "TodoWrite"
                        && let Some(plan) = tools::plan(&tool.input)
                    {
                        self.update(acp::SessionUpdate::Plan(plan));
                    }
                    self.tool_uses.insert(id.to_owned(), tool);
                    self.unfinished_tools.insert(id.to_owned());
                }
                _ => {}
            }
        }
    }

    pub(super) fn on_user(&mut self, line: cli_wire::MessageLine) {
        for block in line.message.blocks() {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else { continue };
            self.unfinished_tools.remove(id);
            let update = tools::tool_result(id, self.tool_uses.get(id), &block, line.tool_use_result.as_ref());
            self.update(acp::SessionUpdate::ToolCallUpdate(update));
        }
    }

    pub(super) fn on_result(&mut self, result: cli_wire::ResultLine, now: u64) {
        if let Some(id) = result.session_id.as_ref().filter(|id| is_session_id(id) && result.num_turns > 0) {
            self.cli_session = Some(id.clone());
        }
        if let Some((used, size)) = result.context() {
            let mut usage = acp::UsageUpdate::new(used, size);
            if let Some(cost) = result.total_cost_usd.filter(|cost| *cost > 0.0) {
                usage = usage.cost(acp::Cost::new(cost, "USD"));
            }
            if let Some(duration) = result.duration_ms {
                let meta: acp::Meta = [("turnDurationMs".to_owned(), Value::from(duration))].into_iter().collect();
                usage = usage.meta(meta);
            }
            self.update(acp::SessionUpdate::UsageUpdate(usage));
        }
        let Some(prompt) = self.prompt.clone() else { return };
        let resume_refused = result.is_error && self.resuming && !prompt.started && result.num_turns == 0;
        if resume_refused && !self.cancelled {
            // The CLI could not find the session to resume (it was deleted, or made on another
            // machine): the conversation goes on in a new CLI session, and the person is told.
            let why = result.errors.join("; ");
            self.log(format!("Claude Code could not resume session {:?}: {why}", self.cli_session));
            let title = "Claude Code could not resume its earlier session, so this prompt starts a new one: it does not remember the earlier turns.";
            let mut notice = acp::Notice::new(acp::NoticeSeverity::Warning, title);
            if !why.is_empty() {
                notice = notice.description(why);
            }
            self.update(acp::SessionUpdate::Notice(notice));
            self.cli_session = None;
            self.finish_process(now);
            // The refusing CLI finishes by itself; the prompt goes to a new one.
            self.process = Process::Idle;
            self.send_user_message(prompt.content);
            return;
        }
        let outcome = if self.cancelled {
            Ok(acp::StopReason::Cancelled)
        } else if result.is_error {
            let mut words = result.result.clone().unwrap_or_default();
            if words.is_empty() {
                words = result.errors.join("; ");
            }
            if words.is_empty() {
                words = format!("Claude Code ended the turn with an error ({})", result.subtype);
            }
            Err(words)
        } else {
            Ok(match result.stop_reason.as_deref() {
                Some("max_tokens") => acp::StopReason::MaxTokens,
                Some("refusal") => acp::StopReason::Refusal,
                _ => acp::StopReason::EndTurn,
            })
        };
        self.end_prompt(outcome);
        match self.mode {
            ProcessMode::Oneshot => self.finish_process(now),
            ProcessMode::Persistent { .. } => self.idle_since = Some(now),
        }
    }

    /// Ends the prompt in flight with `outcome`.
    pub(super) fn end_prompt(&mut self, outcome: Result<acp::StopReason, String>) {
        let Some(prompt) = self.prompt.take() else { return };
        self.interrupted_at = None;
        // A tool the turn ended in the middle of (an interrupt, a CLI that died) did not finish.
        for id in std::mem::take(&mut self.unfinished_tools) {
            let fields = acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Failed);
            self.update(acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id, fields)));
        }
        self.streamed.clear();
        self.streaming_message = None;
        let line = match outcome {
            Ok(stop_reason) => jsonrpc::encode_result(&prompt.id, &acp::PromptResponse::new(stop_reason)),
            Err(message) => jsonrpc::encode_error(&prompt.id, &RpcError::internal_error().data(Value::from(message))),
        };
        self.to_client.push_back(line);
    }
}

/// `text` as a fenced code block, kept as it is: the fence is longer than any run of backticks
/// in it.
fn preformatted(text: &str) -> String {
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}text\n{}\n{fence}", text.trim_end_matches('\n'))
}

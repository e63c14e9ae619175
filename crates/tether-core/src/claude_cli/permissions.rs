//! The CLI's `can_use_tool` as ACP permission requests: the diff an edit would make (from the
//! file's text, read through the client), the options ("always" from the CLI's own suggestions),
//! and the client's answer as the CLI's allow or deny.

use super::*;

impl ClaudeCli {
    pub(super) fn on_can_use_tool(&mut self, cli_request: String, ask: CanUseToolAsk) {
        // The tool call the permission belongs to, in case no `assistant` line announced it.
        if !self.tool_uses.contains_key(&ask.tool_use_id) {
            self.update(acp::SessionUpdate::ToolCall(tools::tool_call(&ask.tool_use_id, &ask.tool, &self.workspace())));
            self.tool_uses.insert(ask.tool_use_id.clone(), ask.tool.clone());
            self.unfinished_tools.insert(ask.tool_use_id.clone());
        }
        let file = tools::edited_file(&ask.tool.name, &ask.tool.input).map(str::to_owned);
        match file {
            // The diff is computed from the file's text as the editor has it; read only inside
            // the workspace, where reading asks nobody. Replaying, the log has no such read.
            Some(path) if !self.replaying && self.in_workspace(&path) => {
                let id = format!("claude:read:{cli_request}");
                let request = serde_json::json!({ "sessionId": ACP_SESSION_ID, "path": path });
                let line = jsonrpc::encode_request(&RequestId::Str(id.clone()), "fs/read_text_file", &request);
                self.asked.insert(id, Asked::Read { cli_request, ask });
                self.to_client.push_back(line);
            }
            _ => self.ask_permission(cli_request, ask, None),
        }
    }

    /// Asks the client for the permission; `before` is the edited file's text when it was read
    /// (`Some(None)`: it does not exist).
    pub(super) fn ask_permission(&mut self, cli_request: String, ask: CanUseToolAsk, before: Option<Option<String>>) {
        let call = tools::tool_call(&ask.tool_use_id, &ask.tool, &self.workspace());
        let mut fields = acp::ToolCallUpdateFields::new()
            .title(call.title)
            .kind(call.kind)
            .status(acp::ToolCallStatus::Pending)
            .raw_input(ask.tool.input.clone());
        if let (Some(before), Some(path)) = (&before, tools::edited_file(&ask.tool.name, &ask.tool.input))
            && let Some(after) = tools::text_after(&ask.tool.name, &ask.tool.input, before.as_deref())
        {
            let diff = acp::Diff::new(path, after).old_text(before.clone());
            fields = fields.content(vec![acp::ToolCallContent::Diff(diff)]);
        }
        let mut options = vec![acp::PermissionOption::new("allow_once", "Allow", acp::PermissionOptionKind::AllowOnce)];
        if ask.suggestions.as_ref().and_then(Value::as_array).is_some_and(|list| !list.is_empty()) {
            options.push(acp::PermissionOption::new(
                "allow_always",
                always_label(ask.suggestions.as_ref()),
                acp::PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(acp::PermissionOption::new("reject_once", "Reject", acp::PermissionOptionKind::RejectOnce));
        let request = acp::RequestPermissionRequest::new(
            ACP_SESSION_ID,
            acp::ToolCallUpdate::new(ask.tool_use_id.clone(), fields),
            options,
        );
        let id = permission_id(&cli_request);
        let line = jsonrpc::encode_request(&RequestId::Str(id.clone()), "session/request_permission", &request);
        self.asked.insert(id, Asked::Permission { cli_request, ask });
        self.to_client.push_back(line);
    }
}

/// The ACP id of the permission request for the CLI's `can_use_tool` `cli_request`: the same
/// live and replayed, so a replayed answer finds its card.
pub(super) fn permission_id(cli_request: &str) -> String {
    format!("claude:permission:{cli_request}")
}

/// What "always" would allow, from the CLI's suggestions.
fn always_label(suggestions: Option<&Value>) -> String {
    let first = suggestions.and_then(Value::as_array).and_then(|list| list.first());
    match first.and_then(|suggestion| suggestion.get("type")).and_then(Value::as_str) {
        Some("setMode") => match first.and_then(|suggestion| suggestion.get("mode")).and_then(Value::as_str) {
            Some("acceptEdits") => "Allow, and accept edits from now on".to_owned(),
            Some(mode) => format!("Allow, and switch to {mode}"),
            None => "Always allow".to_owned(),
        },
        _ => "Always allow".to_owned(),
    }
}

/// The CLI's answer for the client's permission `outcome` (`None`: the client refused the
/// request, which counts as a cancel).
pub(super) fn permission_answer(outcome: Option<acp::RequestPermissionOutcome>, ask: &CanUseToolAsk) -> Value {
    match outcome {
        Some(acp::RequestPermissionOutcome::Selected(selected)) => match &*selected.option_id.0 {
            "allow_once" => serde_json::json!({ "behavior": "allow", "updatedInput": ask.tool.input }),
            "allow_always" => serde_json::json!({
                "behavior": "allow",
                "updatedInput": ask.tool.input,
                "updatedPermissions": ask.suggestions.clone().unwrap_or(Value::Array(Vec::new())),
            }),
            _ => serde_json::json!({
                "behavior": "deny",
                "message": "Rejected in Tether, by the person or by a rule or mode of theirs.",
            }),
        },
        _ => serde_json::json!({
            "behavior": "deny",
            "message": "The person cancelled the turn in Tether.",
            "interrupt": true,
        }),
    }
}

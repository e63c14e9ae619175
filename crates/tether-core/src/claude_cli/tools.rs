//! The CLI's tools as ACP tool calls: a `tool_use` block becomes a tool call with a title, a kind,
//! the file it touches and (for edits) the proposed diff; its `tool_result` becomes the call's
//! update. Bash runs in the CLI itself; its output is passed on the way ACP adapters that run
//! commands themselves pass it (`_meta.terminal_*`), so the chat shows it as a terminal card.

use agent_client_protocol_schema::v1 as acp;
use serde_json::Value;

use crate::workspace_path::Workspace;

/// A tool use the CLI announced, kept until its result.
#[derive(Debug, Clone)]
pub(super) struct ToolUse {
    pub name: String,
    pub input: Value,
}

fn text_of<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// The file an edit tool writes, when `name` is one.
pub(super) fn edited_file<'a>(name: &str, input: &'a Value) -> Option<&'a str> {
    match name {
        "Write" | "Edit" | "MultiEdit" => text_of(input, "file_path"),
        "NotebookEdit" => text_of(input, "notebook_path"),
        _ => None,
    }
}

/// The text an edit tool leaves in the file, given its text before (`None`: the file does not
/// exist or could not be read). `None` when the edit does not apply to that text.
pub(super) fn text_after(name: &str, input: &Value, before: Option<&str>) -> Option<String> {
    match name {
        "Write" => text_of(input, "content").map(str::to_owned),
        "Edit" => apply_edit(before?, input),
        "MultiEdit" => {
            let mut text = before?.to_owned();
            for edit in input.get("edits")?.as_array()? {
                text = apply_edit(&text, edit)?;
            }
            Some(text)
        }
        _ => None,
    }
}

/// One `old_string` → `new_string` replacement (all of them with `replace_all`).
fn apply_edit(text: &str, edit: &Value) -> Option<String> {
    let old = text_of(edit, "old_string")?;
    let new = text_of(edit, "new_string")?;
    if old.is_empty() || !text.contains(old) {
        return None;
    }
    if edit.get("replace_all").and_then(Value::as_bool).unwrap_or(false) {
        Some(text.replace(old, new))
    } else {
        Some(text.replacen(old, new, 1))
    }
}

/// The diff an edit tool proposes, from its input alone: the whole new file for Write, the
/// replaced snippets for Edit (used where the file's text is not at hand).
pub(super) fn snippet_diff(name: &str, input: &Value) -> Vec<acp::ToolCallContent> {
    let Some(path) = edited_file(name, input) else { return Vec::new() };
    let edits: Vec<&Value> = match name {
        "Write" => {
            let content = text_of(input, "content").unwrap_or_default();
            return vec![acp::ToolCallContent::Diff(acp::Diff::new(path, content))];
        }
        "Edit" => vec![input],
        "MultiEdit" => {
            input.get("edits").and_then(Value::as_array).map(|edits| edits.iter().collect()).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    edits
        .into_iter()
        .filter_map(|edit| {
            let old = text_of(edit, "old_string")?;
            let new = text_of(edit, "new_string")?;
            Some(acp::ToolCallContent::Diff(acp::Diff::new(path, new).old_text(old.to_owned())))
        })
        .collect()
}

/// The tool call for a `tool_use` block.
pub(super) fn tool_call(id: &str, tool: &ToolUse, workspace: &Workspace) -> acp::ToolCall {
    let input = &tool.input;
    let path = |key: &str| text_of(input, key).map(|path| workspace.label(path));
    let (title, kind) = match tool.name.as_str() {
        "Read" => (format!("Read {}", path("file_path").unwrap_or_default()), acp::ToolKind::Read),
        "Write" => (format!("Write {}", path("file_path").unwrap_or_default()), acp::ToolKind::Edit),
        "Edit" | "MultiEdit" => (format!("Edit {}", path("file_path").unwrap_or_default()), acp::ToolKind::Edit),
        "NotebookEdit" => (format!("Edit {}", path("notebook_path").unwrap_or_default()), acp::ToolKind::Edit),
        "Bash" => (text_of(input, "command").unwrap_or("Run a command").to_owned(), acp::ToolKind::Execute),
        "Glob" => (format!("Find {}", text_of(input, "pattern").unwrap_or_default()), acp::ToolKind::Search),
        "Grep" => (format!("Search for {}", text_of(input, "pattern").unwrap_or_default()), acp::ToolKind::Search),
        "WebFetch" => (format!("Fetch {}", text_of(input, "url").unwrap_or_default()), acp::ToolKind::Fetch),
        "WebSearch" => {
            (format!("Search the web for {}", text_of(input, "query").unwrap_or_default()), acp::ToolKind::Fetch)
        }
        "Task" | "Agent" => (text_of(input, "description").unwrap_or("Subagent").to_owned(), acp::ToolKind::Think),
        "TodoWrite" => ("Update the plan".to_owned(), acp::ToolKind::Think),
        "ExitPlanMode" => ("Ready to code".to_owned(), acp::ToolKind::SwitchMode),
        name => (name.to_owned(), acp::ToolKind::Other),
    };
    let mut call = acp::ToolCall::new(id.to_owned(), title.trim_end().to_owned())
        .kind(kind)
        .status(acp::ToolCallStatus::Pending)
        .raw_input(input.clone())
        .content(snippet_diff(&tool.name, input));
    let location = ["file_path", "notebook_path", "path"].iter().find_map(|key| text_of(input, key));
    if let Some(location) = location {
        call = call.locations(vec![acp::ToolCallLocation::new(location)]);
    }
    if tool.name == "Bash" {
        call = call.meta(meta([("terminal_info", serde_json::json!({ "terminal_id": id, "cwd": workspace.first() }))]));
        call = call.content(vec![acp::ToolCallContent::Terminal(acp::Terminal::new(id.to_owned()))]);
    }
    call
}

/// The update that ends tool call `id` with its `tool_result` block (`structured`: the line's
/// `tool_use_result`).
pub(super) fn tool_result(
    id: &str,
    tool: Option<&ToolUse>,
    block: &Value,
    structured: Option<&Value>,
) -> acp::ToolCallUpdate {
    let failed = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    let text = result_text(block.get("content"));
    let status = if failed { acp::ToolCallStatus::Failed } else { acp::ToolCallStatus::Completed };
    let mut fields = acp::ToolCallUpdateFields::new().status(status).raw_output(block.get("content").cloned());
    match tool.map(|tool| tool.name.as_str()) {
        Some("Bash") if !failed || structured.is_some_and(Value::is_object) => {
            let stdout = structured.and_then(|result| text_of(result, "stdout")).unwrap_or(&text);
            let stderr = structured.and_then(|result| text_of(result, "stderr")).unwrap_or_default();
            let mut output = stdout.to_owned();
            if !stderr.is_empty() {
                if !output.is_empty() && !output.ends_with('\n') {
                    output.push('\n');
                }
                output.push_str(stderr);
            }
            let interrupted = structured.and_then(|result| result.get("interrupted")).and_then(Value::as_bool);
            let exit = if failed || interrupted == Some(true) {
                serde_json::json!({ "terminal_id": id, "exit_code": 1, "signal": null })
            } else {
                serde_json::json!({ "terminal_id": id, "exit_code": 0, "signal": null })
            };
            let meta = meta([
                ("terminal_output", serde_json::json!({ "terminal_id": id, "data": output })),
                ("terminal_exit", exit),
            ]);
            return acp::ToolCallUpdate::new(id.to_owned(), fields).meta(meta);
        }
        // A done edit shows the diff of the whole file, from the text the CLI edited (so the
        // card is the same live and read back from the log, which holds no file).
        Some(name @ ("Write" | "Edit" | "MultiEdit")) if !failed => {
            let original = structured.and_then(|result| result.get("originalFile"));
            let (Some(tool), Some(original)) = (tool, original) else {
                return acp::ToolCallUpdate::new(id.to_owned(), fields);
            };
            let before = original.as_str();
            if let (Some(path), Some(after)) = (edited_file(name, &tool.input), text_after(name, &tool.input, before)) {
                let diff = acp::Diff::new(path, after).old_text(before.map(str::to_owned));
                fields = fields.content(vec![acp::ToolCallContent::Diff(diff)]);
            }
        }
        Some("NotebookEdit") if !failed => {}
        _ if !text.is_empty() => {
            fields = fields.content(vec![acp::ToolCallContent::from(text)]);
        }
        _ => {}
    }
    acp::ToolCallUpdate::new(id.to_owned(), fields)
}

/// The text of a `tool_result`'s content: a string, or text blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The plan a `TodoWrite` sets, as ACP plan entries.
pub(super) fn plan(input: &Value) -> Option<acp::Plan> {
    let todos = input.get("todos")?.as_array()?;
    let entries = todos
        .iter()
        .filter_map(|todo| {
            let content = text_of(todo, "content")?;
            let status = match text_of(todo, "status") {
                Some("completed") => acp::PlanEntryStatus::Completed,
                Some("in_progress") => acp::PlanEntryStatus::InProgress,
                _ => acp::PlanEntryStatus::Pending,
            };
            Some(acp::PlanEntry::new(content, acp::PlanEntryPriority::Medium, status))
        })
        .collect();
    Some(acp::Plan::new(entries))
}

fn meta<const N: usize>(pairs: [(&str, Value); N]) -> acp::Meta {
    pairs.into_iter().map(|(key, value)| (key.to_owned(), value)).collect()
}

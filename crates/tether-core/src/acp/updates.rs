//! `session/update` folded into the thread: message chunks, tool calls and their updates, plans,
//! and the places the agent's tool calls point at.

use agent_client_protocol_schema::v1 as acp;

use crate::permissions::{RequestPath, command_of};
use crate::review::preview_lines;
use crate::thread::{
    ChunkKind, Entry, EntryIndex, Location, PlanEntryView, ToolCallView, ToolContent, ToolStatus, UserMessage,
};

use super::modes::{AgentModes, agent_modes};
use super::{AcpClient, AcpEvent, PREVIEW_BUDGET, prompt_content, wire_name};

impl AcpClient {
    pub(super) fn on_session_update(&mut self, update: acp::SessionUpdate) {
        let Some(update) = self.on_session_state_update(update) else { return };
        match update {
            acp::SessionUpdate::UserMessageChunk(chunk) => {
                let mut message = match self.thread.entries().last() {
                    // Agents replaying history stream the user's message in chunks too.
                    Some(Entry::User(message)) => message.clone(),
                    _ => UserMessage::text(""),
                };
                match prompt_content::attachment_of(&chunk.content, &self.workspace) {
                    Some(attachment) => message.attachments.push(attachment),
                    None => message.text.push_str(&content_text(&chunk.content)),
                }
                match self.thread.entries().last() {
                    Some(Entry::User(_)) => {
                        let index = (self.thread.entries().len() - 1) as EntryIndex;
                        self.thread.replace(index, Entry::User(message));
                    }
                    _ => {
                        self.thread.push(Entry::User(message));
                    }
                }
            }
            acp::SessionUpdate::AgentMessageChunk(chunk) => {
                self.thread.append_agent_text(ChunkKind::Text, &content_text(&chunk.content));
            }
            acp::SessionUpdate::AgentThoughtChunk(chunk) => {
                self.thread.append_agent_text(ChunkKind::Thought, &content_text(&chunk.content));
            }
            acp::SessionUpdate::ToolCall(call) => {
                let meta = call.meta.clone();
                let id = call.tool_call_id.0.to_string();
                let before = self.first_location(&id);
                let status = call.status;
                let mut view = tool_call_view(call);
                view.status = self.shown_status(status);
                self.present_tool_call(&mut view);
                match self.thread.find_tool_call(&view.id) {
                    // A repeated tool_call for a known id replaces it, keeping a pending permission.
                    Some(index) => self.thread.update_tool_call(index, |existing| {
                        let permission = existing.permission.take();
                        *existing = ToolCallView { permission, ..view };
                    }),
                    None => {
                        let index = self.thread.push(Entry::ToolCall(view));
                        self.after_tool_call(index);
                    }
                }
                if let Some(index) = self.thread.find_tool_call(&id) {
                    self.link_terminals(index);
                }
                self.on_terminal_meta(&id, meta.as_ref());
                self.follow_location(&id, before);
            }
            acp::SessionUpdate::ToolCallUpdate(update) => {
                let meta = update.meta.clone();
                let id = update.tool_call_id.0.to_string();
                let before = self.first_location(&id);
                let index = self.upsert_tool_call(update, |_| {});
                self.after_tool_call(index);
                self.link_terminals(index);
                self.on_terminal_meta(&id, meta.as_ref());
                self.follow_location(&id, before);
            }
            acp::SessionUpdate::Plan(plan) => {
                let entries = plan
                    .entries
                    .into_iter()
                    .map(|entry| PlanEntryView {
                        content: entry.content,
                        priority: wire_name(&entry.priority),
                        status: wire_name(&entry.status),
                    })
                    .collect();
                self.thread.set_plan(entries);
            }
            acp::SessionUpdate::CurrentModeUpdate(update) => {
                self.on_agent_mode(update.current_mode_id.0.to_string(), false);
            }
            acp::SessionUpdate::ConfigOptionUpdate(update) => {
                self.on_config_options(&update.config_options);
                let config_id = match &self.modes.agent {
                    Some(AgentModes::ConfigOption { config_id, .. }) => Some(config_id.clone()),
                    _ => None,
                };
                let current = update.config_options.iter().find_map(|option| {
                    let acp::SessionConfigKind::Select(select) = &option.kind else { return None };
                    let is_ours = match &config_id {
                        Some(id) => *option.id.0 == **id,
                        None => option.category == Some(acp::SessionConfigOptionCategory::Mode),
                    };
                    is_ours.then(|| select.current_value.0.to_string())
                });
                if config_id.is_none() && !matches!(self.modes.agent, Some(AgentModes::SessionModes { .. })) {
                    self.modes.agent = agent_modes(None, Some(&update.config_options));
                }
                if let Some(current) = current {
                    self.on_agent_mode(current, true);
                }
            }
            // Session state, notices and compaction were taken by `on_session_state_update`; what
            // is left are kinds of a newer protocol (or unstable ones), legal to ignore.
            _ => {}
        }
    }

    pub(super) fn first_location(&self, tool_call: &str) -> Option<Location> {
        let index = self.thread.find_tool_call(tool_call)?;
        self.thread.tool_call(index)?.locations.first().cloned()
    }

    /// Tells the host where a tool call now points, when that changed and is inside the
    /// workspace (the agent is not trusted to make the editor open just any file).
    pub(super) fn follow_location(&mut self, tool_call: &str, before: Option<Location>) {
        let Some(now) = self.first_location(tool_call) else { return };
        if before.as_ref() == Some(&now) {
            return;
        }
        // By the text of the path: see `links` for why following does not resolve it.
        if let RequestPath::Inside(_) = self.workspace.resolve(&now.path) {
            self.events.push_back(AcpEvent::ToolLocation { path: now.path, line: now.line });
        }
    }

    /// Applies a `tool_call_update`, creating the tool call when the agent never announced it
    /// (forgiving, as Zed is: the person still sees what the agent is doing). `also` makes a
    /// further change in the same patch (attaching a permission request).
    pub(super) fn upsert_tool_call(
        &mut self,
        update: acp::ToolCallUpdate,
        also: impl FnOnce(&mut ToolCallView),
    ) -> EntryIndex {
        let id = update.tool_call_id.0.to_string();
        let existing = self.thread.find_tool_call(&id);
        let mut call =
            existing.and_then(|index| self.thread.tool_call(index).cloned()).unwrap_or_else(|| ToolCallView {
                id,
                title: "Tool call".to_owned(),
                kind: "other".to_owned(),
                status: ToolStatus::Pending,
                content: Vec::new(),
                locations: Vec::new(),
                raw_input: None,
                command: None,
                raw_output: None,
                permission: None,
            });
        let fields = update.fields;
        if let Some(status) = fields.status.map(|status| self.shown_status(status)) {
            // While the person is being asked, the card keeps saying so; the status the agent
            // reports meanwhile is the one shown once the question is answered.
            match existing.and_then(|index| self.cards.waiting.values_mut().find(|pending| pending.tool_call == index))
            {
                Some(pending) => pending.status_before = status,
                None => call.status = status,
            }
        }
        if let Some(title) = fields.title {
            call.title = title;
        }
        if let Some(kind) = fields.kind {
            call.kind = wire_name(&kind);
        }
        if let Some(content) = fields.content {
            call.content = content.iter().map(tool_content).collect();
        }
        if let Some(locations) = fields.locations {
            call.locations = locations.iter().map(location).collect();
        }
        if let Some(raw_input) = fields.raw_input {
            call.command = command_of(&raw_input);
            call.raw_input = Some(raw_input);
        }
        if let Some(raw_output) = fields.raw_output {
            call.raw_output = Some(raw_output);
        }
        self.present_tool_call(&mut call);
        also(&mut call);
        match existing {
            Some(index) => {
                self.thread.replace(index, Entry::ToolCall(call));
                index
            }
            None => self.thread.push(Entry::ToolCall(call)),
        }
    }
}

impl AcpClient {
    /// Readies a tool call for its card: its paths as the person reads them, and each diff linked
    /// to the file change card of this turn that shows the same file, so the change is shown once.
    pub(super) fn present_tool_call(&self, call: &mut ToolCallView) {
        for location in &mut call.locations {
            location.label = self.label_of(&location.path);
        }
        for content in &mut call.content {
            if let ToolContent::Diff { path, label, change, .. } = content {
                *label = self.label_of(path);
                *change = self.change_showing(path);
            }
        }
    }

    /// Whether a diff of the file the agent named `named` is a diff of the changed file `path`
    /// (absolute): by the path's text, or through the links it was last seen to go through (a
    /// write is reviewed where its path leads).
    pub(super) fn same_file(&self, named: &str, path: &str) -> bool {
        let target = self.target(named);
        target.named == path || target.leads_to == path
    }
}

impl AcpClient {
    /// A status the agent reported, as the card shows it: after the person's Stop, a tool call
    /// the agent ends as failed was stopped.
    pub(super) fn shown_status(&self, status: acp::ToolCallStatus) -> ToolStatus {
        match tool_status(status) {
            ToolStatus::Failed if self.turn.stopped => ToolStatus::Cancelled,
            status => status,
        }
    }
}

pub(super) fn tool_status(status: acp::ToolCallStatus) -> ToolStatus {
    match status {
        acp::ToolCallStatus::Pending => ToolStatus::Pending,
        acp::ToolCallStatus::InProgress => ToolStatus::InProgress,
        acp::ToolCallStatus::Completed => ToolStatus::Completed,
        acp::ToolCallStatus::Failed => ToolStatus::Failed,
        // A status from a newer protocol: shown as still running rather than guessed.
        _ => ToolStatus::InProgress,
    }
}

/// The thread's view of a tool call the agent announced.
pub fn tool_call_view(call: acp::ToolCall) -> ToolCallView {
    ToolCallView {
        id: call.tool_call_id.0.to_string(),
        title: call.title,
        kind: wire_name(&call.kind),
        status: tool_status(call.status),
        content: call.content.iter().map(tool_content).collect(),
        locations: call.locations.iter().map(location).collect(),
        command: call.raw_input.as_ref().and_then(command_of),
        raw_input: call.raw_input,
        raw_output: call.raw_output,
        permission: None,
    }
}

pub(super) fn tool_content(content: &acp::ToolCallContent) -> ToolContent {
    match content {
        acp::ToolCallContent::Content(content) => ToolContent::Text { text: content_text(&content.content) },
        acp::ToolCallContent::Diff(diff) => {
            let (lines, preview, hidden_lines) =
                preview_lines(diff.old_text.as_deref().unwrap_or(""), &diff.new_text, &PREVIEW_BUDGET);
            let stats = preview.stats();
            let path = diff.path.to_string_lossy().into_owned();
            ToolContent::Diff {
                label: path.clone(),
                path,
                change: None,
                old_text: diff.old_text.clone(),
                new_text: diff.new_text.clone(),
                added: stats.added as u32,
                removed: stats.removed as u32,
                lines,
                hidden_lines,
            }
        }
        acp::ToolCallContent::Terminal(terminal) => {
            ToolContent::Terminal { terminal_id: terminal.terminal_id.0.to_string() }
        }
        _ => ToolContent::Text { text: "(content of a kind this version of Tether does not show)".to_owned() },
    }
}

pub(super) fn location(location: &acp::ToolCallLocation) -> Location {
    let path = location.path.to_string_lossy().into_owned();
    Location { label: path.clone(), path, line: location.line }
}

/// The text of a content block; other kinds are named so the person knows something was there.
pub(super) fn content_text(block: &acp::ContentBlock) -> String {
    match block {
        acp::ContentBlock::Text(text) => text.text.clone(),
        acp::ContentBlock::Image(_) => "[image]".to_owned(),
        acp::ContentBlock::Audio(_) => "[audio]".to_owned(),
        acp::ContentBlock::ResourceLink(link) => format!("[{}]({})", link.name, link.uri),
        acp::ContentBlock::Resource(resource) => match &resource.resource {
            acp::EmbeddedResourceResource::TextResourceContents(text) => text.text.clone(),
            _ => "[embedded resource]".to_owned(),
        },
        _ => "[content]".to_owned(),
    }
}

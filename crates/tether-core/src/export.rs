//! A session's thread as a Markdown document, for the Export command: the conversation as the
//! person saw it in the chat, readable in VS Code's Markdown preview and on GitHub.
//!
//! The document follows the chat: the person's prompts and the agent's replies under headings (one
//! heading per reply, however many chunks and tool calls it took), tool calls with their diffs,
//! terminals and permission outcomes, file changes with the person's decisions, Tether's notices;
//! then how the last turn ended when it did not end normally, and the agent's plan.
//!
//! What the person and the agent wrote is markdown already and goes in as is. Everything else is
//! kept from being read as markdown: output, diffs and notice details only ever go inside fenced
//! blocks, with a fence longer than any backtick run they hold so that no content can close it
//! early; paths and rule descriptions go inside code spans; Tether's own one-line texts (notices,
//! error messages, option names) have markdown's punctuation escaped. A markdown text that leaves
//! a code fence open (a reply cut off in the middle of a code block) gets its closing fence, so
//! that it does not swallow the rest of the document.
//!
//! No clock here: the times in the header are the caller's.

use agent_client_protocol_schema::v1 as acp;

use crate::permissions::{DecidedBy, RuleScope};
use crate::review::{ChangeOrigin, ChangePhase, DiffLineView, DiffSign, FileChangeKind, FileChangeView, HunkState};
use crate::thread::{
    AttachmentView, ChunkKind, Entry, NoticeLevel, NoticeView, PermissionOutcome, PermissionView, PlanEntryView,
    RestoreState, RestoreView, TerminalOrigin, TerminalState, TerminalView, Thread, ToolCallView, ToolContent,
    ToolStatus, TurnState,
};

/// What the document says about the session before its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportHeader {
    /// The session's title: the document's heading.
    pub title: String,
    /// The agent profile's name: the heading of the agent's replies.
    pub agent: String,
    /// When the session started (RFC 3339, UTC), when known.
    pub created: Option<String>,
    /// When the export was made (RFC 3339, UTC), when the caller knows (the engine has no wall
    /// clock; the file's own time says it then).
    pub exported: Option<String>,
}

/// The thread as a Markdown document, ending with a newline.
pub fn thread_markdown(header: &ExportHeader, thread: &Thread) -> String {
    let agent = if header.agent.trim().is_empty() { "Agent".to_owned() } else { plain_text(&header.agent) };
    let mut document = Document { blocks: Vec::new(), agent_heading: format!("## {agent}"), in_reply: false };
    document.header(header, &agent);
    for entry in thread.entries() {
        match entry {
            Entry::User(message) => {
                document.push("## You".to_owned());
                document.in_reply = false;
                document.push_markdown(&message.text);
                if !message.attachments.is_empty() {
                    let listed: Vec<String> = message.attachments.iter().map(attachment_markdown).collect();
                    document.push(format!("Attached: {}", listed.join(", ")));
                }
            }
            Entry::Agent(message) => {
                if message.chunks.iter().all(|chunk| chunk.text.trim().is_empty()) {
                    continue;
                }
                document.reply();
                for chunk in &message.chunks {
                    match chunk.kind {
                        ChunkKind::Text => document.push_markdown(&chunk.text),
                        ChunkKind::Thought => document.push_thought(&chunk.text),
                    }
                }
            }
            Entry::ToolCall(call) => {
                document.reply();
                document.tool_call(call, thread.terminals());
            }
            Entry::FileChange(change) => {
                document.reply();
                document.push(file_change(change));
            }
            // A notice is Tether's, not the person's or the agent's: it stays in the section it
            // interrupts rather than opening one.
            Entry::Notice(notice) => document.push(notice_block(notice)),
            // So is a restore: the person's, done by Tether, between the turns.
            Entry::Restore(restore) => document.push(restore_block(restore)),
        }
    }
    if let Some(line) = turn_line(thread.turn()) {
        document.push(format!("*{line}*"));
    }
    if !thread.plan().is_empty() {
        document.push("## Plan".to_owned());
        document.push(plan_checklist(thread.plan()));
    }
    let mut text = document.blocks.join("\n\n");
    text.push('\n');
    text
}

/// The document being written: blocks that end up separated by blank lines.
struct Document {
    blocks: Vec<String>,
    agent_heading: String,
    /// Whether the last heading is the agent's, so that the rest of a reply goes under it.
    in_reply: bool,
}

impl Document {
    fn push(&mut self, block: String) {
        self.blocks.push(block);
    }

    fn header(&mut self, header: &ExportHeader, agent: &str) {
        let title = one_line(&header.title);
        self.push(format!("# {}", if title.is_empty() { "Tether session" } else { &title }));
        let mut facts = vec![agent.to_owned()];
        if let Some(created) = &header.created {
            facts.push(format!("started {}", readable_time(created)));
        }
        if let Some(exported) = &header.exported {
            facts.push(format!("exported {}", readable_time(exported)));
        }
        self.push(format!("*{}*", facts.join(" · ")));
    }

    /// Opens the agent's heading unless the reply under way already has it.
    fn reply(&mut self) {
        if !self.in_reply {
            self.blocks.push(self.agent_heading.clone());
            self.in_reply = true;
        }
    }

    fn push_markdown(&mut self, text: &str) {
        if let Some(block) = markdown_block(text) {
            self.push(block);
        }
    }

    /// A thought, collapsed as in the chat. The blank lines inside `<details>` are what make
    /// GitHub and VS Code render the thought as markdown rather than as raw text.
    fn push_thought(&mut self, text: &str) {
        if let Some(block) = markdown_block(text) {
            self.push(format!("<details>\n<summary>Thinking</summary>\n\n{block}\n\n</details>"));
        }
    }

    fn tool_call(&mut self, call: &ToolCallView, terminals: &[TerminalView]) {
        let title = one_line(&call.title);
        let title = if title.is_empty() { "Tool call".to_owned() } else { title };
        let mut heading = format!("**{} {title}** — {}", kind_icon(&call.kind), status_label(call.status));
        if !call.locations.is_empty() {
            let locations: Vec<String> = call
                .locations
                .iter()
                // As the chat shows them: relative to the workspace, which a reader of the
                // document elsewhere (an issue, a review) knows, rather than this machine's folders.
                .map(|location| match location.line {
                    Some(line) => code_span(&format!("{}:{line}", location.label)),
                    None => code_span(&location.label),
                })
                .collect();
            // A backslash at the end of a line is a hard line break: the locations sit under the
            // title without the gap of a new paragraph.
            heading.push_str("\\\n");
            heading.push_str(&locations.join(", "));
        }
        self.push(heading);

        let terminal_of = |id: &str| terminals.iter().find(|terminal| terminal.id == id);
        let shows_a_terminal = call.content.iter().any(
            |content| matches!(content, ToolContent::Terminal { terminal_id } if terminal_of(terminal_id).is_some()),
        );
        // A terminal's block starts with its command; without one, the command the agent asked
        // to run is still what the call is about.
        if let Some(command) = &call.command
            && !shows_a_terminal
        {
            self.push(fenced("console", &format!("$ {command}")));
        }
        for content in &call.content {
            match content {
                ToolContent::Text { text } => self.push_markdown(text),
                ToolContent::Diff { label, added, removed, lines, hidden_lines, .. } => {
                    self.push(diff_block(label, *added, *removed, lines, *hidden_lines));
                }
                ToolContent::Terminal { terminal_id } => match terminal_of(terminal_id) {
                    Some(terminal) => self.push(terminal_block(terminal)),
                    None => self.push("*No output was recorded for this command*".to_owned()),
                },
            }
        }
        if let Some(permission) = &call.permission {
            self.push(format!("*Permission: {}*", permission_outcome(permission)));
        }
    }
}

/// Markdown written by the person or the agent, ready to be a block of the document: without
/// blank lines around it (leading spaces on its first line are markdown, and are kept), with a
/// code fence it left open closed. `None` when there is nothing to show.
fn markdown_block(text: &str) -> Option<String> {
    let mut text = text.trim_end();
    while let Some((first, rest)) = text.split_once('\n')
        && first.trim().is_empty()
    {
        text = rest;
    }
    if text.trim().is_empty() {
        return None;
    }
    let mut block = text.to_owned();
    if let Some(closer) = unclosed_fence(text) {
        block.push('\n');
        block.push_str(&closer);
    }
    Some(block)
}

/// A fenced code block a markdown text opened, as far as closing it needs.
struct OpenFence {
    marker: char,
    len: usize,
    /// The spaces before the opening fence: a closer indented alike closes it both at the top
    /// level and inside a list item continued by indentation.
    indent: usize,
    /// Opened on a line that starts a block quote or a list item: the container ends, and the
    /// fence with it, at the first unindented block after the text, so it needs no closer.
    in_container: bool,
}

/// The line that closes the fenced code block `text` leaves open, if it leaves one open.
///
/// Fences are paired as CommonMark pairs them (the same character, a closer at least as long as
/// the opener with nothing after it). An opener is looked for through block quote and list item
/// markers, so that a fence inside a list item is paired with its own closer rather than its
/// closer taken for a new fence; a line indented by four spaces or more is indented code, never a
/// fence. When in doubt this finds no open fence: a closer added after a text that is not in a
/// fence would open one and swallow the rest of the document.
fn unclosed_fence(text: &str) -> Option<String> {
    let mut open: Option<OpenFence> = None;
    for line in text.lines() {
        match &open {
            None => {
                let (in_container, rest) = strip_containers(line);
                // An info string with a backtick makes a line of backticks an inline code span.
                if let Some((marker, len, after)) = fence_run(rest)
                    && !(marker == '`' && after.contains('`'))
                {
                    let indent = line.len() - line.trim_start_matches(' ').len();
                    open = Some(OpenFence { marker, len, indent, in_container });
                }
            }
            Some(fence) => {
                // Inside a top-level fence, a line with a container marker is code like any other.
                let rest = if fence.in_container { strip_containers(line).1 } else { line };
                if let Some((marker, len, after)) = fence_run(rest)
                    && marker == fence.marker
                    && len >= fence.len
                    && after.trim().is_empty()
                {
                    open = None;
                }
            }
        }
    }
    open.filter(|fence| !fence.in_container)
        .map(|fence| format!("{}{}", " ".repeat(fence.indent), fence.marker.to_string().repeat(fence.len)))
}

/// The line without the block quote and list item markers it starts with, and whether it had any.
fn strip_containers(line: &str) -> (bool, &str) {
    let mut rest = line;
    let mut stripped = false;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t']);
        if let Some(after) = trimmed.strip_prefix('>') {
            rest = after;
        } else if let Some(after) = list_marker(trimmed) {
            rest = after;
        } else {
            return (stripped, rest);
        }
        stripped = true;
    }
}

/// The rest of a line that starts with a list item marker (`-`, `*`, `+`, `1.`, `1)` and a space).
fn list_marker(line: &str) -> Option<&str> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker_end = match line[digits..].chars().next() {
        Some('.' | ')') if (1..=9).contains(&digits) => digits + 1,
        Some('-' | '*' | '+') if digits == 0 => 1,
        _ => return None,
    };
    let after = &line[marker_end..];
    after.starts_with([' ', '\t']).then_some(after)
}

/// A run of three or more backticks or tildes at the start of a line (after up to three spaces),
/// with what follows it.
fn fence_run(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let marker = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = trimmed.len() - trimmed.trim_start_matches(marker).len();
    (len >= 3).then(|| (marker, len, &trimmed[len..]))
}

/// `body` in a fenced code block whose fence no line of `body` can close: longer than any run
/// of backticks in it.
pub(crate) fn fenced(info: &str, body: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(body) + 1).max(3));
    if body.is_empty() { format!("{fence}{info}\n{fence}") } else { format!("{fence}{info}\n{body}\n{fence}") }
}

/// One attachment of a prompt, for the "Attached:" line.
fn attachment_markdown(attachment: &AttachmentView) -> String {
    match attachment {
        AttachmentView::File { path } => code_span(path),
        AttachmentView::Folder { path } => code_span(&format!("{path}/")),
        AttachmentView::Selection { path, start_line, end_line } if start_line == end_line => {
            format!("{} line {start_line}", code_span(path))
        }
        AttachmentView::Selection { path, start_line, end_line } => {
            format!("{} lines {start_line}-{end_line}", code_span(path))
        }
        AttachmentView::Image { mime_type, bytes } => {
            format!("an image ({}, {} KiB)", plain_text(mime_type), bytes.div_ceil(1024))
        }
        AttachmentView::Other { label } => plain_text(label),
    }
}

/// `text` as one code span, whatever backticks it holds.
fn code_span(text: &str) -> String {
    let text = one_line(text);
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    // CommonMark strips one space from each side of a span's content, which is what lets a
    // content starting or ending with a backtick stay apart from the delimiters.
    if text.is_empty() || text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// The text's words on one line, as a heading or a list item needs them.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text that is not markdown (Tether's messages, names, reasons) on one line of the document,
/// with the punctuation markdown would read as markup escaped.
fn plain_text(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '~' | '&') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// An RFC 3339 UTC time as people write it (`2026-11-23 10:00 UTC`); any other text as it is.
fn readable_time(time: &str) -> String {
    let utc = time.strip_suffix(['Z', 'z']).or_else(|| time.strip_suffix("+00:00"));
    if let Some(utc) = utc
        && let (Some(date), Some(separator), Some(clock)) = (utc.get(..10), utc.get(10..11), utc.get(11..16))
        && matches!(separator, "T" | "t" | " ")
        && shaped_like(date, "dddd-dd-dd")
        && shaped_like(clock, "dd:dd")
    {
        return format!("{date} {clock} UTC");
    }
    plain_text(time)
}

/// Whether `text` has `shape`'s characters, with `d` standing for any ASCII digit.
fn shaped_like(text: &str, shape: &str) -> bool {
    text.len() == shape.len()
        && text.chars().zip(shape.chars()).all(|(c, s)| if s == 'd' { c.is_ascii_digit() } else { c == s })
}

/// The icon of an ACP tool kind; an unknown kind gets the generic one.
fn kind_icon(kind: &str) -> &'static str {
    match kind {
        "read" => "📖",
        "edit" => "📝",
        "delete" => "🗑️",
        "move" => "📦",
        "search" => "🔍",
        "execute" => "💻",
        "think" => "💭",
        "fetch" => "🌐",
        "switch_mode" => "🔀",
        _ => "🔧",
    }
}

/// A tool call's status in the chat's words.
fn status_label(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Pending => "Pending",
        ToolStatus::InProgress => "Running",
        ToolStatus::WaitingForConfirmation => "Awaiting approval",
        ToolStatus::Completed => "Completed",
        ToolStatus::Failed => "Failed",
        ToolStatus::Cancelled => "Stopped",
    }
}

/// How a permission request was settled, or that it was not.
fn permission_outcome(permission: &PermissionView) -> String {
    let option = |id: &str| permission.options.iter().find(|option| option.id == id);
    match &permission.outcome {
        None => {
            let names: Vec<String> = permission.options.iter().map(|option| plain_text(&option.name)).collect();
            format!("waiting for an answer ({})", names.join(" · "))
        }
        Some(PermissionOutcome::Selected { option_id }) => match option(option_id) {
            Some(chosen) => match chosen.kind.as_str() {
                "allow_once" => "Allowed once by you".to_owned(),
                "allow_always" => "Always allowed by you".to_owned(),
                "reject_once" => "Rejected by you".to_owned(),
                "reject_always" => "Always rejected by you".to_owned(),
                _ => format!("“{}” chosen by you", plain_text(&chosen.name)),
            },
            None => format!("“{}” chosen by you", plain_text(option_id)),
        },
        // The reason is left out: the agent was told which rule or mode decided, and that is
        // what `by` already says.
        Some(PermissionOutcome::Auto { allowed, by, .. }) => {
            format!("{} by {}", if *allowed { "Allowed" } else { "Rejected" }, decided_by(by))
        }
        Some(PermissionOutcome::Cancelled) => "Cancelled before you answered".to_owned(),
        Some(PermissionOutcome::Withdrawn) => "Withdrawn by the agent before you answered".to_owned(),
    }
}

fn decided_by(by: &DecidedBy) -> String {
    match by {
        DecidedBy::Rule { description, scope, .. } => {
            let scope = match scope {
                RuleScope::Session => "this session",
                RuleScope::Workspace => "workspace",
            };
            format!("rule {} ({scope})", code_span(description))
        }
        DecidedBy::Mode { mode } => format!("{} mode", mode.label()),
    }
}

/// A diff as a `diff` block under its path and counts; the lines the card leaves out are counted.
fn diff_block(path: &str, added: u32, removed: u32, lines: &[DiffLineView], hidden_lines: u32) -> String {
    let caption = format!("{} +{added} −{removed}", code_span(path));
    if lines.is_empty() && hidden_lines == 0 {
        return format!("{caption} — no changes");
    }
    let body: Vec<String> = lines
        .iter()
        .map(|line| match line.sign {
            DiffSign::Context => format!(" {}", line.text),
            DiffSign::Removed => format!("-{}", line.text),
            DiffSign::Added => format!("+{}", line.text),
            DiffSign::Gap => "⋯".to_owned(),
        })
        .collect();
    let mut block = format!("{caption}\n{}", fenced("diff", &body.join("\n")));
    if hidden_lines > 0 {
        let more = if hidden_lines == 1 {
            "1 more changed line".to_owned()
        } else {
            format!("{hidden_lines} more changed lines")
        };
        block.push_str(&format!("\n*… {more} not shown*"));
    }
    block
}

/// A terminal as a `console` block (its command, then the output lines the thread keeps) with
/// how the command ended under it.
fn terminal_block(terminal: &TerminalView) -> String {
    let mut body = format!("$ {}", terminal.command);
    for line in &terminal.lines {
        body.push('\n');
        for span in &line.spans {
            body.push_str(&span.text);
        }
    }
    let mut facts = vec![terminal_state(&terminal.state)];
    if !matches!(terminal.state, TerminalState::Failed { .. }) {
        facts.push(elapsed(terminal.elapsed_ms));
    }
    if terminal.hidden_lines > 0 {
        let lines = if terminal.hidden_lines == 1 { "line" } else { "lines" };
        facts.push(format!("{} earlier {lines} not shown", terminal.hidden_lines));
    }
    if let Some(cwd) = terminal.cwd.as_deref().filter(|cwd| !cwd.is_empty()) {
        facts.push(format!("in {}", code_span(cwd)));
    }
    if terminal.origin == TerminalOrigin::Agent {
        facts.push("run by the agent".to_owned());
    }
    format!("{}\n*{}*", fenced("console", &body), facts.join(" · "))
}

/// How a command is going or ended, in the terminal card's words.
fn terminal_state(state: &TerminalState) -> String {
    match state {
        TerminalState::Running => "Running".to_owned(),
        TerminalState::Exited { killed: true, signal: None, .. } => "Stopped".to_owned(),
        TerminalState::Exited { signal: Some(signal), .. } => format!("Killed ({})", plain_text(signal)),
        TerminalState::Exited { exit_code: Some(code), .. } => format!("Exit {code}"),
        TerminalState::Exited { .. } => "Exited".to_owned(),
        TerminalState::Failed { message } => format!("Failed: {}", plain_text(message)),
    }
}

/// A duration as the terminal card shows it: tenths of a second under ten seconds, then seconds,
/// minutes and hours.
fn elapsed(ms: u64) -> String {
    if ms < 10_000 {
        return format!("{}.{} s", ms / 1000, ms % 1000 / 100);
    }
    let seconds = ms / 1000;
    if seconds < 60 {
        return format!("{seconds} s");
    }
    let minutes = seconds / 60;
    if minutes < 60 {
        return format!("{minutes} min {} s", seconds % 60);
    }
    format!("{} h {} min", minutes / 60, minutes % 60)
}

/// A file change: its path, its size and where the person's decisions on it stand.
fn file_change(change: &FileChangeView) -> String {
    let mut line = format!("**📄 {}**", code_span(&change.label));
    match change.kind {
        FileChangeKind::Modified => {}
        FileChangeKind::Created => line.push_str(" (new file)"),
        FileChangeKind::Deleted => line.push_str(" (deleted)"),
    }
    line.push_str(&format!(" +{} −{} — {}", change.added, change.removed, change_phase(change)));
    // Once settled, what the agent was told only repeats the decisions; before, it says what
    // became of a write the turn did not wait for, or who let one through.
    if change.phase != ChangePhase::Settled
        && let Some(outcome) = change.outcome.as_deref().filter(|outcome| !outcome.trim().is_empty())
    {
        line.push_str(&format!("\\\n*The agent was told: {}*", plain_text(outcome)));
    }
    line
}

/// A restore of the code to a checkpoint (or its undoing), as a quoted line with its files.
fn restore_block(restore: &RestoreView) -> String {
    let what = match restore.undoes {
        Some(_) => format!("Undo the restore to before \u{201c}{}\u{201d}", plain_text(&restore.prompt)),
        None => format!("Restore the code to before \u{201c}{}\u{201d}", plain_text(&restore.prompt)),
    };
    let state = match restore.state {
        RestoreState::Reading => "reading the files",
        RestoreState::Planned => "each file's change below",
        RestoreState::Decided => "decided file by file below",
        RestoreState::NothingToRestore => "nothing to restore: the files are as they were",
        RestoreState::Undone => "undone later",
    };
    let mut block = format!("> **{what}** ({state})");
    for file in &restore.files {
        let note = match (&file.problem, file.conflict) {
            (Some(problem), _) => format!(": {}", plain_text(problem)),
            (None, true) => ": edited after the checkpoint, restoring reverts those edits too".to_owned(),
            (None, false) => String::new(),
        };
        block.push_str(&format!("\n> - `{}`{note}", file.label));
    }
    block
}

/// Where a change stands, in the file change card's words.
fn change_phase(change: &FileChangeView) -> String {
    // "Rejected" meant putting back text already on disk for an edit the agent made itself or
    // one that was written at once.
    let was_on_disk = change.origin == ChangeOrigin::Agent || change.phase == ChangePhase::Applied;
    let rejected = if was_on_disk { "reverted" } else { "rejected" };
    match &change.phase {
        ChangePhase::Proposed => "waiting for your review, nothing written yet".to_owned(),
        ChangePhase::Applied => match change.origin {
            ChangeOrigin::Agent => "changed on disk by the agent, not reviewed".to_owned(),
            ChangeOrigin::Write => "written (allowed by your mode or a rule), not reviewed".to_owned(),
            ChangeOrigin::Restore => "restored".to_owned(),
        },
        ChangePhase::Writing => "being written".to_owned(),
        ChangePhase::Settled if change.hunks.is_empty() => match change.whole {
            HunkState::Kept => "kept".to_owned(),
            HunkState::Pending | HunkState::Rejected => rejected.to_owned(),
        },
        ChangePhase::Settled => {
            let kept = change.hunks.iter().filter(|hunk| hunk.state == HunkState::Kept).count();
            let dropped = change.hunks.iter().filter(|hunk| hunk.state == HunkState::Rejected).count();
            format!("kept {kept}, {rejected} {dropped}")
        }
        ChangePhase::Conflict { message } | ChangePhase::Failed { message } => plain_text(message),
        ChangePhase::Unreviewable { reason } => plain_text(reason),
    }
}

/// A notice as a block quote, its detail (output, a malformed line) in a fenced block inside it.
fn notice_block(notice: &NoticeView) -> String {
    let label = match notice.level {
        NoticeLevel::Info => "Note",
        NoticeLevel::Warning => "Warning",
        NoticeLevel::Error => "Error",
    };
    let mut block = format!("**{label}:** {}", plain_text(&notice.text));
    if let Some(detail) = notice.detail.as_deref().filter(|detail| !detail.trim().is_empty()) {
        block.push_str("\n\n");
        block.push_str(&fenced("text", detail.trim_end()));
    }
    block
        .lines()
        .map(|line| if line.is_empty() { ">".to_owned() } else { format!("> {line}") })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the document says about the last turn when it did not end normally.
fn turn_line(turn: &TurnState) -> Option<String> {
    match turn {
        TurnState::Idle => None,
        TurnState::Running => Some("The turn was still running when this was exported".to_owned()),
        TurnState::Ended { stop_reason } => {
            match crate::json_value::from_value::<acp::StopReason>(&serde_json::Value::String(stop_reason.clone())) {
                Ok(acp::StopReason::EndTurn) => None,
                Ok(acp::StopReason::Cancelled) => Some("The turn was cancelled".to_owned()),
                Ok(acp::StopReason::Refusal) => Some("The agent refused to go on with the turn".to_owned()),
                Ok(acp::StopReason::MaxTokens) => Some("The turn ended: the agent reached its token limit".to_owned()),
                Ok(acp::StopReason::MaxTurnRequests) => {
                    Some("The turn ended: the agent reached its limit of requests in one turn".to_owned())
                }
                // A reason this version of ACP does not name (or a newer one) is shown as written.
                _ => Some(format!("The turn ended: {}", plain_text(stop_reason))),
            }
        }
        TurnState::Failed { message } => Some(format!("The turn ended with an error: {}", plain_text(message))),
    }
}

/// The plan as a task list: done entries checked, the one under way marked.
fn plan_checklist(plan: &[PlanEntryView]) -> String {
    let items: Vec<String> = plan
        .iter()
        .map(|entry| {
            let mark = if entry.status == "completed" { "x" } else { " " };
            let mut item = format!("- [{mark}] {}", one_line(&entry.content));
            if entry.status == "in_progress" {
                item.push_str(" *(in progress)*");
            }
            item
        })
        .collect();
    items.join("\n")
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::thread::{TerminalLine, TerminalSpan, TerminalStyle};

    /// Each markdown text and the closer it gets: only a fence really left open at the top level
    /// gets one, since a closer after a text whose fences are all closed would open a new fence.
    #[test]
    fn only_a_code_fence_left_open_is_closed() {
        let cases = [
            "```rust\nfn main() {",
            "~~~~\ncode\n~~~",
            "```\ncode\n```",
            "````\n```\nstill code",
            "```\ncode\n- ```\nstill code",
            "- item\n\n  ```sh\n  ls",
            "- ```sh\n  ls\n  ```\n\nafter the list",
            "- ```sh\n  ls",
            "> ```\n> quoted",
            "    ```\n    indented code",
            "``` not `a fence`\ntext",
        ];
        let results: Vec<String> = cases.iter().map(|text| format!("{text:?} → {:?}", unclosed_fence(text))).collect();
        expect![[r#"
            "```rust\nfn main() {" → Some("```")
            "~~~~\ncode\n~~~" → Some("~~~~")
            "```\ncode\n```" → None
            "````\n```\nstill code" → Some("````")
            "```\ncode\n- ```\nstill code" → Some("```")
            "- item\n\n  ```sh\n  ls" → Some("  ```")
            "- ```sh\n  ls\n  ```\n\nafter the list" → None
            "- ```sh\n  ls" → None
            "> ```\n> quoted" → None
            "    ```\n    indented code" → None
            "``` not `a fence`\ntext" → None"#]]
        .assert_eq(&results.join("\n"));
    }

    #[test]
    fn names_and_messages_cannot_become_markup() {
        let results = [
            code_span("src/a.rs"),
            code_span("odd`name"),
            code_span("`quoted`"),
            plain_text("a <b> *c* _d_ [e](f) `g` \\ &amp;\n  next line"),
        ];
        expect![[r#"
            `src/a.rs`
            ``odd`name``
            `` `quoted` ``
            a \<b\> \*c\* \_d\_ \[e\](f) \`g\` \\ \&amp; next line"#]]
        .assert_eq(&results.join("\n"));
    }

    fn terminal(state: TerminalState, hidden_lines: u64, cwd: Option<&str>, elapsed_ms: u64) -> TerminalView {
        let line = |text: &str| TerminalLine {
            spans: vec![TerminalSpan { text: text.to_owned(), style: TerminalStyle::default() }],
        };
        TerminalView {
            id: "term-1".to_owned(),
            command: "make".to_owned(),
            cwd: cwd.map(str::to_owned),
            origin: TerminalOrigin::Client,
            lines: vec![line("cc -c a.c"), line("")],
            hidden_lines,
            state,
            elapsed_ms,
        }
    }

    /// How each way a command can go reads under its output.
    #[test]
    fn a_terminal_says_how_its_command_went() {
        let exited = |exit_code, signal: Option<&str>, killed| TerminalState::Exited {
            exit_code,
            signal: signal.map(str::to_owned),
            killed,
        };
        let views = [
            terminal(TerminalState::Running, 0, None, 75_000),
            terminal(exited(Some(2), None, false), 1, Some("/workspace/app"), 12_345),
            terminal(exited(None, None, true), 230, None, 4_000_000),
            terminal(exited(None, Some("SIGSEGV"), false), 0, None, 999),
            terminal(TerminalState::Failed { message: "cannot run make: not found".to_owned() }, 0, None, 0),
        ];
        // The output block is the same for all: the line under it is what differs.
        let captions: Vec<String> =
            views.iter().map(|view| terminal_block(view).lines().last().unwrap_or_default().to_owned()).collect();
        expect![[r#"
            *Running · 1 min 15 s*
            *Exit 2 · 12 s · 1 earlier line not shown · in `/workspace/app`*
            *Stopped · 1 h 6 min · 230 earlier lines not shown*
            *Killed (SIGSEGV) · 0.9 s*
            *Failed: cannot run make: not found*"#]]
        .assert_eq(&captions.join("\n"));
        expect![[r#"
            ```console
            $ make
            cc -c a.c

            ```
            *Running · 1 min 15 s*"#]]
        .assert_eq(&terminal_block(&views[0]));
    }
}

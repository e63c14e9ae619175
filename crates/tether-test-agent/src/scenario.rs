//! Scenario files: the TOML scripts that decide what the test agent does with each prompt.
//!
//! A scenario is a description plus a list of `[[prompt]]` scripts. The first script whose
//! `match` text occurs in the prompt (case-insensitively) runs; a script without `match` runs
//! for any prompt. A script is a list of steps, each an inline table named by exactly one
//! action key (`say`, `tool_call`, `ask_permission`, ...), so a typo or an ambiguous step is a
//! parse error that points at the file, line and column instead of a silently skipped step.
//!
//! A scenario may also declare session modes at top level:
//!
//! ```toml
//! modes = [{ id = "default", name = "Ask" }, { id = "plan", name = "Plan", description = "Read only" }]
//! current_mode = "default" # optional; the first mode when left out
//! ```
//!
//! Then `session/new` announces them, `session/set_mode` switches between them (answered after a
//! `current_mode_update`), and a `report_mode = true` step says which one is current. Without
//! `modes`, `session/set_mode` is an unknown method, as it is for agents without modes.
//!
//! Models are declared the same way, `models = [{ id = "default", name = "Default" }, ...]` and
//! an optional `current_model`: then the session answers carry `models` (`availableModels`,
//! `currentModelId`) and `session/set_model` switches, as Claude Code's and Gemini CLI's ACP
//! adapters do, and a `report_model = true` step says which model is current.
//!
//! `fork = true` at top level offers ACP's (unstable) `session/fork`: `initialize` advertises
//! `sessionCapabilities.fork = {}`, and `session/fork` answers with a new session forked from the
//! one it names, which may be a session of an earlier agent process (a client restoring a
//! conversation starts a new agent and forks the session the old one had). With `--state-dir`,
//! the fork starts with a copy of the source's stored updates, so loading the fork replays them.
//! A `report_fork = true` step says in the chat `This session was forked from <source id>.` or
//! `This session was not forked.` Without `fork`, `session/fork` is an unknown method.
//!
//! Two top-level switches make the agent misbehave the way hung agents do, for testing how a
//! client gets rid of one: `hang_initialize = true` never answers `initialize`, and
//! `ignore_cancel = true` notes `session/cancel` and goes on with the turn as if it had not come.
//! `stderr_at_initialize = "..."` prints that line on stderr when `initialize` comes, as an agent
//! that is slow to start says what it waits for.
//!
//! A `tool_call` whose id the session has sent before (its prompt ran again) is sent with a
//! number after it (`demo-read-2`), and the steps after it that name that id go to the new call:
//! ACP wants each tool call's id used once in a session.
//!
//! The steps about permissions, beyond `tool_call` and `tool_update` (which take a `raw_input`
//! value, sent as the tool call's `rawInput`, e.g. `raw_input = { command = "npm test" }`):
//!
//! - `ask_permission = { tool_call_id, options, allowed, rejected, cancelled, wait, report }`
//!   sends `session/request_permission` and runs the branch the answer selects. With
//!   `report = true` the branch starts with one agent message saying what came back, e.g.
//!   `Permission for edit-1: reject_once (reject-once). Reason: Plan mode is read-only.` (the
//!   reason is the answer's `_meta.tether.reason`), `Permission for edit-1: cancelled.`, or
//!   `Permission for edit-1: withdrawn (Request cancelled).` for an error answer.
//! - `await_permissions = true` waits for every request sent with `wait = false`.
//! - `cancel_permission = { tool_call_id }` withdraws the pending request for that tool call
//!   with `$/cancel_request`; the client's error answer runs the `cancelled` branch. With no
//!   such request pending it is a runtime error, reported on stderr, and the script goes on.
//!
//! For long threads, `burst = { entries = N }` sends N thread entries in one turn as fast as the
//! pipe takes them, one update each, without a pause between them (a `session/cancel` still cuts
//! it short between two): agent messages (a paragraph and a ten-line code block, beginning
//! `Entry 00001 of N:`) alternating with completed tool calls, in turn a read, a command run
//! and an edit with a diff. Entry `k` (from 1) is a message when `k` is odd, so every entry is an
//! entry of its own in the client's thread, and each names its number.
//!
//! The built-in scenarios live in `scenarios/*.toml` and are compiled into the binary, so the
//! Demo profile works from a single file with nothing next to it.

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    PermissionOptionKind, PlanEntryPriority, PlanEntryStatus, StopReason, ToolCallStatus, ToolKind,
};
use serde::Deserialize;
use toml::Spanned;

/// The scenarios compiled into the binary, by name.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("demo", include_str!("../scenarios/demo.toml")),
    ("stream-many", include_str!("../scenarios/stream-many.toml")),
    ("slow-stream", include_str!("../scenarios/slow-stream.toml")),
    ("permission-twice", include_str!("../scenarios/permission-twice.toml")),
    ("die-mid-turn", include_str!("../scenarios/die-mid-turn.toml")),
    ("malformed", include_str!("../scenarios/malformed.toml")),
    ("fs-and-terminal", include_str!("../scenarios/fs-and-terminal.toml")),
    ("permissions", include_str!("../scenarios/permissions.toml")),
    ("files", include_str!("../scenarios/files.toml")),
    ("terminals", include_str!("../scenarios/terminals.toml")),
    ("faults", include_str!("../scenarios/faults.toml")),
    ("sessions", include_str!("../scenarios/sessions.toml")),
    ("hang-initialize", include_str!("../scenarios/hang-initialize.toml")),
    ("ignore-cancel", include_str!("../scenarios/ignore-cancel.toml")),
    ("rough-edges", include_str!("../scenarios/rough-edges.toml")),
];

/// The scenario a bare `tether-test-agent` runs: what a newcomer sees in the Demo profile.
pub const DEFAULT_SCENARIO: &str = "demo";

/// A parsed scenario file.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// One line saying what the scenario is for; written to the `--log` trace.
    pub description: String,
    /// The prompt scripts, tried in order.
    pub prompts: Vec<PromptScript>,
    /// The session modes every session offers; `None` when the scenario declares none.
    pub modes: Option<Choices>,
    /// The models every session offers (`models` in the session answers, `session/set_model`);
    /// `None` when the scenario declares none.
    pub models: Option<Choices>,
    /// Offer `session/fork` (advertised as `sessionCapabilities.fork`).
    pub fork: bool,
    /// Never answer `initialize`: an agent that hangs while starting.
    pub hang_initialize: bool,
    /// A line printed on stderr when `initialize` comes.
    pub stderr_at_initialize: Option<String>,
    /// Go on with a turn whatever `session/cancel` says: an agent that does not stop when asked.
    pub ignore_cancel: bool,
}

/// The top-level `modes` and `current_mode` (or `models` and `current_model`) of a scenario,
/// checked against each other.
#[derive(Debug, Clone)]
pub struct Choices {
    /// At least one choice, ids unique, in the order declared.
    pub available: Vec<ChoiceSpec>,
    /// The choice a new session starts with; one of `available`.
    pub initial: String,
}

impl Choices {
    /// Whether a choice with this id is declared.
    pub fn contains(&self, id: &str) -> bool {
        self.available.iter().any(|mode| mode.id == id)
    }

    /// The ids, comma-separated, for error messages.
    pub fn ids(&self) -> String {
        self.available.iter().map(|mode| mode.id.as_str()).collect::<Vec<_>>().join(", ")
    }
}

/// One entry of the top-level `modes` or `models` list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceSpec {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
}

/// One `[[prompt]]` table: the steps to run for prompts that match.
#[derive(Debug, Clone)]
pub struct PromptScript {
    /// A substring the prompt text must contain (compared case-insensitively); none matches all.
    pub matches: Option<String>,
    pub steps: Vec<Step>,
}

/// One thing the agent does during a turn.
#[derive(Debug, Clone)]
pub enum Step {
    /// Stream text as `agent_thought_chunk` updates.
    Think(Speech),
    /// Stream text as `agent_message_chunk` updates.
    Say(Speech),
    /// Send the whole plan (ACP plans are replaced, not patched).
    Plan(Vec<PlanEntrySpec>),
    /// Announce a new tool call.
    ToolCall(ToolCallSpec),
    /// Update fields of a tool call announced earlier.
    ToolUpdate(ToolUpdateSpec),
    /// Send `session/request_permission` and continue with the branch the answer selects.
    AskPermission(PermissionSpec),
    /// Wait until every permission request of this turn is answered, running their branches.
    AwaitPermissions,
    /// Withdraw the pending permission request for this tool call with `$/cancel_request`.
    CancelPermission(CancelPermissionSpec),
    /// Say which session mode is current.
    ReportMode,
    /// Say which model is current.
    ReportModel,
    /// Say which session the current one was forked from, if any.
    ReportFork,
    /// Say which MCP servers `session/new` (or `session/load`) named.
    ReportMcpServers,
    /// Call a tool of an MCP server `session/new` named (a stdio one), and say what came back.
    McpCall(McpCallSpec),
    /// Call `fs/read_text_file` and report what came back as agent text.
    ReadFile(ReadFileSpec),
    /// Call `fs/write_text_file` and report the outcome as agent text.
    WriteFile(WriteFileSpec),
    /// Write the file straight to disk, without asking the client, as recent Claude and Codex
    /// adapters do (they only report a diff in a tool call); report the outcome as agent text.
    WriteDisk(WriteFileSpec),
    /// Run a command through `terminal/create`, `wait_for_exit`, `output` and `release`.
    Terminal(TerminalSpec),
    /// Pause; a `session/cancel` cuts the pause short.
    Sleep(Duration),
    /// Print one line on stderr.
    Stderr(String),
    /// Print one raw line on stdout that is not JSON.
    Malformed(String),
    /// Print raw bytes on stdout (a newline is added when they do not end with one).
    MalformedBytes(Vec<u8>),
    /// Print a line of this many `x` bytes on stdout, streamed rather than built in memory.
    LongLine(u64),
    /// Send this many thread entries as fast as possible: messages and completed tool calls.
    Burst(usize),
    /// Exit the process with this code, without answering the prompt.
    Die(i32),
    /// Answer the prompt now with this stop reason.
    Stop(StopReason),
}

/// Text streamed in pieces.
#[derive(Debug, Clone)]
pub struct Speech {
    pub text: String,
    /// How many pieces to send the text in (fewer when the text has fewer characters).
    pub chunks: usize,
    /// The pause between two pieces.
    pub interval: Duration,
}

impl Speech {
    /// Splits the text into `chunks` pieces of nearly equal character counts, never splitting a
    /// character, so every piece is valid UTF-8 and no piece is empty.
    pub fn pieces(&self) -> Vec<String> {
        let character_count = self.text.chars().count();
        if character_count == 0 {
            return Vec::new();
        }
        let piece_count = self.chunks.clamp(1, character_count);
        let base = character_count / piece_count;
        let longer_pieces = character_count % piece_count;
        let mut characters = self.text.chars();
        (0..piece_count)
            .map(|index| {
                let length = base + usize::from(index < longer_pieces);
                characters.by_ref().take(length).collect()
            })
            .collect()
    }
}

/// One entry of a `plan` step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanEntrySpec {
    pub content: String,
    #[serde(default = "default_priority")]
    pub priority: PlanEntryPriority,
    #[serde(default = "default_plan_status")]
    pub status: PlanEntryStatus,
}

fn default_priority() -> PlanEntryPriority {
    PlanEntryPriority::Medium
}

fn default_plan_status() -> PlanEntryStatus {
    PlanEntryStatus::Pending
}

/// A `tool_call` step: everything ACP lets an agent say when it starts a tool call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    pub id: String,
    pub title: String,
    pub kind: Option<StrictToolKind>,
    pub status: Option<ToolCallStatus>,
    #[serde(default)]
    pub locations: Vec<LocationSpec>,
    /// Text shown as the tool call's content.
    pub text: Option<String>,
    /// A proposed change shown as the tool call's diff content.
    pub diff: Option<DiffSpec>,
    /// What the tool was called with, sent as `rawInput` (and repeated in permission requests).
    pub raw_input: Option<RawInput>,
}

/// A `tool_update` step: only the fields given change.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUpdateSpec {
    pub id: String,
    pub title: Option<String>,
    pub kind: Option<StrictToolKind>,
    pub status: Option<ToolCallStatus>,
    pub locations: Option<Vec<LocationSpec>>,
    /// Replaces the tool call's content with this text (and `diff`, when both are given).
    pub text: Option<String>,
    pub diff: Option<DiffSpec>,
    pub raw_input: Option<RawInput>,
}

/// A tool call's raw input: any TOML value, turned into the JSON an agent would send.
///
/// TOML dates and times become strings. TOML floats `nan` and `inf` are an error, because JSON
/// has no way to write them and a client would never receive them.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "toml::Value")]
pub struct RawInput(pub serde_json::Value);

impl TryFrom<toml::Value> for RawInput {
    type Error = String;

    fn try_from(value: toml::Value) -> Result<Self, Self::Error> {
        toml_to_json(value).map(Self)
    }
}

fn toml_to_json(value: toml::Value) -> Result<serde_json::Value, String> {
    use serde_json::Value as Json;
    Ok(match value {
        toml::Value::String(text) => Json::String(text),
        toml::Value::Integer(number) => Json::from(number),
        toml::Value::Float(number) => serde_json::Number::from_f64(number)
            .map(Json::Number)
            .ok_or_else(|| format!("`raw_input` cannot hold {number}: JSON has no such number"))?,
        toml::Value::Boolean(flag) => Json::Bool(flag),
        toml::Value::Datetime(datetime) => Json::String(datetime.to_string()),
        toml::Value::Array(items) => Json::Array(items.into_iter().map(toml_to_json).collect::<Result<_, _>>()?),
        toml::Value::Table(table) => Json::Object(
            table.into_iter().map(|(key, value)| Ok((key, toml_to_json(value)?))).collect::<Result<_, String>>()?,
        ),
    })
}

/// A file a tool call touches; relative paths are resolved against the session's cwd.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocationSpec {
    pub path: String,
    pub line: Option<u32>,
}

/// A proposed file change; relative paths are resolved against the session's cwd.
///
/// `{ path, old_text, new_text }` proposes the texts as written (no `old_text`: a new file).
/// `{ path, append }` proposes the file as it is on disk when the step runs, with `append` after
/// it, as an agent that read the file first would: a second run of the same script proposes
/// the change against what the first one left.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawDiffSpec")]
pub struct DiffSpec {
    pub path: String,
    /// The text before the change, when the scenario gives it; with `append`, read from disk.
    pub old_text: Option<String>,
    pub new_text: NewText,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDiffSpec {
    path: String,
    old_text: Option<String>,
    new_text: Option<String>,
    append: Option<String>,
}

impl TryFrom<RawDiffSpec> for DiffSpec {
    type Error = String;

    fn try_from(raw: RawDiffSpec) -> Result<Self, Self::Error> {
        let new_text = match (raw.new_text, raw.append, &raw.old_text) {
            (Some(text), None, _) => NewText::Whole(text),
            (None, Some(text), None) => NewText::Appended(text),
            (None, Some(_), Some(_)) => {
                return Err("a diff with `append` takes its old text from disk: leave out `old_text`".into());
            }
            _ => return Err("a diff needs one of `new_text` or `append`".into()),
        };
        Ok(DiffSpec { path: raw.path, old_text: raw.old_text, new_text })
    }
}

/// What a file holds after a change: given whole, or what it holds on disk with a text after it.
#[derive(Debug, Clone)]
pub enum NewText {
    Whole(String),
    Appended(String),
}

impl NewText {
    /// The file's text after the change, given what it holds now (`None`: it does not exist).
    pub fn after(&self, on_disk: Option<&str>) -> String {
        match self {
            NewText::Whole(text) => text.clone(),
            NewText::Appended(text) => format!("{}{text}", on_disk.unwrap_or_default()),
        }
    }

    /// [`after`](Self::after) for the file at `path`, read only when the text is appended to it.
    pub fn for_file(&self, path: &std::path::Path) -> String {
        match self {
            NewText::Whole(text) => text.clone(),
            NewText::Appended(_) => self.after(std::fs::read_to_string(path).ok().as_deref()),
        }
    }
}

/// An `ask_permission` step and what to do with each kind of answer.
#[derive(Debug, Clone)]
pub struct PermissionSpec {
    pub tool_call_id: String,
    pub options: Vec<PermissionOptionKind>,
    /// Steps run when the person picks an allow option.
    pub allowed: Vec<Step>,
    /// Steps run when the person picks a reject option.
    pub rejected: Vec<Step>,
    /// Steps run when the client answers `cancelled`; they run even when the turn itself is
    /// being cancelled, so they can mark the tool call as failed.
    pub cancelled: Vec<Step>,
    /// `false` sends the request and moves on; a later `await_permissions` step (or the end of
    /// the script) waits for the answer and runs the branch it selects.
    pub wait: bool,
    /// Start the branch with one agent message saying what the answer was, so an end-to-end
    /// test can read in the chat what the client decided.
    pub report: bool,
}

/// A `cancel_permission` step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelPermissionSpec {
    pub tool_call_id: String,
}

fn all_permission_options() -> Vec<PermissionOptionKind> {
    vec![
        PermissionOptionKind::AllowOnce,
        PermissionOptionKind::AllowAlways,
        PermissionOptionKind::RejectOnce,
        PermissionOptionKind::RejectAlways,
    ]
}

fn wait_by_default() -> bool {
    true
}

/// An `mcp_call` step: `{ server = "tether", tool = "get_selection", arguments = { ... } }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpCallSpec {
    pub server: String,
    pub tool: String,
    pub arguments: Option<RawInput>,
}

/// A `read_file` step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileSpec {
    pub path: String,
    pub line: Option<u32>,
    pub limit: Option<u32>,
}

/// A `write_file` or `write_disk` step: `{ path, content }` writes `content`, `{ path, append }`
/// what the file holds on disk when the step runs with `append` after it.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawWriteFileSpec")]
pub struct WriteFileSpec {
    pub path: String,
    pub content: NewText,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWriteFileSpec {
    path: String,
    content: Option<String>,
    append: Option<String>,
}

impl TryFrom<RawWriteFileSpec> for WriteFileSpec {
    type Error = String;

    fn try_from(raw: RawWriteFileSpec) -> Result<Self, Self::Error> {
        let content = match (raw.content, raw.append) {
            (Some(text), None) => NewText::Whole(text),
            (None, Some(text)) => NewText::Appended(text),
            _ => return Err("a file write needs one of `content` or `append`".into()),
        };
        Ok(WriteFileSpec { path: raw.path, content })
    }
}

/// A `burst` step: `{ entries = 10000 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstSpec {
    pub entries: usize,
}

/// A `terminal` step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalSpec {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Defaults to the session's cwd; relative paths are resolved against it.
    pub cwd: Option<String>,
    pub output_byte_limit: Option<u64>,
    /// Show the terminal on this tool call (the one permission was asked for) instead of a new
    /// one.
    pub tool_call_id: Option<String>,
}

/// An ACP tool kind that must be spelled exactly.
///
/// The schema's `ToolKind` turns any unknown string into `other` (agents must be tolerated);
/// a scenario author who writes `kind = "exec"` wants an error instead.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "String")]
pub struct StrictToolKind(pub ToolKind);

impl TryFrom<String> for StrictToolKind {
    type Error = String;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        let kind: ToolKind =
            serde_json::from_value(serde_json::Value::String(name.clone())).map_err(|error| error.to_string())?;
        let round_trip = serde_json::to_value(kind).map_err(|error| error.to_string())?;
        if round_trip.as_str() == Some(name.as_str()) {
            Ok(Self(kind))
        } else {
            Err(format!(
                "unknown tool kind `{name}`, expected one of read, edit, delete, move, search, \
                 execute, think, fetch, switch_mode, other"
            ))
        }
    }
}

/// The file as written. Steps keep their position in the file (`Spanned`) so that a step
/// that is well-formed TOML but not a valid step (two actions, none) is reported at its own
/// line rather than at the start of the enclosing array.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    description: String,
    #[serde(default)]
    hang_initialize: bool,
    stderr_at_initialize: Option<String>,
    #[serde(default)]
    ignore_cancel: bool,
    #[serde(default)]
    fork: bool,
    modes: Option<Spanned<Vec<ChoiceSpec>>>,
    current_mode: Option<Spanned<String>>,
    models: Option<Spanned<Vec<ChoiceSpec>>>,
    current_model: Option<Spanned<String>>,
    #[serde(rename = "prompt", default)]
    prompts: Vec<RawPromptScript>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPromptScript {
    #[serde(rename = "match")]
    matches: Option<String>,
    steps: Vec<Spanned<RawStep>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPermissionSpec {
    tool_call_id: String,
    #[serde(default = "all_permission_options")]
    options: Vec<PermissionOptionKind>,
    #[serde(default)]
    allowed: Vec<Spanned<RawStep>>,
    #[serde(default)]
    rejected: Vec<Spanned<RawStep>>,
    #[serde(default)]
    cancelled: Vec<Spanned<RawStep>>,
    #[serde(default = "wait_by_default")]
    wait: bool,
    #[serde(default)]
    report: bool,
}

/// Something that parsed as TOML but does not make sense as a scenario, and where it is in the
/// file.
struct StepError {
    span: Range<usize>,
    message: String,
}

/// What converting a step needs to know about the rest of the scenario.
#[derive(Clone, Copy)]
struct StepContext {
    /// Whether the scenario declares `modes`, which `report_mode` needs.
    has_modes: bool,
    /// Whether the scenario declares `models`, which `report_model` needs.
    has_models: bool,
    /// Whether the scenario offers `session/fork` (`fork = true`), which `report_fork` needs.
    has_fork: bool,
}

fn convert_steps(raw_steps: Vec<Spanned<RawStep>>, context: StepContext) -> Result<Vec<Step>, StepError> {
    raw_steps
        .into_iter()
        .map(|spanned| {
            let span = spanned.span();
            convert_step(spanned.into_inner(), span, context)
        })
        .collect()
}

/// A step as written in the file: every action key is optional here, and converting to
/// [`Step`] checks that exactly one is present.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    think: Option<String>,
    say: Option<String>,
    chunks: Option<usize>,
    interval_ms: Option<u64>,
    repeat: Option<usize>,
    plan: Option<Vec<PlanEntrySpec>>,
    tool_call: Option<ToolCallSpec>,
    tool_update: Option<ToolUpdateSpec>,
    ask_permission: Option<RawPermissionSpec>,
    await_permissions: Option<bool>,
    cancel_permission: Option<CancelPermissionSpec>,
    report_mode: Option<bool>,
    report_model: Option<bool>,
    report_fork: Option<bool>,
    report_mcp_servers: Option<bool>,
    mcp_call: Option<McpCallSpec>,
    read_file: Option<ReadFileSpec>,
    write_file: Option<WriteFileSpec>,
    write_disk: Option<WriteFileSpec>,
    terminal: Option<TerminalSpec>,
    sleep_ms: Option<u64>,
    stderr: Option<String>,
    malformed: Option<String>,
    malformed_bytes: Option<Vec<u8>>,
    long_line: Option<u64>,
    burst: Option<BurstSpec>,
    die: Option<i32>,
    stop: Option<StopReason>,
}

fn convert_step(raw: RawStep, span: Range<usize>, context: StepContext) -> Result<Step, StepError> {
    let here = |message: String| StepError { span: span.clone(), message };
    let RawStep {
        think,
        say,
        chunks,
        interval_ms,
        repeat,
        plan,
        tool_call,
        tool_update,
        ask_permission,
        await_permissions,
        cancel_permission,
        report_mode,
        report_model,
        report_fork,
        report_mcp_servers,
        mcp_call,
        read_file,
        write_file,
        write_disk,
        terminal,
        sleep_ms,
        stderr,
        malformed,
        malformed_bytes,
        long_line,
        burst,
        die,
        stop,
    } = raw;

    let mut actions: Vec<(&str, Step)> = Vec::new();
    let is_speech = think.is_some() || say.is_some();
    if let Some(text) = think {
        actions.push(("think", Step::Think(speech(text, chunks, interval_ms, repeat).map_err(here)?)));
    }
    if let Some(text) = say {
        actions.push(("say", Step::Say(speech(text, chunks, interval_ms, repeat).map_err(here)?)));
    }
    if !is_speech {
        for (name, given) in
            [("chunks", chunks.is_some()), ("interval_ms", interval_ms.is_some()), ("repeat", repeat.is_some())]
        {
            if given {
                return Err(here(format!("`{name}` only goes with `say` or `think`")));
            }
        }
    }
    if let Some(entries) = plan {
        actions.push(("plan", Step::Plan(entries)));
    }
    if let Some(spec) = tool_call {
        actions.push(("tool_call", Step::ToolCall(spec)));
    }
    if let Some(spec) = tool_update {
        actions.push(("tool_update", Step::ToolUpdate(spec)));
    }
    if let Some(raw) = ask_permission {
        if raw.options.is_empty() {
            return Err(here("`ask_permission` needs at least one option".to_owned()));
        }
        let spec = PermissionSpec {
            tool_call_id: raw.tool_call_id,
            options: raw.options,
            allowed: convert_steps(raw.allowed, context)?,
            rejected: convert_steps(raw.rejected, context)?,
            cancelled: convert_steps(raw.cancelled, context)?,
            wait: raw.wait,
            report: raw.report,
        };
        actions.push(("ask_permission", Step::AskPermission(spec)));
    }
    if let Some(value) = await_permissions {
        if !value {
            return Err(here("`await_permissions` only accepts `true`".to_owned()));
        }
        actions.push(("await_permissions", Step::AwaitPermissions));
    }
    if let Some(spec) = cancel_permission {
        actions.push(("cancel_permission", Step::CancelPermission(spec)));
    }
    if let Some(value) = report_mode {
        if !value {
            return Err(here("`report_mode` only accepts `true`".to_owned()));
        }
        if !context.has_modes {
            return Err(here("`report_mode` needs the scenario to declare `modes` at top level".to_owned()));
        }
        actions.push(("report_mode", Step::ReportMode));
    }
    if let Some(value) = report_model {
        if !value {
            return Err(here("`report_model` only accepts `true`".to_owned()));
        }
        if !context.has_models {
            return Err(here("`report_model` needs the scenario to declare `models` at top level".to_owned()));
        }
        actions.push(("report_model", Step::ReportModel));
    }
    if let Some(value) = report_fork {
        if !value {
            return Err(here("`report_fork` only accepts `true`".to_owned()));
        }
        if !context.has_fork {
            return Err(here("`report_fork` needs the scenario to say `fork = true` at top level".to_owned()));
        }
        actions.push(("report_fork", Step::ReportFork));
    }
    if let Some(value) = report_mcp_servers {
        if !value {
            return Err(here("`report_mcp_servers` only accepts `true`".to_owned()));
        }
        actions.push(("report_mcp_servers", Step::ReportMcpServers));
    }
    if let Some(spec) = mcp_call {
        actions.push(("mcp_call", Step::McpCall(spec)));
    }
    if let Some(spec) = read_file {
        actions.push(("read_file", Step::ReadFile(spec)));
    }
    if let Some(spec) = write_file {
        actions.push(("write_file", Step::WriteFile(spec)));
    }
    if let Some(spec) = write_disk {
        actions.push(("write_disk", Step::WriteDisk(spec)));
    }
    if let Some(spec) = terminal {
        actions.push(("terminal", Step::Terminal(spec)));
    }
    if let Some(milliseconds) = sleep_ms {
        actions.push(("sleep_ms", Step::Sleep(Duration::from_millis(milliseconds))));
    }
    if let Some(line) = stderr {
        actions.push(("stderr", Step::Stderr(line)));
    }
    if let Some(line) = malformed {
        actions.push(("malformed", Step::Malformed(line)));
    }
    if let Some(bytes) = malformed_bytes {
        actions.push(("malformed_bytes", Step::MalformedBytes(bytes)));
    }
    if let Some(length) = long_line {
        actions.push(("long_line", Step::LongLine(length)));
    }
    if let Some(spec) = burst {
        if spec.entries == 0 {
            return Err(here("`burst` needs at least one entry".to_owned()));
        }
        actions.push(("burst", Step::Burst(spec.entries)));
    }
    if let Some(code) = die {
        actions.push(("die", Step::Die(code)));
    }
    if let Some(reason) = stop {
        actions.push(("stop", Step::Stop(reason)));
    }

    match actions.len() {
        0 => Err(here(
            "a step needs one action: say, think, plan, tool_call, tool_update, ask_permission, \
             await_permissions, cancel_permission, report_mode, report_model, report_fork, report_mcp_servers, \
             mcp_call, read_file, write_file, write_disk, terminal, sleep_ms, stderr, malformed, malformed_bytes, \
             long_line, burst, die or stop"
                .to_owned(),
        )),
        1 => Ok(actions.remove(0).1),
        _ => {
            let names: Vec<&str> = actions.iter().map(|(name, _)| *name).collect();
            Err(here(format!("a step has exactly one action, this one has {}", names.join(" and "))))
        }
    }
}

fn speech(
    text: String,
    chunks: Option<usize>,
    interval_ms: Option<u64>,
    repeat: Option<usize>,
) -> Result<Speech, String> {
    let chunks = chunks.unwrap_or(1);
    if chunks == 0 {
        return Err("`chunks` must be at least 1".to_owned());
    }
    let repeat = repeat.unwrap_or(1);
    if repeat == 0 {
        return Err("`repeat` must be at least 1".to_owned());
    }
    Ok(Speech { text: text.repeat(repeat), chunks, interval: Duration::from_millis(interval_ms.unwrap_or(0)) })
}

/// Why a scenario could not be loaded; the message names the file and, for syntax and schema
/// errors, the line and column.
#[derive(Debug)]
pub struct ScenarioError {
    message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Loads a scenario by built-in name, or from a file when the argument looks like a path
/// (it contains a path separator or ends in `.toml`).
pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
    let looks_like_path = name_or_path.contains(['/', '\\']) || name_or_path.ends_with(".toml");
    if looks_like_path {
        let path = Path::new(name_or_path);
        let source = std::fs::read_to_string(path).map_err(|error| ScenarioError {
            message: format!("cannot read scenario file {}: {error}", path.display()),
        })?;
        return parse(&source, &path.display().to_string());
    }
    match BUILT_IN.iter().find(|(name, _)| *name == name_or_path) {
        Some((name, source)) => parse(source, &format!("built-in scenario {name}.toml")),
        None => {
            let names: Vec<&str> = BUILT_IN.iter().map(|(name, _)| *name).collect();
            Err(ScenarioError {
                message: format!(
                    "no built-in scenario named `{name_or_path}` (built-in: {}); \
                     pass a path ending in .toml to load a file",
                    names.join(", ")
                ),
            })
        }
    }
}

/// Parses scenario text; `origin` names the file in error messages.
pub fn parse(source: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let located = |span: Option<Range<usize>>, message: &str| {
        let position = match span {
            Some(span) => {
                let (line, column) = line_and_column(source, span.start);
                format!(", line {line}, column {column}")
            }
            None => String::new(),
        };
        ScenarioError { message: format!("invalid scenario {origin}{position}: {}", message.trim_end()) }
    };
    let raw: RawScenario = toml::from_str(source).map_err(|error| located(error.span(), error.message()))?;
    if raw.prompts.is_empty() {
        return Err(located(None, "it has no [[prompt]] table"));
    }
    let modes = convert_choices(raw.modes, raw.current_mode, MODE_KEYS)
        .map_err(|error| located(Some(error.span), &error.message))?;
    let models = convert_choices(raw.models, raw.current_model, MODEL_KEYS)
        .map_err(|error| located(Some(error.span), &error.message))?;
    let context = StepContext { has_modes: modes.is_some(), has_models: models.is_some(), has_fork: raw.fork };
    let prompts = raw
        .prompts
        .into_iter()
        .map(|script| Ok(PromptScript { matches: script.matches, steps: convert_steps(script.steps, context)? }))
        .collect::<Result<Vec<_>, StepError>>()
        .map_err(|error| located(Some(error.span), &error.message))?;
    Ok(Scenario {
        description: raw.description,
        prompts,
        modes,
        models,
        fork: raw.fork,
        hang_initialize: raw.hang_initialize,
        stderr_at_initialize: raw.stderr_at_initialize,
        ignore_cancel: raw.ignore_cancel,
    })
}

/// The keys of a list of choices and of its current one, and what one choice is called, for
/// error messages.
struct ChoiceKeys {
    list: &'static str,
    current: &'static str,
    one: &'static str,
}

const MODE_KEYS: ChoiceKeys = ChoiceKeys { list: "modes", current: "current_mode", one: "mode" };
const MODEL_KEYS: ChoiceKeys = ChoiceKeys { list: "models", current: "current_model", one: "model" };

/// Checks a top-level list of choices (`modes`, `models`) and its current one together: a list
/// that is not empty, without duplicate ids, and a current choice that is one of them.
fn convert_choices(
    list: Option<Spanned<Vec<ChoiceSpec>>>,
    current: Option<Spanned<String>>,
    keys: ChoiceKeys,
) -> Result<Option<Choices>, StepError> {
    let ChoiceKeys { list: list_key, current: current_key, one } = keys;
    let Some(list) = list else {
        return match current {
            Some(current) => Err(StepError {
                span: current.span(),
                message: format!("`{current_key}` needs `{list_key}` to choose from"),
            }),
            None => Ok(None),
        };
    };
    let span = list.span();
    let available = list.into_inner();
    let Some(first) = available.first() else {
        return Err(StepError { span, message: format!("`{list_key}` needs at least one {one}") });
    };
    let first = first.id.clone();
    for (index, choice) in available.iter().enumerate() {
        if available[..index].iter().any(|earlier| earlier.id == choice.id) {
            return Err(StepError { span, message: format!("{one} `{}` is declared twice", choice.id) });
        }
    }
    let mut choices = Choices { available, initial: first };
    if let Some(current) = current {
        let span = current.span();
        let current = current.into_inner();
        if !choices.contains(&current) {
            let message =
                format!("`{current_key}` is `{current}`, which is not one of the {list_key} ({})", choices.ids());
            return Err(StepError { span, message });
        }
        choices.initial = current;
    }
    Ok(Some(choices))
}

/// One-based line and column (in characters) of a byte offset.
fn line_and_column(source: &str, offset: usize) -> (usize, usize) {
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

impl Scenario {
    /// The steps for a prompt: the first script whose `match` occurs in the prompt text.
    pub fn script_for(&self, prompt_text: &str) -> Option<&PromptScript> {
        let prompt_text = prompt_text.to_lowercase();
        self.prompts.iter().find(|script| match &script.matches {
            Some(needle) => prompt_text.contains(&needle.to_lowercase()),
            None => true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_scenario_parses() {
        for (name, source) in BUILT_IN {
            if let Err(error) = parse(source, name) {
                panic!("{error}");
            }
        }
    }

    #[test]
    fn every_scenario_file_shipped_is_built_in() {
        let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut shipped: Vec<String> = std::fs::read_dir(&directory)
            .expect("the scenarios directory ships with the crate")
            .map(|entry| {
                let entry = entry.expect("directory entries are readable");
                entry.file_name().to_string_lossy().into_owned()
            })
            .collect();
        shipped.sort();
        let mut built_in: Vec<String> = BUILT_IN.iter().map(|(name, _)| format!("{name}.toml")).collect();
        built_in.sort();
        assert_eq!(shipped, built_in);
    }

    #[test]
    fn pieces_split_on_character_boundaries_and_cover_the_text() {
        let speech = Speech { text: "héllo wörld ✓".to_owned(), chunks: 5, interval: Duration::ZERO };
        let pieces = speech.pieces();
        assert_eq!(pieces, ["hél", "lo ", "wör", "ld", " ✓"]);
        assert_eq!(pieces.concat(), speech.text);
    }

    #[test]
    fn more_chunks_than_characters_gives_one_piece_per_character() {
        let speech = Speech { text: "abc".to_owned(), chunks: 10, interval: Duration::ZERO };
        assert_eq!(speech.pieces(), ["a", "b", "c"]);
    }

    #[test]
    fn a_step_with_two_actions_is_an_error_with_its_line() {
        let source =
            "description = \"x\"\n[[prompt]]\nsteps = [\n  { say = \"hi\" },\n  { say = \"a\", plan = [] },\n]\n";
        let error = parse(source, "two.toml").expect_err("two actions in one step");
        expect_test::expect![
            "invalid scenario two.toml, line 5, column 3: a step has exactly one action, this one has say and plan"
        ]
        .assert_eq(&error.to_string());
    }

    #[test]
    fn an_invalid_step_inside_a_permission_branch_is_reported_at_its_own_line() {
        let source = "description = \"x\"\n[[prompt]]\nsteps = [\n  { ask_permission = { tool_call_id = \"t\",\n      allowed = [\n        { say = \"ok\" },\n        { },\n      ] } },\n]\n";
        let error = parse(source, "branch.toml").expect_err("an empty step");
        expect_test::expect!["invalid scenario branch.toml, line 7, column 9: a step needs one action: say, think, plan, tool_call, tool_update, ask_permission, await_permissions, cancel_permission, report_mode, report_model, report_fork, report_mcp_servers, mcp_call, read_file, write_file, write_disk, terminal, sleep_ms, stderr, malformed, malformed_bytes, long_line, burst, die or stop"].assert_eq(&error.to_string());
    }

    #[test]
    fn a_misspelt_key_is_an_error_with_its_line() {
        let source = "description = \"x\"\n[[prompt]]\nsteps = [\n  { sya = \"hi\" },\n]\n";
        let error = parse(source, "typo.toml").expect_err("unknown key");
        assert!(error.to_string().starts_with("invalid scenario typo.toml, line 4"), "{error}");
        assert!(error.to_string().contains("sya"), "{error}");
    }

    #[test]
    fn an_unknown_tool_kind_is_an_error() {
        let source = "description = \"x\"\n[[prompt]]\nsteps = [\n  { tool_call = { id = \"t\", title = \"T\", kind = \"exec\" } },\n]\n";
        let error = parse(source, "kind.toml").expect_err("unknown kind");
        assert!(error.to_string().contains("unknown tool kind `exec`"), "{error}");
        assert!(error.to_string().contains("line 4"), "{error}");
    }

    #[test]
    fn the_first_matching_script_wins_case_insensitively() {
        let source = "description = \"x\"\n\
            [[prompt]]\nmatch = \"Permission\"\nsteps = [{ say = \"first\" }]\n\
            [[prompt]]\nsteps = [{ say = \"fallback\" }]\n";
        let scenario = parse(source, "match.toml").expect("valid scenario");
        let first_say = |prompt: &str| match &scenario.script_for(prompt).expect("a script").steps[0] {
            Step::Say(speech) => speech.text.clone(),
            other => panic!("unexpected step {other:?}"),
        };
        assert_eq!(first_say("ask for PERMISSION please"), "first");
        assert_eq!(first_say("hello"), "fallback");
    }

    /// Parses a scenario made of `top` (top-level keys) and one prompt with `steps`, and returns
    /// the error message, or "ok".
    fn parse_outcome(top: &str, steps: &str) -> String {
        let source = format!("description = \"x\"\n{top}\n[[prompt]]\nsteps = [\n  {steps},\n]\n");
        match parse(&source, "new.toml") {
            Ok(_) => "ok".to_owned(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn mistakes_in_the_permission_and_mode_steps_are_errors_with_their_line() {
        let modes = "modes = [{ id = \"default\", name = \"Ask\" }, { id = \"plan\", name = \"Plan\" }]";
        let cases = [
            ("", "{ say = \"hi\" }"),
            (modes, "{ report_mode = true }"),
            ("", "{ report_mode = true }"),
            (modes, "{ report_mode = false }"),
            ("", "{ cancel_permission = { tool_call_id = \"t\", now = true } }"),
            ("", "{ cancel_permission = \"t\" }"),
            ("", "{ ask_permission = { tool_call_id = \"t\", report = \"yes\" } }"),
            ("", "{ tool_call = { id = \"t\", title = \"T\", raw_input = { ratio = nan } } }"),
            ("", "{ tool_update = { id = \"t\", raw_input = [1, 2, inf] } }"),
            ("", "{ ask_permission = { tool_call_id = \"t\", allowed = [{ report_mode = true }] } }"),
            ("modes = []", "{ say = \"hi\" }"),
            ("modes = [{ id = \"a\", name = \"A\" }, { id = \"a\", name = \"Again\" }]", "{ say = \"hi\" }"),
            ("modes = [{ id = \"a\" }]", "{ say = \"hi\" }"),
            ("current_mode = \"plan\"", "{ say = \"hi\" }"),
            (&format!("{modes}\ncurrent_mode = \"yolo\""), "{ say = \"hi\" }"),
        ];
        let outcomes: Vec<String> = cases.iter().map(|(top, steps)| parse_outcome(top, steps)).collect();
        expect_test::expect![[r#"
            ok
            ok
            invalid scenario new.toml, line 5, column 3: `report_mode` needs the scenario to declare `modes` at top level
            invalid scenario new.toml, line 5, column 3: `report_mode` only accepts `true`
            invalid scenario new.toml, line 5, column 47: unknown field `now`, expected `tool_call_id`
            invalid scenario new.toml, line 5, column 25: invalid type: string "t", expected struct CancelPermissionSpec
            invalid scenario new.toml, line 5, column 53: invalid type: string "yes", expected a boolean
            invalid scenario new.toml, line 5, column 54: `raw_input` cannot hold NaN: JSON has no such number
            invalid scenario new.toml, line 5, column 43: `raw_input` cannot hold inf: JSON has no such number
            invalid scenario new.toml, line 5, column 55: `report_mode` needs the scenario to declare `modes` at top level
            invalid scenario new.toml, line 2, column 9: `modes` needs at least one mode
            invalid scenario new.toml, line 2, column 9: mode `a` is declared twice
            invalid scenario new.toml, line 2, column 10: missing field `name`
            invalid scenario new.toml, line 2, column 16: `current_mode` needs `modes` to choose from
            invalid scenario new.toml, line 3, column 16: `current_mode` is `yolo`, which is not one of the modes (default, plan)"#]]
        .assert_eq(&outcomes.join("\n"));
    }

    #[test]
    fn modes_start_in_the_first_mode_unless_current_mode_says_otherwise() {
        let modes = "modes = [{ id = \"default\", name = \"Ask\" }, { id = \"plan\", name = \"Plan\" }]";
        let initial = |top: &str| {
            let source = format!("description = \"x\"\n{top}\n[[prompt]]\nsteps = [{{ say = \"hi\" }}]\n");
            parse(&source, "modes.toml").expect("valid scenario").modes.map(|modes| modes.initial)
        };
        assert_eq!(initial(""), None);
        assert_eq!(initial(modes).as_deref(), Some("default"));
        assert_eq!(initial(&format!("{modes}\ncurrent_mode = \"plan\"")).as_deref(), Some("plan"));
    }

    #[test]
    fn models_are_declared_and_checked_like_modes() {
        let models = "models = [{ id = \"default\", name = \"Default\" }, { id = \"opus\", name = \"Opus\" }]";
        let cases = [
            (models.to_owned(), "{ report_model = true }"),
            (String::new(), "{ report_model = true }"),
            (models.to_owned(), "{ report_model = false }"),
            ("models = []".to_owned(), "{ say = \"hi\" }"),
            (
                "models = [{ id = \"a\", name = \"A\" }, { id = \"a\", name = \"Again\" }]".to_owned(),
                "{ say = \"hi\" }",
            ),
            ("current_model = \"opus\"".to_owned(), "{ say = \"hi\" }"),
            (format!("{models}\ncurrent_model = \"huge\""), "{ say = \"hi\" }"),
        ];
        let outcomes: Vec<String> = cases.iter().map(|(top, steps)| parse_outcome(top, steps)).collect();
        expect_test::expect![[r#"
            ok
            invalid scenario new.toml, line 5, column 3: `report_model` needs the scenario to declare `models` at top level
            invalid scenario new.toml, line 5, column 3: `report_model` only accepts `true`
            invalid scenario new.toml, line 2, column 10: `models` needs at least one model
            invalid scenario new.toml, line 2, column 10: model `a` is declared twice
            invalid scenario new.toml, line 2, column 17: `current_model` needs `models` to choose from
            invalid scenario new.toml, line 3, column 17: `current_model` is `huge`, which is not one of the models (default, opus)"#]].assert_eq(&outcomes.join("\n"));
        let source = format!(
            "description = \"x\"\n{models}\ncurrent_model = \"opus\"\n[[prompt]]\nsteps = [{{ say = \"hi\" }}]\n"
        );
        let scenario = parse(&source, "models.toml").expect("valid scenario");
        assert_eq!(scenario.models.map(|models| models.initial).as_deref(), Some("opus"));
    }

    #[test]
    fn fork_is_off_unless_asked_for_and_report_fork_needs_it() {
        let cases = [
            ("fork = true", "{ report_fork = true }"),
            ("", "{ report_fork = true }"),
            ("fork = false", "{ report_fork = true }"),
            ("fork = true", "{ report_fork = false }"),
            ("fork = \"yes\"", "{ say = \"hi\" }"),
        ];
        let outcomes: Vec<String> = cases.iter().map(|(top, steps)| parse_outcome(top, steps)).collect();
        expect_test::expect![[r#"
            ok
            invalid scenario new.toml, line 5, column 3: `report_fork` needs the scenario to say `fork = true` at top level
            invalid scenario new.toml, line 5, column 3: `report_fork` needs the scenario to say `fork = true` at top level
            invalid scenario new.toml, line 5, column 3: `report_fork` only accepts `true`
            invalid scenario new.toml, line 2, column 8: invalid type: string "yes", expected a boolean"#]]
        .assert_eq(&outcomes.join("\n"));
        let fork = |top: &str| {
            let source = format!("description = \"x\"\n{top}\n[[prompt]]\nsteps = [{{ say = \"hi\" }}]\n");
            parse(&source, "fork.toml").expect("valid scenario").fork
        };
        assert!(!fork(""));
        assert!(fork("fork = true"));
    }

    #[test]
    fn a_change_is_given_whole_or_appended_to_the_file_on_disk() {
        let cases = [
            r#"{ tool_call = { id = "e", title = "Edit", diff = { path = "a", old_text = "x", new_text = "y" } } }"#,
            r#"{ tool_call = { id = "e", title = "Edit", diff = { path = "a", append = "y" } } }"#,
            r#"{ tool_call = { id = "e", title = "Edit", diff = { path = "a", old_text = "x", append = "y" } } }"#,
            r#"{ tool_call = { id = "e", title = "Edit", diff = { path = "a", new_text = "x", append = "y" } } }"#,
            r#"{ tool_call = { id = "e", title = "Edit", diff = { path = "a" } } }"#,
            r#"{ write_disk = { path = "a", append = "y" } }"#,
            r#"{ write_file = { path = "a", content = "x", append = "y" } }"#,
            r#"{ write_disk = { path = "a", text = "y" } }"#,
        ];
        let outcomes: Vec<String> = cases.iter().map(|steps| parse_outcome("", steps)).collect();
        expect_test::expect![[r#"
            ok
            ok
            invalid scenario new.toml, line 5, column 52: a diff with `append` takes its old text from disk: leave out `old_text`
            invalid scenario new.toml, line 5, column 52: a diff needs one of `new_text` or `append`
            invalid scenario new.toml, line 5, column 52: a diff needs one of `new_text` or `append`
            ok
            invalid scenario new.toml, line 5, column 18: a file write needs one of `content` or `append`
            invalid scenario new.toml, line 5, column 32: unknown field `text`, expected one of `path`, `content`, `append`"#]].assert_eq(&outcomes.join("\n"));
        let appended = NewText::Appended("- more\n".to_owned());
        assert_eq!(appended.after(Some("# Notes\n")), "# Notes\n- more\n");
        assert_eq!(appended.after(None), "- more\n", "a file that is not there is a new one");
    }

    #[test]
    fn a_burst_names_how_many_entries_and_needs_one_at_least() {
        let cases = [
            "{ burst = { entries = 10000 } }",
            "{ burst = { entries = 0 } }",
            "{ burst = { count = 3 } }",
            "{ burst = 3 }",
        ];
        let outcomes: Vec<String> = cases.iter().map(|steps| parse_outcome("", steps)).collect();
        expect_test::expect![[r#"
            ok
            invalid scenario new.toml, line 5, column 3: `burst` needs at least one entry
            invalid scenario new.toml, line 5, column 15: unknown field `count`, expected `entries`
            invalid scenario new.toml, line 5, column 13: invalid type: integer `3`, expected struct BurstSpec"#]]
        .assert_eq(&outcomes.join("\n"));
        let source = "description = \"x\"\n[[prompt]]\nsteps = [{ burst = { entries = 12 } }]\n";
        let scenario = parse(source, "burst.toml").expect("valid scenario");
        assert!(matches!(scenario.prompts[0].steps[..], [Step::Burst(12)]));
    }

    #[test]
    fn raw_input_becomes_the_json_an_agent_would_send() {
        let source = "description = \"x\"\n[[prompt]]\nsteps = [\n  { tool_call = { id = \"t\", title = \"T\", raw_input = \
            { command = \"npm test\", args = [\"--ci\", 3, 1.5, true], env = { CI = \"1\" }, at = 1979-05-27T07:32:00Z } } },\n]\n";
        let scenario = parse(source, "raw.toml").expect("valid scenario");
        let Step::ToolCall(spec) = &scenario.prompts[0].steps[0] else { panic!("a tool call") };
        let raw_input = spec.raw_input.as_ref().expect("raw input").0.to_string();
        expect_test::expect![[
            r#"{"args":["--ci",3,1.5,true],"at":"1979-05-27T07:32:00Z","command":"npm test","env":{"CI":"1"}}"#
        ]]
        .assert_eq(&raw_input);
    }
}

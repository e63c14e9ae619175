//! The person's permission policy: the mode and the rules that answer an agent's
//! `session/request_permission` without asking, and the facts of a request they are matched on.
//!
//! A [`PermissionPolicy`] is pure data and pure decisions: the ACP client asks it for a
//! [`Verdict`] on each request (and again on every request still waiting whenever the policy
//! changes), and turns the verdict into an answer. The order of precedence is the one a person
//! can predict without reading code:
//!
//! 1. a **deny rule** that matches rejects, whatever the mode (an explicit "never" wins);
//! 2. **Plan** mode rejects every tool that writes or executes (`edit`, `delete`, `move`,
//!    `execute`), with a reason the agent is sent;
//! 3. **Bypass** mode approves everything else;
//! 4. an **allow rule** that matches approves (session rules are tried before workspace rules);
//! 5. **Accept edits** mode approves `edit` and `move` of files inside the workspace;
//! 6. otherwise the person is asked.
//!
//! Matching is conservative. A rule's conditions must all hold. A path condition is a glob over
//! workspace-relative paths: an allow rule needs every path the request touches to match (and at
//! least one path), a deny rule fires when any path matches, and a path outside the workspace never
//! matches an allow rule nor counts as an edit Accept-edits may approve.
//!
//! Deliberately absent: regular expressions (globs are what people write in settings and can
//! read back), and any IO: saving workspace rules is the host's job, asked for by the engine.

mod glob;

use std::fmt;

use agent_client_protocol_schema::v1 as acp;
use serde::{Deserialize, Serialize};
#[cfg(feature = "typescript")]
use ts_rs::TS;

use crate::thread::{ToolCallView, ToolContent};

use glob::escape_glob;
pub use glob::{path_glob, text_glob};

/// How much the person wants to be asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Every request is shown, unless a rule answers it.
    #[default]
    Ask,
    /// File edits inside the workspace are approved; commands and everything else still ask.
    AcceptEdits,
    /// Read only: anything that writes or executes is rejected, with a reason the agent sees.
    Plan,
    /// Everything is approved, except what a deny rule rejects.
    Bypass,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Ask, Mode::AcceptEdits, Mode::Plan, Mode::Bypass];

    /// The name shown in the chat header and in notes.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Ask => "Ask",
            Mode::AcceptEdits => "Accept edits",
            Mode::Plan => "Plan",
            Mode::Bypass => "Bypass",
        }
    }

    /// What the mode does, in one sentence: the mode picker's tooltip and the setting's
    /// description.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Ask => "Ask before anything the agent wants to do, unless one of your rules answers.",
            Mode::AcceptEdits => "Approve file edits inside the workspace; commands and everything else still ask.",
            Mode::Plan => "Read only: reject anything that writes or runs, and tell the agent why.",
            Mode::Bypass => "Approve every request without asking, except what a deny rule rejects. Use with care.",
        }
    }

    /// The Tether mode an agent's own mode stands for, recognised by its id or name
    /// (Claude Code's `default`/`acceptEdits`/`plan`/`bypassPermissions`, Gemini's `autoEdit` and
    /// `yolo`, Codex's `read-only` and `full-access`, ...). `None` for modes with no counterpart.
    pub fn from_agent_mode(id_or_name: &str) -> Option<Mode> {
        let folded: String =
            id_or_name.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
        match folded.as_str() {
            "default" | "ask" | "askalways" | "alwaysask" => Some(Mode::Ask),
            "acceptedits" | "autoedit" | "autoedits" => Some(Mode::AcceptEdits),
            "plan" | "readonly" | "planmode" => Some(Mode::Plan),
            "bypass" | "bypasspermissions" | "yolo" | "fullaccess" => Some(Mode::Bypass),
            // Claude's "Don't Ask" is not a bypass: it denies whatever is not pre-approved
            // instead of asking. Tether has no mode that means that.
            _ => None,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The tool kinds ACP defines, in the rules form's order. Their names are the schema crate's
/// (`ToolKind` as it is written on the wire), not a copy of them.
pub const TOOL_KINDS: [acp::ToolKind; 10] = [
    acp::ToolKind::Read,
    acp::ToolKind::Edit,
    acp::ToolKind::Delete,
    acp::ToolKind::Move,
    acp::ToolKind::Search,
    acp::ToolKind::Execute,
    acp::ToolKind::Think,
    acp::ToolKind::Fetch,
    acp::ToolKind::SwitchMode,
    acp::ToolKind::Other,
];

/// Kinds that change the workspace or run something: what Plan mode rejects.
const WRITING_KINDS: [acp::ToolKind; 4] =
    [acp::ToolKind::Edit, acp::ToolKind::Delete, acp::ToolKind::Move, acp::ToolKind::Execute];

/// Kinds Accept-edits mode approves inside the workspace.
const EDIT_KINDS: [acp::ToolKind; 2] = [acp::ToolKind::Edit, acp::ToolKind::Move];

/// How `kind` is written on the wire and in rules (`switch_mode`).
pub fn tool_kind_name(kind: acp::ToolKind) -> String {
    match crate::json_value::to_value(kind) {
        Ok(serde_json::Value::String(name)) => name,
        // The schema writes every kind as a string; `other` is what it reads anything else as.
        _ => "other".to_owned(),
    }
}

/// The names rules may use for tool kinds ([`TOOL_KINDS`] as written on the wire).
pub fn tool_kind_names() -> Vec<String> {
    TOOL_KINDS.iter().map(|kind| tool_kind_name(*kind)).collect()
}

/// Whether the tool kind named `name` (as a tool call carries it) is one of `kinds`. A name ACP
/// does not define is none of them.
fn kind_is_one_of(name: &str, kinds: &[acp::ToolKind]) -> bool {
    kinds.iter().any(|kind| tool_kind_name(*kind) == name)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum RuleDecision {
    Allow,
    Deny,
}

/// A rule as the person writes it in `tether.permissions.rules` or the rules panel: a decision
/// and the conditions a request must meet. Absent conditions match anything, but a rule needs at
/// least one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleSpec {
    pub decision: RuleDecision,
    /// Tool kinds (`execute`, `edit`, ...); empty matches every kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// A glob (`*` any text, `?` one character) the whole command line or the whole tool title
    /// must match: `npm test`, `npm run *`, `Read *`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "typescript", ts(optional))]
    pub pattern: Option<String>,
    /// A glob over workspace-relative paths: `src/**`, `docs/*.md`; without a `/` it matches a
    /// file name at any depth (`*.lock`), and `**` is every path inside the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "typescript", ts(optional))]
    pub path: Option<String>,
}

/// Why a rule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("a rule needs at least one condition (kinds, pattern or path)")]
    NoCondition,
    #[error("unknown tool kind {0:?}; the kinds are {kinds}", kinds = tool_kind_names().join(", "))]
    UnknownKind(String),
    #[error("the pattern is empty")]
    EmptyPattern,
    #[error("the path {0:?} is not a workspace-relative glob")]
    BadPath(String),
    #[error("{0}")]
    Malformed(String),
}

impl RuleSpec {
    /// Checks a rule the person wrote; a rule that fails is shown with the error, never applied.
    pub fn validate(&self) -> Result<(), RuleError> {
        if self.kinds.is_empty() && self.pattern.is_none() && self.path.is_none() {
            return Err(RuleError::NoCondition);
        }
        let names = tool_kind_names();
        if let Some(kind) = self.kinds.iter().find(|kind| !names.contains(kind)) {
            return Err(RuleError::UnknownKind(kind.clone()));
        }
        if self.pattern.as_deref().is_some_and(|pattern| pattern.trim().is_empty()) {
            return Err(RuleError::EmptyPattern);
        }
        if let Some(path) = &self.path
            && (path.trim().is_empty() || path.starts_with('/') || path.split('/').any(|part| part == ".."))
        {
            return Err(RuleError::BadPath(path.clone()));
        }
        Ok(())
    }

    /// Reads a rule from a settings value, with a message a person can act on when it is wrong.
    pub fn from_setting(value: &serde_json::Value) -> Result<RuleSpec, RuleError> {
        // serde would also read a struct from an array; a rule written as one is a mistake.
        if !value.is_object() {
            return Err(RuleError::Malformed(
                r#"a rule is an object such as {"decision": "allow", "kinds": ["read"]}"#.to_owned(),
            ));
        }
        let spec: RuleSpec =
            crate::json_value::from_value(value).map_err(|error| RuleError::Malformed(error.to_string()))?;
        spec.validate()?;
        Ok(spec)
    }

    /// One line saying what the rule does: `Allow execute matching “npm test”`.
    pub fn describe(&self) -> String {
        let mut text = String::from(match self.decision {
            RuleDecision::Allow => "Allow",
            RuleDecision::Deny => "Deny",
        });
        text.push(' ');
        text.push_str(&if self.kinds.is_empty() { "any tool".to_owned() } else { self.kinds.join(", ") });
        if let Some(pattern) = &self.pattern {
            text.push_str(&format!(" matching “{pattern}”"));
        }
        match self.path.as_deref() {
            Some("**") => text.push_str(" in the workspace"),
            Some(path) => text.push_str(&format!(" on {path}")),
            None => {}
        }
        text
    }

    /// Whether the rule applies to the request; with `fold_case` (a Windows workspace), its path
    /// glob matches paths whatever their case.
    pub fn matches(&self, facts: &RequestFacts, fold_case: bool) -> bool {
        if !self.kinds.is_empty() && !self.kinds.contains(&facts.kind) {
            return false;
        }
        if let Some(pattern) = &self.pattern {
            let on_command = facts.command.as_deref().is_some_and(|command| text_glob(pattern, command));
            if !on_command && !text_glob(pattern, &facts.title) {
                return false;
            }
        }
        if let Some(glob) = &self.path {
            let matches = |path: &RequestPath| match path {
                RequestPath::Inside(relative) if fold_case => path_glob(&glob.to_lowercase(), &relative.to_lowercase()),
                RequestPath::Inside(relative) => path_glob(glob, relative),
                RequestPath::Outside(_) => false,
            };
            let fires = match self.decision {
                // A deny rule protects what it names: one matching path is enough.
                RuleDecision::Deny => facts.paths.iter().any(matches),
                // An allow rule must cover everything the tool touches.
                RuleDecision::Allow => !facts.paths.is_empty() && facts.paths.iter().all(matches),
            };
            if !fires {
                return false;
            }
        }
        true
    }

    /// The rule an "always" choice on this request creates: as narrow as what the person saw.
    /// A command is remembered as that exact command; a file tool as that kind of tool anywhere
    /// in the workspace (or, when it reached outside, that exact title); reads, searches, fetches
    /// and thinking as the kind; anything else as the kind with that exact title.
    pub fn from_choice(decision: RuleDecision, facts: &RequestFacts) -> RuleSpec {
        let kinds = vec![facts.kind.clone()];
        let exact = |text: &str| Some(escape_glob(text));
        let (pattern, path) = match facts.kind.as_str() {
            "execute" => (exact(facts.command.as_deref().unwrap_or(&facts.title)), None),
            "edit" | "delete" | "move" | "read" if facts.all_inside() => (None, Some("**".to_owned())),
            "edit" | "delete" | "move" | "read" => (exact(&facts.title), None),
            "search" | "fetch" | "think" => (None, None),
            _ => (exact(&facts.title), None),
        };
        RuleSpec { decision, kinds, pattern, path }
    }
}

/// Where a rule applies and lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum RuleScope {
    /// This session only; gone with it.
    Session,
    /// Saved in the workspace settings (`tether.permissions.rules`); every session uses it.
    Workspace,
}

/// Where a rule came from, shown beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RuleOrigin {
    /// The person chose an "always" option on a request.
    Chosen { option: String, tool_title: String },
    /// The person added it in the rules panel.
    Added,
    /// Read from the workspace settings.
    Settings,
}

/// Identifies a rule within an engine; never reused.
pub type RuleId = u64;

/// A rule in force, as the rules panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    pub id: RuleId,
    pub spec: RuleSpec,
    pub scope: RuleScope,
    pub origin: RuleOrigin,
    /// How many requests it answered.
    pub fired: u32,
    /// [`RuleSpec::describe`].
    pub description: String,
}

/// A path a request touches, resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RequestPath {
    /// Relative to the workspace root, `/`-separated, never empty (the root itself is `.`).
    Inside(String),
    /// Absolute and normalised.
    Outside(String),
}

/// What a permission request is about, as rules see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestFacts {
    pub kind: String,
    pub title: String,
    /// The command line of an `execute` tool, when the agent sent one in `rawInput`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<RequestPath>,
}

impl RequestFacts {
    /// The facts of a tool call: its kind and title, the command in its raw input, and every path
    /// in its locations, diffs and raw input ([`paths_of_tool_call`]), placed by `place` (which
    /// says where each one really leads, see [`resolve_path`](crate::workspace_path::resolve_path)).
    pub fn of_tool_call(call: &ToolCallView, place: impl Fn(&str) -> RequestPath) -> RequestFacts {
        let mut paths: Vec<RequestPath> = Vec::new();
        for raw in paths_of_tool_call(call) {
            let path = place(raw);
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        RequestFacts { kind: call.kind.clone(), title: call.title.clone(), command: call.command.clone(), paths }
    }

    fn all_inside(&self) -> bool {
        !self.paths.is_empty() && self.paths.iter().all(|path| matches!(path, RequestPath::Inside(_)))
    }
}

/// Every path a tool call names, as the agent wrote it: its locations, the files of its diffs,
/// and the path fields of its raw input.
pub fn paths_of_tool_call(call: &ToolCallView) -> Vec<&str> {
    let mut raw_paths: Vec<&str> = call.locations.iter().map(|location| location.path.as_str()).collect();
    for content in &call.content {
        if let ToolContent::Diff { path, .. } = content {
            raw_paths.push(path);
        }
    }
    if let Some(input) = call.raw_input.as_ref().and_then(serde_json::Value::as_object) {
        for key in ["path", "file_path", "filePath", "abs_path", "absPath", "notebook_path", "destination"] {
            if let Some(path) = input.get(key).and_then(serde_json::Value::as_str) {
                raw_paths.push(path);
            }
        }
    }
    raw_paths
}

/// The command line in a tool call's raw input: `command`, `cmd` or `commandLine`, the first
/// that holds a command.
pub fn command_of(raw_input: &serde_json::Value) -> Option<String> {
    let input = raw_input.as_object()?;
    ["command", "cmd", "commandLine"].iter().find_map(|key| input.get(*key).and_then(command_text))
}

/// A command given as a string, or as an argument vector (`["bash", "-lc", "npm test"]` is the
/// command `npm test`).
fn command_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(serde_json::Value::as_str).collect();
            if words.len() != items.len() || words.is_empty() {
                return None;
            }
            Some(command_of_words(&words))
        }
        _ => None,
    }
}

/// A program and its arguments as the command line rules and approvals compare: the script of a
/// shell run with `-c`/`-lc` (`["bash", "-lc", "npm test"]` is `npm test`), else the words joined
/// by spaces. `terminal/create` and a permission request's `rawInput` name the same command
/// through this, whichever form each uses.
pub fn command_of_words(words: &[&str]) -> String {
    let is_shell = |word: &str| word.rsplit('/').next().is_some_and(|name| name.ends_with("sh"));
    match words {
        [shell, flag, script] if is_shell(shell) && matches!(*flag, "-c" | "-lc") => (*script).to_owned(),
        _ => words.join(" "),
    }
}

/// Who decided a request that was not shown as a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum DecidedBy {
    Rule { id: RuleId, description: String, scope: RuleScope },
    Mode { mode: Mode },
}

impl fmt::Display for DecidedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecidedBy::Rule { description, scope: RuleScope::Session, .. } => {
                write!(f, "rule: {description} (this session)")
            }
            DecidedBy::Rule { description, scope: RuleScope::Workspace, .. } => {
                write!(f, "rule: {description} (workspace)")
            }
            DecidedBy::Mode { mode } => write!(f, "{mode} mode"),
        }
    }
}

/// The policy's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Show the request and wait for the person.
    Ask,
    Allow {
        by: DecidedBy,
    },
    /// `reason` is sent to the agent (in the response's `_meta`) and shown on the card.
    Reject {
        by: DecidedBy,
        reason: String,
    },
}

#[derive(Debug, Clone)]
struct Rule {
    id: RuleId,
    spec: RuleSpec,
    scope: RuleScope,
    origin: RuleOrigin,
    fired: u32,
}

impl Rule {
    fn view(&self) -> RuleView {
        RuleView {
            id: self.id,
            spec: self.spec.clone(),
            scope: self.scope,
            origin: self.origin.clone(),
            fired: self.fired,
            description: self.spec.describe(),
        }
    }

    fn decided_by(&self) -> DecidedBy {
        DecidedBy::Rule { id: self.id, description: self.spec.describe(), scope: self.scope }
    }
}

/// The mode and the rules of one session (its own rules and the workspace's).
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    mode: Mode,
    rules: Vec<Rule>,
    next_rule_id: RuleId,
    /// The workspace's file names match whatever their case (a Windows workspace): so do the
    /// rules' path globs.
    fold_case: bool,
}

impl PermissionPolicy {
    /// A policy with no rules. Rule ids start at `first_rule_id`, so ids of different sessions
    /// never collide and a stale click cannot delete a newer rule.
    pub fn new(mode: Mode, first_rule_id: RuleId) -> Self {
        PermissionPolicy { mode, rules: Vec::new(), next_rule_id: first_rule_id, fold_case: false }
    }

    /// The policy of a new session: this one's workspace rules (with how often they fired), no
    /// session rules, and `mode`.
    pub fn for_new_session(&self, mode: Mode, first_rule_id: RuleId) -> Self {
        let rules = self.rules.iter().filter(|rule| rule.scope == RuleScope::Workspace).cloned().collect();
        PermissionPolicy { mode, rules, next_rule_id: first_rule_id.max(self.next_rule_id), fold_case: self.fold_case }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Makes the rules' path globs match paths whatever their case, or not, as the workspace's
    /// file names do ([`PathStyle::folds_case`](crate::workspace_path::PathStyle::folds_case)).
    pub fn fold_case(mut self, fold_case: bool) -> Self {
        self.fold_case = fold_case;
        self
    }

    /// The verdict on a request, by the precedence in this module's documentation.
    pub fn decide(&self, facts: &RequestFacts) -> Verdict {
        if let Some(rule) = self.first_match(RuleDecision::Deny, facts) {
            let by = rule.decided_by();
            let reason = format!("Denied by the person's {by}");
            return Verdict::Reject { by, reason };
        }
        let mode = self.mode;
        if mode == Mode::Plan && kind_is_one_of(&facts.kind, &WRITING_KINDS) {
            let reason =
                format!("Plan mode is read only: {} tools are not allowed until the mode is switched", facts.kind);
            return Verdict::Reject { by: DecidedBy::Mode { mode }, reason };
        }
        if mode == Mode::Bypass {
            return Verdict::Allow { by: DecidedBy::Mode { mode } };
        }
        if let Some(rule) = self.first_match(RuleDecision::Allow, facts) {
            return Verdict::Allow { by: rule.decided_by() };
        }
        if mode == Mode::AcceptEdits && kind_is_one_of(&facts.kind, &EDIT_KINDS) && facts.all_inside() {
            return Verdict::Allow { by: DecidedBy::Mode { mode } };
        }
        Verdict::Ask
    }

    /// Counts one request answered by rule `id`.
    pub fn record_fired(&mut self, id: RuleId) {
        if let Some(rule) = self.rules.iter_mut().find(|rule| rule.id == id) {
            rule.fired += 1;
        }
    }

    /// Adds a rule; an identical rule already in that scope is kept instead of a duplicate.
    pub fn add_rule(&mut self, spec: RuleSpec, scope: RuleScope, origin: RuleOrigin) -> Result<RuleView, RuleError> {
        spec.validate()?;
        if let Some(existing) = self.rules.iter().find(|rule| rule.scope == scope && rule.spec == spec) {
            return Ok(existing.view());
        }
        let rule = Rule { id: self.next_rule_id, spec, scope, origin, fired: 0 };
        self.next_rule_id += 1;
        let view = rule.view();
        self.rules.push(rule);
        Ok(view)
    }

    pub fn remove_rule(&mut self, id: RuleId) -> Option<RuleView> {
        let index = self.rules.iter().position(|rule| rule.id == id)?;
        Some(self.rules.remove(index).view())
    }

    /// Removes every rule of `scope`; returns how many there were.
    pub fn clear(&mut self, scope: RuleScope) -> usize {
        let before = self.rules.len();
        self.rules.retain(|rule| rule.scope != scope);
        before - self.rules.len()
    }

    /// Moves a session rule to the workspace. Returns the rule as it now is.
    pub fn keep_for_workspace(&mut self, id: RuleId) -> Option<RuleView> {
        let index = self.rules.iter().position(|rule| rule.id == id && rule.scope == RuleScope::Session)?;
        let spec = self.rules[index].spec.clone();
        if let Some(existing) =
            self.rules.iter().position(|rule| rule.scope == RuleScope::Workspace && rule.spec == spec)
        {
            // Already saved: the session copy only duplicates it.
            let fired = self.rules[index].fired;
            self.rules[existing].fired += fired;
            self.rules.remove(index);
            let existing = if existing > index { existing - 1 } else { existing };
            return Some(self.rules[existing].view());
        }
        self.rules[index].scope = RuleScope::Workspace;
        Some(self.rules[index].view())
    }

    /// Replaces the workspace rules with those read from settings. A rule that was already there
    /// keeps its id, origin and count, so saving the settings the engine asked for changes nothing.
    pub fn set_workspace_rules(&mut self, specs: Vec<RuleSpec>) {
        let mut old: Vec<Rule> = Vec::new();
        self.rules.retain(|rule| {
            if rule.scope == RuleScope::Workspace {
                old.push(rule.clone());
                false
            } else {
                true
            }
        });
        for spec in specs {
            if self.rules.iter().any(|rule| rule.scope == RuleScope::Workspace && rule.spec == spec) {
                continue;
            }
            match old.iter().position(|rule| rule.spec == spec) {
                Some(index) => self.rules.push(old.remove(index)),
                None => {
                    self.rules.push(Rule {
                        id: self.next_rule_id,
                        spec,
                        scope: RuleScope::Workspace,
                        origin: RuleOrigin::Settings,
                        fired: 0,
                    });
                    self.next_rule_id += 1;
                }
            }
        }
    }

    /// The workspace rules as they should be saved.
    pub fn workspace_specs(&self) -> Vec<RuleSpec> {
        self.rules.iter().filter(|rule| rule.scope == RuleScope::Workspace).map(|rule| rule.spec.clone()).collect()
    }

    /// Every rule in force, session rules first.
    pub fn rules(&self) -> Vec<RuleView> {
        let session = self.rules.iter().filter(|rule| rule.scope == RuleScope::Session);
        let workspace = self.rules.iter().filter(|rule| rule.scope == RuleScope::Workspace);
        session.chain(workspace).map(Rule::view).collect()
    }

    fn first_match(&self, decision: RuleDecision, facts: &RequestFacts) -> Option<&Rule> {
        let session = self.rules.iter().filter(|rule| rule.scope == RuleScope::Session);
        let workspace = self.rules.iter().filter(|rule| rule.scope == RuleScope::Workspace);
        session.chain(workspace).find(|rule| rule.spec.decision == decision && rule.spec.matches(facts, self.fold_case))
    }
}

/// Who changed the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangedBy {
    Person,
    /// The agent reported a mode of its own (`current_mode_update`), which Tether follows.
    Agent,
}

/// One decision for the session's audit log. The host has it written with the wall-clock time
/// (tetherd adds it); `mode` is the mode in force when it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    #[serde(flatten)]
    pub event: AuditEvent,
    pub mode: Mode,
}

/// What happened, with the tool call it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum AuditEvent {
    /// A request was shown to the person.
    Asked {
        tool_call: AuditedToolCall,
        options: Vec<crate::thread::PermissionOptionView>,
    },
    /// The person chose an option.
    Answered {
        tool_call: AuditedToolCall,
        option: crate::thread::PermissionOptionView,
    },
    /// A rule or the mode answered without asking.
    Decided {
        tool_call: AuditedToolCall,
        option: crate::thread::PermissionOptionView,
        allowed: bool,
        by: DecidedBy,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Answered `cancelled` before the person chose: the turn was cancelled or ended, or the
    /// agent went away.
    Cancelled {
        tool_call: AuditedToolCall,
        why: String,
    },
    /// The agent withdrew the request.
    Withdrawn {
        tool_call: AuditedToolCall,
    },
    RuleAdded {
        rule: RuleView,
    },
    RuleRemoved {
        rule: RuleView,
    },
    /// A session rule was saved to the workspace.
    RuleKept {
        rule: RuleView,
    },
    ModeChanged {
        from: Mode,
        to: Mode,
        by: ChangedBy,
    },
    /// A rule or the mode decided an `fs/write_text_file` without review.
    WriteDecided {
        path: String,
        allowed: bool,
        by: DecidedBy,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A file change was reviewed to the end: how many hunks were kept and rejected (or
    /// reverted), and the unified patch of what the file holds now against before.
    Reviewed {
        path: String,
        origin: crate::review::ChangeOrigin,
        kept: u32,
        rejected: u32,
        patch: String,
    },
    /// A file change's card as the person was left with it (the change on disk, decided, or
    /// failed), as the webview has it: a replay shows the card from here. Its `id` is the one the
    /// change's first record gave it, whatever number the engine that wrote this one used. Once
    /// the change's texts are in the log (`changeTexts`) its hunks' diff lines are left out: a
    /// replay draws them from the texts again.
    ChangeShown {
        change: serde_json::Value,
    },
    /// The person's decisions so far on a write still waiting for them (`hunks`, in order), for
    /// the agent's request `request`, and the texts they were made on (`content_hash` of the
    /// file's text, `None` for no file, and of the proposed text): after a reload the request
    /// is proposed again, and the decisions go with it when the texts are the same.
    WriteDecisions {
        request: crate::jsonrpc::RequestId,
        original: Option<u64>,
        proposed: u64,
        hunks: Vec<crate::review::HunkState>,
    },
    /// The texts of a change that is in the file, before and after it (`None`: no file),
    /// written before its first `changeShown` that finds it there: with them a replay goes on
    /// with the review where it was, reverting included, and a checkpoint before it can be
    /// restored. Left out for texts larger than `MAX_LOGGED_CHANGE_BYTES`, and once the log
    /// holds `MAX_LOGGED_TEXTS_PER_SESSION` of them (acp/fs/review.rs): those cards reopen as
    /// cards only.
    ChangeTexts {
        change: crate::review::ChangeId,
        old: Option<String>,
        new: Option<String>,
    },
    /// A card of Tether's own (a command or a read the agent did not ask about) as it now is,
    /// once answered, as a thread entry: the wire has no trace of it, and a replay shows it from
    /// here.
    CardShown {
        tool_call: serde_json::Value,
    },
    /// A notice shown in the thread that the wire alone does not explain, so that a replay of
    /// the log shows it too.
    Notice {
        level: crate::thread::NoticeLevel,
        text: String,
        /// What the notice folds away (a skipped line's error and start), when it has that.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The agent went with tetherd, which logs no exit for it; `why` is how the thread said so
    /// ("was interrupted: Tether lost the connection to tetherd (...)"), for a replay to end
    /// what the agent left open with the same words rather than a guess.
    AgentLost {
        why: String,
    },
    /// The person cancelled a prompt before it was sent (it waited for the turn's snapshot or
    /// for the files it mentions): the wire never saw it, and a replay shows it from here. The
    /// prompt's ACP content blocks.
    PromptCancelled {
        prompt: serde_json::Value,
    },
    /// The session goes on with a conversation restored from a checkpoint of another: the
    /// thread's entries copied from it (as the webview has them), which the wire never carries,
    /// for a replay to show.
    ConversationRestored {
        entries: serde_json::Value,
    },
    /// The person asked to restore the code to a checkpoint (or to undo a restore), and what it
    /// proposed: the restore's card and each file's change, as the webview has them.
    RestoreProposed {
        restore: serde_json::Value,
        changes: serde_json::Value,
    },
    /// A restore as it ended: every change decided (and written), or the restore undone.
    RestoreSettled {
        restore: serde_json::Value,
        changes: serde_json::Value,
    },
}

/// The tool call a decision was about, as the person saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditedToolCall {
    pub id: String,
    #[serde(flatten)]
    pub facts: RequestFacts,
}

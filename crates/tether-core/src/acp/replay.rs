//! Rebuilding a session's thread from its event log (see `session_log`): the fold that gives a
//! reloaded window or a restarted VS Code the conversation the person saw, without asking the
//! agent for it.
//!
//! The agent's lines go through the same engine that handled them live, so the thread is built by
//! the same code. What the engine itself said is read back from the log instead of being said
//! again: the requests it made (by their ids, so that their answers are recognised: the prompt's
//! answer ends its turn), the person's prompts (each `session/prompt` is a user message) and the
//! answers to permission requests. Nothing leaves a replaying engine: lines for the agent and
//! actions for the host are dropped, and rules and modes decide nothing (the log says what was
//! decided). A permission request the log never answers stays waiting, as it was when the log
//! ended. The session's own rules (its "always" choices, and rules added for it in the panel) are
//! rebuilt from the host's records of them, so that after a reload they go on answering what they
//! answered before it; the workspace's rules are the settings', which the new window reads.
//!
//! The agent's requests for files and terminals are not acted on again while replaying: the log
//! has their answers. Those it does not have are kept, for a host that goes on with the agent
//! still running (a window reload) to answer.
//!
//! Commands Tether ran for the agent are rebuilt from what the agent read of them (the answers to
//! its `terminal/output` and `terminal/wait_for_exit`): the output stream itself travels beside the
//! agent's wire and is not in the log. File change cards come back from the host's records of
//! them (`changeShown`), as the person was left with them. A change that is in its file has its
//! texts in the log too (`changeTexts`), and goes on being reviewed (and restored to a
//! checkpoint); any other is no longer decidable, since a review needs the file's text before
//! the change. So do Tether's own cards, for requests the agent made without asking
//! (`cardShown`), once answered.

use std::collections::VecDeque;

use agent_client_protocol_schema::v1 as acp;

use crate::claude_cli::{ClaudeCli, ProcessMode, ReplayLine};
use crate::jsonrpc::{self, Message};
use crate::permissions::{DecidedBy, Mode, PermissionPolicy, RuleId, RuleOrigin, RuleScope, RuleSpec};
use crate::session_log::{LogEvent, ReadLog};
use crate::thread::{Entry, NoticeLevel, NoticeView, PermissionKey, PermissionOutcome, TurnState};

use super::{AcpClient, ClientInfo, Phase, RequestKind};

/// How many of the agent's last stderr lines explain an exit read back from the log.
const STDERR_TAIL_LINES: usize = 40;

/// A replay in progress: a session's log folded piece by piece (a long log is read from tetherd
/// in pieces, and only the thread it folds into is kept, never the whole text).
#[derive(Debug)]
pub struct LogReplay {
    client: AcpClient,
    /// The log is a Claude CLI session's (its lines are the CLI's wire, not ACP): they are
    /// translated as they were live. Known from the first line Tether wrote.
    claude: Option<ClaudeCli>,
    /// A line Tether wrote has been read (the first one tells which wire the log holds).
    seen_sent: bool,
    stderr: VecDeque<String>,
    problems: Vec<String>,
    last_seq: u64,
}

impl LogReplay {
    pub fn new(
        info: ClientInfo,
        cwd: impl Into<String>,
        first_permission_key: PermissionKey,
        policy: PermissionPolicy,
    ) -> Self {
        let mut client = AcpClient::new(info, cwd, first_permission_key, policy);
        client.replaying = true;
        LogReplay { client, claude: None, seen_sent: false, stderr: VecDeque::new(), problems: Vec::new(), last_seq: 0 }
    }

    /// The workspace's other folders, as the live client has them (see
    /// [`AcpClient::set_workspace_folders`]): the session reads back with the names it was shown with.
    pub fn set_workspace_folders(&mut self, others: impl IntoIterator<Item = String>) {
        self.client.set_workspace_folders(others);
    }

    /// Folds the next piece of the log (whole lines, in order).
    pub fn feed(&mut self, log: &ReadLog) {
        let client = &mut self.client;
        self.problems.extend(log.problems.iter().map(|problem| format!("line {}: {}", problem.line, problem.message)));
        for entry in &log.entries {
            self.last_seq = self.last_seq.max(entry.seq);
            // The thread times thoughts by when the log says things happened; nothing else in a
            // replaying client reads the time (its requests never wait on the live clock).
            client.thread.set_now(crate::session_log::time_ms(&entry.time).unwrap_or(0));
            if let LogEvent::ToAgent(line) = &entry.event
                && !std::mem::replace(&mut self.seen_sent, true)
                && is_claude_cli_line(line)
            {
                let mut claude = ClaudeCli::new(ProcessMode::Oneshot);
                claude.set_workspace_folders(client.workspace.roots().skip(1).map(str::to_owned));
                let handshake = claude.replay_start(client.cwd());
                replay_lines(client, handshake, &mut self.problems, entry.seq);
                self.claude = Some(claude);
            }
            if let Some(claude) = &mut self.claude {
                let lines = match &entry.event {
                    LogEvent::ToAgent(line) => claude.replay_sent_cli(line),
                    LogEvent::FromAgent(line) => {
                        claude.handle_cli_line(line, 0);
                        Vec::new()
                    }
                    LogEvent::Exited { code, signal, .. } => {
                        let tail: Vec<&str> = self.stderr.iter().map(String::as_str).collect();
                        claude.handle_process_exited(None, &exit_description(*code, *signal), &tail.join("\n"));
                        self.stderr.clear();
                        Vec::new()
                    }
                    LogEvent::Stderr(line) => {
                        self.stderr.push_back(line.clone());
                        if self.stderr.len() > STDERR_TAIL_LINES {
                            self.stderr.pop_front();
                        }
                        Vec::new()
                    }
                    LogEvent::Host(record) => {
                        client.replay_decision(record);
                        Vec::new()
                    }
                };
                let received = std::iter::from_fn(|| claude.poll_client_line()).map(ReplayLine::Received);
                let lines: Vec<ReplayLine> = lines.into_iter().chain(received).collect();
                replay_lines(client, lines, &mut self.problems, entry.seq);
                client.wire.outgoing.clear();
                client.events.clear();
                continue;
            }
            match &entry.event {
                LogEvent::ToAgent(line) => {
                    if let Err(problem) = client.replay_sent(line) {
                        self.problems.push(format!("event {}: {problem}", entry.seq));
                    }
                }
                LogEvent::FromAgent(line) => client.replay_received(line),
                LogEvent::Stderr(line) => {
                    self.stderr.push_back(line.clone());
                    if self.stderr.len() > STDERR_TAIL_LINES {
                        self.stderr.pop_front();
                    }
                }
                LogEvent::Exited { code, signal, killed } => {
                    let description = exit_description(*code, *signal);
                    let tail: Vec<&str> = self.stderr.iter().map(String::as_str).collect();
                    client.handle_exited(&description, *killed, &tail.join("\n"));
                    client.drop_unanswered(&description);
                    self.stderr.clear();
                }
                LogEvent::Host(record) => client.replay_decision(record),
            }
            // Nothing a replaying engine says goes anywhere.
            client.wire.outgoing.clear();
            client.events.clear();
        }
    }

    /// The `seq` of the last event folded: a host that goes on with the live agent skips the
    /// agent's events up to it.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The client whose thread is the fold of the log, and the problems met on the way.
    pub fn finish(self) -> (AcpClient, Vec<String>) {
        let (client, _, problems) = self.finish_with_claude();
        (client, problems)
    }

    /// As [`LogReplay::finish`], with the Claude CLI translator the log was folded through when
    /// it is a Claude CLI session's: the session goes on with it (it knows the CLI's session).
    pub fn finish_with_claude(self) -> (AcpClient, Option<ClaudeCli>, Vec<String>) {
        let mut client = self.client;
        client.follow_reopened_run_cards();
        // The cards of the commands rebuilt from the log go into the thread now, timed as of the
        // log's end. Nothing is written anywhere: the window has no terminal of theirs.
        let logged_until = client.thread.now();
        client.flush_terminals(logged_until);
        client.close_replayed_mirrors();
        client.thread.take_patches();
        // A thought still streaming when the log ended goes on live, on the engine's clock.
        client.thread.forget_thought_start();
        client.replaying = false;
        client.announce_reopened_changes();
        (client, self.claude, self.problems)
    }
}

/// A rule as the host's record of it has it (a `RuleView`), read field by field: deriving its
/// deserializer (for its tagged origin) would add some 10 KB of WASM for the replay alone. The
/// replay test of the `rules` script reads the records the engine writes, so the two cannot
/// drift apart unseen.
struct RecordedRule {
    id: RuleId,
    spec: RuleSpec,
    scope: RuleScope,
    origin: RuleOrigin,
}

impl RecordedRule {
    fn read(rule: &serde_json::Value) -> Option<RecordedRule> {
        let scope = match rule["scope"].as_str()? {
            "session" => RuleScope::Session,
            "workspace" => RuleScope::Workspace,
            _ => return None,
        };
        let origin = match rule["origin"]["type"].as_str()? {
            "chosen" => RuleOrigin::Chosen {
                option: rule["origin"]["option"].as_str()?.to_owned(),
                tool_title: rule["origin"]["toolTitle"].as_str()?.to_owned(),
            },
            "added" => RuleOrigin::Added,
            "settings" => RuleOrigin::Settings,
            _ => return None,
        };
        let spec = RuleSpec::from_setting(&rule["spec"]).ok()?;
        Some(RecordedRule { id: rule["id"].as_u64()?, spec, scope, origin })
    }
}

/// How an exit reads in the thread.
fn exit_description(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(signal)) => format!("was ended by signal {signal}"),
        (Some(code), None) => format!("exited with code {code}"),
        (None, None) => "exited".to_owned(),
    }
}

/// Whether a line Tether wrote is the Claude CLI's wire (stream-json has a `type`; ACP is
/// JSON-RPC).
fn is_claude_cli_line(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|value| {
        value.get("type").is_some_and(serde_json::Value::is_string) && value.get("jsonrpc").is_none()
    })
}

/// Feeds the ACP lines a Claude CLI translation gave into the replaying client.
fn replay_lines(client: &mut AcpClient, lines: Vec<ReplayLine>, problems: &mut Vec<String>, seq: u64) {
    for line in lines {
        match line {
            ReplayLine::Sent(line) => {
                if let Err(problem) = client.replay_sent(&line) {
                    problems.push(format!("event {seq}: {problem}"));
                }
            }
            ReplayLine::Received(line) => client.replay_received(&line),
        }
    }
}

impl AcpClient {
    /// A client whose thread is the fold of `log`. It has no agent: either a new one is started
    /// (see [`AcpClient::prepare_new_agent`]) or the host goes on with the agent still running
    /// (see [`AcpClient::continue_live`]).
    pub fn replay(
        info: ClientInfo,
        cwd: impl Into<String>,
        first_permission_key: PermissionKey,
        policy: PermissionPolicy,
        log: &ReadLog,
    ) -> (AcpClient, Vec<String>) {
        let mut replay = LogReplay::new(info, cwd, first_permission_key, policy);
        replay.feed(log);
        replay.finish()
    }

    /// A line of the agent's, read back. Its requests for files and terminals are not acted on
    /// again (their answers are in the log, or were never given); they are kept until the log
    /// shows their answer, so that a host going on with the live agent can answer the rest.
    fn replay_received(&mut self, line: &str) {
        if let Ok(Message::Request { id, method, .. }) = jsonrpc::parse_message(line)
            && method != "session/request_permission"
        {
            self.unanswered.insert(id, line.to_owned());
            return;
        }
        self.handle_message(line, 0);
    }

    /// The agent that made the requests the log left unanswered is gone (`why`): none of them will
    /// be answered. A write it asked for was waiting for the person's review and was never
    /// written; the log has no card of it (its review begins only when the request is handled),
    /// so a notice names the file rather than letting the proposal vanish unsaid.
    pub(super) fn drop_unanswered(&mut self, why: &str) {
        for line in std::mem::take(&mut self.unanswered).into_values() {
            let Ok(Message::Request { method, params, .. }) = jsonrpc::parse_message(&line) else { continue };
            if method != "fs/write_text_file" {
                continue;
            }
            let Ok(request) = jsonrpc::parse_params::<acp::WriteTextFileRequest>(params) else { continue };
            let text = format!(
                "The agent's change to {}, still waiting for your review, was not written: the agent {why}.",
                self.label_of(&request.path.to_string_lossy())
            );
            self.thread.push(Entry::Notice(NoticeView { level: NoticeLevel::Warning, text, detail: None }));
        }
    }

    /// Goes on with the agent that wrote the replayed log, still running (a window reload): the
    /// requests it made that the log never answered are answered now. A file request is handled
    /// as if it had just arrived, and so is a request about a command already running (waiting
    /// for its exit, reading its output, killing it): tetherd ran it and still has it, on the
    /// terminal the log names. Only a `terminal/create` cannot be: tetherd's answer went with the
    /// window, so whether the command started is not known; it is refused with the reason.
    pub fn continue_live(&mut self, now: u64) {
        for (id, line) in std::mem::take(&mut self.unanswered) {
            let method = jsonrpc::parse_message(&line)
                .ok()
                .and_then(|message| match message {
                    Message::Request { method, .. } => Some(method.into_owned()),
                    _ => None,
                })
                .unwrap_or_default();
            if method == "terminal/create" {
                let error = crate::jsonrpc::RpcError::internal_error().data(serde_json::Value::String(
                    "the VS Code window was reloaded while this command was being started; run it again if it did not run"
                        .to_owned(),
                ));
                self.push_outgoing(jsonrpc::encode_error(&id, &error));
            } else {
                self.handle_message(&line, now);
            }
        }
        self.refill_running_terminals();
    }

    /// A decision the host recorded. A permission request a rule or the mode answered was
    /// answered like any other on the wire (read back as the person's choice); its record, which
    /// follows the answer, says who decided, and the card says so too.
    fn replay_decision(&mut self, record: &str) {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(record) else { return };
        if record["event"] == "modeChanged" && record["by"] == "person" {
            // The person's mode decides which of the agent's mode reports are followed.
            if let Ok(mode) = crate::json_value::from_value::<Mode>(&record["to"]) {
                self.policy.set_mode(mode);
            }
            return;
        }
        if record["event"] == "notice" {
            // A notice the wire alone does not explain (the agent could not resume the session,
            // or printed a line that was skipped, whose start is the detail).
            if let (Ok(level), Some(text)) =
                (crate::json_value::from_value::<NoticeLevel>(&record["level"]), record["text"].as_str())
            {
                let detail = record["detail"].as_str().map(str::to_owned);
                self.thread.push(Entry::Notice(NoticeView { level, text: text.to_owned(), detail }));
            }
            return;
        }
        if record["event"] == "agentLost" {
            // The agent went with tetherd: what it left open ends here, as the live thread said
            // (the next agent's `initialize` would otherwise end it with a guess). Its writes
            // still waiting for review are settled as the live engine settled them when it
            // started the next agent.
            if !matches!(self.phase, Phase::New | Phase::Closed) {
                let why = record["why"].as_str().unwrap_or(super::GONE_WHEN_BACK);
                self.handle_exited(why, false, "");
                self.drop_unanswered(super::GONE_WHEN_BACK);
            }
            return;
        }
        if record["event"] == "mcpToolCalled" {
            let tool = record["tool"].as_str().unwrap_or("a tool");
            let summary = record["summary"].as_str().unwrap_or("");
            let ok = record["ok"].as_bool().unwrap_or(false);
            self.show_mcp_tool_call(tool, record["arguments"].clone(), summary, ok);
            return;
        }
        if record["event"] == "cardShown" {
            self.reopen_own_card(&record["toolCall"]);
            return;
        }
        if record["event"] == "changeShown" {
            self.reopen_change_card(&record["change"]);
            return;
        }
        if record["event"] == "writeDecisions" {
            // The hunks' states read by name: a deserializer for the list would cost the WASM
            // more than these lines.
            use crate::review::HunkState;
            let state = |state: &serde_json::Value| match state.as_str()? {
                "pending" => Some(HunkState::Pending),
                "kept" => Some(HunkState::Kept),
                "rejected" => Some(HunkState::Rejected),
                _ => None,
            };
            let hunks: Option<Vec<HunkState>> =
                record["hunks"].as_array().and_then(|hunks| hunks.iter().map(state).collect());
            if let (Some(hunks), Some(proposed)) = (hunks, record["proposed"].as_u64()) {
                self.reopen_write_decisions(&record["request"], record["original"].as_u64(), proposed, hunks);
            }
            return;
        }
        if record["event"] == "changeTexts" {
            let text = |side: &serde_json::Value| side.as_str().map(str::to_owned);
            if let Some(change) = record["change"].as_u64() {
                self.reopen_change_texts(change, text(&record["old"]), text(&record["new"]));
            }
            return;
        }
        if record["event"] == "restoreProposed" || record["event"] == "restoreSettled" {
            self.replay_restore(&record, record["event"] == "restoreProposed");
            return;
        }
        if record["event"] == "conversationRestored" {
            // The turns a restored conversation started from, copied from another session.
            if let Ok(entries) = crate::json_value::from_value::<Vec<Entry>>(&record["entries"]) {
                for entry in entries {
                    self.thread.push(entry);
                }
            }
            return;
        }
        if record["event"] == "promptCancelled" {
            if let Ok(blocks) = crate::json_value::from_value::<Vec<acp::ContentBlock>>(&record["prompt"]) {
                self.thread.push(Entry::User(super::prompt_content::user_message(&blocks, &self.workspace)));
                self.thread.set_turn(TurnState::ended(acp::StopReason::Cancelled));
            }
            return;
        }
        if let Some(event @ ("ruleAdded" | "ruleRemoved" | "ruleKept")) = record["event"].as_str() {
            if let Some(rule) = RecordedRule::read(&record["rule"]) {
                self.replay_rule_change(event, rule);
            }
            return;
        }
        if record["event"] != "decided" {
            return;
        }
        let (Some(tool_call), Some(option_id)) = (record["toolCall"]["id"].as_str(), record["option"]["id"].as_str())
        else {
            return;
        };
        let Ok(by) = crate::json_value::from_value::<DecidedBy>(&record["by"]) else { return };
        if let DecidedBy::Rule { id, scope: RuleScope::Session, .. } = &by
            && let Some(&replayed) = self.replayed_rule_ids.get(id)
        {
            self.policy.record_fired(replayed);
        }
        let outcome = PermissionOutcome::Auto {
            option_id: option_id.to_owned(),
            allowed: record["allowed"].as_bool().unwrap_or(false),
            by,
            reason: record["reason"].as_str().map(str::to_owned),
        };
        let Some(index) = self.thread.find_tool_call(tool_call) else { return };
        self.thread.update_tool_call(index, |call| {
            if let Some(permission) = &mut call.permission
                && matches!(&permission.outcome, Some(PermissionOutcome::Selected { option_id: chosen }) if chosen == option_id)
            {
                permission.outcome = Some(outcome);
            }
        });
    }

    /// A change to the session's rules, as the host recorded it. Workspace rules are left to the
    /// settings; a session rule kept for the workspace leaves the session (the settings have it).
    fn replay_rule_change(&mut self, event: &str, rule: RecordedRule) {
        match (event, rule.scope) {
            ("ruleAdded", RuleScope::Session) => {
                // A rule the policy cannot hold was refused live as well, and never recorded.
                if let Ok(added) = self.policy.add_rule(rule.spec, RuleScope::Session, rule.origin) {
                    self.replayed_rule_ids.insert(rule.id, added.id);
                }
            }
            // Kept for the workspace, the record holds the workspace rule, which may be another
            // one already saved with the same spec: the session's copy is found by its spec, which
            // is unique among the session's rules.
            ("ruleRemoved", RuleScope::Session) | ("ruleKept", _) => {
                let session_copy = self
                    .policy
                    .rules()
                    .into_iter()
                    .find(|held| held.scope == RuleScope::Session && held.spec == rule.spec);
                if let Some(held) = session_copy {
                    self.policy.remove_rule(held.id);
                    self.replayed_rule_ids.retain(|_, replayed| *replayed != held.id);
                }
            }
            _ => {}
        }
    }

    /// A line the engine sent to the agent, read back from the log.
    fn replay_sent(&mut self, line: &str) -> Result<(), String> {
        let message = jsonrpc::parse_message(line).map_err(|error| format!("a line sent to the agent: {error}"))?;
        match message {
            Message::Request { id, method, params } => {
                if matches!(&*method, "session/new" | "session/fork" | "session/load" | "session/resume")
                    && let Some(params) = params
                {
                    self.replay_mcp_servers(params.get());
                }
                let kind = match &*method {
                    "initialize" => {
                        // A new agent process with no exit of the one before it in the log:
                        // tetherd was lost with that one (killed, or the machine slept), and what
                        // it left open ended then, as the live engine said: its turn, its
                        // questions, a write waiting for review. Left open here, they would be
                        // asked of the new agent, which never heard of them, and the turn would
                        // never end.
                        if !matches!(self.phase, Phase::New | Phase::Closed) {
                            self.handle_exited(super::GONE_WHEN_BACK, false, "");
                            self.drop_unanswered(super::GONE_WHEN_BACK);
                        }
                        self.phase = Phase::Initializing;
                        RequestKind::Initialize
                    }
                    "session/new" => {
                        self.phase = Phase::CreatingSession;
                        RequestKind::NewSession
                    }
                    "session/fork" => {
                        self.phase = Phase::CreatingSession;
                        RequestKind::ForkSession
                    }
                    "session/load" | "session/resume" => {
                        let params: serde_json::Value =
                            params.and_then(|params| serde_json::from_str(params.get()).ok()).unwrap_or_default();
                        self.session.resume = params["sessionId"].as_str().map(str::to_owned);
                        self.phase = Phase::ResumingSession;
                        RequestKind::ResumeSession
                    }
                    "session/prompt" => {
                        let request = jsonrpc::parse_params::<acp::PromptRequest>(params)
                            .map_err(|error| format!("a prompt that cannot be read: {}", error.message))?;
                        let message = super::prompt_content::user_message(&request.prompt, &self.workspace);
                        self.start_turn_files();
                        self.turn.stopped = false;
                        self.thread.push(Entry::User(message));
                        self.thread.set_turn(TurnState::Running);
                        self.turn.in_flight = Some(id.clone());
                        RequestKind::Prompt
                    }
                    "session/set_mode" | "session/set_config_option" => {
                        let params: serde_json::Value =
                            params.and_then(|params| serde_json::from_str(params.get()).ok()).unwrap_or_default();
                        if method == "session/set_config_option" && self.replay_config_request(&id, &params) {
                            self.wire.rpc.record_sent(id, &method, RequestKind::SetConfigOption);
                            return Ok(());
                        }
                        // The engine takes the mode it asks for as current right away.
                        let target = params["modeId"].as_str().or_else(|| params["value"].as_str());
                        if let (Some(modes), Some(target)) = (&mut self.modes.agent, target) {
                            modes.set_current(target.to_owned());
                        }
                        self.modes.switches_in_flight += 1;
                        RequestKind::SetAgentMode
                    }
                    "session/set_model" => {
                        let params: serde_json::Value =
                            params.and_then(|params| serde_json::from_str(params.get()).ok()).unwrap_or_default();
                        if let Some(model) = params["modelId"].as_str() {
                            self.replay_model_request(&id, model);
                        }
                        RequestKind::SetConfigOption
                    }
                    "authenticate" => RequestKind::Authenticate,
                    // Requests of other versions: their answers are recognised and ignored.
                    _ => RequestKind::Unknown,
                };
                self.wire.rpc.record_sent(id, &method, kind);
            }
            Message::Response { id, result } => {
                self.answered_agent_request(&id);
                if let (Some(request), Ok(result)) = (self.unanswered.remove(&id), &result) {
                    self.replay_terminal_answer(&request, result);
                }
                // The person's answer to a permission request (or the engine's, by a rule).
                let key = self.cards.waiting.iter().find(|(_, pending)| pending.request_id == id).map(|(key, _)| *key);
                if let Some(key) = key {
                    let outcome = match result
                        .ok()
                        .and_then(|raw| serde_json::from_str::<acp::RequestPermissionResponse>(raw.get()).ok())
                    {
                        Some(acp::RequestPermissionResponse {
                            outcome: acp::RequestPermissionOutcome::Selected(selected),
                            ..
                        }) => PermissionOutcome::Selected { option_id: selected.option_id.0.to_string() },
                        // Cancelled, or an error answer (a withdrawal).
                        _ => PermissionOutcome::Cancelled,
                    };
                    if let Some(pending) = self.cards.waiting.remove(&key) {
                        self.show_outcome(&pending, outcome);
                    }
                }
            }
            // `session/cancel`: the turn ends when the agent answers the prompt, and what it
            // reports failed from then on was stopped.
            Message::Notification { method, .. } => {
                if method == "session/cancel" {
                    self.turn.stopped = true;
                }
            }
        }
        Ok(())
    }
}

//! Terminals: the agent's `terminal/*` requests, run by tetherd in real PTYs, and the commands an
//! agent runs by itself and streams through `_meta`; both mirrored into a VS Code terminal and a
//! card in the chat.
//!
//! `terminal/create` is checked here (the session; the cwd must be inside the workspace; the
//! person's rules and mode may refuse the command, as they would have refused the agent's
//! permission request for it) and handed to the host engine as a [`TerminalCall`], which adds the
//! agent and sends it to tetherd. A command must also be approved: by the policy, or by an allow
//! answer to the agent's permission request for that command in this turn (used up by one run).
//! One nothing approved gets a card of Tether's own ([`RunGate`]) and waits for the person: an
//! agent cannot skip asking. The other requests (`output`, `wait_for_exit`, `kill`,
//! `release`) go to tetherd the same way and its answers go back to the agent as they are:
//! tetherd owns the PTY and the retained output, so there is one source of truth for what the
//! agent reads. With no `args`, `command` is a shell command line (Claude's adapter sends
//! `npm test && npm run lint` like that), so it runs through the shell.
//!
//! What the command prints arrives as `terminal/data` from tetherd (or, for an agent's own
//! command, as `_meta.terminal_output` / `terminal_output_delta` on its tool call updates, and
//! `_meta.terminal_exit` at the end, as Claude's and Codex's adapters send them). It feeds three
//! things, each bounded: the card's [`TerminalScreen`], the text to replay when the person reopens
//! a closed terminal, and the text not yet written to the mirrored VS Code terminal, which the
//! host engine collects once per frame with [`AcpClient::flush_terminals`] (a command flooding
//! its output costs VS Code one write per frame, and what cannot keep up is skipped, said so in
//! the terminal).
//!
//! This file runs the agent's `terminal/*` requests and holds every terminal ([`Terminals`]);
//! `agent_commands` follows the commands an agent runs by itself, `mirror` the person's side.
//!
//! What is deliberately absent: a terminal the agent never embeds in a tool call still gets its
//! VS Code terminal but no card (ACP asks agents to embed it; there is nowhere else in the thread
//! to show it).

mod agent_commands;
mod mirror;

use std::collections::{BTreeMap, BTreeSet};

use agent_client_protocol_schema::v1 as acp;
use serde_json::value::RawValue;

use crate::host_api::HostAction;
use crate::jsonrpc::{self, RequestId, RpcError};
use crate::permissions::{DecidedBy, Mode, RequestFacts, Verdict, command_of_words};
use crate::sidecar::{TerminalExitStatus, TerminalExited, TerminalId, method};
use crate::terminal_screen::TerminalScreen;
use crate::thread::{
    Entry, EntryIndex, NoticeLevel, NoticeView, TerminalOrigin, TerminalState, TerminalView, ToolCallView, ToolContent,
    ToolStatus,
};
use crate::webview::TerminalIntent;

use super::cards::{Gate, own_card};
use super::fs::WRITE_REFUSED;
use super::links::Waiting;
use super::{AcpClient, AcpEvent, IntentError};

/// How much of a command's output is kept to replay into a reopened VS Code terminal.
const REPLAY_MAX_BYTES: usize = 256 * 1024;

/// The most output written to one mirrored terminal per frame; a command printing faster has the
/// older part of the frame's output skipped (the agent still gets all of it from tetherd).
const MIRROR_FRAME_MAX_BYTES: usize = 1024 * 1024;

/// How many finished commands keep their VS Code terminal open. An agent runs dozens of commands
/// in a session; beyond these, the oldest finished one's terminal is closed (its card can bring
/// it back), so the terminal list stays about what is happening now.
const OPEN_FINISHED_MIRRORS: usize = 4;

/// The longest name of a mirrored VS Code terminal, in characters.
const TERMINAL_NAME_CHARS: usize = 48;

/// A request or message for tetherd about a terminal. The host engine adds the agent (for
/// `terminal/create`), sends it, and gives the answer to [`AcpClient::handle_terminal_answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalCall {
    Create {
        call: u64,
        command: String,
        args: Vec<String>,
        shell: bool,
        env: BTreeMap<String, String>,
        cwd: String,
        output_byte_limit: Option<u64>,
    },
    /// `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` or `terminal/release`, which
    /// all take only the terminal.
    Request {
        call: u64,
        method: &'static str,
        terminal: TerminalId,
    },
    Input {
        terminal: TerminalId,
        data: String,
    },
    Resize {
        terminal: TerminalId,
        cols: u16,
        rows: u16,
    },
}

impl TerminalCall {
    /// `terminal/wait_for_exit` waits as long as the command runs; every other request is
    /// answered promptly.
    pub fn waits_for_the_command(&self) -> bool {
        matches!(self, TerminalCall::Request { method: method::TERMINAL_WAIT_FOR_EXIT, .. })
    }
}

/// The terminals of one session.
#[derive(Debug, Default)]
pub(super) struct Terminals {
    /// In the order they were created.
    list: Vec<TerminalEntry>,
    calls: BTreeMap<u64, PendingCall>,
    next_call: u64,
    /// Terminals whose card or mirror has something new for the next frame.
    dirty: BTreeSet<String>,
    /// While replaying: each terminal a card of Tether's showed in the log, and that card's id.
    /// The card's last record may no longer show it (the agent showed the terminal on a card of
    /// its own), yet it follows the command all the same (see `follow_reopened_run_cards`).
    run_cards: Vec<(String, String)>,
}

#[derive(Debug)]
struct TerminalEntry {
    /// The ACP terminal id.
    id: String,
    /// tetherd's id; `None` for a command the agent runs itself.
    sidecar: Option<TerminalId>,
    origin: TerminalOrigin,
    /// The command line as the person would type it; for an agent's own command, the tool call
    /// says it (see `tool_call`).
    command: String,
    cwd: Option<String>,
    /// The tool call that embeds this terminal, once one does.
    tool_call: Option<String>,
    /// Tether's own card that asked the person before this command ran (the agent did not ask).
    /// Its status follows the command, also once the agent shows the terminal on a card of its
    /// own: "Finished" on the question while the command still runs would say it is done.
    approved_on: Option<EntryIndex>,
    screen: TerminalScreen,
    replay: String,
    replay_cut: bool,
    mirror_pending: String,
    mirror_skipped: u64,
    mirror: Mirror,
    state: TerminalState,
    started_at: u64,
    ended_at: Option<u64>,
    /// The agent released it: tetherd forgot it, only its view and replay remain.
    released: bool,
    stop_requested: bool,
    /// The agent streamed this command's output in pieces (`terminal_output_delta`); its
    /// `terminal_output`, the whole output at the end, would repeat them.
    streamed: bool,
}

/// The VS Code terminal that mirrors a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mirror {
    /// An agent's own command that has printed nothing yet.
    NotYet,
    /// To be opened at the next frame (brought to the front only if the command still runs: an
    /// adapter that reports a command only once it is done must not pop a terminal up for each).
    Wanted,
    Open,
    /// The person closed it; it comes back only when they ask.
    Closed,
    /// The window reloaded while the command ran, and its terminal went with the window: it
    /// opens again, without taking the focus, once tetherd has said what the command printed.
    Reloaded,
}

#[derive(Debug)]
enum PendingCall {
    Create {
        request: RequestId,
        command: String,
        cwd: Option<String>,
        /// Tether's own card for a command the agent did not ask about: it shows the terminal.
        card: Option<EntryIndex>,
    },
    /// The agent's `output`, `wait_for_exit`, `kill` or `release`, answered with tetherd's result.
    Forwarded { request: RequestId, method: &'static str, terminal: String },
    /// The person's Stop.
    Stop { terminal: String },
    /// The output tetherd kept of a command still running when the window reloaded, for its card
    /// and mirrored terminal: the log has only what the agent read of it.
    Refill { terminal: String },
}

impl TerminalEntry {
    fn new(id: String, origin: TerminalOrigin, command: String, cwd: Option<String>, now: u64) -> Self {
        TerminalEntry {
            id,
            sidecar: None,
            origin,
            command,
            cwd,
            tool_call: None,
            approved_on: None,
            screen: TerminalScreen::new(),
            replay: String::new(),
            replay_cut: false,
            mirror_pending: String::new(),
            mirror_skipped: 0,
            mirror: Mirror::NotYet,
            state: TerminalState::Running,
            started_at: now,
            ended_at: None,
            released: false,
            stop_requested: false,
            streamed: false,
        }
    }

    fn running(&self) -> bool {
        matches!(self.state, TerminalState::Running)
    }

    /// Output the command printed, in order.
    fn push_output(&mut self, text: &str) {
        self.screen.feed(text);
        push_bounded(&mut self.replay, text, REPLAY_MAX_BYTES, &mut self.replay_cut);
        let mut cut = false;
        let before = self.mirror_pending.len() + text.len();
        push_bounded(&mut self.mirror_pending, text, MIRROR_FRAME_MAX_BYTES, &mut cut);
        if cut {
            self.mirror_skipped += (before - self.mirror_pending.len()) as u64;
        }
    }

    fn exited(&mut self, status: TerminalExitStatus, killed: bool, now: u64) {
        if !self.running() {
            return;
        }
        let line = match (&status.exit_code, &status.signal) {
            (_, Some(signal)) if killed => format!("stopped ({signal})"),
            (_, Some(signal)) => format!("ended by {signal}"),
            (Some(code), None) => format!("exited with code {code}"),
            (None, None) => "exited".to_owned(),
        };
        self.mirror_text(&format!("\r\n\x1b[90m[{line}]\x1b[0m\r\n"));
        self.state = TerminalState::Exited { exit_code: status.exit_code, signal: status.signal, killed };
        self.ended_at = Some(now);
    }

    /// Text for the mirrored terminal only (not output of the command).
    fn mirror_text(&mut self, text: &str) {
        let mut cut = false;
        push_bounded(&mut self.replay, text, REPLAY_MAX_BYTES, &mut self.replay_cut);
        push_bounded(&mut self.mirror_pending, text, MIRROR_FRAME_MAX_BYTES, &mut cut);
    }

    fn replay_text(&self) -> String {
        if self.replay_cut {
            format!("\x1b[90m[earlier output is not shown here]\x1b[0m\r\n{}", self.replay)
        } else {
            self.replay.clone()
        }
    }

    fn open_action(&self, name_source: &str, reveal: bool) -> HostAction {
        HostAction::OpenTerminal {
            terminal: self.id.clone(),
            name: terminal_name(name_source),
            interactive: self.origin == TerminalOrigin::Client && self.running() && !self.released,
            replay: self.replay_text(),
            reveal,
        }
    }
}

impl AcpClient {
    /// The thread's terminals, a running command's time as of `now`. A view keeps the time of
    /// its last change; sent whole (a snapshot, when the chat is drawn afresh after a reload or
    /// for another tab), the card of a command that has printed nothing for a minute would count
    /// on from a minute behind.
    pub fn terminals_as_of(&self, now: u64) -> Vec<TerminalView> {
        let started_at =
            |id: &str| self.terminals.list.iter().find(|entry| entry.id == id).map(|entry| entry.started_at);
        self.thread
            .terminals()
            .iter()
            .map(|view| {
                let mut view = view.clone();
                if view.state == TerminalState::Running
                    && let Some(started_at) = started_at(&view.id)
                {
                    view.elapsed_ms = now.saturating_sub(started_at);
                }
                view
            })
            .collect()
    }

    pub(super) fn on_create_terminal(&mut self, id: RequestId, request: acp::CreateTerminalRequest) {
        if self.session.id.as_ref() != Some(&request.session_id) {
            return self.refuse(&id, format!("unknown session {}", request.session_id.0));
        }
        let cwd = match &request.cwd {
            None => None,
            Some(path) => {
                let path = path.to_string_lossy().into_owned();
                if !path.starts_with('/') {
                    return self.refuse(&id, format!("cwd {path} is not an absolute path"));
                }
                Some(path)
            }
        };
        let shell = request.args.is_empty();
        let command_line = command_line(&request.command, &request.args);
        let gate = RunGate {
            approval_key: approval_key(&request.command, &request.args),
            shown_cwd: None,
            outside: false,
            command_line,
            command: request.command,
            args: request.args,
            shell,
            env: request.env.into_iter().map(|variable| (variable.name, variable.value)).collect(),
            cwd: cwd.clone().unwrap_or_else(|| self.cwd().to_owned()),
            output_byte_limit: request.output_byte_limit,
        };
        match cwd {
            // Where the command runs is decided on where the cwd leads.
            Some(cwd) => self.resolve_then(vec![cwd], Waiting::Run { request: id, gate }),
            None => self.decide_run(id, gate),
        }
    }

    /// The cwd of a `terminal/create` was resolved: the command runs where it leads. A cwd that
    /// leads outside the workspace (by its path or through a link) is always put to the person,
    /// whatever approved the command: the command was approved to run here, not there.
    pub(super) fn run_resolved(&mut self, request: RequestId, mut gate: RunGate) {
        let target = self.target(&gate.cwd);
        gate.outside = target.is_outside();
        gate.cwd = target.leads_to.clone();
        // Shown relative to the workspace, as every path on a card is.
        gate.shown_cwd = (target.is_link() || target.named != self.cwd()).then(|| target.shown(&self.workspace));
        self.decide_run(request, gate);
    }

    /// Runs the command of a `terminal/create` if the policy or an answered permission request
    /// approved it; else asks the person with a card of Tether's own.
    fn decide_run(&mut self, id: RequestId, gate: RunGate) {
        // An agent is meant to ask before it runs a command, and the person's rules and mode
        // answer that request; an agent that did not ask is held to the same answer here, and a
        // command nothing approved gets a card of its own before it runs.
        let facts = RequestFacts {
            kind: "execute".to_owned(),
            title: gate.command_line.clone(),
            command: Some(gate.approval_key.clone()),
            paths: Vec::new(),
        };
        match self.policy.decide(&facts) {
            Verdict::Reject { reason, .. } => {
                let message = format!("{reason}: the command `{}` was not run", gate.command_line);
                self.thread.push(Entry::Notice(NoticeView {
                    level: NoticeLevel::Info,
                    text: message.clone(),
                    detail: None,
                }));
                self.push_outgoing(jsonrpc::encode_error(&id, &RpcError::new(WRITE_REFUSED, message)));
            }
            // Only Bypass, which approves everything, lets a command run outside the workspace
            // unasked.
            Verdict::Allow { by } if gate.outside && !matches!(by, DecidedBy::Mode { mode: Mode::Bypass }) => {
                self.ask_to_run(id, gate)
            }
            Verdict::Allow { by } => {
                if let DecidedBy::Rule { id: rule, .. } = by {
                    self.policy.record_fired(rule);
                    self.events.push_back(AcpEvent::PolicyChanged);
                }
                self.run_command(id, gate, None);
            }
            Verdict::Ask if !gate.outside && self.take_approved_command(&gate.approval_key) => {
                self.run_command(id, gate, None)
            }
            Verdict::Ask => self.ask_to_run(id, gate),
        }
    }

    /// Shows a card asking the person whether to run a command the agent did not ask about;
    /// `terminal/create` waits for the answer ([`AcpClient::on_run_allowed`]).
    fn ask_to_run(&mut self, id: RequestId, gate: RunGate) {
        let key = self.cards.next_key;
        self.cards.next_key += 1;
        let mut text = if gate.outside {
            "The agent asked Tether to run this command outside the workspace.".to_owned()
        } else {
            "The agent did not ask your permission for this command, so Tether asks before running it.".to_owned()
        };
        if let Some(cwd) = &gate.shown_cwd {
            let place = if gate.outside { ", outside the workspace" } else { "" };
            text.push_str(&format!(" It runs in {cwd}{place}."));
        }
        let names = ["Run", "Always run this command", "Don't run"];
        let title = format!("Run {}", gate.command_line);
        let call = ToolCallView {
            content: vec![ToolContent::Text { text }],
            raw_input: Some(serde_json::json!({ "command": gate.command_line, "cwd": gate.cwd })),
            command: Some(gate.approval_key.clone()),
            ..own_card(key, format!("{RUN_CARD_PREFIX}{key}"), title, "execute", names)
        };
        self.hold_behind_card(id, key, call, Gate::Run(gate));
    }

    /// The person (or a rule added since) answered the card of a command the agent did not ask
    /// about: it runs, its output shown on that card, or the agent is told it was not run.
    pub(super) fn on_run_allowed(&mut self, gate: RunGate, allowed: bool, request: RequestId, tool_call: EntryIndex) {
        if allowed {
            self.update_own_card(tool_call, |call| call.status = ToolStatus::InProgress);
            self.run_command(request, gate, Some(tool_call));
        } else {
            self.update_own_card(tool_call, |call| call.status = ToolStatus::Failed);
            let message = format!("The person did not allow running `{}`", gate.command_line);
            self.push_outgoing(jsonrpc::encode_error(&request, &RpcError::new(WRITE_REFUSED, message)));
        }
    }

    /// Asks tetherd to run an approved command; `card` is Tether's own card for it, if it has one.
    fn run_command(&mut self, request: RequestId, gate: RunGate, card: Option<EntryIndex>) {
        let call = self.terminals.next_call();
        self.terminals
            .calls
            .insert(call, PendingCall::Create { request, command: gate.command_line, cwd: gate.shown_cwd, card });
        self.events.push_back(AcpEvent::Terminal(TerminalCall::Create {
            call,
            command: gate.command,
            args: gate.args,
            shell: gate.shell,
            env: gate.env,
            cwd: gate.cwd,
            output_byte_limit: gate.output_byte_limit,
        }));
    }

    /// `terminal/output`, `terminal/wait_for_exit`, `terminal/kill`, `terminal/release`: checked
    /// and passed on to tetherd.
    pub(super) fn on_terminal_request(
        &mut self,
        id: RequestId,
        method: &'static str,
        session: &acp::SessionId,
        terminal: &acp::TerminalId,
    ) {
        if self.session.id.as_ref() != Some(session) {
            return self.refuse(&id, format!("unknown session {}", session.0));
        }
        let sidecar = match self.terminals.get(&terminal.0) {
            Some(entry) if entry.released => Err(format!("terminal {} was released", terminal.0)),
            Some(TerminalEntry { sidecar: Some(sidecar), .. }) => Ok(*sidecar),
            _ => Err(format!("unknown terminal {}", terminal.0)),
        };
        match sidecar {
            Ok(sidecar) => {
                let pending = PendingCall::Forwarded { request: id, method, terminal: terminal.0.to_string() };
                self.ask_tetherd(pending, method, sidecar);
            }
            Err(problem) => self.refuse(&id, problem),
        }
    }

    /// tetherd's answer to a [`TerminalCall`] (its raw result), or why there is none.
    pub fn handle_terminal_answer(&mut self, call: u64, result: Result<&RawValue, RpcError>, now: u64) {
        self.now = now;
        let Some(pending) = self.terminals.calls.remove(&call) else { return };
        match pending {
            PendingCall::Create { request, command, cwd, card } => {
                let created = result.and_then(|raw| {
                    serde_json::from_str::<crate::sidecar::TerminalCreateResult>(raw.get()).map_err(|error| {
                        RpcError::internal_error().data(serde_json::Value::String(format!(
                            "tetherd's answer to terminal/create is malformed: {error}"
                        )))
                    })
                });
                match created {
                    Ok(created) => {
                        let id = format!("term-{}", created.terminal_id);
                        let mut entry = TerminalEntry::new(id.clone(), TerminalOrigin::Client, command, cwd, now);
                        entry.sidecar = Some(created.terminal_id);
                        entry.mirror = Mirror::Open;
                        entry.approved_on = card;
                        let open = entry.open_action(&entry.command, true);
                        self.terminals.list.push(entry);
                        self.terminals.dirty.insert(id.clone());
                        self.events.push_back(AcpEvent::Host(Box::new(open)));
                        if let Some(card) = card {
                            let terminal_id = id.clone();
                            // The card stays "Running" until the command ends (see `approved_on`).
                            self.update_own_card(card, |call| {
                                call.content.push(ToolContent::Terminal { terminal_id });
                            });
                            self.link_terminals(card);
                        }
                        let response = acp::CreateTerminalResponse::new(id);
                        self.push_outgoing(jsonrpc::encode_result(&request, &response));
                    }
                    Err(error) => {
                        let message = format!("Tether could not run `{command}`: {}", error.message);
                        self.events.push_back(AcpEvent::ProtocolProblem { message: message.clone() });
                        let detail = error.data.as_ref().and_then(|data| data.as_str()).map(str::to_owned);
                        self.thread.push(Entry::Notice(NoticeView {
                            level: NoticeLevel::Warning,
                            text: message,
                            detail,
                        }));
                        if let Some(card) = card {
                            self.update_own_card(card, |call| call.status = ToolStatus::Failed);
                        }
                        self.push_outgoing(jsonrpc::encode_error(&request, &error));
                    }
                }
            }
            PendingCall::Forwarded { request, method, terminal } => {
                if method == method::TERMINAL_RELEASE
                    && let Some(entry) = self.terminals.get_mut(&terminal)
                {
                    entry.released = true;
                    self.terminals.dirty.insert(terminal);
                }
                match result {
                    // tetherd's answers have ACP's shapes (exit status, output): passed on as
                    // they are.
                    Ok(raw) => self.push_outgoing(jsonrpc::encode_result(&request, &raw)),
                    Err(error) => self.push_outgoing(jsonrpc::encode_error(&request, &error)),
                }
            }
            PendingCall::Refill { terminal } => {
                // A `TerminalOutputResult`, read field by field: its own deserializer would cost
                // the WASM more than this reader.
                let kept = result.ok().and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok());
                let output = kept.as_ref().and_then(|kept| kept["output"].as_str());
                if let Some(output) = output
                    && let Some(entry) = self.terminals.get_mut(&terminal)
                {
                    // What tetherd kept holds everything sent before its answer: it replaces what
                    // the card had, and what comes after it follows.
                    entry.screen = TerminalScreen::new();
                    entry.replay.clear();
                    entry.mirror_pending.clear();
                    if kept.as_ref().is_some_and(|kept| kept["truncated"] == true) {
                        entry.mirror_text("\x1b[90m[earlier output dropped]\x1b[0m\r\n");
                    }
                    entry.push_output(output);
                    if entry.mirror == Mirror::Reloaded && entry.running() {
                        entry.mirror = Mirror::Wanted;
                    }
                    self.terminals.dirty.insert(terminal);
                }
            }
            PendingCall::Stop { terminal } => {
                if let Err(error) = result {
                    self.events.push_back(AcpEvent::ProtocolProblem {
                        message: format!("could not stop terminal {terminal}: {}", error.message),
                    });
                }
            }
        }
    }

    /// Output from tetherd's `terminal/data`.
    pub fn handle_terminal_data(&mut self, terminal: TerminalId, data: &str, now: u64) {
        self.now = now;
        let Some(entry) = self.terminals.by_sidecar(terminal) else { return };
        entry.push_output(data);
        let id = entry.id.clone();
        self.terminals.dirty.insert(id);
    }

    /// tetherd's `terminal/exited`.
    pub fn handle_terminal_exited(&mut self, exited: TerminalExited, now: u64) {
        self.now = now;
        let Some(entry) = self.terminals.by_sidecar(exited.terminal_id) else { return };
        let killed = exited.killed || entry.stop_requested;
        let ended_at = exited.elapsed_ms.map_or(now, |elapsed| entry.started_at.saturating_add(elapsed));
        entry.exited(exited.status, killed, ended_at);
        let id = entry.id.clone();
        self.terminals.dirty.insert(id);
    }

    /// Rebuilds a command's card from the log while replaying: the agent's terminal `request`
    /// (the line it sent) and the answer Tether gave it. The log has no output stream, but it has
    /// what the agent read: `terminal/output` answers carry the output (as much as the agent
    /// asked for) and the exit status. The ACP id Tether gave the terminal names tetherd's, so a
    /// host going on with the live agent gets the command's further output on the same card.
    pub(super) fn replay_terminal_answer(&mut self, request: &str, result: &RawValue) {
        let Ok(jsonrpc::Message::Request { method, params, .. }) = jsonrpc::parse_message(request) else { return };
        let params: serde_json::Value = params.and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default();
        let result: serde_json::Value = serde_json::from_str(result.get()).unwrap_or_default();
        // The log's time of the answer: a command started when tetherd answered its creation,
        // and had ended by the time an answer said so.
        let at = self.event_time();
        if method == "terminal/create" {
            let Some(id) = result["terminalId"].as_str() else { return };
            let Ok(request) = crate::json_value::from_value::<acp::CreateTerminalRequest>(&params) else { return };
            let command = command_line(&request.command, &request.args);
            let cwd = request
                .cwd
                .map(|cwd| cwd.to_string_lossy().into_owned())
                .filter(|cwd| cwd != self.cwd())
                .map(|cwd| self.label_of(&cwd));
            let mut entry = TerminalEntry::new(id.to_owned(), TerminalOrigin::Client, command, cwd, at);
            entry.sidecar = id.strip_prefix("term-").and_then(|number| number.parse().ok());
            // Nothing pops up when a session is reopened; the card's "Open in terminal" shows it.
            entry.mirror = Mirror::Closed;
            self.terminals.list.push(entry);
            self.terminals.dirty.insert(id.to_owned());
            return;
        }
        let Some(id) = params["terminalId"].as_str().map(ToOwned::to_owned) else { return };
        let Some(entry) = self.terminals.get_mut(&id) else { return };
        match &*method {
            "terminal/output" => {
                if let Some(output) = result["output"].as_str() {
                    // Each answer holds the output so far (or its end): it replaces the last one.
                    entry.screen = TerminalScreen::new();
                    entry.replay.clear();
                    entry.replay_cut = result["truncated"].as_bool().unwrap_or(false);
                    entry.push_output(output);
                    entry.mirror_pending.clear();
                }
                if let Ok(status) = crate::json_value::from_value::<TerminalExitStatus>(&result["exitStatus"]) {
                    entry.exited(status, false, at);
                }
            }
            "terminal/wait_for_exit" => {
                if let Ok(status) = crate::json_value::from_value::<TerminalExitStatus>(&result) {
                    entry.exited(status, false, at);
                }
            }
            "terminal/release" => entry.released = true,
            _ => {}
        }
        self.terminals.dirty.insert(id);
    }

    /// After a replay: Tether's own cards for commands that were still running when last logged
    /// follow their commands again (see `TerminalEntry::approved_on`), from what the log read
    /// back of them and, in a window that goes on with the agent, from how they end. A card
    /// logged as ended keeps what it says: the log does not hold the exit it saw.
    pub(super) fn follow_reopened_run_cards(&mut self) {
        let running_run_card =
            |call: &crate::thread::ToolCallView| is_run_card(&call.id) && call.status == ToolStatus::InProgress;
        let mut running: Vec<(EntryIndex, String)> = self
            .thread
            .entries()
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| match entry {
                Entry::ToolCall(call) if running_run_card(call) => {
                    call.terminal_ids().next().map(|terminal| (index as EntryIndex, terminal.to_owned()))
                }
                _ => None,
            })
            .collect();
        // A card whose terminal moved to the agent's own card: the log showed it on it before.
        for (terminal, card) in std::mem::take(&mut self.terminals.run_cards) {
            let Some(index) = self.thread.find_tool_call(&card) else { continue };
            if self.thread.tool_call(index).is_some_and(running_run_card) {
                running.push((index, terminal));
            }
        }
        for (card, terminal) in running {
            if let Some(entry) = self.terminals.get_mut(&terminal) {
                entry.approved_on = Some(card);
                self.terminals.dirty.insert(terminal);
            }
        }
    }

    /// While replaying: the terminals Tether's card `card`, as the log has it, shows.
    pub(super) fn remember_run_card(&mut self, card: &crate::thread::ToolCallView) {
        if !is_run_card(&card.id) {
            return;
        }
        for terminal in card.terminal_ids() {
            if !self.terminals.run_cards.iter().any(|(known, _)| known == terminal) {
                self.terminals.run_cards.push((terminal.to_owned(), card.id.clone()));
            }
        }
    }

    /// The session is closing, and tetherd kills its agent's commands with its agent: no exit
    /// will reach a closed session, so each running command's card and mirrored terminal (which
    /// stays open in VS Code) say here that it was stopped, and `why`.
    pub fn terminals_stopped(&mut self, why: &str, now: u64) {
        self.end_running_terminals(now, |entry| {
            entry.mirror_text(&format!("\r\n\x1b[90m[stopped: {why}]\x1b[0m\r\n"));
            TerminalState::Exited { exit_code: None, signal: None, killed: true }
        });
    }

    /// The end of a replay: the commands it rebuilt have no VS Code terminal in this window, whatever
    /// the log's events made of their mirrors (an agent's own command opens one when it prints).
    pub(super) fn close_replayed_mirrors(&mut self) {
        for entry in &mut self.terminals.list {
            entry.mirror = Mirror::Closed;
            entry.mirror_pending.clear();
        }
    }

    /// Going on with a live agent after a reload: each command still running gets its terminal,
    /// which went with the window, back without taking the focus. One Tether runs asks tetherd
    /// for the output it kept first (see [`PendingCall::Refill`]); an agent's own command opens
    /// at the next frame, since the log has everything it printed.
    pub(super) fn refill_running_terminals(&mut self) {
        let mut running = Vec::new();
        for entry in self.terminals.list.iter_mut().filter(|entry| entry.running()) {
            // Its card was last drawn as of the log's end: it shows its time from its start again.
            self.terminals.dirty.insert(entry.id.clone());
            match (entry.origin, entry.sidecar) {
                (TerminalOrigin::Client, Some(sidecar)) => {
                    if entry.mirror == Mirror::Closed {
                        entry.mirror = Mirror::Reloaded;
                    }
                    running.push((entry.id.clone(), sidecar));
                }
                (TerminalOrigin::Agent, _) if entry.mirror == Mirror::Closed => entry.mirror = Mirror::Wanted,
                _ => {}
            }
        }
        for (terminal, sidecar) in running {
            self.ask_tetherd(PendingCall::Refill { terminal }, method::TERMINAL_OUTPUT, sidecar);
        }
    }

    /// Sends tetherd `method` about its terminal `sidecar`; its answer is handled as `pending`
    /// says ([`AcpClient::handle_terminal_answer`]).
    fn ask_tetherd(&mut self, pending: PendingCall, method: &'static str, sidecar: TerminalId) {
        let call = self.terminals.next_call();
        self.terminals.calls.insert(call, pending);
        self.events.push_back(AcpEvent::Terminal(TerminalCall::Request { call, method, terminal: sidecar }));
    }

    /// tetherd is out of reach: the commands it ran are out of sight for good.
    pub fn terminals_lost(&mut self, why: &str, now: u64) {
        self.end_running_terminals(now, |_| TerminalState::Failed {
            message: format!("Tether lost track of this command: {why}"),
        });
    }

    /// Ends every command Tether ran for the agent that is still running, in the state `end`
    /// gives it (after it wrote what it has to say to the mirrored terminal).
    fn end_running_terminals(&mut self, now: u64, mut end: impl FnMut(&mut TerminalEntry) -> TerminalState) {
        for entry in self.terminals.list.iter_mut().filter(|entry| entry.origin == TerminalOrigin::Client) {
            if entry.running() {
                entry.state = end(entry);
                entry.ended_at = Some(now);
                self.terminals.dirty.insert(entry.id.clone());
            }
        }
    }
}

impl Terminals {
    fn next_call(&mut self) -> u64 {
        self.next_call += 1;
        self.next_call
    }

    fn get(&self, id: &str) -> Option<&TerminalEntry> {
        self.list.iter().find(|entry| entry.id == id)
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut TerminalEntry> {
        self.list.iter_mut().find(|entry| entry.id == id)
    }

    fn by_sidecar(&mut self, terminal: TerminalId) -> Option<&mut TerminalEntry> {
        self.list.iter_mut().find(|entry| entry.sidecar == Some(terminal))
    }
}

/// Appends `text` and, past `max` bytes, drops the oldest part at a character boundary.
fn push_bounded(buffer: &mut String, text: &str, max: usize, cut: &mut bool) {
    buffer.push_str(text);
    if buffer.len() > max {
        let mut start = buffer.len() - max;
        while !buffer.is_char_boundary(start) {
            start += 1;
        }
        buffer.drain(..start);
        *cut = true;
    }
}

fn with_carriage_returns(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut previous = '\0';
    for ch in text.chars() {
        if ch == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(ch);
        previous = ch;
    }
    out
}

/// The tool call id of Tether's own card for a command the agent did not ask about, before its
/// permission key.
const RUN_CARD_PREFIX: &str = "tether-run-";

fn is_run_card(tool_call_id: &str) -> bool {
    tool_call_id.starts_with(RUN_CARD_PREFIX)
}

/// A command the agent asked to run, held until the person answers Tether's card for it.
#[derive(Debug, Clone)]
pub(super) struct RunGate {
    /// The command as rules and approvals compare it ([`approval_key`]).
    approval_key: String,
    /// The command as shown to the person.
    command_line: String,
    command: String,
    args: Vec<String>,
    shell: bool,
    env: BTreeMap<String, String>,
    cwd: String,
    /// The cwd when it is not the workspace folder, for the card (with where it leads, when
    /// that is through a link).
    shown_cwd: Option<String>,
    /// The cwd leads outside the workspace.
    outside: bool,
    output_byte_limit: Option<u64>,
}

/// The command of a `terminal/create` as a permission request's `rawInput` would name it (see
/// [`command_of_words`]): a shell command line as it is, a program and its arguments as words.
fn approval_key(command: &str, args: &[String]) -> String {
    if args.is_empty() {
        return command.to_owned();
    }
    let words: Vec<&str> = std::iter::once(command).chain(args.iter().map(String::as_str)).collect();
    command_of_words(&words)
}

/// A `terminal/create` command as the person would type it: a command without arguments is a
/// shell command line already; one with arguments has each quoted where needed.
fn command_line(command: &str, args: &[String]) -> String {
    if args.is_empty() {
        return command.to_owned();
    }
    std::iter::once(command).chain(args.iter().map(String::as_str)).map(quote_for_display).collect::<Vec<_>>().join(" ")
}

/// A command word as a shell would need it typed: quoted when it has spaces or quotes.
fn quote_for_display(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_./=:,+@%".contains(ch)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The mirrored terminal's name: "Agent: " and the start of the command line.
fn terminal_name(command: &str) -> String {
    let first_line = command.lines().next().unwrap_or("").trim();
    let mut name: String = first_line.chars().take(TERMINAL_NAME_CHARS).collect();
    if first_line.chars().count() > TERMINAL_NAME_CHARS || command.trim().lines().count() > 1 {
        name.push('…');
    }
    if name.is_empty() { "Agent command".to_owned() } else { format!("Agent: {name}") }
}

fn describe_bytes(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.0} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_buffers_keep_the_newest_bytes_on_a_character_boundary() {
        let mut buffer = String::new();
        let mut cut = false;
        push_bounded(&mut buffer, "aé€😀", 6, &mut cut);
        assert!(cut);
        assert_eq!(buffer, "😀", "the newest whole characters within 6 bytes");
        let mut small = String::new();
        let mut small_cut = false;
        push_bounded(&mut small, "abc", 6, &mut small_cut);
        assert_eq!((small.as_str(), small_cut), ("abc", false));
    }

    #[test]
    fn agent_output_gets_carriage_returns_once() {
        assert_eq!(with_carriage_returns("a\nb\r\nc\n"), "a\r\nb\r\nc\r\n");
    }

    #[test]
    fn command_lines_are_shown_as_they_would_be_typed() {
        assert_eq!(quote_for_display("ls"), "ls");
        assert_eq!(quote_for_display("my file"), "'my file'");
        assert_eq!(quote_for_display("it's"), r"'it'\''s'");
        assert_eq!(terminal_name("npm test"), "Agent: npm test");
        assert_eq!(terminal_name("echo one\necho two"), "Agent: echo one…");
        assert_eq!(terminal_name(""), "Agent command");
    }
}

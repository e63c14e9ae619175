//! What the live session's ACP client asks of the window, carried out: its lines to the agent
//! and its events (status, snapshots, terminals, audit records, the host's actions).
//!
//! A snapshot of the workspace is one snapshot per folder, each in a store of its own (git's work
//! tree is one folder): the first folder's store is `<tetherDir>/snapshot.git`, another's is named
//! after its path. The client sees one snapshot: the folders' trees in the workspace's order,
//! separated by spaces, and a scan's changes with absolute paths, each file once (a folder inside
//! another reports its files twice).

use crate::acp::{AcpEvent, IntentError, TerminalCall, capitalize};
use crate::claude_cli::CliEvent;
use crate::host_api::{HostAction, LogLevel};
use crate::jsonrpc::{self, RpcError};
use crate::review::content_hash;
use crate::sidecar::{
    SnapshotChangesParams, SnapshotChangesResult, SnapshotTakeParams, SnapshotTakeResult, SnapshotText,
    TerminalCreateParams, TerminalInput, TerminalRef, TerminalResize, method,
};
use crate::thread::PermissionKey;
use crate::webview::{ReviewIntent, SessionStatus, TerminalIntent};
use crate::workspace_path::join_inside;

use super::HostEngine;
use super::session::Session;
use super::tetherd::{SidecarRequest, SidecarState};

/// How long a snapshot of the workspace may take (tetherd gives git 20 s) before the turn goes
/// ahead without one.
pub(super) const SNAPSHOT_TIMEOUT_MS: u64 = 30_000;

/// The size of a command's PTY until its mirrored terminal reports its own: wide enough that
/// most output is not wrapped by the PTY before VS Code wraps it itself.
pub(super) const TERMINAL_COLS: u16 = 120;
pub(super) const TERMINAL_ROWS: u16 = 30;

/// How long tetherd may take to answer a terminal request other than `wait_for_exit` (a release
/// includes killing the command, SIGTERM then SIGKILL after its grace period).
pub(super) const TERMINAL_TIMEOUT_MS: u64 = 30_000;

/// The store of the first folder's snapshots, in `<tetherDir>`.
const FIRST_FOLDER_STORE: &str = "snapshot.git";

/// tetherd's answers to one request made of every folder, as they come (the raw result, or why
/// there is none), in the workspace's order.
#[derive(Debug, Default)]
pub(super) struct FolderAnswers {
    answers: Vec<Option<Result<String, String>>>,
}

impl FolderAnswers {
    /// Waits for `folders` answers, forgetting any of an earlier request.
    fn expect(&mut self, folders: usize) {
        self.answers = vec![None; folders];
    }

    /// Keeps folder `folder`'s answer; once every folder has answered, all of them, in order.
    fn answer(&mut self, folder: usize, result: Result<String, String>) -> Option<Vec<Result<String, String>>> {
        *self.answers.get_mut(folder)? = Some(result);
        if self.answers.iter().any(Option::is_none) {
            return None;
        }
        Some(std::mem::take(&mut self.answers).into_iter().flatten().collect())
    }
}

/// A store's name for a folder other than the first: FNV-1a of its path, so that it stays the
/// same for the folder whatever its place in the workspace.
fn folder_store_name(root: &str) -> String {
    let hash = root
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3));
    format!("snapshot-{hash:016x}.git")
}

impl HostEngine {
    pub(super) fn drain_client(&mut self) {
        // Reacting to an event can make the client say more (a snapshot taken releases the held
        // prompt), so this goes round until it has nothing left.
        while self.drain_client_once() {}
    }

    /// Moves what the client produced; returns whether it raised events (which may have made
    /// it produce more).
    pub(super) fn drain_client_once(&mut self) -> bool {
        let Some(slot) = &mut self.session else { return false };
        let writes = slot.take_agent_writes(self.now);
        let mut events = Vec::new();
        while let Some(event) = slot.client.poll_event() {
            events.push(event);
        }
        let mut cli_actions = Vec::new();
        let mut cli_logs = Vec::new();
        if let Some(claude) = &mut slot.claude {
            cli_actions.extend(std::iter::from_fn(|| claude.poll_process()));
            cli_logs.extend(std::iter::from_fn(|| claude.poll_event()));
        }
        let patches = slot.client.thread_mut().take_patches();
        if !writes.is_empty() {
            self.actions.push_back(HostAction::SidecarWrite { data: writes });
        }
        // A parked session's thread reaches the webview as a snapshot when it is shown.
        if self.focus_is_shown() {
            self.view.queue_patches(patches);
        }
        for event in cli_logs {
            match event {
                CliEvent::Log(text) => self.log(LogLevel::Info, format!("[Claude Code] {text}")),
                CliEvent::Warn(text) => {
                    self.log(LogLevel::Warn, format!("[Claude Code] {text}"));
                    self.show(LogLevel::Warn, format!("Tether: {text}"));
                }
            }
        }
        // After the writes: a CLI's input is closed once what was written to it is.
        let raised = !events.is_empty() || !cli_actions.is_empty();
        for action in cli_actions {
            self.on_cli_process_action(action);
        }
        for event in events {
            self.on_client_event(event);
        }
        raised
    }

    pub(super) fn on_client_event(&mut self, event: AcpEvent) {
        match event {
            AcpEvent::Initialized { agent } => {
                self.log(
                    LogLevel::Info,
                    format!("agent initialized: {}", agent.as_deref().unwrap_or("(no agentInfo)")),
                );
                self.note_agent_started();
                self.view.header.agent_info = agent;
                self.set_status(SessionStatus::starting("Creating the session"));
            }
            AcpEvent::SessionReady { session_id } => {
                self.log(LogLevel::Info, format!("session {session_id} ready"));
                self.set_status(SessionStatus::Ready);
                self.send_waiting_prompt();
            }
            AcpEvent::Failed { message } => {
                self.drop_waiting_prompt(&message);
                self.log(LogLevel::Error, message.clone());
                self.set_status(SessionStatus::Failed { message: capitalize(&message) });
            }
            AcpEvent::ProtocolProblem { message } => self.log(LogLevel::Warn, message),
            AcpEvent::AuthRequired { methods } => self.ask_authentication(methods),
            AcpEvent::PermissionsWaiting { count } => self.set_badge(count),
            AcpEvent::PolicyChanged => self.refresh_permissions_view(),
            AcpEvent::ControlsChanged => self.refresh_controls_view(),
            AcpEvent::Host(mut action) => {
                self.label_host_action(&mut action);
                self.actions.push_back(*action);
            }
            AcpEvent::TakeSnapshot => self.take_snapshot(),
            AcpEvent::ScanChanges { base } => self.scan_changes(base),
            AcpEvent::ChangesChanged => self.refresh_changes_view(),
            AcpEvent::Terminal(call) => self.terminal_call(call),
            AcpEvent::ToolLocation { path, line } => {
                if self.view.header.follow_agent {
                    self.actions.push_back(HostAction::RevealLocation { path, line });
                }
            }
            AcpEvent::AgentSessions(listed) => {
                match listed {
                    Ok(sessions) => self.history.agent_sessions = sessions,
                    Err(error) => self.log(LogLevel::Warn, format!("the agent could not list its sessions: {error}")),
                }
                // Tether's list is shown already (or is on its way, and takes this with it).
                if !self.history.wanted {
                    self.push_history();
                }
            }
            AcpEvent::Audit(record) => {
                let record = *record;
                let record = match serde_json::to_string(&record) {
                    Ok(record) => record,
                    Err(error) => {
                        return self.log(LogLevel::Error, format!("could not encode an audit record: {error}"));
                    }
                };
                match self.session.as_mut() {
                    Some(Session { agent_id: Some(agent_id), .. }) => {
                        let agent_id = *agent_id;
                        self.send_audit(agent_id, &record);
                    }
                    Some(slot) => slot.unsent_audit.push(record),
                    None => self.log(LogLevel::Info, format!("audit (no session to record it in): {record}")),
                }
            }
        }
    }

    /// Sends a client's terminal request or message to tetherd, for the agent of its session.
    pub(super) fn terminal_call(&mut self, call: TerminalCall) {
        let Some(slot) = &mut self.session else { return };
        let generation = slot.generation;
        let (Some(agent_id), SidecarState::Ready) = (slot.agent_id, self.tetherd.state) else {
            if let TerminalCall::Create { call, .. } | TerminalCall::Request { call, .. } = call {
                let error =
                    RpcError::internal_error().data(serde_json::Value::String("tetherd is not connected".to_owned()));
                slot.client.handle_terminal_answer(call, Err(error), self.now);
            }
            return;
        };
        let deadline = (!call.waits_for_the_command()).then_some(self.now + TERMINAL_TIMEOUT_MS);
        let line = match call {
            TerminalCall::Create { call, command, args, shell, env, cwd, output_byte_limit } => {
                let params = TerminalCreateParams {
                    agent_id,
                    command,
                    args,
                    shell,
                    env,
                    cwd,
                    output_byte_limit,
                    cols: TERMINAL_COLS,
                    rows: TERMINAL_ROWS,
                };
                let tag = SidecarRequest::Terminal { generation, call };
                self.tetherd.request(method::TERMINAL_CREATE, &params, tag, deadline)
            }
            TerminalCall::Request { call, method, terminal } => {
                let tag = SidecarRequest::Terminal { generation, call };
                self.tetherd.request(method, &TerminalRef { terminal_id: terminal }, tag, deadline)
            }
            TerminalCall::Input { terminal, data } => {
                jsonrpc::encode_notification(method::TERMINAL_INPUT, &TerminalInput { terminal_id: terminal, data })
            }
            TerminalCall::Resize { terminal, cols, rows } => jsonrpc::encode_notification(
                method::TERMINAL_RESIZE,
                &TerminalResize { terminal_id: terminal, cols, rows },
            ),
        };
        self.sidecar_write(line);
    }

    /// The store of the workspace's snapshots, when a workspace folder is open.
    pub(super) fn snapshot_store(&self) -> Option<String> {
        self.config.tether_dir.as_ref().map(|dir| format!("{dir}/{FIRST_FOLDER_STORE}"))
    }

    /// Each folder of the workspace with the store of its snapshots, the first first; none when
    /// no folder is open.
    fn snapshot_folders(&self) -> Vec<(String, String)> {
        let Some(dir) = &self.config.tether_dir else { return Vec::new() };
        self.workspace()
            .roots()
            .enumerate()
            .map(|(index, root)| {
                let store = if index == 0 { FIRST_FOLDER_STORE.to_owned() } else { folder_store_name(root) };
                (root.to_owned(), format!("{dir}/{store}"))
            })
            .collect()
    }

    pub(super) fn take_snapshot(&mut self) {
        let folders = self.snapshot_folders();
        let Some(slot) = self.session.as_mut().filter(|_| !folders.is_empty()) else { return };
        if !self.tetherd.is_ready() {
            slot.client.handle_snapshot(Err("tetherd is not connected".to_owned()));
            return;
        }
        let generation = slot.generation;
        slot.snapshot_answers.expect(folders.len());
        slot.snapshot_folders = folders.clone();
        for (folder, (root, store)) in folders.into_iter().enumerate() {
            let params = SnapshotTakeParams { root, store, extra: self.open_documents.clone() };
            self.sidecar_request_within(
                method::SNAPSHOT_TAKE,
                &params,
                SidecarRequest::Snapshot { generation, folder },
                SNAPSHOT_TIMEOUT_MS,
            );
        }
    }

    /// `base` is a snapshot as the client has it: one tree per folder the turn's snapshot was
    /// taken in (see the module's doc).
    pub(super) fn scan_changes(&mut self, base: String) {
        let Some(slot) = self.session.as_mut().filter(|slot| !slot.snapshot_folders.is_empty()) else { return };
        let folders = slot.snapshot_folders.clone();
        if !self.tetherd.is_ready() {
            slot.client.handle_scan(Err("tetherd is not connected".to_owned()));
            return;
        }
        let bases: Vec<&str> = base.split(' ').collect();
        if bases.len() != folders.len() {
            let message = format!("the snapshot has {} trees for its {} folders", bases.len(), folders.len());
            slot.client.handle_scan(Err(message));
            return;
        }
        let generation = slot.generation;
        slot.scan_answers.expect(folders.len());
        for (folder, ((root, store), base)) in folders.into_iter().zip(bases).enumerate() {
            let params =
                SnapshotChangesParams { root, store, base: base.to_owned(), extra: self.open_documents.clone() };
            self.sidecar_request_within(
                method::SNAPSHOT_CHANGES,
                &params,
                SidecarRequest::Scan { generation, folder },
                SNAPSHOT_TIMEOUT_MS,
            );
        }
    }

    /// tetherd answered a snapshot or a scan of one folder (the raw result), or could not. Once
    /// every folder has, the client gets them as one (see the module's doc); the first failure
    /// is the whole request's.
    pub(super) fn on_snapshot_answer(&mut self, tag: SidecarRequest, generation: u64, result: Result<String, String>) {
        let Some(slot) = self.session.as_mut().filter(|slot| slot.generation == generation) else { return };
        let roots: Vec<String> = slot.snapshot_folders.iter().map(|(root, _)| root.clone()).collect();
        match tag {
            SidecarRequest::Snapshot { folder, .. } => {
                let Some(answers) = slot.snapshot_answers.answer(folder, result) else { return };
                let trees: Result<Vec<String>, String> = answers
                    .into_iter()
                    .map(|answer| {
                        answer.and_then(|raw| {
                            serde_json::from_str::<SnapshotTakeResult>(&raw)
                                .map(|taken| taken.tree)
                                .map_err(|error| format!("tetherd's answer to snapshot/take is malformed: {error}"))
                        })
                    })
                    .collect();
                slot.client.handle_snapshot(trees.map(|trees| trees.join(" ")));
            }
            SidecarRequest::Scan { folder, .. } => {
                let Some(answers) = slot.scan_answers.answer(folder, result) else { return };
                // What the other open sessions' changes left in the files: a file found just so
                // is theirs, not this session's agent's (two sessions' turns can run at once).
                let others: Vec<(String, Option<u64>)> = self
                    .parked
                    .iter()
                    .filter_map(|parked| parked.session.as_ref())
                    .flat_map(|other| other.client.files_left_by_changes())
                    .collect();
                let mut changes = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for (answer, root) in answers.into_iter().zip(&roots) {
                    let found = match answer.and_then(|raw| {
                        serde_json::from_str::<SnapshotChangesResult>(&raw)
                            .map_err(|error| format!("tetherd's answer to snapshot/changes is malformed: {error}"))
                    }) {
                        Ok(found) => found,
                        Err(error) => return slot.client.handle_scan(Err(error)),
                    };
                    for mut change in found.changes {
                        change.path = join_inside(root, &change.path);
                        let now = match &change.new {
                            SnapshotText::Absent => Some(None),
                            SnapshotText::Text { text } => Some(Some(content_hash(text))),
                            SnapshotText::Binary { .. } | SnapshotText::TooLarge { .. } => None,
                        };
                        let theirs = now
                            .is_some_and(|now| others.iter().any(|(path, left)| *path == change.path && *left == now));
                        if !theirs && seen.insert(change.path.clone()) {
                            changes.push(change);
                        }
                    }
                }
                slot.client.handle_scan(Ok(changes));
            }
            _ => {}
        }
    }

    pub(super) fn answer_permission(&mut self, key: PermissionKey, option_id: &str, _now: u64) {
        let result = match &mut self.session {
            Some(slot) => slot.client.answer_permission(key, option_id),
            None => Err(IntentError::UnknownPermission),
        };
        if let Err(error) = result {
            self.show(LogLevel::Warn, format!("The answer was not sent: {error}."));
        }
    }

    /// A review decision, from the webview or the diff editor.
    pub(super) fn review(&mut self, intent: ReviewIntent, now: u64) {
        match &mut self.session {
            Some(slot) => {
                if let Err(error) = slot.client.review(intent, now) {
                    self.show(LogLevel::Warn, format!("Tether: {error}."));
                }
            }
            None => self.show(LogLevel::Info, "That change belongs to a session that has ended.".to_owned()),
        }
    }

    pub(super) fn terminal_intent(&mut self, intent: TerminalIntent) {
        let result = match &mut self.session {
            Some(slot) => slot.client.terminal_intent(intent),
            None => Err(IntentError::UnknownTerminal),
        };
        if let Err(error) = result {
            self.show(LogLevel::Warn, format!("Tether: {error}."));
        }
    }
}

//! The workspace's sessions: reopening the last one when the window starts, the history
//! picker, opening, renaming, deleting and exporting a session.

use crate::acp::{AcpClient, AgentSession, LogReplay};
use crate::export::{ExportHeader, thread_markdown};
use crate::host_api::{AgentProfile, ExportFormat, HistoryItem, HistorySource, HostAction, LogLevel};
use crate::session_log::{EVENTS_FILE, UNTITLED_SESSION, prompt_title, read_log};
use crate::sidecar::{
    SessionDirRef, SessionListParams, SessionListResult, SessionReadParams, SessionReadResult, SessionRenameParams,
    SessionSummary, method,
};
use crate::thread::{Entry, NoticeLevel, NoticeView};
use crate::webview::SessionStatus;

use super::HostEngine;
use super::session::Session;
use super::tetherd::SidecarRequest;

/// The workspace's sessions as tetherd last listed them, and the log being read.
#[derive(Debug, Default)]
pub(super) struct History {
    /// The sessions the history last listed, which the history's commands name.
    pub(super) sessions: Vec<SessionSummary>,
    /// The sessions the agent last listed (`session/list`), when it offers that.
    pub(super) agent_sessions: Vec<AgentSession>,
    /// The history picker was asked for and has not been shown yet.
    pub(super) wanted: bool,
    /// The log being read, when a session is being opened or exported.
    pub(super) load: Option<LogLoad>,
    next_load: u64,
    /// The agent's events that arrived while the engine was finding out which session to show:
    /// they may belong to a running agent it is about to go on with, so they wait for it.
    pub(super) held_agent_events: Option<Vec<String>>,
    /// The sessions still to reopen after tetherd accepted the hello, one after the other.
    pub(super) reopen: std::collections::VecDeque<SessionSummary>,
    /// The session folder of the one to show once they are all reopened.
    pub(super) show_after_reopen: Option<String>,
}

impl History {
    /// Whether the engine is finding out which sessions a new tetherd brings back, or reading
    /// one back: the sessions open before are about to be replaced by their reopened copies.
    pub(super) fn reopening(&self) -> bool {
        self.held_agent_events.is_some()
    }

    /// Starts reading a session's log; returns the load's id, which its pieces are asked by.
    fn start_load(&mut self, summary: SessionSummary, replay: LogReplay, purpose: LoadPurpose) -> u64 {
        self.next_load += 1;
        self.load = Some(LogLoad { id: self.next_load, summary, replay, purpose });
        self.next_load
    }
}

impl HostEngine {
    pub(super) fn list_sessions(&mut self, purpose: ListPurpose, now: u64) {
        let Some(tether_dir) = self.config.tether_dir.clone() else {
            return self.show(
                LogLevel::Info,
                "Tether keeps a history of sessions only when a workspace folder is open.".to_owned(),
            );
        };
        if !self.config.workspace_trusted {
            // tetherd keeps the history, and it does not run until the workspace is trusted.
            return self.show(LogLevel::Info, "Tether shows the history once the workspace is trusted.".to_owned());
        }
        if !self.tetherd.is_ready() {
            return self.show(LogLevel::Warn, "Tether is not connected to tetherd; try again in a moment.".to_owned());
        }
        self.sidecar_request(
            method::SESSION_LIST,
            &SessionListParams { tether_dir },
            SidecarRequest::SessionList { purpose },
            now,
        );
    }

    pub(super) fn on_sessions_listed(
        &mut self,
        purpose: ListPurpose,
        result: Result<SessionListResult, String>,
        now: u64,
    ) {
        match (purpose, result) {
            (ListPurpose::Reopen { dirs }, Ok(listed)) => {
                let (order, shown) = reopen_order(&listed.sessions, &dirs);
                self.history.reopen = order.into();
                self.history.show_after_reopen = shown;
                self.history.sessions = listed.sessions;
                if self.history.reopen.is_empty() {
                    self.release_held_agent_events(now);
                    self.start_session(now);
                    self.reopen_over();
                } else {
                    self.reopen_next(now);
                }
            }
            (ListPurpose::Reopen { .. }, Err(error)) => {
                self.log(LogLevel::Warn, format!("could not list the workspace's sessions: {error}"));
                self.release_held_agent_events(now);
                self.start_session(now);
                self.reopen_over();
            }
            (ListPurpose::History, Ok(listed)) => {
                self.history.sessions = listed.sessions;
                self.history.wanted = false;
                self.push_history();
                // A session renamed in the history is named so on its tab too.
                self.view.header_changed();
            }
            (ListPurpose::History, Err(error)) => {
                self.show(LogLevel::Error, format!("Tether could not list the sessions: {error}"));
            }
        }
    }

    /// Opens the next session waiting to be reopened (see [`reopen_order`]), if any.
    pub(super) fn reopen_next(&mut self, now: u64) {
        let Some(summary) = self.history.reopen.pop_front() else {
            // Each session opened was shown; the one the person was last in is shown at the end.
            if let Some(dir) = self.history.show_after_reopen.take()
                && let Some(key) = self.key_of_session_dir(&dir)
            {
                self.show_session(key, now);
            }
            return self.reopen_over();
        };
        // Its agent is no longer one of the person's: the person's default agent starts
        // instead, and the earlier session waits in the history.
        if summary.live_agent.is_none() && self.profile_named(&summary.meta.agent).is_none() {
            let text = format!(
                "The earlier session {:?} used {:?}, which is not configured. It is in the history.",
                summary.title, summary.meta.agent
            );
            self.release_held_agent_events(now);
            // Starting a session forgets why tetherd's sessions were cut off; those still to
            // reopen were cut off all the same.
            let interrupted_by = self.interrupted_by.take();
            self.start_session(now);
            self.interrupted_by = interrupted_by;
            if let Some(slot) = &mut self.session {
                let notice = NoticeView { level: NoticeLevel::Warning, text, detail: None };
                slot.client.thread_mut().push(Entry::Notice(notice));
            }
            return self.reopen_next(now);
        }
        self.load_session(summary, LoadPurpose::Open, now);
    }

    /// The reopening is over. A prompt that waits for a session it did not bring back (its
    /// agent is no longer configured, or the sessions could not be listed) goes back to the
    /// person.
    fn reopen_over(&mut self) {
        self.interrupted_by = None;
        let lost = self.waiting_prompt.as_ref().is_some_and(|waiting| {
            waiting.generation.is_none()
                && waiting.session_dir.as_ref().is_some_and(|dir| !self.session_dir_has_agent(dir))
        });
        self.give_back_waiting_prompt(|_| lost, "its session could not be reopened");
    }

    /// Starts reading a session's log from tetherd, to show it (`Open`) or to export it.
    pub(super) fn load_session(&mut self, summary: SessionSummary, purpose: LoadPurpose, now: u64) {
        let Some(tether_dir) = self.config.tether_dir.clone() else { return };

        if purpose == LoadPurpose::Open {
            // The session is open already (its tetherd was lost, and it is being reopened from
            // its log): the copy being read replaces it.
            if let Some(key) = self.key_of_session_dir(&summary.dir) {
                self.with_session(key, |engine| engine.stop_session(now));
                self.parked.retain(|parked| parked.session.is_some());
            }
            if !self.make_room_for_session(now) {
                return self.release_held_agent_events(now);
            }
            // Agent events that arrive while the log is read wait for it: they may be its
            // running agent's, past the end of what is read.
            self.history.held_agent_events.get_or_insert_with(Vec::new);
            self.generation += 1;
            self.view.header.agent = summary.meta.agent.clone();
            self.view.header.agent_info = None;
            self.set_status(SessionStatus::starting("Reading the session"));
            self.post_snapshot(now);
        }
        let policy = self.policy.for_session(self.generation);
        let mut replay =
            LogReplay::new(self.client_info(), self.config.workspace_root.clone(), self.generation << 32, policy);
        replay.set_workspace_folders(self.config.workspace_folders.iter().cloned());
        let params = SessionReadParams { tether_dir, dir: summary.dir.clone(), offset: 0 };
        let load = self.history.start_load(summary, replay, purpose);
        self.sidecar_request(method::SESSION_READ, &params, SidecarRequest::SessionRead { load }, now);
    }

    pub(super) fn on_session_read(&mut self, load_id: u64, result: Result<SessionReadResult, String>, now: u64) {
        let Some(load) = self.history.load.as_mut().filter(|load| load.id == load_id) else { return };
        let piece = match result {
            Ok(piece) => piece,
            Err(error) => {
                let load = self.history.load.take().expect("the load was found above");
                let message = format!("Tether could not read the session {:?}: {error}", load.summary.title);
                self.show(LogLevel::Error, message.clone());
                if load.purpose == LoadPurpose::Open {
                    self.release_held_agent_events(now);
                    self.set_status(SessionStatus::Failed { message });
                    self.reopen_next(now);
                }
                return;
            }
        };
        load.replay.feed(&read_log(&piece.text));
        if !piece.eof {
            let params = SessionReadParams {
                tether_dir: self.config.tether_dir.clone().unwrap_or_default(),
                dir: load.summary.dir.clone(),
                offset: piece.next,
            };
            return self.sidecar_request(
                method::SESSION_READ,
                &params,
                SidecarRequest::SessionRead { load: load_id },
                now,
            );
        }
        let load = self.history.load.take().expect("the load was found above");
        match load.purpose {
            LoadPurpose::Open => self.open_loaded(load, now),
            LoadPurpose::Export => {
                let (client, _) = load.replay.finish();
                let summary = &load.summary;
                let action =
                    markdown_export(&summary.title, &summary.meta.agent, Some(summary.meta.created.clone()), &client);
                self.actions.push_back(action);
            }
        }
    }

    /// The log of the session to open has been folded: show it, and go on with its agent if it
    /// still runs (a window reload), else start it again and resume the agent's session.
    pub(super) fn open_loaded(&mut self, load: LogLoad, now: u64) {
        // Every session open when tetherd was lost lost its agent with it, so each one reopened
        // ends its turn with the reason; it is forgotten once the reopening is over.
        let interrupted_by = self.interrupted_by.clone();
        let replayed_through = load.replay.last_seq();
        let (mut client, replayed_claude, problems) = load.replay.finish_with_claude();
        // The log, read back, has fewer prompts than the thread had when tetherd was lost: the
        // last one never reached it, nor the agent. It goes back to the text box, not lost.
        let unsent = self
            .lost_prompt
            .take()
            .filter(|lost| lost.dir == load.summary.dir && client.thread().prompts().count() < lost.prompts);
        if self.snapshot_store().is_some() {
            client.enable_snapshots();
        }
        for problem in problems {
            self.log(LogLevel::Warn, format!("{}: {problem}", load.summary.dir));
        }
        let meta = &load.summary.meta;
        // The profile as the settings have it now (the Demo agent's path changes with every
        // version of the extension). The log only names it: a profile the person no longer has
        // leaves the session to be read, never run from what the log recorded.
        let found = self.profile_named(&meta.agent);
        let configured = found.is_some();
        let profile = found.unwrap_or_else(|| AgentProfile {
            name: meta.agent.clone(),
            command: String::new(),
            args: Vec::new(),
            env: Default::default(),
            cwd: None,
            protocol: Default::default(),
        });
        self.view.header.agent = profile.name.clone();
        self.view.header.agent_info = client.agent_info().map(str::to_owned);
        let live = load.summary.live_agent;
        // An agent that goes on said what it can do as it started, in the log just read.
        if live.is_some() && self.agent_notes.note(&profile.name, &client) {
            self.view.header_changed();
        }
        // A Claude CLI session goes on with the translator its log was folded through: it knows
        // the CLI's session to resume, and the CLI still running if there is one.
        let claude = self.claude_for(&profile).map(|fresh| match replayed_claude {
            Some(mut replayed) => {
                replayed.set_process_mode(self.config.claude_cli.process_mode());
                replayed
            }
            None => fresh,
        });
        let mut session = Session::new(self.generation, profile, client, configured, claude);
        session.agent_id = live;
        if let Some(claude) = &mut session.claude {
            match live.zip(claude.continue_live()) {
                Some((agent_id, process)) => {
                    session.cli_processes.insert(agent_id, process);
                }
                None => {
                    claude.finish_replay();
                    session.agent_id = None;
                }
            }
        }
        let live = session.agent_id;
        session.session_dir = Some(load.summary.dir.clone());
        // Only the agent taken over has events in the log already; a new one starts after it.
        session.replayed_through = if live.is_some() { replayed_through } else { 0 };
        self.shown = session.key;
        self.session = Some(session);
        self.log(LogLevel::Info, format!("reopened the session in {} ({} events)", load.summary.dir, replayed_through));
        match live {
            Some(agent_id) => {
                self.log(LogLevel::Info, format!("going on with its agent {agent_id}, still running"));
                let slot = self.session.as_mut().expect("the slot was just made");
                slot.client.continue_live(now);
                let status = if slot.client.is_ready() {
                    SessionStatus::Ready
                } else if slot.client.is_closed() {
                    SessionStatus::Exited { message: "The agent has exited".to_owned() }
                } else {
                    SessionStatus::starting("Initializing the agent")
                };
                self.set_status(status);
                self.release_held_agent_events(now);
            }
            None if !configured => {
                self.release_held_agent_events(now);
                let name = &load.summary.meta.agent;
                let text = format!(
                    "This session used {name:?}, which is not configured, so Tether does not start it. Choose an agent in the header to go on in a new session."
                );
                let slot = self.session.as_mut().expect("the slot was just made");
                // A turn the log left open ends here: no agent will ever answer it.
                if !slot.client.is_closed() {
                    slot.client.handle_exited(crate::acp::GONE_WHEN_BACK, false, "");
                }
                self.drain_client();
                let slot = self.session.as_mut().expect("the slot was just made");
                slot.client.thread_mut().push(Entry::Notice(NoticeView {
                    level: NoticeLevel::Warning,
                    text,
                    detail: None,
                }));
                self.set_status(SessionStatus::Failed {
                    message: format!("{name:?} is not configured: choose an agent"),
                });
            }
            None => {
                self.release_held_agent_events(now);
                if let Some(why) = interrupted_by {
                    // The log ends where tetherd was lost: what it left open (a running turn, a
                    // question) ends with why, rather than as if Tether had merely been away.
                    let slot = self.session.as_mut().expect("the slot was just made");
                    if slot.claude.is_some() {
                        // The log of a Claude CLI session is the CLI's wire, which a replay reads
                        // through the translator, whose client no agent process's end closes:
                        // there is no agent to record as lost.
                        if !slot.client.is_closed() {
                            slot.client.handle_exited(&why, false, "");
                        }
                    } else {
                        slot.client.handle_lost(&why);
                    }
                }
                self.restart_agent(now);
            }
        }
        // The replay raised no events: the questions the log left waiting (their cards are in
        // the thread) are counted here, for the badge and the tab, or they would count only once
        // the agent asked something again.
        let waiting = self.session.as_ref().map_or(0, |slot| slot.client.permissions_waiting());
        self.set_badge(waiting);
        self.refresh_permissions_view();
        // Nor for the header's controls (the model picker and the agent's other options, its
        // commands, the title and usage): they are copied from the folded client here, or a
        // window that goes on with the live agent would show none until the agent happened to
        // announce them again.
        self.refresh_controls_view();
        self.refresh_changes_view();
        self.post_snapshot(now);
        if let Some(unsent) = unsent {
            self.return_prompt(
                unsent.text,
                "Tether lost the connection to tetherd before the prompt reached the agent",
            );
        }
        self.reopen_next(now);
    }

    /// Hands the agent events held while the session to show was being found to their session.
    pub(super) fn release_held_agent_events(&mut self, now: u64) {
        for line in self.history.held_agent_events.take().unwrap_or_default() {
            self.handle_sidecar_line(&line, now);
        }
    }

    pub(super) fn show_history(&mut self, now: u64) {
        // The agent's own list, when it keeps one, is merged in when it comes (the picker is
        // refreshed then), so that a slow agent does not hold Tether's list back.
        if let Some(slot) = &mut self.session {
            slot.client.list_agent_sessions(now);
        }
        self.history.wanted = true;
        self.list_sessions(ListPurpose::History, now);
    }

    /// Shows the history picker: Tether's sessions, then those only the agent knows.
    pub(super) fn push_history(&mut self) {
        let current = self.session.as_ref().and_then(|slot| slot.session_dir.clone());
        let current_agent_session = self.session.as_ref().and_then(|slot| slot.client.session_id().map(str::to_owned));
        let mut items: Vec<HistoryItem> = self
            .history
            .sessions
            .iter()
            .map(|summary| HistoryItem {
                id: summary.dir.clone(),
                title: summary.title.clone(),
                agent: summary.meta.agent.clone(),
                last_activity: Some(summary.last_activity.clone()),
                turns: Some(summary.turns),
                source: HistorySource::Tether,
                current: current.as_ref() == Some(&summary.dir),
                live: summary.live_agent.is_some(),
                restores: summary.restores,
                from_checkpoint: summary.from_checkpoint,
            })
            .collect();
        let agent = self.view.header.agent.clone();
        let known = |id: &str| {
            self.history.sessions.iter().any(|summary| summary.agent_session_id.as_deref() == Some(id))
                || current_agent_session.as_deref() == Some(id)
        };
        items.extend(self.history.agent_sessions.iter().filter(|session| !known(&session.session_id)).map(|session| {
            HistoryItem {
                id: format!("{AGENT_SESSION_PREFIX}{}", session.session_id),
                title: session.title.clone().unwrap_or_else(|| UNTITLED_SESSION.to_owned()),
                agent: agent.clone(),
                last_activity: session.updated_at.clone(),
                turns: None,
                source: HistorySource::Agent,
                current: false,
                live: false,
                restores: 0,
                from_checkpoint: false,
            }
        }));
        self.actions.push_back(HostAction::ShowHistory { items });
    }

    /// The history's session `id`, as last listed.
    pub(super) fn history_session(&mut self, id: &str) -> Option<SessionSummary> {
        let found = self.history.sessions.iter().find(|summary| summary.dir == id).cloned();
        if found.is_none() {
            self.show(
                LogLevel::Warn,
                "Tether does not know that session (any more); show the history again.".to_owned(),
            );
        }
        found
    }

    pub(super) fn is_current_session(&self, id: &str) -> bool {
        self.session.as_ref().is_some_and(|slot| slot.session_dir.as_deref() == Some(id))
    }

    pub(super) fn open_history_session(&mut self, id: &str, now: u64) {
        if let Some(key) = self.key_of_session_dir(id) {
            return self.show_session(key, now); // It is open already.
        }
        if let Some(agent_session) = id.strip_prefix(AGENT_SESSION_PREFIX) {
            // A session only the agent keeps: a new Tether session that loads it, showing what
            // the agent replays.
            let agent_session = agent_session.to_owned();
            self.start_session(now);
            if let Some(slot) = &mut self.session {
                slot.client.resume_agent_session(agent_session);
            }
            return;
        }
        if let Some(summary) = self.history_session(id) {
            self.load_session(summary, LoadPurpose::Open, now);
        }
    }

    pub(super) fn rename_session(&mut self, id: String, title: String, now: u64) {
        let (Some(tether_dir), Some(_)) = (self.config.tether_dir.clone(), self.history_session(&id)) else { return };
        let params = SessionRenameParams { tether_dir, dir: id, title };
        self.sidecar_request(method::SESSION_RENAME, &params, SidecarRequest::SessionChange, now);
    }

    pub(super) fn delete_session(&mut self, id: String, now: u64) {
        let (Some(tether_dir), Some(_)) = (self.config.tether_dir.clone(), self.history_session(&id)) else { return };
        if self.is_current_session(&id) {
            return self.show(
                LogLevel::Info,
                "That session is the one shown now: start a new session before deleting it.".to_owned(),
            );
        }
        // tetherd keeps the folder of a session whose agent runs: the person is told why here, in
        // their words, rather than by tetherd's refusal.
        if self.key_of_session_dir(&id).is_some() {
            return self
                .show(LogLevel::Info, "That session is open in a tab: close its tab before deleting it.".to_owned());
        }
        self.sidecar_request(
            method::SESSION_DELETE,
            &SessionDirRef { tether_dir, dir: id },
            SidecarRequest::SessionChange,
            now,
        );
    }

    pub(super) fn export_session(&mut self, id: Option<String>, format: ExportFormat, now: u64) {
        let current = self.session.as_ref().and_then(|slot| slot.session_dir.clone());
        let id = id.or(current.clone());
        let summary =
            id.as_ref().and_then(|id| self.history.sessions.iter().find(|summary| &summary.dir == id).cloned());
        let is_current = id == current;
        match format {
            ExportFormat::Jsonl => {
                let Some(dir) = id.filter(|_| is_current || summary.is_some()) else {
                    return self.show(
                        LogLevel::Info,
                        "This session has no log to export (it is kept once the agent has started, in a workspace folder)."
                            .to_owned(),
                    );
                };
                let title = summary.map_or_else(|| "session".to_owned(), |summary| summary.title);
                self.actions.push_back(HostAction::ExportFile {
                    source: format!("{dir}/{EVENTS_FILE}"),
                    suggested_name: export_file_name(&title, "jsonl"),
                });
            }
            // Another session of the history: its log is read and folded first.
            ExportFormat::Markdown if !is_current && let Some(summary) = summary => {
                self.load_session(summary, LoadPurpose::Export, now);
            }
            ExportFormat::Markdown => {
                let Some(slot) = &self.session else {
                    return self.show(LogLevel::Info, "There is no session to export.".to_owned());
                };
                let title = summary.map(|summary| summary.title).unwrap_or_else(|| {
                    let first_prompt = slot.client.thread().entries().iter().find_map(|entry| match entry {
                        Entry::User(message) => Some(prompt_title(&message.text)),
                        _ => None,
                    });
                    first_prompt.unwrap_or_else(|| UNTITLED_SESSION.to_owned())
                });
                let action = markdown_export(&title, &slot.profile.name, None, &slot.client);
                self.actions.push_back(action);
            }
        }
    }
}

/// How a history item that is one of the agent's own sessions is named: this, then its id.
const AGENT_SESSION_PREFIX: &str = "agent:";

/// The action that offers a session's thread as a Markdown file.
fn markdown_export(title: &str, agent: &str, created: Option<String>, client: &AcpClient) -> HostAction {
    let header = ExportHeader { title: title.to_owned(), agent: agent.to_owned(), created, exported: None };
    HostAction::SaveExport {
        suggested_name: export_file_name(title, "md"),
        content: thread_markdown(&header, client.thread()),
    }
}

/// A file name for an exported session: its title, kept to letters, digits and dashes.
fn export_file_name(title: &str, extension: &str) -> String {
    let mut name = String::new();
    for word in title.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        if name.len() + word.len() > 48 {
            break;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&word.to_lowercase());
    }
    if name.is_empty() {
        name.push_str("session");
    }
    format!("tether-{name}.{extension}")
}

/// Why the sessions are listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ListPurpose {
    /// tetherd has just accepted the hello: reopen the sessions in `dirs` (those that were open
    /// when tetherd was lost), or, when there are none, every session whose agent still runs and
    /// the workspace's last one (see [`reopen_order`]).
    Reopen { dirs: Vec<String> },
    /// To show the history picker.
    History,
}

/// Which of the listed sessions (the last active first) to reopen, in the order to open them
/// (their tabs' order), and the folder of the one to show once they are open.
///
/// With `dirs` (the sessions open when tetherd was lost, the shown one last), those still
/// listed, the last shown. Without: every session whose agent still runs (a window reload: they
/// were open in it, and they go on) and the workspace's last one, unless nobody ever prompted in
/// it (a fresh session is as good), in the order they were created, which is the order their
/// tabs were opened in; the last one is shown.
fn reopen_order(listed: &[SessionSummary], dirs: &[String]) -> (Vec<SessionSummary>, Option<String>) {
    if !dirs.is_empty() {
        let order: Vec<SessionSummary> =
            dirs.iter().filter_map(|dir| listed.iter().find(|summary| &summary.dir == dir)).cloned().collect();
        return (order, None);
    }
    let last = listed.first().filter(|summary| summary.turns > 0 || summary.live_agent.is_some());
    let mut order: Vec<SessionSummary> = listed
        .iter()
        .filter(|summary| summary.live_agent.is_some() || last.is_some_and(|last| last.dir == summary.dir))
        .cloned()
        .collect();
    // RFC 3339 times in UTC, all of one form: their text sorts as the times do (the folder
    // breaks a tie, so that the order never depends on the listing's).
    order.sort_unstable_by(|a, b| (&a.meta.created, &a.dir).cmp(&(&b.meta.created, &b.dir)));
    (order, last.map(|last| last.dir.clone()))
}

/// A session's log being read from tetherd, piece by piece, and folded as it comes.
#[derive(Debug)]
pub(super) struct LogLoad {
    id: u64,
    summary: SessionSummary,
    replay: LogReplay,
    purpose: LoadPurpose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LoadPurpose {
    /// Show it in the chat and go on with it: with its agent, when that still runs, else with
    /// a new agent that resumes the agent's session.
    Open,
    /// Export it as Markdown.
    Export,
}

//! Several sessions in one window, one shown at a time: the others are parked here with the
//! header they would show, and go on in the background.
//!
//! The rest of the engine works on "the session in focus": `HostEngine::session` with the
//! session-specific part of `ChatView::header`. The shown session is normally in focus. Input
//! for a parked session (its agent's messages, tetherd's answers to its requests, a review
//! decided in the diff editor, a terminal's keystrokes) is handled by bringing that session into
//! focus for the duration ([`HostEngine::with_session`]), so that one code path serves every
//! session and a second session is a second value of [`Session`], not a second set of fields.
//!
//! While a parked session is in focus nothing reaches the webview but the tabs (its thread
//! patches are dropped: showing it posts a snapshot), while everything else (tetherd, reviews,
//! terminals, the badge) is carried out as for the shown one.
//!
//! Which session an input is for: a tetherd notification names its agent (or its terminal); a
//! tetherd answer is tagged with the generation of the agent it was asked for; and every id a
//! client hands out (permission keys, changes, edits, reads, path resolutions) starts from
//! `key << 32`, so `id >> 32` is its session's key.

use crate::host_api::{HostAction, LogLevel};
use crate::review::ChangePhase;
use crate::sidecar::{AgentId, TerminalId};
use crate::thread::Entry;
use crate::webview::{SessionKey, SessionStatus, SessionTabView, SessionView, TabActivity};

use super::HostEngine;
use super::session::Session;

/// How many sessions a window keeps open: past it, a new one waits for one to be closed (each
/// is an agent process, and a tab strip longer than this is not read).
pub(super) const MAX_OPEN_SESSIONS: usize = 8;

/// A session open in the window but not shown, with its part of the header.
#[derive(Debug)]
pub(super) struct ParkedSession {
    /// `None` only while it is in focus (its session is then `HostEngine::session`).
    pub(super) session: Option<Session>,
    /// The header it shows when it is shown; its window-wide fields are not kept up to date.
    pub(super) header: SessionView,
    /// When its current starting step began.
    pub(super) step_since: u64,
    /// Its permission questions waiting.
    pub(super) badge: u32,
}

/// The session an id handed out by a client belongs to.
pub(super) fn key_of_id(id: u64) -> SessionKey {
    id >> 32
}

impl HostEngine {
    /// Whether the session in focus is the one shown (or there is none): what it produces for
    /// the webview is posted.
    pub(super) fn focus_is_shown(&self) -> bool {
        self.session.as_ref().is_none_or(|slot| slot.key == self.shown)
    }

    /// Every open session's key, the shown one included, in the order they were opened.
    pub(super) fn open_keys(&self) -> Vec<SessionKey> {
        let mut keys: Vec<SessionKey> = self
            .parked
            .iter()
            .filter_map(|parked| parked.session.as_ref().map(|slot| slot.key))
            .chain(self.session.as_ref().map(|slot| slot.key))
            .collect();
        keys.sort_unstable();
        keys
    }

    /// Runs `work` with session `key` in focus; `None` (and nothing run) when no open session has
    /// that key.
    pub(super) fn with_session<R>(&mut self, key: SessionKey, work: impl FnOnce(&mut Self) -> R) -> Option<R> {
        if self.session.as_ref().is_some_and(|slot| slot.key == key) {
            return Some(work(self));
        }
        let index =
            self.parked.iter().position(|parked| parked.session.as_ref().is_some_and(|slot| slot.key == key))?;
        self.swap_focus(index);
        let result = work(self);
        self.swap_focus(index);
        Some(result)
    }

    /// Runs `work` once with each open session in focus.
    pub(super) fn for_each_session(&mut self, mut work: impl FnMut(&mut Self)) {
        for key in self.open_keys() {
            self.with_session(key, &mut work);
        }
    }

    /// Exchanges the session in focus (and its part of the header) with parked session `index`.
    fn swap_focus(&mut self, index: usize) {
        let parked = &mut self.parked[index];
        std::mem::swap(&mut self.session, &mut parked.session);
        // The window's own part of the header stays with the window.
        let header = &mut self.view.header;
        std::mem::swap(&mut header.follow_agent, &mut parked.header.follow_agent);
        std::mem::swap(&mut header.tabs, &mut parked.header.tabs);
        std::mem::swap(&mut header.shown, &mut parked.header.shown);
        std::mem::swap(header, &mut parked.header);
        self.view.swap_session_part(&mut parked.step_since, &mut parked.badge);
    }

    /// The open session whose agent is `agent_id` (the one running now, or a Claude CLI process
    /// of it).
    pub(super) fn key_of_agent(&self, agent_id: AgentId) -> Option<SessionKey> {
        self.sessions()
            .find(|slot| slot.is_served_by(agent_id) || slot.cli_processes.contains_key(&agent_id))
            .map(|slot| slot.key)
    }

    /// The open session whose agent is of generation `generation`.
    pub(super) fn key_of_generation(&self, generation: u64) -> Option<SessionKey> {
        self.sessions().find(|slot| slot.generation == generation).map(|slot| slot.key)
    }

    /// The open session with the terminal `terminal` (the client's id for it).
    pub(super) fn key_of_terminal(&self, terminal: &str) -> Option<SessionKey> {
        self.sessions().find(|slot| slot.client.has_terminal(terminal)).map(|slot| slot.key)
    }

    /// The open session with tetherd's terminal `terminal`.
    pub(super) fn key_of_sidecar_terminal(&self, terminal: TerminalId) -> Option<SessionKey> {
        self.sessions().find(|slot| slot.client.has_sidecar_terminal(terminal)).map(|slot| slot.key)
    }

    /// The open session kept in tetherd's session folder `dir`.
    pub(super) fn key_of_session_dir(&self, dir: &str) -> Option<SessionKey> {
        self.sessions().find(|slot| slot.session_dir.as_deref() == Some(dir)).map(|slot| slot.key)
    }

    /// Whether the session kept in `dir` is open with an agent running or starting: one a
    /// restarted tetherd's reopening brought back, rather than a tab it left as it was.
    pub(super) fn session_dir_has_agent(&self, dir: &str) -> bool {
        self.sessions().any(|slot| slot.session_dir.as_deref() == Some(dir) && !slot.client.is_closed())
    }

    /// The session folders of the open sessions, in the order they were opened but the shown
    /// one last.
    pub(super) fn open_session_dirs(&self) -> Vec<String> {
        let mut open: Vec<&Session> = self.sessions().collect();
        open.sort_by_key(|slot| (slot.key == self.shown, slot.key));
        open.into_iter().filter_map(|slot| slot.session_dir.clone()).collect()
    }

    fn sessions(&self) -> impl Iterator<Item = &Session> {
        self.session.iter().chain(self.parked.iter().filter_map(|parked| parked.session.as_ref()))
    }

    /// Makes room for a session about to be made the shown one: the shown session is parked,
    /// unless nothing was ever asked in it (then it is stopped and replaced, as a peer's "new
    /// chat" does not pile up empty tabs). `false` when the window has as many open sessions as
    /// it keeps.
    pub(super) fn make_room_for_session(&mut self, now: u64) -> bool {
        let Some(slot) = &self.session else { return true };
        let unused = slot.client.thread().prompts().next().is_none();
        if unused {
            self.stop_session(now);
            return true;
        }
        if self.open_keys().len() >= MAX_OPEN_SESSIONS {
            self.show(
                LogLevel::Info,
                format!("Tether keeps {MAX_OPEN_SESSIONS} sessions open at once: close one to start another."),
            );
            return false;
        }
        self.park_shown();
        true
    }

    /// Moves the shown session to the parked ones; nothing is shown until another session is.
    fn park_shown(&mut self) {
        let Some(session) = self.session.take() else { return };
        // The next session starts from this one's mode and workspace rules, as it would had
        // this one ended.
        self.policy.keep_from(session.client.policy());
        let header = self.view.header.clone();
        let (mut step_since, mut badge) = (0, 0);
        self.view.swap_session_part(&mut step_since, &mut badge);
        self.parked.push(ParkedSession { session: Some(session), header, step_since, badge });
        self.view.header.agent_info = None;
        self.view.header.can_restart = false;
        self.view.header.can_install = false;
        self.view.header.can_stop = false;
        self.view.header.can_sign_in = false;
        self.refresh_permissions_view();
        self.refresh_controls_view();
        self.refresh_changes_view();
        self.view.header_changed();
    }

    /// Shows session `key` (a tab clicked): the shown one goes on in the background.
    pub(super) fn show_session(&mut self, key: SessionKey, now: u64) {
        if self.shown == key {
            return;
        }
        let Some(index) =
            self.parked.iter().position(|parked| parked.session.as_ref().is_some_and(|slot| slot.key == key))
        else {
            return self.log(LogLevel::Warn, format!("there is no open session {key} to show"));
        };
        if self.session.is_some() {
            self.swap_focus(index);
        } else {
            // Nothing was shown (the shown session was just closed): the parked one moves in.
            self.swap_focus(index);
            self.parked.remove(index);
        }
        self.shown = key;
        self.update_header_flags();
        self.refresh_permissions_view();
        self.refresh_controls_view();
        self.refresh_changes_view();
        self.post_snapshot(now);
    }

    /// Closes session `key`'s tab: its agent is stopped (it stays in the history). Closing the
    /// shown one shows its neighbour; closing the last starts a new session. A session at work
    /// is closed only once the person `confirmed` it: a Delete key pressed on the wrong tab
    /// must not end a turn.
    pub(super) fn close_session(&mut self, key: SessionKey, confirmed: bool, now: u64) {
        let keys = self.open_keys();
        let Some(position) = keys.iter().position(|open| *open == key) else {
            return self.log(LogLevel::Warn, format!("there is no open session {key} to close"));
        };
        if !confirmed && let Some(title) = self.at_work(key) {
            self.actions.push_back(HostAction::ConfirmCloseSession { key, title });
            return;
        }
        self.with_session(key, |engine| engine.stop_session(now));
        self.parked.retain(|parked| parked.session.is_some());
        if key != self.shown {
            self.view.header_changed();
            return;
        }
        // The neighbour after it, else the one before.
        let neighbour = keys.get(position + 1).or_else(|| position.checked_sub(1).and_then(|before| keys.get(before)));
        match neighbour.copied() {
            Some(next) => self.show_session(next, now),
            None => self.start_session(now),
        }
    }

    /// The tab's words of session `key` when it is at work: a turn running, or a question or a
    /// change waiting for the person (a session still starting is not: nothing of it is lost).
    fn at_work(&self, key: SessionKey) -> Option<String> {
        let (slot, header, badge) = self.open_sessions().find(|(slot, ..)| slot.key == key)?;
        let running = slot.client.thread().turn() == &crate::thread::TurnState::Running;
        let waiting = matches!(tab_activity(slot, header, badge), TabActivity::Waiting);
        (running || waiting).then(|| self.tab_label(slot, header))
    }

    /// Every open session, the shown one first, with the header it shows and its questions
    /// waiting.
    fn open_sessions(&self) -> impl Iterator<Item = (&Session, &SessionView, u32)> {
        let shown = self.session.as_ref().map(|slot| (slot, &self.view.header, self.view.badge()));
        let parked = self
            .parked
            .iter()
            .filter_map(|parked| parked.session.as_ref().map(|slot| (slot, &parked.header, parked.badge)));
        shown.into_iter().chain(parked)
    }

    /// The tab strip, from every open session.
    pub(super) fn tabs_view(&self) -> Vec<SessionTabView> {
        let mut tabs: Vec<SessionTabView> = self
            .open_sessions()
            .map(|(slot, header, badge)| SessionTabView {
                key: slot.key,
                label: self.tab_label(slot, header),
                agent: slot.profile.name.clone(),
                activity: tab_activity(slot, header, badge),
            })
            .collect();
        tabs.sort_by_key(|tab| tab.key);
        tabs
    }

    /// A tab's words: the name the person gave the session in the history, else [`tab_title`].
    fn tab_label(&self, slot: &Session, header: &SessionView) -> String {
        let dir = slot.session_dir.as_deref();
        let summary = self.history.sessions.iter().find(|summary| Some(summary.dir.as_str()) == dir);
        match summary.and_then(|summary| summary.meta.title.as_deref()).filter(|name| !name.trim().is_empty()) {
            Some(name) => name.to_owned(),
            None => tab_title(slot, header),
        }
    }

    /// The badge's count: the permission questions waiting in every open session.
    pub(super) fn total_badge(&self) -> u32 {
        self.view.badge() + self.parked.iter().map(|parked| parked.badge).sum::<u32>()
    }

    /// What a session's client asks the host to show, marked with its session when the window
    /// has more than one: its review documents and terminals say whose they are.
    pub(super) fn label_host_action(&self, action: &mut HostAction) {
        let Some(slot) = &self.session else { return };
        let label = (self.open_keys().len() > 1).then(|| self.tab_label(slot, &self.view.header));
        match action {
            HostAction::ShowReview { document, .. } => {
                document.session = slot.key;
                if let Some(label) = label {
                    document.label = format!("{} · {label}", document.label);
                }
            }
            HostAction::OpenTerminal { name, .. } => {
                if let Some(label) = label {
                    *name = format!("{name} · {label}");
                }
            }
            _ => {}
        }
    }
}

/// A session's title for its tab, when the person has not named it: the agent's title, else its
/// first prompt's start, else its agent's name; for a conversation restored from a checkpoint,
/// the prompt it went back to before, until the person prompts in it.
fn tab_title(slot: &Session, header: &SessionView) -> String {
    if let Some(title) = header.controls.title.as_ref().filter(|title| !title.trim().is_empty()) {
        return title.clone();
    }
    // A restored conversation's copied turns are the session it came from: its own start after them.
    let (copied, withdrawn) = match &slot.restored_from {
        Some((copied, withdrawn)) => (*copied, Some(withdrawn)),
        None => (0, None),
    };
    let first_prompt = slot.client.thread().entries().iter().skip(copied).find_map(|entry| match entry {
        Entry::User(message) => Some(crate::session_log::prompt_title(&message.text)),
        _ => None,
    });
    match (first_prompt.filter(|title| !title.is_empty()), withdrawn) {
        (Some(title), _) => title,
        (None, Some(withdrawn)) => format!("Before \u{201c}{withdrawn}\u{201d}"),
        (None, None) => slot.profile.name.clone(),
    }
}

fn tab_activity(slot: &Session, header: &SessionView, badge: u32) -> TabActivity {
    // A write waiting for the person holds the agent's turn, as a question does.
    let undecided = header.changes.iter().any(|change| matches!(change.phase, ChangePhase::Proposed));
    if badge > 0 || undecided {
        return TabActivity::Waiting;
    }
    match header.status {
        SessionStatus::Starting { .. } => TabActivity::Working,
        SessionStatus::Failed { .. } | SessionStatus::Exited { .. } | SessionStatus::Untrusted { .. } => {
            TabActivity::Stopped
        }
        SessionStatus::Ready if slot.client.thread().turn() == &crate::thread::TurnState::Running => {
            TabActivity::Working
        }
        SessionStatus::Ready
            if header.changes.iter().any(|change| change.phase == ChangePhase::Applied && change.pending > 0) =>
        {
            TabActivity::Review
        }
        SessionStatus::Ready => TabActivity::Idle,
    }
}

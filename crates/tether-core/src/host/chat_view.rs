//! The chat view's side of the window: its header (`SessionView`), the outbox of patches posted
//! at most once per frame, snapshots, and the badge.

use crate::host_api::HostAction;
use crate::thread::{ThreadPatch, TurnState};
use crate::webview::{
    HostToWebview, MentionSuggestion, PermissionsView, SessionControlsView, SessionStatus, SessionView, ViewSnapshot,
};

use super::session::Session;
use super::{FRAME_MS, HostEngine};

/// How many of a thread's last entries a snapshot carries: more than a tall window shows, so the
/// person sees the end of a long thread, and can scroll a little, before the rest arrives.
const SNAPSHOT_ENTRIES: usize = 200;

/// How many earlier entries one frame sends after a snapshot (see [`ViewSnapshot::earlier`]).
/// A 10,000-entry thread arrives in 20 frames, each a few hundred kilobytes of JSON.
const EARLIER_ENTRIES_PER_FRAME: usize = 500;

/// The chat view's state in the window: the header it shows and what it has not been sent.
#[derive(Debug)]
pub(super) struct ChatView {
    /// The session header as the webview has it (or will, with the next post), but for its
    /// `profiles`: the agent picker's list is read from every session's header as it is posted
    /// (`agent_picker.rs`), so it stays empty here.
    pub(super) header: SessionView,
    pub(super) outbox: WebviewOutbox,
    /// The permission questions waiting in the session in focus.
    badge: u32,
    /// The count on the view's badge, as last set: the questions of every open session.
    badge_posted: u32,
    /// The host's time when the current starting step began, for the header's "… 7 s".
    step_since: u64,
}

impl ChatView {
    pub(super) fn new() -> Self {
        ChatView {
            header: SessionView {
                agent: String::new(),
                agent_info: None,
                status: SessionStatus::starting("Starting tetherd"),
                profiles: Vec::new(),
                permissions: PermissionsView::default(),
                changes: Vec::new(),
                can_restart: false,
                can_install: false,
                can_sign_in: false,
                can_stop: false,
                follow_agent: false,
                controls: SessionControlsView::default(),
                tabs: Vec::new(),
                shown: 0,
            },
            outbox: WebviewOutbox::default(),
            badge: 0,
            badge_posted: 0,
            step_since: 0,
        }
    }

    /// The header changed: the next post carries it.
    pub(super) fn header_changed(&mut self) {
        self.outbox.session_changed = true;
    }

    /// Thread patches for the next post, when a webview is there to take them (a webview that
    /// comes later gets a snapshot).
    pub(super) fn queue_patches(&mut self, patches: Vec<ThreadPatch>) {
        if self.outbox.ready {
            for patch in patches {
                patch.merge_into(&mut self.outbox.patches);
            }
        }
    }

    /// Exchanges the part of the view that belongs to the session in focus (when its starting
    /// step began, its questions waiting) with a parked session's (see `tabs.rs`).
    pub(super) fn swap_session_part(&mut self, step_since: &mut u64, badge: &mut u32) {
        std::mem::swap(&mut self.step_since, step_since);
        std::mem::swap(&mut self.badge, badge);
    }

    /// The questions waiting in the session in focus.
    pub(super) fn badge(&self) -> u32 {
        self.badge
    }

    /// When the next post may leave: a frame after the last.
    pub(super) fn next_frame_at(&self) -> u64 {
        self.outbox.last_post.map_or(0, |at| at + FRAME_MS)
    }
}

/// What the webview has not been sent yet, and when it was last posted to.
#[derive(Debug, Default)]
pub(super) struct WebviewOutbox {
    /// The webview said `ready` and has not gone away since: posts reach it.
    pub(super) ready: bool,
    /// A mention "Tether: Mention Selection" made while no webview was ready, for the next one.
    pub(super) mention_waiting: Option<MentionSuggestion>,
    last_post: Option<u64>,
    session_changed: bool,
    patches: Vec<ThreadPatch>,
    /// The thread's entries before this index have not been sent since the last snapshot.
    earlier: usize,
}

impl HostEngine {
    /// After every input: move what every session's ACP client produced to the sidecar, the
    /// host and the log, and the shown one's to the header and the webview.
    pub(super) fn finish(&mut self, now: u64) {
        self.now = now;
        // Parked sessions go on: their lines reach their agents and their terminals their
        // mirrors now; their threads reach the webview when they are shown (as a snapshot).
        for key in self.open_keys() {
            if key != self.shown {
                self.with_session(key, |engine| {
                    engine.drain_client();
                    engine.flush_parked_terminals(now);
                });
            }
        }
        self.drain_client();
        self.update_header_flags();
        self.refresh_tabs_view();
        self.post_badge();
        self.flush_webview(now);
    }

    /// Copies the open sessions into the header's tab strip.
    fn refresh_tabs_view(&mut self) {
        let tabs = self.tabs_view();
        if self.view.header.tabs != tabs || self.view.header.shown != self.shown {
            self.view.header.tabs = tabs;
            self.view.header.shown = self.shown;
            self.view.header_changed();
        }
    }

    /// The header's offers that follow from the shown session's state: Restart or Install, Stop,
    /// Sign in.
    pub(super) fn update_header_flags(&mut self) {
        let closed =
            self.session.as_ref().is_some_and(|slot| slot.configured && slot.client.is_closed() && !slot.stopping)
                && self.history.load.is_none();
        let can_install = closed && self.session.as_ref().is_some_and(|slot| self.is_missing_builtin(&slot.profile));
        let can_restart = closed && !can_install;
        if (self.view.header.can_restart, self.view.header.can_install) != (can_restart, can_install) {
            self.view.header.can_restart = can_restart;
            self.view.header.can_install = can_install;
            self.view.header_changed();
        }
        let starting = matches!(self.view.header.status, SessionStatus::Starting { .. });
        let can_stop = self.tetherd.is_ready()
            && self.session.as_mut().is_some_and(|slot| {
                if slot.client.thread().turn() != &TurnState::Running {
                    slot.cancel_sent = false;
                }
                !slot.client.is_closed() && (starting || slot.cancel_sent)
            });
        if self.view.header.can_stop != can_stop {
            self.view.header.can_stop = can_stop;
            self.view.header_changed();
        }
        let can_sign_in = self.session.as_ref().is_some_and(|slot| slot.client.awaits_sign_in_choice());
        if self.view.header.can_sign_in != can_sign_in {
            self.view.header.can_sign_in = can_sign_in;
            self.view.header_changed();
        }
    }

    /// A parked session's terminal output goes to its mirrored terminals at once (its cards are
    /// drawn from the snapshot when it is shown).
    fn flush_parked_terminals(&mut self, now: u64) {
        if let Some(slot) = &mut self.session
            && slot.client.terminals_dirty()
        {
            let writes = slot.client.flush_terminals(now);
            self.actions.extend(writes);
            slot.client.thread_mut().take_patches();
        }
    }

    /// Copies the session's title, commands, config options and usage into the header.
    pub(super) fn refresh_controls_view(&mut self) {
        let controls = self.session.as_ref().map(|slot| slot.client.controls().clone()).unwrap_or_default();
        if self.view.header.controls != controls {
            self.view.header.controls = controls;
            self.view.header_changed();
        }
    }

    pub(super) fn refresh_changes_view(&mut self) {
        let changes = self.session.as_ref().map(|slot| slot.client.changes_bar()).unwrap_or_default();
        if self.view.header.changes != changes {
            self.view.header.changes = changes;
            self.view.header_changed();
        }
    }

    pub(super) fn webview_has_news(&self) -> bool {
        let outbox = &self.view.outbox;
        outbox.ready && (outbox.session_changed || !outbox.patches.is_empty() || outbox.earlier > 0)
    }

    /// Whether the next frame has anything to deliver: patches or a header for the webview, or
    /// terminal output for the mirrored terminals and the cards.
    pub(super) fn frame_has_news(&self) -> bool {
        self.webview_has_news() || self.session.as_ref().is_some_and(|slot| slot.client.terminals_dirty())
    }

    /// At most once per [`FRAME_MS`]: terminal output to its mirrored terminals and cards, and one
    /// post to the webview.
    pub(super) fn flush_webview(&mut self, now: u64) {
        if !self.frame_has_news() {
            return;
        }
        if self.view.outbox.last_post.is_some_and(|at| now < at + FRAME_MS) {
            return; // poll_timeout asks for a timer at the next frame
        }
        self.view.outbox.last_post = Some(now);
        if let Some(slot) = &mut self.session
            && slot.client.terminals_dirty()
        {
            let writes = slot.client.flush_terminals(now);
            self.actions.extend(writes);
            let patches = slot.client.thread_mut().take_patches();
            self.view.queue_patches(patches);
        }
        if !self.webview_has_news() {
            return;
        }
        self.post_earlier_entries();
        if !self.view.outbox.session_changed && self.view.outbox.patches.is_empty() {
            return;
        }
        let session = std::mem::take(&mut self.view.outbox.session_changed).then(|| self.session_view(now));
        let thread = std::mem::take(&mut self.view.outbox.patches);
        self.actions.push_back(HostAction::PostWebview { message: Box::new(HostToWebview::Patch { session, thread }) });
    }

    /// The next batch of the entries the last snapshot left out, the most recent first.
    fn post_earlier_entries(&mut self) {
        let end = std::mem::take(&mut self.view.outbox.earlier);
        if end == 0 {
            return;
        }
        let Some(slot) = &self.session else { return };
        let Some(entries) = slot.client.thread().entries().get(..end) else { return };
        let from = end.saturating_sub(EARLIER_ENTRIES_PER_FRAME);
        self.view.outbox.earlier = from;
        let message = HostToWebview::EarlierEntries { from: from as u32, entries: entries[from..].to_vec() };
        self.actions.push_back(HostAction::PostWebview { message: Box::new(message) });
    }

    /// Posts a message that is not part of the session's state (which goes in patches, at most
    /// one per frame) at once; dropped when no webview is open.
    pub(super) fn post_now(&mut self, message: HostToWebview) {
        if self.view.outbox.ready {
            self.actions.push_back(HostAction::PostWebview { message: Box::new(message) });
        }
    }

    /// Replaces the webview's state with the current one. Patches not yet posted are part of it.
    pub(super) fn post_snapshot(&mut self, now: u64) {
        if !self.view.outbox.ready || !self.focus_is_shown() {
            return;
        }
        self.drain_client();
        self.refresh_tabs_view();
        self.view.outbox.patches.clear();
        self.view.outbox.session_changed = false;
        self.view.outbox.earlier = 0;
        self.view.outbox.last_post = Some(now);
        let snapshot = match &self.session {
            Some(slot) => {
                let thread = slot.client.thread();
                let earlier = thread.entries().len().saturating_sub(SNAPSHOT_ENTRIES);
                self.view.outbox.earlier = earlier;
                ViewSnapshot {
                    session: self.session_view(now),
                    earlier: earlier as u32,
                    entries: thread.entries()[earlier..].to_vec(),
                    plan: thread.plan().to_vec(),
                    turn: thread.turn().clone(),
                    terminals: slot.client.terminals_as_of(now),
                }
            }
            None => ViewSnapshot {
                session: self.session_view(now),
                earlier: 0,
                entries: Vec::new(),
                plan: Vec::new(),
                turn: Default::default(),
                terminals: Vec::new(),
            },
        };
        self.actions.push_back(HostAction::PostWebview { message: Box::new(HostToWebview::Snapshot { snapshot }) });
    }

    pub(super) fn set_status(&mut self, status: SessionStatus) {
        if self.view.header.status != status {
            if matches!(status, SessionStatus::Starting { .. }) {
                self.view.step_since = self.now;
            }
            self.view.header.status = status;
            self.view.header_changed();
        }
    }

    /// The header as the webview is sent it at `now`: a starting step says how long it has
    /// taken so far.
    pub(super) fn session_view(&self, now: u64) -> SessionView {
        let mut session = self.view.header.clone();
        session.profiles = self.profile_views();
        if let SessionStatus::Starting { elapsed_ms, agent_said, .. } = &mut session.status {
            *elapsed_ms = now.saturating_sub(self.view.step_since);
            *agent_said = self.session.as_ref().and_then(Session::last_stderr_text);
        }
        session
    }

    /// The session in focus has `count` questions waiting; the badge counts every session's
    /// (set in [`HostEngine::finish`]).
    pub(super) fn set_badge(&mut self, count: u32) {
        self.view.badge = count;
    }

    fn post_badge(&mut self) {
        let count = self.total_badge();
        if self.view.badge_posted != count {
            self.view.badge_posted = count;
            self.actions.push_back(HostAction::SetBadge { count });
        }
    }

    pub(super) fn set_follow_agent(&mut self, on: bool) {
        if self.view.header.follow_agent != on {
            self.view.header.follow_agent = on;
            self.view.header_changed();
        }
    }
}

//! The chat view's side of the window: its header (`SessionView`), the outbox of patches posted
//! at most once per frame, snapshots, and the badge.

use crate::host_api::HostAction;
use crate::thread::TurnState;
use crate::webview::{HostToWebview, SessionStatus, SessionView, ViewSnapshot};

use super::{FRAME_MS, HostEngine};

impl HostEngine {
    /// After every input: move what the ACP client produced to the sidecar, the header, the log
    /// and the webview.
    pub(super) fn finish(&mut self, now: u64) {
        self.now = now;
        self.drain_client();
        let can_restart =
            self.agent.as_ref().is_some_and(|slot| slot.configured && slot.client.is_closed() && !slot.stopping)
                && self.history.load.is_none();
        if self.session.can_restart != can_restart {
            self.session.can_restart = can_restart;
            self.webview.session_changed = true;
        }
        let starting = matches!(self.session.status, SessionStatus::Starting { .. });
        let can_stop = self.tetherd.is_ready()
            && self.agent.as_mut().is_some_and(|slot| {
                if slot.client.thread().turn() != &TurnState::Running {
                    slot.cancel_sent = false;
                }
                !slot.client.is_closed() && (starting || slot.cancel_sent)
            });
        if self.session.can_stop != can_stop {
            self.session.can_stop = can_stop;
            self.webview.session_changed = true;
        }
        let can_sign_in = self.agent.as_ref().is_some_and(|slot| slot.client.awaits_sign_in_choice());
        if self.session.can_sign_in != can_sign_in {
            self.session.can_sign_in = can_sign_in;
            self.webview.session_changed = true;
        }
        self.flush_webview(now);
    }

    /// Copies the session's title, commands, config options and usage into the header.
    pub(super) fn refresh_controls_view(&mut self) {
        let controls = self.agent.as_ref().map(|slot| slot.client.controls().clone()).unwrap_or_default();
        if self.session.controls != controls {
            self.session.controls = controls;
            self.webview.session_changed = true;
        }
    }

    pub(super) fn refresh_changes_view(&mut self) {
        let changes = self.agent.as_ref().map(|slot| slot.client.changes_bar()).unwrap_or_default();
        if self.session.changes != changes {
            self.session.changes = changes;
            self.webview.session_changed = true;
        }
    }

    pub(super) fn webview_has_news(&self) -> bool {
        self.webview.ready && (self.webview.session_changed || !self.webview.patches.is_empty())
    }

    /// Whether the next frame has anything to deliver: patches or a header for the webview, or
    /// terminal output for the mirrored terminals and the cards.
    pub(super) fn frame_has_news(&self) -> bool {
        self.webview_has_news() || self.agent.as_ref().is_some_and(|slot| slot.client.terminals_dirty())
    }

    /// At most once per [`FRAME_MS`]: terminal output to its mirrored terminals and cards, and one
    /// post to the webview.
    pub(super) fn flush_webview(&mut self, now: u64) {
        if !self.frame_has_news() {
            return;
        }
        if self.webview.last_post.is_some_and(|at| now < at + FRAME_MS) {
            return; // poll_timeout asks for a timer at the next frame
        }
        self.webview.last_post = Some(now);
        if let Some(slot) = &mut self.agent
            && slot.client.terminals_dirty()
        {
            let writes = slot.client.flush_terminals(now);
            self.actions.extend(writes);
            let patches = slot.client.thread_mut().take_patches();
            if self.webview.ready {
                self.webview.patches.extend(patches);
            }
        }
        if !self.webview_has_news() {
            return;
        }
        let session = std::mem::take(&mut self.webview.session_changed).then(|| self.session_view(now));
        let thread = std::mem::take(&mut self.webview.patches);
        self.actions.push_back(HostAction::PostWebview { message: Box::new(HostToWebview::Patch { session, thread }) });
    }

    /// Posts a message that is not part of the session's state (which goes in patches, at most
    /// one per frame) at once; dropped when no webview is open.
    pub(super) fn post_now(&mut self, message: HostToWebview) {
        if self.webview.ready {
            self.actions.push_back(HostAction::PostWebview { message: Box::new(message) });
        }
    }

    /// Replaces the webview's state with the current one. Patches not yet posted are part of it.
    pub(super) fn post_snapshot(&mut self, now: u64) {
        if !self.webview.ready {
            return;
        }
        self.drain_client();
        self.webview.patches.clear();
        self.webview.session_changed = false;
        self.webview.last_post = Some(now);
        let snapshot = match &self.agent {
            Some(slot) => {
                let thread = slot.client.thread();
                ViewSnapshot {
                    session: self.session_view(now),
                    entries: thread.entries().to_vec(),
                    plan: thread.plan().to_vec(),
                    turn: thread.turn().clone(),
                    terminals: thread.terminals().to_vec(),
                }
            }
            None => ViewSnapshot {
                session: self.session_view(now),
                entries: Vec::new(),
                plan: Vec::new(),
                turn: Default::default(),
                terminals: Vec::new(),
            },
        };
        self.actions.push_back(HostAction::PostWebview { message: Box::new(HostToWebview::Snapshot { snapshot }) });
    }

    pub(super) fn set_status(&mut self, status: SessionStatus) {
        if self.session.status != status {
            if matches!(status, SessionStatus::Starting { .. }) {
                self.step_since = self.now;
            }
            self.session.status = status;
            self.webview.session_changed = true;
        }
    }

    /// The header as the webview is sent it at `now`: a starting step says how long it has
    /// taken so far.
    pub(super) fn session_view(&self, now: u64) -> SessionView {
        let mut session = self.session.clone();
        if let SessionStatus::Starting { elapsed_ms, .. } = &mut session.status {
            *elapsed_ms = now.saturating_sub(self.step_since);
        }
        session
    }

    pub(super) fn set_badge(&mut self, count: u32) {
        if self.badge != count {
            self.badge = count;
            self.actions.push_back(HostAction::SetBadge { count });
        }
    }

    pub(super) fn set_follow_agent(&mut self, on: bool) {
        if self.session.follow_agent != on {
            self.session.follow_agent = on;
            self.webview.session_changed = true;
        }
    }
}

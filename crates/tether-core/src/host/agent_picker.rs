//! The agent picker's list: every profile the person can choose, with what the window knows of
//! it. Whether its program is on this machine (the host looks for the built-in agents), how it
//! stands in the open sessions, and, once it has started in this window, its own name and
//! version and what it said it can do.
//!
//! Nothing here is kept but what an agent said when it started ([`AgentNotes`]): the rest is
//! read from the sessions' headers each time the header is posted, so the list cannot disagree
//! with the tabs and the status beside it.

use std::collections::BTreeMap;

use crate::acp::AcpClient;
use crate::host_api::AgentProfile;
use crate::webview::{ProfileState, ProfileView, SessionStatus, SessionView};

use super::HostEngine;

/// What each agent (by profile name) said of itself the last time it started in this window.
#[derive(Debug, Default)]
pub(super) struct AgentNotes {
    by_profile: BTreeMap<String, AgentNote>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct AgentNote {
    /// Its own name and version, from `initialize`.
    info: Option<String>,
    /// What it can do, in the person's words (`AcpClient::abilities`).
    abilities: Vec<&'static str>,
}

impl AgentNotes {
    /// Notes what the agent of profile `profile` said as it started (`client` is its session's);
    /// returns whether that is news.
    pub(super) fn note(&mut self, profile: &str, client: &AcpClient) -> bool {
        let note = AgentNote { info: client.agent_info().map(str::to_owned), abilities: client.abilities().to_vec() };
        if self.by_profile.get(profile) == Some(&note) {
            return false;
        }
        self.by_profile.insert(profile.to_owned(), note);
        true
    }
}

impl HostEngine {
    /// Whether `profile` is a built-in agent the host did not find on this machine (and not a
    /// `tether.agents` profile of the same name, which replaces it and needs nothing installed).
    pub(super) fn is_missing_builtin(&self, profile: &AgentProfile) -> bool {
        self.config.missing_builtins.contains(&profile.name) && self.config.builtin_profiles.contains(profile)
    }

    /// Notes what the agent of the session in focus said as it was initialized, for the picker.
    pub(super) fn note_agent_started(&mut self) {
        let Some(slot) = &self.session else { return };
        if self.agent_notes.note(&self.view.header.agent, &slot.client) {
            self.view.header_changed();
        }
    }

    /// The picker's list as of now, in the order of [`HostEngine::profiles`].
    pub fn profile_views(&self) -> Vec<ProfileView> {
        // The headers of the open sessions: the one in focus, unless no session is open, and the
        // parked ones (one of which holds the shown session's while another is in focus).
        let headers: Vec<&SessionView> = self
            .session
            .as_ref()
            .map(|_| &self.view.header)
            .into_iter()
            .chain(self.parked.iter().map(|parked| &parked.header))
            .collect();
        self.profiles()
            .into_iter()
            .map(|profile| {
                let running: Vec<&SessionView> =
                    headers.iter().copied().filter(|header| header.agent == profile.name).collect();
                let missing = self.is_missing_builtin(&profile);
                let (state, mut description) = match state_of(&running) {
                    // A session of it that failed to start failed for want of its program.
                    (ProfileState::NotRunning | ProfileState::Failed, _) if missing => {
                        (ProfileState::NotInstalled, "Not installed: choosing it offers to install it".to_owned())
                    }
                    found => found,
                };
                if let Some(note) = self.agent_notes.by_profile.get(&profile.name) {
                    if let Some(info) = &note.info {
                        description.push_str(" · ");
                        description.push_str(info);
                    }
                    if !note.abilities.is_empty() {
                        description.push_str(" · ");
                        description.push_str(&note.abilities.join(", "));
                    }
                }
                ProfileView { name: profile.name, state, description }
            })
            .collect()
    }
}

/// How a profile stands given the headers of the open sessions that run it, and that in words.
fn state_of(running: &[&SessionView]) -> (ProfileState, String) {
    let urgency = |state: ProfileState| match state {
        ProfileState::SignIn => 4,
        ProfileState::Failed => 3,
        ProfileState::Starting => 2,
        ProfileState::Running => 1,
        ProfileState::NotRunning | ProfileState::NotInstalled => 0,
    };
    let mut worst = (ProfileState::NotRunning, "Not running".to_owned());
    let mut ready = 0;
    for header in running {
        let state = match &header.status {
            _ if header.can_sign_in => (ProfileState::SignIn, "Waiting for you to sign in".to_owned()),
            // The step ("Starting tetherd", "Creating the session") is the header's to tell.
            SessionStatus::Starting { .. } => (ProfileState::Starting, "Starting".to_owned()),
            SessionStatus::Ready => {
                ready += 1;
                (ProfileState::Running, "Running".to_owned())
            }
            SessionStatus::Failed { message } => (ProfileState::Failed, message.clone()),
            // An agent that exited (or was stopped) in a session, and an untrusted workspace,
            // leave nothing running.
            SessionStatus::Exited { .. } | SessionStatus::Untrusted { .. } => continue,
        };
        if urgency(state.0) > urgency(worst.0) {
            worst = state;
        }
    }
    if worst.0 == ProfileState::Running && ready > 1 {
        worst.1 = format!("Running in {ready} sessions");
    }
    worst
}

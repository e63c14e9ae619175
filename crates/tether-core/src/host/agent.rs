//! The live session's agent process: starting it for a new session, stopping it, its exit,
//! starting it again (Restart, a prompt after an exit), and what the person sends it.

use crate::acp::{AcpClient, ClientInfo, IntentError, capitalize};
use crate::export::{ExportHeader, thread_markdown};
use crate::host_api::{AgentProfile, DEMO_PROFILE, HostAction, LogLevel};
use crate::profiles;
use crate::session_log::prompt_title;
use crate::sidecar::{AgentExited, AgentId, AgentLogFailed, AgentRef, SpawnParams, method};
use crate::thread::{Entry, EntryIndex, Thread, TurnState};
use crate::webview::{HostToWebview, PromptAttachment, SessionStatus};

use super::session::Session;
use super::tetherd::{AfterHello, SidecarRequest, SidecarState};
use super::{HostEngine, WaitingPrompt};

impl HostEngine {
    /// Every profile the person can choose: the built-in Demo first (unless a setting redefines
    /// it), then the configured profiles in order (the host puts the built-in real agents
    /// first, then `tether.agents`, an entry of the same name replacing a built-in).
    pub fn profiles(&self) -> Vec<AgentProfile> {
        let mut profiles = Vec::new();
        if let Some(command) = &self.config.demo_agent_command
            && !self.configured_profiles.iter().any(|profile| profile.name == DEMO_PROFILE)
        {
            profiles.push(AgentProfile {
                name: DEMO_PROFILE.to_owned(),
                command: command.clone(),
                args: vec!["--scenario".to_owned(), "demo".to_owned()],
                env: Default::default(),
                cwd: None,
                protocol: Default::default(),
            });
        }
        profiles.extend(self.configured_profiles.iter().cloned());
        profiles
    }

    /// Reads `tether.agents` and merges it with the built-in agents; what cannot be used is
    /// logged and shown, entry by entry.
    pub(super) fn read_agent_settings(&mut self) {
        let (from_settings, problems) = profiles::agents_from_setting(&self.config.agents);
        self.configured_profiles = profiles::merge_profiles(&self.config.builtin_profiles, &from_settings);
        if problems.is_empty() {
            return;
        }
        for problem in &problems {
            self.log(LogLevel::Warn, problem.clone());
        }
        self.show(LogLevel::Warn, format!("Tether: {}", problems.join(" ")));
    }

    pub(super) fn current_profile(&self) -> Option<AgentProfile> {
        let profiles = self.profiles();
        let selected =
            self.selected_profile.as_ref().and_then(|name| profiles.iter().find(|profile| &profile.name == name));
        selected.or(profiles.first()).cloned()
    }

    /// The person's profile named `name`, as the settings have it now.
    pub(super) fn profile_named(&self, name: &str) -> Option<AgentProfile> {
        self.profiles().into_iter().find(|profile| profile.name == name)
    }

    pub(super) fn select_agent(&mut self, name: String, now: u64) {
        if !self.profiles().iter().any(|profile| profile.name == name) {
            self.show(LogLevel::Error, format!("There is no agent named {name:?} in tether.agents."));
            return;
        }
        self.selected_profile = Some(name);
        self.start_session(now);
    }

    /// The header's New session: a session with the agent of the one shown (the agent its picker
    /// shows), which becomes the selected profile; with none shown, the selected profile.
    pub(super) fn new_session_like_shown(&mut self, now: u64) {
        if let Some(slot) = self.session.as_ref().filter(|slot| slot.configured) {
            self.selected_profile = Some(slot.profile.name.clone());
        }
        self.start_session(now);
    }

    /// Starts a new session with the selected profile, shown; the shown one goes on beside it
    /// (or is replaced, when nothing was asked in it: see `make_room_for_session`).
    pub(super) fn start_session(&mut self, now: u64) {
        self.open_new_session(None, now);
    }

    /// Goes on with the shown session's conversation from before its prompt at `entry`, in a new
    /// session beside it, with the same agent (see `AcpClient::restore_conversation`).
    pub(super) fn restore_conversation(&mut self, entry: EntryIndex, now: u64) {
        let restored = match &self.session {
            None => Err(IntentError::NotReady),
            Some(slot) if slot.client.thread().turn() == &TurnState::Running => Err(IntentError::TurnRunning),
            Some(slot) if !slot.configured => Err(IntentError::NotReady),
            Some(slot) => match slot.client.thread().entries().get(entry as usize) {
                Some(Entry::User(message)) => {
                    let earlier = slot.client.thread().entries()[..entry as usize].to_vec();
                    let mut transcript_thread = Thread::default();
                    for entry in &earlier {
                        transcript_thread.push(entry.clone());
                    }
                    let header = ExportHeader {
                        title: "The conversation so far".to_owned(),
                        agent: slot.profile.name.clone(),
                        created: None,
                        exported: None,
                    };
                    Ok(Restored {
                        profile: slot.profile.clone(),
                        earlier,
                        source: slot.client.session_id().map(str::to_owned),
                        changed_since: files_changed_since(&slot.client.thread().entries()[entry as usize..]),
                        withdrawn: prompt_title(&message.text),
                        transcript: thread_markdown(&header, &transcript_thread),
                    })
                }
                _ => Err(IntentError::UnknownCheckpoint),
            },
        };
        match restored {
            Ok(restored) if self.tetherd.is_ready() => self.open_new_session(Some(restored), now),
            Ok(_) => {
                self.show(LogLevel::Info, "Tether is not connected to tetherd yet; try again in a moment.".to_owned())
            }
            Err(error) => self.show(LogLevel::Warn, format!("The conversation was not restored: {error}.")),
        }
    }

    /// Starts a new session, shown: with the selected profile, or going on with a conversation
    /// from a checkpoint (`restored`).
    fn open_new_session(&mut self, restored: Option<Restored>, now: u64) {
        match self.tetherd.state {
            SidecarState::Ready => {}
            // tetherd was lost (or never started): start it; the session follows its hello.
            SidecarState::Disconnected => {
                self.tetherd.after_hello = AfterHello::NewSession;
                return self.start_sidecar();
            }
            // The session starts as soon as tetherd has accepted our hello.
            SidecarState::Starting | SidecarState::Greeting => {
                self.tetherd.after_hello = AfterHello::NewSession;
                return;
            }
        }
        if !self.make_room_for_session(now) {
            return;
        }
        self.interrupted_by = None;
        self.lost_prompt = None;
        let profile = match &restored {
            Some(restored) => Some(restored.profile.clone()),
            None => self.current_profile(),
        };
        let Some(profile) = profile else {
            self.view.header.agent = String::new();
            self.set_status(SessionStatus::Failed {
                message: "No agent is configured: add one to the tether.agents setting".to_owned(),
            });
            return;
        };
        self.generation += 1;
        let generation = self.generation;
        let mut client = self.new_client(generation);
        let restored_from = restored.as_ref().map(|restored| (restored.earlier.len(), restored.withdrawn.clone()));
        if let Some(restored) = restored {
            client.restore_conversation(
                restored.earlier,
                restored.source,
                restored.withdrawn,
                restored.transcript,
                &restored.changed_since,
            );
        }
        self.view.header.agent = profile.name.clone();
        self.view.header.agent_info = None;
        let claude = self.claude_for(&profile);
        let mut session = Session::new(generation, profile, client, true, claude);
        session.restored_from = restored_from;
        self.session = Some(session);
        self.shown = generation;
        self.spawn_agent(now);
        self.refresh_permissions_view();
        self.post_snapshot(now);
    }

    /// A client for session `generation`, starting from the idle policy.
    pub(super) fn new_client(&self, generation: u64) -> AcpClient {
        // Keys of different sessions never collide: a click on a stale card cannot answer a new
        // request (the policy numbers its rules the same way).
        let policy = self.policy.for_session(generation);
        let mut client =
            AcpClient::new(self.client_info(), self.config.workspace_root.clone(), generation << 32, policy);
        client.set_workspace_folders(self.config.workspace_folders.iter().cloned());
        if self.snapshot_store().is_some() {
            client.enable_snapshots();
        }
        client.set_configured_mcp_servers(self.mcp_settings.servers.clone());
        client
    }

    pub(super) fn client_info(&self) -> ClientInfo {
        ClientInfo { name: self.config.client_name.clone(), version: self.config.client_version.clone() }
    }

    /// Ends the session in focus (if any) and stops its agent: requests it left waiting are
    /// settled (and audited as cancelled) before it goes, and its changes can no longer be
    /// decided on.
    pub(super) fn stop_session(&mut self, now: u64) {
        let Some((key, generation)) = self.session.as_ref().map(|slot| (slot.key, slot.generation)) else { return };
        // A prompt waiting for this session's agent goes back; one waiting for whichever session
        // a restarted tetherd brings back (this one is being replaced by its reopening) stays.
        self.give_back_waiting_prompt(|waiting| waiting.generation == Some(generation), "its session was closed");
        if let Some(slot) = &mut self.session {
            slot.client.handle_exited("was stopped: its session was closed", true, "");
            // Its commands' mirrored terminals stay open in VS Code: they say so now, as no
            // frame of this session's will come again.
            slot.client.terminals_stopped("the session was closed", now);
            let writes = slot.client.flush_terminals(now);
            self.actions.extend(writes);
        }
        self.drain_client();
        if let Some(agent_id) = self.end_session() {
            self.sidecar_request(method::AGENT_KILL, &AgentRef { agent_id }, SidecarRequest::Kill, now);
        }
        if self.focus_is_shown() {
            self.history.load = None;
        }
        self.actions.push_back(HostAction::ClearReviews { session: key });
        self.refresh_changes_view();
        self.set_badge(0);
    }

    /// Asks tetherd to start the current slot's agent: in the slot's session folder when it has
    /// one (the log goes on), else in a new one.
    pub(super) fn spawn_agent(&mut self, now: u64) {
        let Some(slot) = &self.session else { return };
        if !self.config.workspace_trusted || !slot.configured {
            // Neither reaches here today (tetherd is not started untrusted, and Restart refuses
            // an unconfigured agent); refusing here as well keeps it so.
            let text = format!(
                "not starting {:?}: the workspace is not trusted or the agent is not configured",
                slot.profile.name
            );
            return self.log(LogLevel::Error, text);
        }
        if slot.claude.is_some() {
            // The translator is the agent: the client's handshake is answered by it, and it
            // asks for a CLI process when it needs one (see `claude_processes`).
            let slot = self.session.as_mut().expect("the slot was found above");
            // Its CLIs' command lines are written before tetherd makes their tokens: Tether's
            // server is named by the variables tetherd puts in each CLI's environment.
            slot.client.set_tether_mcp(Some(crate::sidecar::deferred_mcp_offer()));
            slot.client.start(now);
            self.set_status(SessionStatus::starting("Starting Claude Code"));
            return;
        }
        let spawn = self.spawn_params(slot, Vec::new());
        let generation = slot.generation;
        self.log(
            LogLevel::Info,
            format!("starting agent {:?}: {} {}", spawn.name, spawn.command, spawn.args.join(" ")),
        );
        self.sidecar_request(method::AGENT_SPAWN, &spawn, SidecarRequest::Spawn { generation }, now);
        self.set_status(SessionStatus::starting("Starting the agent"));
    }

    /// How tetherd starts `slot`'s agent: its profile's command and arguments (then `more_args`),
    /// in the slot's session folder when it has one (the log goes on), else in a new one.
    pub(super) fn spawn_params(&self, slot: &Session, more_args: Vec<String>) -> SpawnParams {
        let profile = &slot.profile;
        // The person's keys go over the profile's variables; they are in no log and no setting.
        let mut env = profile.env.clone();
        env.extend(self.sign_in.secrets.of(&profile.name).cloned().unwrap_or_default());
        SpawnParams {
            name: profile.name.clone(),
            command: profile.command.clone(),
            args: profile.args.iter().cloned().chain(more_args).collect(),
            env,
            cwd: profile.cwd.clone().unwrap_or_else(|| self.config.workspace_root.clone()),
            tether_dir: self.config.tether_dir.clone(),
            session_dir: slot.session_dir.clone().filter(|_| self.config.tether_dir.is_some()),
            workspace_folders: self.config.workspace_folders.clone(),
        }
    }

    /// tetherd answered the kill of a stopped agent (or did not in time): Restart may go ahead.
    pub(super) fn on_agent_stopped(&mut self, generation: u64, result: Result<(), String>) {
        if let Err(error) = result {
            // An agent tetherd no longer knows has exited already; one it could not be heard
            // about is left to tetherd, which kills its agents when it exits.
            self.log(LogLevel::Warn, format!("stopping the agent: {error}"));
        }
        if let Some(slot) = self.session.as_mut().filter(|slot| slot.generation == generation) {
            slot.stopping = false;
            self.set_status(SessionStatus::Exited { message: "The agent was stopped".to_owned() });
        }
    }

    /// Restart (the button, or the command): start the current session's agent again.
    pub(super) fn restart(&mut self, now: u64) {
        match self.tetherd.state {
            SidecarState::Ready => {}
            // tetherd is gone and took the agents with it: reopen the open sessions from their
            // logs once a new tetherd is up, the shown one last (so that it is shown).
            SidecarState::Disconnected => {
                self.tetherd.after_hello = AfterHello::Reopen { dirs: self.open_session_dirs() };
                return self.start_sidecar();
            }
            SidecarState::Starting | SidecarState::Greeting => return,
        }
        match &self.session {
            Some(slot) if !slot.configured => {
                let text =
                    format!("{:?} is not configured: choose an agent to start a new session.", slot.profile.name);
                self.show(LogLevel::Info, format!("Tether: {text}"));
            }
            Some(slot) if slot.stopping => {
                self.show(LogLevel::Info, "Tether is still stopping the agent; restart it in a moment.".to_owned())
            }
            Some(slot) if slot.client.is_closed() => self.restart_agent(now),
            Some(_) => self.show(LogLevel::Info, "The agent is running; there is nothing to restart.".to_owned()),
            None => self.start_session(now),
        }
    }

    /// Starts a new agent for the current slot's thread, resuming the agent's session. The agent
    /// is started as the settings have it now: a person whose agent could not be started mends
    /// its command, then restarts it.
    pub(super) fn restart_agent(&mut self, now: u64) {
        self.generation += 1;
        let generation = self.generation;
        let name = self.session.as_ref().map(|slot| slot.profile.name.clone());
        let profile = name.and_then(|name| self.profile_named(&name));
        let Some(slot) = &mut self.session else { return };
        // Another protocol would need another translator (Claude CLI or not): that is a new
        // session, which picking the agent starts.
        if let Some(profile) = profile.filter(|profile| profile.protocol == slot.profile.protocol) {
            slot.profile = profile;
        }
        slot.prepare_new_agent(generation, now);
        self.drain_client();
        self.spawn_agent(now);
    }

    pub(super) fn prompt(&mut self, text: &str, attachments: &[PromptAttachment], now: u64) {
        if text.trim().is_empty() && attachments.is_empty() {
            return;
        }
        if let Some(slot) = &self.session
            && slot.configured
            && slot.client.is_closed()
            && !slot.stopping
            && self.history.load.is_none()
        {
            // The agent exited (or was stopped, or tetherd was lost with it): the person going
            // on is reason enough to start it again, resuming its session; the prompt goes once
            // that session is ready.
            let session_dir = slot.session_dir.clone();
            if self.history.reopening() {
                // A new tetherd is being asked for its sessions, this one among them: the
                // reopening starts its agent, and a second agent for the same session would be
                // refused ("its agent is still running"). The prompt waits for the reopened one.
                self.log(LogLevel::Info, "the session is being reopened: the prompt goes once it is ready".to_owned());
                self.hold_prompt(None, session_dir, text, attachments);
                return;
            }
            self.log(LogLevel::Info, "the agent is not running: starting it again for the prompt".to_owned());
            let generation = match self.tetherd.state {
                SidecarState::Ready => {
                    self.restart_agent(now);
                    Some(self.generation)
                }
                // Without tetherd the session is reopened from its log once one runs (it is
                // being started already unless it is `Disconnected`): whichever session that
                // brings is the one the prompt goes to.
                SidecarState::Disconnected => {
                    self.restart(now);
                    None
                }
                SidecarState::Starting | SidecarState::Greeting => None,
            };
            self.hold_prompt(generation, session_dir, text, attachments);
            return;
        }
        if let Some(slot) = &self.session
            && slot.configured
            && slot.client.is_starting()
            && !slot.stopping
            && matches!(self.view.header.status, SessionStatus::Starting { .. })
        {
            // The person picked an agent (or opened a session) and wrote at once: the chat may
            // not have shown "starting" yet. The prompt is theirs to send, not to retype.
            let generation = Some(slot.generation);
            if self.hold_prompt(generation, None, text, attachments) {
                self.log(LogLevel::Info, "the session is still starting: the prompt goes once it is ready".to_owned());
            }
            return;
        }
        let result = match &mut self.session {
            Some(slot) => slot.client.prompt(text, attachments, now),
            None => Err(IntentError::NotReady),
        };
        if let Err(error) = result {
            self.return_prompt(text.to_owned(), &error.to_string());
        }
    }

    /// Keeps the prompt until the session of `generation` (without one: the session in
    /// `session_dir` that tetherd's restart reopens) is ready, and says whether it did: one prompt
    /// waits at a time, so a second goes back to the person.
    fn hold_prompt(
        &mut self,
        generation: Option<u64>,
        session_dir: Option<String>,
        text: &str,
        attachments: &[PromptAttachment],
    ) -> bool {
        if self.waiting_prompt.is_some() {
            self.return_prompt(text.to_owned(), "another prompt is already waiting for the agent");
            return false;
        }
        let waiting =
            WaitingPrompt { generation, session_dir, text: text.to_owned(), attachments: attachments.to_vec() };
        self.waiting_prompt = Some(waiting);
        true
    }

    /// A prompt that could not go (`why`) is put back in the chat's composer, so that nothing the
    /// person wrote is lost, and they are told why (in the composer and, as the chat may be
    /// hidden, in a notification).
    pub(super) fn return_prompt(&mut self, text: String, why: &str) {
        self.show(
            LogLevel::Warn,
            format!("The prompt {:?} was not sent: {why}. It is back in the chat's text box.", prompt_title(&text)),
        );
        self.post_now(HostToWebview::PromptReturned { text, reason: capitalize(why) });
    }

    pub(super) fn cancel(&mut self, now: u64) {
        if let Some(slot) = &mut self.session {
            slot.client.cancel(now);
            // Until the agent ends the turn, it may be one that ignores cancels: Stop agent is
            // offered at once, as there is no telling how long a well-behaved agent takes.
            slot.cancel_sent = slot.client.thread().turn() == &TurnState::Running;
        }
    }

    /// Stop (the header's button, or the command): kill the agent process, because it hangs
    /// while starting or does not end a cancelled turn. What it left unfinished is settled now,
    /// the thread says why it stopped, and Restart brings it back once tetherd says it is gone.
    pub(super) fn stop_agent(&mut self, now: u64) {
        let starting = matches!(self.view.header.status, SessionStatus::Starting { .. });
        let Some(slot) = self.session.as_mut().filter(|slot| !slot.client.is_closed()) else {
            return self.show(LogLevel::Info, "No agent is running; there is nothing to stop.".to_owned());
        };
        let notice = if slot.cancel_sent {
            "The agent did not stop when asked; Tether stopped it."
        } else if starting {
            "The agent did not finish starting; Tether stopped it."
        } else {
            "Tether stopped the agent."
        };
        slot.client.handle_stopped(notice);
        slot.cancel_sent = false;
        // Whatever the old agent still says is dropped from here on (its exit included), and a
        // spawn still on its way is killed when it is answered (its generation is not current).
        // A prompt waiting for it goes back first, while its generation is the one it waits for.
        self.drop_waiting_prompt("the agent was stopped");
        self.generation += 1;
        let slot = self.session.as_mut().expect("the slot was found above");
        slot.generation = self.generation;
        let running = slot.agent_id.take();
        slot.stopping = running.is_some() && self.tetherd.is_ready();
        let generation = slot.generation;
        self.log(LogLevel::Info, format!("stopping the agent on the person's word: {notice}"));
        self.drain_client();
        match running {
            Some(agent_id) if self.tetherd.is_ready() => {
                self.sidecar_request(
                    method::AGENT_KILL,
                    &AgentRef { agent_id },
                    SidecarRequest::Stop { generation },
                    now,
                );
                self.set_status(SessionStatus::starting("Stopping the agent"));
            }
            _ => self.set_status(SessionStatus::Exited { message: "The agent was stopped".to_owned() }),
        }
    }

    /// tetherd could not write the session's log and is ending the agent: the turn ends, what
    /// waits for the agent is settled, and the person is told which log and why.
    pub(super) fn on_agent_log_failed(&mut self, failed: AgentLogFailed) {
        let AgentLogFailed { agent_id, path, error } = failed;
        let text = format!(
            "Tether cannot write this session's log {path} ({error}), so it stopped the agent: the session does not go on unrecorded. Make room on the disk (or fix the file), then Restart or send a prompt to go on."
        );
        self.log(LogLevel::Error, text.clone());
        let Some(slot) = self.agent_slot(agent_id) else { return };
        slot.log_failed = true;
        slot.client.handle_log_failed(&text);
        self.drop_waiting_prompt("the session's log cannot be written");
        self.show(LogLevel::Error, text);
        self.set_status(SessionStatus::Exited {
            message: "The agent was stopped: the session's log cannot be written".to_owned(),
        });
    }

    pub(super) fn on_agent_exited(&mut self, exited: AgentExited) {
        let description = match (exited.code, exited.signal) {
            (_, Some(signal)) => format!("was ended by signal {signal}"),
            (Some(code), None) => format!("exited with code {code}"),
            (None, None) => "exited".to_owned(),
        };
        // A Claude CLI's exit is its translator's to read: the session goes on.
        if self.on_cli_exited(&exited, &description) {
            return;
        }
        let Some(slot) = self.live_slot(exited.agent_id, exited.seq) else {
            self.log(LogLevel::Info, format!("a previous agent {description}"));
            return;
        };
        if slot.log_failed {
            return self.log(LogLevel::Info, format!("the agent tetherd stopped for its log {description}"));
        }
        let tail = slot.stderr_tail.iter().cloned().collect::<Vec<_>>().join("\n");
        slot.client.handle_exited(&description, exited.killed, &tail);
        let name = slot.profile.name.clone();
        self.drop_waiting_prompt(&format!("the agent {description}"));
        self.log(LogLevel::Info, format!("agent {name:?} {description}"));
        if !exited.killed {
            self.show(
                LogLevel::Error,
                format!(
                    "Tether: the agent {name:?} {description}. Restart it, or send a prompt, to go on with the session."
                ),
            );
        }
        self.set_status(SessionStatus::Exited { message: format!("The agent {description}") });
    }

    /// The slot of the current session if `agent_id` is its agent and the event numbered `seq`
    /// in the session's log is not in the thread already (it was replayed from the log after a
    /// window reload); other events are dropped here.
    pub(super) fn live_slot(&mut self, agent_id: AgentId, seq: Option<u64>) -> Option<&mut Session> {
        self.agent_slot(agent_id).filter(|slot| slot.is_new_event(seq))
    }

    /// The slot of the current session if `agent_id` is its agent; messages from an agent that
    /// was replaced are dropped here.
    pub(super) fn agent_slot(&mut self, agent_id: AgentId) -> Option<&mut Session> {
        self.session.as_mut().filter(|slot| slot.is_served_by(agent_id))
    }

    /// Ends the current session's slot, keeping its mode and workspace rules for the next one.
    /// Returns the agent to stop, if it had started.
    pub(super) fn end_session(&mut self) -> Option<AgentId> {
        let slot = self.session.take()?;
        self.policy.keep_from(slot.client.policy());
        self.refresh_permissions_view();
        self.refresh_controls_view();
        slot.agent_id
    }

    /// The agent started again for a prompt has its session: the prompt goes now.
    pub(super) fn send_waiting_prompt(&mut self) {
        let Some(slot) = &mut self.session else { return };
        let Some(waiting) = self.waiting_prompt.take_if(|waiting| waiting.is_for(slot)) else {
            return;
        };
        if let Err(error) = slot.client.prompt(&waiting.text, &waiting.attachments, self.now) {
            self.return_prompt(waiting.text, &error.to_string());
        }
    }

    /// The agent of the session in focus did not get as far as a session (`why`): a prompt
    /// waiting for it goes back to the person, to send again. A prompt waiting for another tab's
    /// agent stays: that agent may be starting still.
    pub(super) fn drop_waiting_prompt(&mut self, why: &str) {
        let gives_back = self.waiting_prompt.as_ref().is_some_and(|waiting| match &self.session {
            Some(slot) => waiting.is_for(slot),
            None => waiting.generation.is_none(),
        });
        self.give_back_waiting_prompt(|_| gives_back, why);
    }

    /// Gives the waiting prompt back (`why`) if `gives_back` says so of it.
    pub(super) fn give_back_waiting_prompt(&mut self, gives_back: impl FnOnce(&WaitingPrompt) -> bool, why: &str) {
        if let Some(waiting) = self.waiting_prompt.take_if(|waiting| gives_back(waiting)) {
            self.return_prompt(waiting.text, why);
        }
    }
}

/// A conversation to go on with from a checkpoint, in a new session.
struct Restored {
    profile: AgentProfile,
    /// The thread's entries before the prompt gone back to.
    earlier: Vec<Entry>,
    /// The agent's session they came from.
    source: Option<String>,
    /// The files changed from the prompt gone back to on, which going back leaves as they are.
    changed_since: Vec<String>,
    /// The prompt gone back to, as a title.
    withdrawn: String,
    /// The earlier turns as a transcript.
    transcript: String,
}

/// The files `entries` changed (their labels, once each, in order): every change card that left
/// something in its file, a hunk kept or not yet decided, whoever made it.
fn files_changed_since(entries: &[Entry]) -> Vec<String> {
    use crate::review::HunkState;
    let mut labels: Vec<String> = Vec::new();
    for entry in entries {
        let Entry::FileChange(change) = entry else { continue };
        let in_file = |state: HunkState| state != HunkState::Rejected;
        let left = change.applied
            && if change.hunks.is_empty() {
                in_file(change.whole)
            } else {
                change.hunks.iter().any(|hunk| in_file(hunk.state))
            };
        if left && !labels.contains(&change.label) {
            labels.push(change.label.clone());
        }
    }
    labels
}

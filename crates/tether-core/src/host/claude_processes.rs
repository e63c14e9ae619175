//! The Claude CLI processes of a Claude CLI session: started when its translator asks (as the
//! session opens, and for a turn when none runs), their input closed when a turn is over
//! (oneshot) or the CLI has been idle (persistent), their lines and exits handed to the
//! translator. The session's "agent" is the translator, which stays while CLIs come and go: an
//! exit is the translator's business (a turn it ends, or nothing), never the session's end.

use std::collections::BTreeMap;

use crate::claude_cli::{ClaudeCli, ProcessAction};
use crate::host_api::{AgentProfile, AgentProtocol, LogLevel};
use crate::jsonrpc;
use crate::sidecar::{AgentExited, AgentRef, SpawnResult, method};

use super::HostEngine;
use super::tetherd::SidecarRequest;

impl HostEngine {
    /// The translator for a session of `profile`, if it is a Claude CLI profile.
    pub(super) fn claude_for(&self, profile: &AgentProfile) -> Option<ClaudeCli> {
        (profile.protocol == AgentProtocol::ClaudeCli).then(|| {
            let mut claude = ClaudeCli::new(self.config.claude_cli.process_mode());
            claude.set_workspace_folders(self.config.workspace_folders.iter().cloned());
            claude
        })
    }

    /// Carries out what the current session's translator asks of its CLI processes.
    pub(super) fn on_cli_process_action(&mut self, action: ProcessAction) {
        let now = self.now;
        match action {
            ProcessAction::Start { process, args, env } => self.spawn_cli(process, args, env, now),
            ProcessAction::CloseInput => {
                let Some(agent_id) = self.session.as_ref().and_then(|slot| slot.agent_id) else { return };
                let line = jsonrpc::encode_notification(method::AGENT_CLOSE_INPUT, &AgentRef { agent_id });
                self.sidecar_write(line);
            }
            ProcessAction::Kill { process } => {
                let Some(slot) = &self.session else { return };
                // Gone already when its exit crossed the translator's deadline: nothing to end.
                let Some((&agent_id, _)) = slot.cli_processes.iter().find(|(_, number)| **number == process) else {
                    return;
                };
                self.sidecar_request(method::AGENT_KILL, &AgentRef { agent_id }, SidecarRequest::Kill, now);
            }
        }
    }

    /// Asks tetherd to start the CLI numbered `process`: the profile's command and arguments,
    /// then the translator's, in the session's folder (the log goes on across CLIs).
    fn spawn_cli(&mut self, process: u64, args: Vec<String>, env: BTreeMap<String, String>, now: u64) {
        let trusted = self.config.workspace_trusted;
        let Some(slot) = &mut self.session else { return };
        if !trusted || !slot.configured {
            // Nothing is run for an untrusted workspace or an agent the person no longer has
            // (the session cannot reach here then; refusing here as well keeps it so).
            if let Some(claude) = &mut slot.claude {
                claude.handle_process_start_failed("the workspace is not trusted, or the agent is not configured");
            }
            return;
        }
        let slot = self.session.as_ref().expect("the slot was found above");
        let mut spawn = self.spawn_params(slot, args);
        // The values `--mcp-config` names (secrets among them), never on the command line.
        spawn.env.extend(env);
        let generation = slot.generation;
        self.log(LogLevel::Info, format!("starting Claude Code: {} {}", spawn.command, spawn.args.join(" ")));
        self.sidecar_request(method::AGENT_SPAWN, &spawn, SidecarRequest::SpawnCli { generation, process }, now);
    }

    /// tetherd answered the spawn of the CLI numbered `process` for session `generation`.
    pub(super) fn on_cli_spawned(&mut self, generation: u64, process: u64, result: Result<SpawnResult, String>) {
        let now = self.now;
        let Some(slot) = self.session.as_mut().filter(|slot| slot.generation == generation && slot.claude.is_some())
        else {
            // Another session was started meanwhile: this CLI is not wanted.
            if let Ok(spawned) = result {
                let agent_ref = AgentRef { agent_id: spawned.agent_id };
                self.sidecar_request(method::AGENT_KILL, &agent_ref, SidecarRequest::Kill, now);
            }
            return;
        };
        let claude = slot.claude.as_mut().expect("a Claude CLI session");
        match result {
            Ok(spawned) => {
                slot.agent_id = Some(spawned.agent_id);
                slot.cli_processes.insert(spawned.agent_id, process);
                slot.stderr_tail.clear();
                if slot.session_dir.is_none() {
                    slot.session_dir = spawned.session_dir;
                }
                claude.handle_process_started(now);
                let unsent = std::mem::take(&mut slot.unsent_audit);
                for record in unsent {
                    self.send_audit(spawned.agent_id, &record);
                }
                self.log(LogLevel::Info, format!("Claude Code started (pid {})", spawned.pid));
            }
            Err(error) => {
                claude.handle_process_start_failed(&error);
                self.log(LogLevel::Error, format!("Claude Code was not started: {error}"));
            }
        }
        self.drain_client();
    }

    /// A CLI of the current session exited: the translator decides what it means. Returns
    /// false when `agent_id` is not one of its CLIs.
    pub(super) fn on_cli_exited(&mut self, exited: &AgentExited, description: &str) -> bool {
        let Some(slot) = self.session.as_mut().filter(|slot| slot.claude.is_some()) else { return false };
        let Some(process) = slot.cli_processes.remove(&exited.agent_id) else { return false };
        if !slot.is_new_event(exited.seq) {
            return true;
        }
        let current = slot.agent_id == Some(exited.agent_id);
        let tail =
            if current { slot.stderr_tail.iter().cloned().collect::<Vec<_>>().join("\n") } else { String::new() };
        if current {
            slot.agent_id = None;
        }
        let claude = slot.claude.as_mut().expect("a Claude CLI session");
        claude.handle_process_exited(Some(process), description, &tail);
        self.log(LogLevel::Info, format!("Claude Code (process {process}) {description}"));
        true
    }
}

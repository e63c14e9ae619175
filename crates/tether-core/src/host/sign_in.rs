//! Signing in to an agent: asking the person how, the keys they gave (kept in memory only),
//! and starting the agent again with them.

use crate::acp::{SecretEnv, SignIn, methods_for_profile};
use crate::host_api::{AuthMethodKind, AuthMethodView, HostAction, LogLevel};
use crate::sidecar::{AgentRef, method};
use crate::webview::SessionStatus;

use super::HostEngine;
use super::tetherd::SidecarRequest;

/// What the window keeps for signing in, across sessions.
#[derive(Debug, Default)]
pub(super) struct SignInState {
    /// The variables the person gave for agents (SecretStorage, through the host), added to the
    /// environment of their agents. Only in memory.
    pub(super) secrets: SecretEnv,
    /// The session generation whose agent was already asked to sign in with the kept keys: an
    /// agent that refuses them is not asked again, the person is.
    tried_kept_keys_on: Option<u64>,
}

impl HostEngine {
    /// The agent needs the person to sign in. Keys given earlier for its profile are in its
    /// environment already: the agent is asked to use them first (once per agent process), and
    /// the person is asked only when it refuses or there are none.
    /// "Sign in" after the person dismissed the choice: the same choice again.
    pub(super) fn sign_in_again(&mut self) {
        match &self.session {
            Some(slot) if slot.client.awaits_sign_in_choice() => {
                let methods = slot.client.auth_methods().to_vec();
                self.ask_authentication(methods);
            }
            _ => self.show(LogLevel::Info, "The agent is not waiting for a sign-in.".to_owned()),
        }
    }

    pub(super) fn ask_authentication(&mut self, methods: Vec<AuthMethodView>) {
        let Some(slot) = &mut self.session else { return };
        if self.sign_in.tried_kept_keys_on != Some(slot.generation)
            && let Some(kept) = self.sign_in.secrets.of(&slot.profile.name)
            && let Some(method) = methods.iter().find(|method| match &method.kind {
                AuthMethodKind::EnvVar { vars } => {
                    vars.iter().any(|var| kept.contains_key(&var.name))
                        && vars.iter().all(|var| var.optional || kept.contains_key(&var.name))
                }
                _ => false,
            })
        {
            self.sign_in.tried_kept_keys_on = Some(slot.generation);
            if let Ok(SignIn::Sent) = slot.client.sign_in(&method.id, false) {
                let text = format!("signing in to {:?} with the kept keys ({})", slot.profile.name, method.name);
                self.log(LogLevel::Info, text);
                return self.set_status(SessionStatus::starting("Signing in"));
            }
        }
        let Some(slot) = &self.session else { return };
        let action = HostAction::AskAuthentication {
            agent: slot.profile.name.clone(),
            methods: methods_for_profile(&methods, &slot.profile),
        };
        self.actions.push_back(action);
        self.set_status(SessionStatus::starting("Sign in needed"));
    }

    /// The person chose how to sign in, giving `env` for an `envVar` method: kept for the
    /// profile (in memory) and the agent started again with it, or `authenticate` sent to the
    /// running agent.
    pub(super) fn authenticate(&mut self, method_id: &str, env: std::collections::BTreeMap<String, String>, now: u64) {
        let Some(slot) = &mut self.session else {
            return self.show(LogLevel::Info, "There is no agent session to sign in to.".to_owned());
        };
        let with_env = !env.is_empty();
        if with_env {
            self.sign_in.secrets.add(&slot.profile.name, env);
        }
        match slot.client.sign_in(method_id, with_env) {
            Ok(SignIn::Sent) => self.set_status(SessionStatus::starting("Signing in")),
            Ok(SignIn::RestartAgent) => self.restart_to_sign_in(now),
            Err(error) => self.show(LogLevel::Warn, format!("Tether: {error}.")),
        }
    }

    /// Stops the current agent and, once tetherd says it is gone (its session log is free
    /// again), starts it anew in the same session (see `KillToSignIn`).
    pub(super) fn restart_to_sign_in(&mut self, now: u64) {
        let Some(slot) = &mut self.session else { return };
        slot.client.handle_exited("was stopped to sign in", true, "");
        let generation = slot.generation;
        let running = slot.agent_id.take();
        self.drain_client();
        self.set_status(SessionStatus::starting("Starting the agent again to sign in"));
        match running {
            Some(agent_id) if self.tetherd.is_ready() => self.sidecar_request(
                method::AGENT_KILL,
                &AgentRef { agent_id },
                SidecarRequest::KillToSignIn { generation },
                now,
            ),
            _ => self.restart_agent(now),
        }
    }
}

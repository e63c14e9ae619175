//! The one owner of the person's permission policy in the window: the mode and the rules, while
//! a session runs (in its client) and between sessions, and the workspace rules written back
//! to the settings.
//!
//! Workspace rules come from the settings and are written back through the host
//! (`SaveWorkspaceRules`); a rule in the settings that cannot be used is reported and kept as
//! written, never dropped. Every decision is sent to tetherd for the session's audit log.

use crate::acp::IntentError;
use crate::host_api::{HostAction, LogLevel, PermissionSettings};
use crate::permissions::{Mode, PermissionPolicy, RuleId, RuleOrigin, RuleScope, RuleSpec};
use crate::webview::{AgentModeView, PermissionsView};

use super::HostEngine;

/// The policy between sessions, and what the settings hold that it cannot use.
///
/// While a session runs its client holds the policy in force (it decides the agent's requests
/// with it); this module is still the only one in the window that changes it, whichever of the
/// two holds it, so the mode and the rules have one owner.
#[derive(Debug)]
pub(super) struct PolicyKeeper {
    /// The policy while no agent session exists; a session starts from it and leaves its mode
    /// and workspace rules to it when it ends.
    idle: PermissionPolicy,
    /// Rules in the settings the engine cannot use: shown with why, and saved back unchanged.
    unusable_rules: Vec<(serde_json::Value, String)>,
}

impl PolicyKeeper {
    pub(super) fn new(default_mode: Mode) -> Self {
        PolicyKeeper { idle: PermissionPolicy::new(default_mode, 1), unusable_rules: Vec::new() }
    }

    /// The policy a session numbered `generation` starts with: the mode and workspace rules of
    /// the window. Keys of different sessions never collide, so a click on a stale card cannot
    /// answer a new request, and rule ids never repeat across sessions.
    pub(super) fn for_session(&self, generation: u64) -> PermissionPolicy {
        self.idle.for_new_session(self.idle.mode(), generation << 32)
    }

    /// A session ended with `policy`: its mode and workspace rules stay for the next one.
    pub(super) fn keep_from(&mut self, policy: &PermissionPolicy) {
        self.idle = policy.for_new_session(policy.mode(), 1);
    }
}

impl HostEngine {
    /// The policy in force: the session's, or the idle one between sessions.
    pub(super) fn policy(&self) -> &PermissionPolicy {
        self.session.as_ref().map_or(&self.policy.idle, |slot| slot.client.policy())
    }

    pub(super) fn audit_log(&self) -> Option<String> {
        self.session.as_ref()?.audit_log()
    }

    /// Reads `tether.permissions`: usable rules go to the policy, the others are reported.
    pub(super) fn configure_permissions(&mut self, settings: &PermissionSettings) {
        let mut specs = Vec::new();
        let mut unusable = Vec::new();
        for (index, value) in settings.rules.iter().enumerate() {
            match RuleSpec::from_setting(value) {
                Ok(spec) => specs.push(spec),
                Err(error) => {
                    unusable.push((value.clone(), format!("Rule {} in tether.permissions.rules: {error}", index + 1)))
                }
            }
        }
        if !unusable.is_empty() && unusable != self.policy.unusable_rules {
            let problems: Vec<&str> = unusable.iter().map(|(_, problem)| problem.as_str()).collect();
            self.show(LogLevel::Warn, format!("Tether skipped rules it cannot use: {}", problems.join("; ")));
        }
        self.policy.unusable_rules = unusable;
        // The workspace's rules are every open session's.
        self.for_each_session(|engine| {
            if let Some(slot) = &mut engine.session {
                slot.client.set_workspace_rules(specs.clone());
            }
        });
        self.policy.idle.set_workspace_rules(specs);
        self.refresh_permissions_view();
    }

    /// Asks the host to write the workspace rules: the policy's, then the unusable ones as they
    /// were written, so a typo in the settings is never lost by a click in the panel.
    pub(super) fn save_workspace_rules(&mut self) {
        let mut rules: Vec<serde_json::Value> = Vec::new();
        for spec in self.policy().workspace_specs() {
            match crate::json_value::to_value(spec) {
                Ok(value) => rules.push(value),
                Err(error) => self.log(LogLevel::Error, format!("could not encode a rule: {error}")),
            }
        }
        rules.extend(self.policy.unusable_rules.iter().map(|(value, _)| value.clone()));
        self.config.permissions.rules = rules.clone();
        self.actions.push_back(HostAction::SaveWorkspaceRules { rules });
    }

    pub(super) fn refresh_permissions_view(&mut self) {
        let (agent_modes, agent_mode_id) =
            self.session.as_ref().map(|slot| slot.client.agent_mode_choices()).unwrap_or_default();
        let policy = self.policy();
        let view = PermissionsView {
            mode: policy.mode(),
            agent_mode: self.session.as_ref().and_then(|slot| slot.client.agent_mode()),
            agent_modes: agent_modes.into_iter().map(|(id, name)| AgentModeView { id, name }).collect(),
            agent_mode_id,
            rules: policy.rules(),
            rule_problems: self.policy.unusable_rules.iter().map(|(_, problem)| problem.clone()).collect(),
            audit_log: self.audit_log(),
        };
        if self.view.header.permissions != view {
            self.view.header.permissions = view;
            self.view.header_changed();
        }
    }

    pub(super) fn set_mode(&mut self, mode: Mode, now: u64) {
        match &mut self.session {
            Some(slot) => slot.client.set_mode(mode, now),
            None => {
                self.policy.idle.set_mode(mode);
                self.refresh_permissions_view();
            }
        }
    }

    pub(super) fn add_rule(&mut self, spec: RuleSpec, scope: RuleScope) {
        let result = match &mut self.session {
            Some(slot) => slot.client.add_rule(spec, scope).map(|_| ()),
            None => self.policy.idle.add_rule(spec, scope, RuleOrigin::Added).map(|_| ()).map_err(IntentError::from),
        };
        match result {
            Ok(()) if scope == RuleScope::Workspace => self.save_workspace_rules(),
            Ok(()) => {}
            Err(error) => self.show(LogLevel::Warn, format!("The rule was not added: {error}.")),
        }
    }

    pub(super) fn remove_rule(&mut self, id: RuleId) {
        let scope = self.policy().rules().into_iter().find(|rule| rule.id == id).map(|rule| rule.scope);
        let result = match &mut self.session {
            Some(slot) => slot.client.remove_rule(id).map(|_| ()),
            None => self.policy.idle.remove_rule(id).map(|_| ()).ok_or(IntentError::UnknownRule),
        };
        match result {
            Ok(()) if scope == Some(RuleScope::Workspace) => self.save_workspace_rules(),
            Ok(()) => {}
            Err(error) => self.show(LogLevel::Warn, format!("The rule was not removed: {error}.")),
        }
    }

    pub(super) fn clear_rules(&mut self, scope: RuleScope) {
        match &mut self.session {
            Some(slot) => slot.client.clear_rules(scope),
            None => {
                self.policy.idle.clear(scope);
            }
        }
        if scope == RuleScope::Workspace {
            self.save_workspace_rules();
        }
    }

    pub(super) fn keep_rule_for_workspace(&mut self, id: RuleId) {
        let result = match &mut self.session {
            Some(slot) => slot.client.keep_rule_for_workspace(id).map(|_| ()),
            None => self.policy.idle.keep_for_workspace(id).map(|_| ()).ok_or(IntentError::UnknownRule),
        };
        match result {
            Ok(()) => self.save_workspace_rules(),
            Err(error) => self.show(LogLevel::Warn, format!("The rule was not saved: {error}.")),
        }
    }
}

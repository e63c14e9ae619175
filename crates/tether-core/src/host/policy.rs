//! The one owner of the person's permission policy in the window: the mode and the rules, while
//! a session runs (in its client) and between sessions, and the workspace rules written back
//! to the settings.

use crate::host_api::{HostAction, LogLevel, PermissionSettings};
use crate::permissions::{PermissionPolicy, RuleSpec};
use crate::webview::{AgentModeView, PermissionsView};

use super::HostEngine;

impl HostEngine {
    /// The policy in force: the session's, or the idle one between sessions.
    pub(super) fn policy(&self) -> &PermissionPolicy {
        self.agent.as_ref().map_or(&self.idle_policy, |slot| slot.client.policy())
    }

    pub(super) fn audit_log(&self) -> Option<String> {
        self.agent.as_ref()?.session_dir.as_ref().map(|dir| format!("{dir}/audit.jsonl"))
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
        if !unusable.is_empty() && unusable != self.unusable_rules {
            let problems: Vec<&str> = unusable.iter().map(|(_, problem)| problem.as_str()).collect();
            self.show(LogLevel::Warn, format!("Tether skipped rules it cannot use: {}", problems.join("; ")));
        }
        self.unusable_rules = unusable;
        if let Some(slot) = &mut self.agent {
            slot.client.set_workspace_rules(specs.clone());
        }
        self.idle_policy.set_workspace_rules(specs);
        self.refresh_permissions_view();
    }

    /// Asks the host to write the workspace rules: the policy's, then the unusable ones as they
    /// were written, so a typo in the settings is never lost by a click in the panel.
    pub(super) fn save_workspace_rules(&mut self) {
        let mut rules: Vec<serde_json::Value> = Vec::new();
        for spec in self.policy().workspace_specs() {
            match serde_json::to_value(spec) {
                Ok(value) => rules.push(value),
                Err(error) => self.log(LogLevel::Error, format!("could not encode a rule: {error}")),
            }
        }
        rules.extend(self.unusable_rules.iter().map(|(value, _)| value.clone()));
        self.config.permissions.rules = rules.clone();
        self.actions.push_back(HostAction::SaveWorkspaceRules { rules });
    }

    pub(super) fn refresh_permissions_view(&mut self) {
        let (agent_modes, agent_mode_id) =
            self.agent.as_ref().map(|slot| slot.client.agent_mode_choices()).unwrap_or_default();
        let policy = self.policy();
        let view = PermissionsView {
            mode: policy.mode(),
            agent_mode: self.agent.as_ref().and_then(|slot| slot.client.agent_mode()),
            agent_modes: agent_modes.into_iter().map(|(id, name)| AgentModeView { id, name }).collect(),
            agent_mode_id,
            rules: policy.rules(),
            rule_problems: self.unusable_rules.iter().map(|(_, problem)| problem.clone()).collect(),
            audit_log: self.audit_log(),
        };
        if self.session.permissions != view {
            self.session.permissions = view;
            self.webview.session_changed = true;
        }
    }
}

//! The permission mode and the agent's own modes: the person's mode sent to an agent that has a
//! matching one (`session/set_mode`, or a config option of category `mode`), the agent's mode
//! followed when it changes it itself, and the person's rules.

use agent_client_protocol_schema::v1 as acp;

use crate::permissions::{
    AuditEvent, ChangedBy, Mode, PermissionPolicy, RuleId, RuleOrigin, RuleScope, RuleSpec, RuleView,
};
use crate::thread::{Entry, NoticeLevel, NoticeView};

use super::{AcpClient, AcpEvent, CONTROL_TIMEOUT_MS, IntentError, Phase, RequestKind};

/// The agent's own modes, when it has any, and the switches of them in flight.
#[derive(Debug, Default)]
pub(super) struct ModeState {
    pub(super) agent: Option<AgentModes>,
    /// Mode switches sent to the agent and not yet answered. While any is in flight, a mode the
    /// agent reports is not followed: it may be the answer to an older switch.
    pub(super) switches_in_flight: u32,
}

impl AcpClient {
    pub fn policy(&self) -> &PermissionPolicy {
        &self.policy
    }

    /// The name of the agent's own current mode, when it has modes.
    pub fn agent_mode(&self) -> Option<String> {
        self.modes.agent.as_ref().map(AgentModes::current_name)
    }

    /// The agent's own modes (id, name), and the id of the current one, when it has modes.
    pub fn agent_mode_choices(&self) -> (Vec<(String, String)>, Option<String>) {
        match &self.modes.agent {
            Some(modes) => (modes.available().to_vec(), Some(modes.current().to_owned())),
            None => (Vec::new(), None),
        }
    }

    /// The person picked the agent's own mode `id`. One that means one of Tether's modes switches
    /// Tether's mode too (and the agent with it), so the two never disagree; any other (Claude's
    /// "Don't Ask") is sent to the agent as it is and leaves Tether's mode alone.
    pub fn set_agent_mode(&mut self, id: &str, now: u64) -> Result<(), IntentError> {
        self.now = now;
        let Some(modes) = &self.modes.agent else { return Err(IntentError::NotReady) };
        if !modes.available().iter().any(|(known, _)| known == id) {
            return Err(IntentError::UnknownOption(id.to_owned()));
        }
        if self.phase != Phase::Ready {
            return Err(IntentError::NotReady);
        }
        match modes.meaning(id) {
            Some(mode) if mode != self.policy.mode() => {
                self.switch_mode(mode);
                // The agent may have two modes of one meaning: the one picked is the one asked.
                self.switch_agent_mode(id.to_owned());
            }
            _ => self.switch_agent_mode(id.to_owned()),
        }
        Ok(())
    }

    /// The person chose a mode in the header: applied now (requests waiting are put to it again)
    /// and sent to the agent when it has a mode that means the same.
    pub fn set_mode(&mut self, mode: Mode, now: u64) {
        self.now = now;
        self.switch_mode(mode);
    }

    /// Applies `mode` (see [`AcpClient::set_mode`]) at the time of the input being handled.
    pub(super) fn switch_mode(&mut self, mode: Mode) {
        let from = self.policy.mode();
        if from == mode {
            return;
        }
        self.policy.set_mode(mode);
        self.audit(AuditEvent::ModeChanged { from, to: mode, by: ChangedBy::Person });
        self.events.push_back(AcpEvent::PolicyChanged);
        self.send_mode_to_agent();
        self.reevaluate_waiting();
    }

    /// Adds a rule from the rules panel (or the settings, for the workspace scope).
    pub fn add_rule(&mut self, spec: RuleSpec, scope: RuleScope) -> Result<RuleView, IntentError> {
        let rule = self.policy.add_rule(spec, scope, RuleOrigin::Added)?;
        self.audit(AuditEvent::RuleAdded { rule: rule.clone() });
        self.events.push_back(AcpEvent::PolicyChanged);
        self.reevaluate_waiting();
        Ok(rule)
    }

    pub fn remove_rule(&mut self, id: RuleId) -> Result<RuleView, IntentError> {
        let rule = self.policy.remove_rule(id).ok_or(IntentError::UnknownRule)?;
        self.audit(AuditEvent::RuleRemoved { rule: rule.clone() });
        self.events.push_back(AcpEvent::PolicyChanged);
        Ok(rule)
    }

    /// Removes every rule of `scope`.
    pub fn clear_rules(&mut self, scope: RuleScope) {
        let removed: Vec<RuleView> = self.policy.rules().into_iter().filter(|rule| rule.scope == scope).collect();
        self.policy.clear(scope);
        for rule in removed {
            self.audit(AuditEvent::RuleRemoved { rule });
        }
        self.events.push_back(AcpEvent::PolicyChanged);
    }

    /// Saves a session rule to the workspace.
    pub fn keep_rule_for_workspace(&mut self, id: RuleId) -> Result<RuleView, IntentError> {
        let rule = self.policy.keep_for_workspace(id).ok_or(IntentError::UnknownRule)?;
        self.audit(AuditEvent::RuleKept { rule: rule.clone() });
        self.events.push_back(AcpEvent::PolicyChanged);
        Ok(rule)
    }

    /// The workspace rules as the settings now say.
    pub fn set_workspace_rules(&mut self, specs: Vec<RuleSpec>) {
        self.policy.set_workspace_rules(specs);
        self.events.push_back(AcpEvent::PolicyChanged);
        self.reevaluate_waiting();
    }

    /// Sends Tether's mode to the agent, when the agent has a mode that means the same and is not
    /// in it already.
    pub(super) fn send_mode_to_agent(&mut self) {
        if self.replaying {
            // What was sent is in the log (`session/set_mode`), read back with its effects.
            return;
        }
        let Some(modes) = &self.modes.agent else { return };
        let Some(target) = modes.matching(self.policy.mode()).map(str::to_owned) else { return };
        self.switch_agent_mode(target);
    }

    /// Asks the agent to switch to its mode `target` (unless it is in it), the way it offers.
    pub(super) fn switch_agent_mode(&mut self, target: String) {
        let (Some(session_id), Some(modes)) = (self.session.id.clone(), &self.modes.agent) else { return };
        if modes.current() == target {
            return;
        }
        match modes {
            AgentModes::SessionModes { .. } => {
                let params = acp::SetSessionModeRequest::new(session_id, target.clone());
                let deadline = Some(self.now + CONTROL_TIMEOUT_MS);
                self.send_request("session/set_mode", &params, RequestKind::SetAgentMode, deadline);
            }
            AgentModes::ConfigOption { config_id, .. } => {
                let config_id = config_id.clone();
                let params = acp::SetSessionConfigOptionRequest::new(
                    session_id,
                    config_id.clone(),
                    acp::SessionConfigValueId::new(target.clone()),
                );
                let deadline = Some(self.now + CONTROL_TIMEOUT_MS);
                self.send_request("session/set_config_option", &params, RequestKind::SetAgentMode, deadline);
                self.show_mode_option(&config_id, &target);
            }
        }
        self.modes.switches_in_flight += 1;
        if let Some(modes) = &mut self.modes.agent {
            modes.set_current(target);
        }
        self.events.push_back(AcpEvent::PolicyChanged);
    }

    /// The agent reports its current mode. Tether follows it when it means one of Tether's modes,
    /// unless a switch Tether asked for is still unanswered (the report may be about an older
    /// switch). Following never sends the mode back.
    pub(super) fn on_agent_mode(&mut self, id: String, from_config_option: bool) {
        let Some(modes) = &mut self.modes.agent else {
            self.problem(format!("the agent reported mode {id:?} but never said it has modes"), None);
            return;
        };
        if from_config_option != matches!(modes, AgentModes::ConfigOption { .. }) {
            return;
        }
        modes.set_current(id.clone());
        let meaning = modes.meaning(&id);
        self.events.push_back(AcpEvent::PolicyChanged);
        let from = self.policy.mode();
        if let Some(mode) = meaning
            && mode != from
            && self.modes.switches_in_flight == 0
        {
            self.policy.set_mode(mode);
            self.audit(AuditEvent::ModeChanged { from, to: mode, by: ChangedBy::Agent });
            self.thread.push(Entry::Notice(NoticeView {
                level: NoticeLevel::Info,
                text: format!("The agent switched to its {id:?} mode; Tether's mode follows: {mode}."),
                detail: None,
            }));
            self.reevaluate_waiting();
        }
    }
}

/// How the agent lets a client switch its mode, when it does.
#[derive(Debug, Clone)]
pub(super) enum AgentModes {
    /// `modes` in the `session/new` answer, switched with `session/set_mode`.
    SessionModes { current: String, available: Vec<(String, String)> },
    /// A select config option of category `mode`, switched with `session/set_config_option`.
    ConfigOption { config_id: String, current: String, available: Vec<(String, String)> },
}

/// How the agent lets Tether switch its mode, from the `session/new` answer: its session modes,
/// else a select config option of category `mode`.
pub(super) fn agent_modes(
    modes: Option<acp::SessionModeState>,
    options: Option<&[acp::SessionConfigOption]>,
) -> Option<AgentModes> {
    if let Some(modes) = modes {
        let available = modes.available_modes.iter().map(|mode| (mode.id.0.to_string(), mode.name.clone())).collect();
        return Some(AgentModes::SessionModes { current: modes.current_mode_id.0.to_string(), available });
    }
    options?.iter().find_map(|option| {
        let acp::SessionConfigKind::Select(select) = &option.kind else { return None };
        if option.category != Some(acp::SessionConfigOptionCategory::Mode) {
            return None;
        }
        let available = match &select.options {
            acp::SessionConfigSelectOptions::Ungrouped(options) => {
                options.iter().map(|option| (option.value.0.to_string(), option.name.clone())).collect()
            }
            acp::SessionConfigSelectOptions::Grouped(groups) => groups
                .iter()
                .flat_map(|group| group.options.iter())
                .map(|option| (option.value.0.to_string(), option.name.clone()))
                .collect(),
            _ => Vec::new(),
        };
        Some(AgentModes::ConfigOption {
            config_id: option.id.0.to_string(),
            current: select.current_value.0.to_string(),
            available,
        })
    })
}

impl AgentModes {
    pub(super) fn current(&self) -> &str {
        match self {
            AgentModes::SessionModes { current, .. } | AgentModes::ConfigOption { current, .. } => current,
        }
    }

    pub(super) fn set_current(&mut self, id: String) {
        match self {
            AgentModes::SessionModes { current, .. } | AgentModes::ConfigOption { current, .. } => *current = id,
        }
    }

    pub(super) fn available(&self) -> &[(String, String)] {
        match self {
            AgentModes::SessionModes { available, .. } | AgentModes::ConfigOption { available, .. } => available,
        }
    }

    /// The agent's mode that means `mode`, matched on its id first, then its name.
    pub(super) fn matching(&self, mode: Mode) -> Option<&str> {
        let available = self.available();
        available
            .iter()
            .find(|(id, _)| Mode::from_agent_mode(id) == Some(mode))
            .or_else(|| available.iter().find(|(_, name)| Mode::from_agent_mode(name) == Some(mode)))
            .map(|(id, _)| id.as_str())
    }

    /// The Tether mode the agent's mode `id` stands for.
    pub(super) fn meaning(&self, id: &str) -> Option<Mode> {
        let name = self.available().iter().find(|(known, _)| known == id).map(|(_, name)| name.as_str());
        Mode::from_agent_mode(id).or_else(|| name.and_then(Mode::from_agent_mode))
    }

    pub(super) fn current_name(&self) -> String {
        let current = self.current();
        self.available()
            .iter()
            .find(|(id, _)| id == current)
            .map_or_else(|| current.to_owned(), |(_, name)| name.clone())
    }
}

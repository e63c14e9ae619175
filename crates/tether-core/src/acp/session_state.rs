//! The session state an agent advertises beside the thread, and the updates that are not part of
//! the conversation: slash commands (`available_commands_update`), config options
//! (`config_option_update` and the `configOptions` of the session answers, set with
//! `session/set_config_option`), the title (`session_info_update`), context usage
//! (`usage_update`), notices (`notice`) and context compaction (`compaction_update`,
//! `compaction_summary_chunk`).
//!
//! Commands, config options, title and usage are kept as a [`SessionControlsView`] that the host
//! copies into the header whenever [`AcpEvent::ControlsChanged`] is raised. Notices and compactions
//! are entries of the thread: a notice is shown where it arrived, and each compaction is one notice
//! that its later updates and summary chunks rewrite in place.
//!
//! A config option the person sets is shown with its new value at once and put back if the agent
//! refuses it; the agent's answer (or a later update) has the last word. The agent's mode option is
//! set through Tether's mode when the value means one of Tether's modes, so the two cannot differ.

use std::collections::BTreeMap;

use agent_client_protocol_schema::{MaybeUndefined, v1 as acp};

use crate::jsonrpc::RequestId;
use crate::thread::{Entry, EntryIndex, NoticeLevel, NoticeView};
use crate::webview::{
    ConfigChoiceView, ConfigOptionKind, ConfigOptionView, ConfigValue, CostView, SessionControlsView, SlashCommandView,
    UsageView,
};

use super::updates::content_text;
use super::{AcpClient, AcpEvent, AgentModes, CONTROL_TIMEOUT_MS, IntentError, Phase, RequestKind, wire_name};

/// What the client keeps about the session's controls.
#[derive(Debug, Default)]
pub(super) struct SessionControls {
    pub(super) view: SessionControlsView,
    /// The notice entry of each compaction, and its summary so far, by compaction id.
    compactions: BTreeMap<String, Compaction>,
    /// `session/set_config_option` requests in flight: the option and the value it had before, put
    /// back if the agent refuses.
    config_requests: BTreeMap<RequestId, (String, ConfigOptionKind)>,
    /// The model picker of an agent that still announces `models` in its session answers and
    /// switches with `session/set_model` (Claude's and Gemini's adapters), shown as one more
    /// select option unless the agent has a model config option of its own.
    legacy_model: Option<ConfigOptionView>,
}

/// The id of the model picker made from an agent's `models` (see `legacy_model`).
pub(super) const LEGACY_MODEL_OPTION: &str = "tether.model";

#[derive(Debug, Default)]
struct Compaction {
    /// The notice showing it, once shown.
    entry: Option<EntryIndex>,
    status: acp::CompactionStatus,
    error: Option<String>,
    summary: String,
}

impl SessionControls {
    /// What a new agent process starts without: it advertises its commands and options again.
    /// The title and the usage belong to the session, which goes on.
    pub(super) fn forget_agent(&mut self) {
        self.view.commands.clear();
        self.view.config_options.clear();
        self.config_requests.clear();
        self.legacy_model = None;
    }
}

impl AcpClient {
    /// The session's title, commands, config options and usage, as the header shows them.
    pub fn controls(&self) -> &SessionControlsView {
        &self.controls.view
    }

    /// The person picked `value` for the agent's config option `config_id`.
    pub fn set_config_option(&mut self, config_id: &str, value: ConfigValue, now: u64) -> Result<(), IntentError> {
        self.now = now;
        let Some(session_id) = self.session.id.clone().filter(|_| self.phase == Phase::Ready) else {
            return Err(IntentError::NotReady);
        };
        let option = self
            .controls
            .view
            .config_options
            .iter()
            .find(|option| option.id == config_id)
            .ok_or_else(|| IntentError::UnknownConfigOption(config_id.to_owned()))?;
        let new_kind = match (&option.kind, &value) {
            (ConfigOptionKind::Select { choices, .. }, ConfigValue::Choice(choice))
                if choices.iter().any(|known| known.value == *choice) =>
            {
                ConfigOptionKind::Select { current: choice.clone(), choices: choices.clone() }
            }
            (ConfigOptionKind::Boolean { .. }, ConfigValue::Boolean(current)) => {
                ConfigOptionKind::Boolean { current: *current }
            }
            _ => return Err(IntentError::UnknownConfigValue { option: option.name.clone() }),
        };
        if option.kind == new_kind {
            return Ok(());
        }
        // The agent's mode option is switched through Tether's mode when the value means one of
        // its modes: the policy and the agent then agree, as with the header's mode picker.
        if let (Some(AgentModes::ConfigOption { config_id: mode_option, .. }), ConfigValue::Choice(choice)) =
            (&self.modes.agent, &value)
            && mode_option == config_id
            && let Some(mode) = self.modes.agent.as_ref().and_then(|modes| modes.meaning(choice))
            && mode != self.policy.mode()
        {
            self.switch_mode(mode);
            return Ok(());
        }
        let wire_value: acp::SessionConfigOptionValue = match &value {
            ConfigValue::Boolean(on) => (*on).into(),
            ConfigValue::Choice(choice) => acp::SessionConfigValueId::new(choice.clone()).into(),
        };
        let id = if config_id == LEGACY_MODEL_OPTION && self.controls.legacy_model.is_some() {
            let ConfigValue::Choice(model) = &value else { unreachable!("checked against the option's kind above") };
            let params = serde_json::json!({ "sessionId": session_id.0, "modelId": model });
            self.send_request(
                "session/set_model",
                &params,
                RequestKind::SetConfigOption,
                Some(self.now + CONTROL_TIMEOUT_MS),
            )
        } else {
            let params = acp::SetSessionConfigOptionRequest::new(session_id, config_id.to_owned(), wire_value);
            self.send_request(
                "session/set_config_option",
                &params,
                RequestKind::SetConfigOption,
                Some(self.now + CONTROL_TIMEOUT_MS),
            )
        };
        self.show_config_value(config_id, new_kind, id);
        Ok(())
    }

    /// Shows the value just asked for, remembering the one it replaces for a refusal.
    pub(super) fn show_config_value(&mut self, config_id: &str, kind: ConfigOptionKind, request: RequestId) {
        let Some(option) = self.controls.view.config_options.iter_mut().find(|option| option.id == config_id) else {
            return;
        };
        let before = std::mem::replace(&mut option.kind, kind);
        if let (ConfigOptionKind::Select { current, .. }, Some(modes)) = (&option.kind, &mut self.modes.agent)
            && matches!(modes, AgentModes::ConfigOption { config_id: mode_option, .. } if mode_option == config_id)
        {
            modes.set_current(current.clone());
            self.events.push_back(AcpEvent::PolicyChanged);
        }
        self.controls.config_requests.insert(request, (config_id.to_owned(), before));
        self.events.push_back(AcpEvent::ControlsChanged);
    }

    /// A `session/set_config_option` read back from the session's log: shown as it was when sent.
    /// Returns false for the agent's mode option, which the mode's own replay follows.
    pub(super) fn replay_config_request(&mut self, id: &RequestId, params: &serde_json::Value) -> bool {
        let Some(config_id) = params["configId"].as_str() else { return false };
        if matches!(&self.modes.agent, Some(AgentModes::ConfigOption { config_id: mode_option, .. }) if mode_option == config_id)
        {
            return false;
        }
        let Some(option) = self.controls.view.config_options.iter().find(|option| option.id == config_id) else {
            // An option this session no longer knows: its answer is still recognised.
            return true;
        };
        let kind = match (&option.kind, &params["value"]) {
            (ConfigOptionKind::Select { choices, .. }, serde_json::Value::String(current)) => {
                ConfigOptionKind::Select { current: current.clone(), choices: choices.clone() }
            }
            (ConfigOptionKind::Boolean { .. }, serde_json::Value::Bool(current)) => {
                ConfigOptionKind::Boolean { current: *current }
            }
            _ => return true,
        };
        self.show_config_value(config_id, kind, id.clone());
        true
    }

    /// Tether sent its mode to the agent as the value of the agent's mode option: the option shows
    /// it (the answer or a later update has the last word).
    pub(super) fn show_mode_option(&mut self, config_id: &str, value: &str) {
        let Some(option) = self.controls.view.config_options.iter_mut().find(|option| option.id == config_id) else {
            return;
        };
        if let ConfigOptionKind::Select { current, .. } = &mut option.kind
            && current != value
        {
            value.clone_into(current);
            self.events.push_back(AcpEvent::ControlsChanged);
        }
    }

    /// The agent answered a `session/set_config_option` the person asked for.
    pub(super) fn on_config_option_set(
        &mut self,
        id: &RequestId,
        result: Result<&serde_json::value::RawValue, String>,
    ) {
        let asked = self.controls.config_requests.remove(id);
        match result {
            Ok(raw) => {
                // The answer holds every option as it now is; an answer without them changes
                // nothing more.
                if let Ok(response) = serde_json::from_str::<acp::SetSessionConfigOptionResponse>(raw.get())
                    && !response.config_options.is_empty()
                {
                    self.on_config_options(&response.config_options);
                }
            }
            Err(error) => {
                let Some((config_id, before)) = asked else { return };
                let name = self.controls.view.config_options.iter().find(|option| option.id == config_id);
                let name = name.map_or_else(|| config_id.clone(), |option| option.name.clone());
                if let Some(option) = self.controls.view.config_options.iter_mut().find(|option| option.id == config_id)
                {
                    option.kind = before;
                }
                self.events.push_back(AcpEvent::ControlsChanged);
                self.problem(format!("the agent refused to change {name:?} ({error})"), None);
            }
        }
    }

    /// The agent's config options, from an answer or a `config_option_update`: shown in full, and
    /// the mode among them followed as before.
    pub(super) fn on_config_options(&mut self, options: &[acp::SessionConfigOption]) {
        let mut views: Vec<ConfigOptionView> = options.iter().map(config_option_view).collect();
        if let Some(model) = &self.controls.legacy_model
            && !views.iter().any(|view| view.category.as_deref() == Some("model"))
        {
            views.push(model.clone());
        }
        if self.controls.view.config_options != views {
            self.controls.view.config_options = views;
            self.events.push_back(AcpEvent::ControlsChanged);
        }
    }

    /// A `session/set_model` read back from the session's log: shown as it was when sent.
    pub(super) fn replay_model_request(&mut self, id: &RequestId, model: &str) {
        let Some(ConfigOptionView { kind: ConfigOptionKind::Select { choices, .. }, .. }) = &self.controls.legacy_model
        else {
            return;
        };
        let kind = ConfigOptionKind::Select { current: model.to_owned(), choices: choices.clone() };
        self.show_config_value(LEGACY_MODEL_OPTION, kind, id.clone());
    }

    /// The `models` of a session answer (`availableModels`, `currentModelId`), from agents that
    /// predate model config options: kept as a model picker that switches with `session/set_model`.
    pub(super) fn on_legacy_models(&mut self, models: &serde_json::Value) {
        let Some(current) = models["currentModelId"].as_str() else { return };
        let choices: Vec<ConfigChoiceView> = models["availableModels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|model| {
                let value = model["modelId"].as_str()?.to_owned();
                Some(ConfigChoiceView {
                    name: model["name"].as_str().map_or_else(|| value.clone(), str::to_owned),
                    description: model["description"].as_str().map(str::to_owned),
                    value,
                    group: None,
                })
            })
            .collect();
        if choices.is_empty() {
            return;
        }
        self.controls.legacy_model = Some(ConfigOptionView {
            id: LEGACY_MODEL_OPTION.to_owned(),
            name: "Model".to_owned(),
            description: None,
            category: Some("model".to_owned()),
            kind: ConfigOptionKind::Select { current: current.to_owned(), choices },
        });
        let options = std::mem::take(&mut self.controls.view.config_options);
        self.controls.view.config_options = options.into_iter().filter(|view| view.id != LEGACY_MODEL_OPTION).collect();
        if let Some(model) = &self.controls.legacy_model
            && !self.controls.view.config_options.iter().any(|view| view.category.as_deref() == Some("model"))
        {
            self.controls.view.config_options.push(model.clone());
        }
        self.events.push_back(AcpEvent::ControlsChanged);
    }

    /// The updates that are session state rather than conversation. Returns the update back when
    /// it is not one of them.
    pub(super) fn on_session_state_update(&mut self, update: acp::SessionUpdate) -> Option<acp::SessionUpdate> {
        match update {
            acp::SessionUpdate::AvailableCommandsUpdate(update) => {
                self.controls.view.commands = update
                    .available_commands
                    .into_iter()
                    .map(|command| SlashCommandView {
                        name: command.name.trim_start_matches('/').to_owned(),
                        description: command.description,
                        input_hint: match command.input {
                            Some(acp::AvailableCommandInput::Unstructured(input)) => Some(input.hint),
                            // An input of a newer kind: the command still works without a hint.
                            _ => None,
                        },
                    })
                    .collect();
                self.events.push_back(AcpEvent::ControlsChanged);
            }
            acp::SessionUpdate::SessionInfoUpdate(update) => {
                match update.title {
                    MaybeUndefined::Value(title) => self.controls.view.title = Some(title),
                    MaybeUndefined::Null => self.controls.view.title = None,
                    // Absent: the title stays as it was.
                    MaybeUndefined::Undefined => return None,
                }
                self.events.push_back(AcpEvent::ControlsChanged);
            }
            acp::SessionUpdate::UsageUpdate(update) => {
                let cost = update.cost.map(|cost| CostView { amount: cost.amount, currency: cost.currency });
                let last_turn_ms = update
                    .meta
                    .as_ref()
                    .and_then(|meta| meta.get("turnDurationMs"))
                    .and_then(serde_json::Value::as_u64);
                self.controls.view.usage = Some(UsageView { used: update.used, size: update.size, cost, last_turn_ms });
                self.events.push_back(AcpEvent::ControlsChanged);
            }
            acp::SessionUpdate::Notice(notice) => {
                let level = match notice.severity {
                    acp::NoticeSeverity::Warning => NoticeLevel::Warning,
                    acp::NoticeSeverity::Error => NoticeLevel::Error,
                    // Info, or a severity of a newer protocol: shown, without alarm.
                    _ => NoticeLevel::Info,
                };
                self.thread.push(Entry::Notice(NoticeView {
                    level,
                    text: notice.title,
                    detail: notice.description.filter(|text| !text.is_empty()),
                }));
            }
            acp::SessionUpdate::CompactionUpdate(update) => {
                let compaction = self.compaction(update.compaction_id.0.to_string());
                compaction.status = update.status;
                match update.error {
                    MaybeUndefined::Value(error) => compaction.error = Some(error),
                    MaybeUndefined::Null => compaction.error = None,
                    MaybeUndefined::Undefined => {}
                }
                match update.summary {
                    MaybeUndefined::Value(blocks) => {
                        compaction.summary = blocks.iter().map(content_text).collect::<Vec<_>>().join("");
                    }
                    MaybeUndefined::Null => compaction.summary.clear(),
                    MaybeUndefined::Undefined => {}
                }
                self.show_compaction(&update.compaction_id.0);
            }
            acp::SessionUpdate::CompactionSummaryChunk(chunk) => {
                let compaction = self.compaction(chunk.compaction_id.0.to_string());
                compaction.summary.push_str(&content_text(&chunk.content));
                self.show_compaction(&chunk.compaction_id.0);
            }
            other => return Some(other),
        }
        None
    }

    /// What is known of the compaction `id` (a new one is in progress).
    fn compaction(&mut self, id: String) -> &mut Compaction {
        self.controls.compactions.entry(id).or_default()
    }

    /// Shows the compaction `id` as its notice, written anew from what is known of it.
    fn show_compaction(&mut self, id: &str) {
        let Some(compaction) = self.controls.compactions.get_mut(id) else { return };
        let (level, text) = match &compaction.status {
            acp::CompactionStatus::InProgress => (NoticeLevel::Info, "The agent is compacting its context…".to_owned()),
            acp::CompactionStatus::Completed => (NoticeLevel::Info, "The agent compacted its context.".to_owned()),
            acp::CompactionStatus::Failed => (
                NoticeLevel::Warning,
                match &compaction.error {
                    Some(error) => format!("The agent could not compact its context: {error}"),
                    None => "The agent could not compact its context.".to_owned(),
                },
            ),
            acp::CompactionStatus::Cancelled => {
                (NoticeLevel::Info, "The agent's compaction of its context was cancelled.".to_owned())
            }
            other => (NoticeLevel::Info, format!("Compaction of the agent's context: {}.", wire_name(other))),
        };
        let detail = (!compaction.summary.is_empty()).then(|| compaction.summary.clone());
        let notice = Entry::Notice(NoticeView { level, text, detail });
        match compaction.entry {
            Some(index) => self.thread.replace(index, notice),
            None => compaction.entry = Some(self.thread.push(notice)),
        }
    }
}

/// The view of one config option.
fn config_option_view(option: &acp::SessionConfigOption) -> ConfigOptionView {
    let kind = match &option.kind {
        acp::SessionConfigKind::Select(select) => {
            let choice = |option: &acp::SessionConfigSelectOption, group: Option<&str>| ConfigChoiceView {
                value: option.value.0.to_string(),
                name: option.name.clone(),
                description: option.description.clone(),
                group: group.map(str::to_owned),
            };
            let choices = match &select.options {
                acp::SessionConfigSelectOptions::Ungrouped(options) => {
                    options.iter().map(|option| choice(option, None)).collect()
                }
                acp::SessionConfigSelectOptions::Grouped(groups) => groups
                    .iter()
                    .flat_map(|group| group.options.iter().map(|option| choice(option, Some(&group.name))))
                    .collect(),
                // A layout of a newer protocol: the current value is still shown.
                _ => Vec::new(),
            };
            ConfigOptionKind::Select { current: select.current_value.0.to_string(), choices }
        }
        acp::SessionConfigKind::Boolean(boolean) => ConfigOptionKind::Boolean { current: boolean.current_value },
        // A kind of a newer protocol: shown as a select with only its name, which cannot be set.
        _ => ConfigOptionKind::Select { current: String::new(), choices: Vec::new() },
    };
    ConfigOptionView {
        id: option.id.0.to_string(),
        name: option.name.clone(),
        description: option.description.clone(),
        category: option.category.as_ref().map(wire_name),
        kind,
    }
}

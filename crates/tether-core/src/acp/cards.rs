//! Permission requests: the agent's `session/request_permission`s and the cards Tether puts up on
//! its own behalf (a read outside the workspace, a command nothing approved), decided by the rules
//! and the mode when they can be, else held for the person; their answers, and the audit record
//! of every decision.

use std::collections::{BTreeMap, VecDeque};

use agent_client_protocol_schema::v1 as acp;

use crate::jsonrpc::{self, RequestId, RpcError};
use crate::permissions::{
    AuditEvent, AuditRecord, AuditedToolCall, DecidedBy, RequestFacts, RuleDecision, RuleOrigin, RuleScope, RuleSpec,
    Verdict,
};
use crate::thread::{
    Entry, EntryIndex, PermissionKey, PermissionOptionView, PermissionOutcome, PermissionView, ToolCallView, ToolStatus,
};

use super::{AcpClient, AcpEvent, IntentError, MAX_APPROVED_COMMANDS, fs, links, terminal, wire_name};

/// The permission requests waiting for the person, by key, and the commands their answers
/// approved.
#[derive(Debug)]
pub(super) struct PermissionCards {
    pub(super) waiting: BTreeMap<PermissionKey, PendingPermission>,
    pub(super) next_key: PermissionKey,
    /// The commands of execute tool calls whose permission request was answered with an allow
    /// option in this turn and that no `terminal/create` has run yet (see
    /// [`AcpClient::take_approved_command`]).
    pub(super) approved_commands: VecDeque<String>,
    /// Tether's own cards as last written to the log, by tool call id (see
    /// [`AcpClient::log_own_card`]).
    logged_own: BTreeMap<String, ToolCallView>,
}

impl PermissionCards {
    /// Keys start at `first_key`, so a host that replaces its client never reuses a key a stale
    /// webview might still send.
    pub(super) fn new(first_key: PermissionKey) -> Self {
        PermissionCards {
            waiting: BTreeMap::new(),
            next_key: first_key,
            approved_commands: VecDeque::new(),
            logged_own: BTreeMap::new(),
        }
    }
}

impl AcpClient {
    /// The person chose `option_id` on the permission request `key`.
    pub fn answer_permission(&mut self, key: PermissionKey, option_id: &str) -> Result<(), IntentError> {
        let pending = self.cards.waiting.get(&key).ok_or(IntentError::UnknownPermission)?;
        let pending = pending.clone();
        let offered = self
            .thread
            .tool_call(pending.tool_call)
            .and_then(|call| call.permission.as_ref())
            .and_then(|permission| permission.options.iter().find(|option| option.id == option_id))
            .cloned();
        let Some(option) = offered else {
            return Err(IntentError::UnknownOption(option_id.to_owned()));
        };
        let facts = self.facts_of(pending.tool_call);
        if let Some(facts) = &facts {
            self.audit(AuditEvent::Answered { tool_call: facts.clone(), option: option.clone() });
        }
        self.resolve_permission(key, PermissionOutcome::Selected { option_id: option_id.to_owned() }, None);
        // An "always" choice is remembered as a session rule, which then answers every request
        // still waiting that it matches.
        let decision = match option.kind.as_str() {
            "allow_always" => Some(RuleDecision::Allow),
            "reject_always" => Some(RuleDecision::Deny),
            _ => None,
        };
        if let (Some(decision), Some(facts)) = (decision, facts) {
            let spec = RuleSpec::from_choice(decision, &facts.facts);
            let origin = RuleOrigin::Chosen { option: option.name.clone(), tool_title: facts.facts.title.clone() };
            match self.policy.add_rule(spec, RuleScope::Session, origin) {
                Ok(rule) => {
                    self.audit(AuditEvent::RuleAdded { rule });
                    self.events.push_back(AcpEvent::PolicyChanged);
                    self.reevaluate_waiting();
                }
                // Cannot happen for a rule built from a request (it always has a kind), but a
                // rule that cannot be made only means the next request asks again.
                Err(error) => self.events.push_back(AcpEvent::ProtocolProblem {
                    message: format!("could not remember the choice as a rule: {error}"),
                }),
            }
        }
        Ok(())
    }

    pub fn permissions_waiting(&self) -> u32 {
        self.cards.waiting.len() as u32
    }

    pub(super) fn on_permission_request(&mut self, id: RequestId, request: acp::RequestPermissionRequest) {
        if self.session.id.as_ref() != Some(&request.session_id) {
            let error = RpcError::invalid_params()
                .data(serde_json::Value::String(format!("unknown session {}", request.session_id.0)));
            self.push_outgoing(jsonrpc::encode_error(&id, &error));
            return;
        }
        let key = self.cards.next_key;
        self.cards.next_key += 1;
        let options: Vec<PermissionOptionView> = request
            .options
            .iter()
            .map(|option| PermissionOptionView {
                id: option.option_id.0.to_string(),
                name: option.name.clone(),
                kind: wire_name(&option.kind),
            })
            .collect();
        let mut status_before = ToolStatus::Pending;
        let index = self.upsert_tool_call(request.tool_call, |call| {
            status_before = call.status;
            call.status = ToolStatus::WaitingForConfirmation;
            call.permission = Some(PermissionView {
                key,
                options: options.clone(),
                outcome: None,
                links: Vec::new(),
                from_tether: false,
            });
        });
        let pending =
            PendingPermission { request_id: id, tool_call: index, status_before, gate: None, resolving: true };
        self.cards.waiting.insert(key, pending);
        if self.replaying {
            // The log says how it was answered.
            return;
        }
        // The rules and the mode decide on where the tool call's paths really lead.
        let paths = self.paths_to_decide(key);
        self.resolve_then(paths, links::Waiting::Decide { key });
    }

    /// The paths of the tool call a waiting permission request is about, as the agent named them.
    pub(super) fn paths_to_decide(&self, key: PermissionKey) -> Vec<String> {
        let Some(call) = self.cards.waiting.get(&key).and_then(|pending| self.thread.tool_call(pending.tool_call))
        else {
            return Vec::new();
        };
        crate::permissions::paths_of_tool_call(call).into_iter().map(str::to_owned).collect()
    }

    /// The paths of a permission request were resolved: the card shows where links lead, and the
    /// rules and the mode decide it now, unless the person already did.
    pub(super) fn decide_resolved(&mut self, key: PermissionKey) {
        let Some(pending) = self.cards.waiting.get_mut(&key) else { return };
        pending.resolving = false;
        let index = pending.tool_call;
        let links: Vec<String> = match self.thread.tool_call(index) {
            Some(call) => crate::permissions::paths_of_tool_call(call)
                .into_iter()
                .map(|path| self.target(path))
                .filter(links::Target::is_link)
                .map(|target| {
                    let shown = target.shown(&self.workspace);
                    if target.is_outside() { format!("{shown} (outside the workspace)") } else { shown }
                })
                .collect(),
            None => Vec::new(),
        };
        if !links.is_empty() {
            self.thread.update_tool_call(index, |call| {
                if let Some(permission) = &mut call.permission {
                    permission.links = links;
                }
            });
        }
        let options = self.thread.tool_call(index).and_then(|call| call.permission.as_ref()).map(|p| p.options.clone());
        if !self.decide_by_policy(key) {
            if let Some(tool_call) = self.facts_of(index) {
                self.audit(AuditEvent::Asked { tool_call, options: options.unwrap_or_default() });
            }
            self.emit_permission_count();
        }
    }

    /// Puts a waiting request to the policy and answers it when a rule or the mode decides.
    /// Returns whether it was answered.
    pub(super) fn decide_by_policy(&mut self, key: PermissionKey) -> bool {
        let Some(pending) = self.cards.waiting.get(&key) else { return false };
        if pending.resolving {
            return false;
        }
        let index = pending.tool_call;
        let Some(tool_call) = self.facts_of(index) else { return false };
        let (allowed, by, reason) = match self.policy.decide(&tool_call.facts) {
            Verdict::Ask => return false,
            Verdict::Allow { by } => (true, by, None),
            Verdict::Reject { by, reason } => (false, by, Some(reason)),
        };
        let options = self.thread.tool_call(index).and_then(|call| call.permission.as_ref()).map(|p| p.options.clone());
        let preferred: [&str; 2] =
            if allowed { ["allow_once", "allow_always"] } else { ["reject_once", "reject_always"] };
        // A decision the agent gave no option for cannot be sent: the person is asked instead.
        let Some(option) =
            preferred.iter().find_map(|kind| options.iter().flatten().find(|option| option.kind == *kind)).cloned()
        else {
            return false;
        };
        if let DecidedBy::Rule { id, .. } = &by {
            self.policy.record_fired(*id);
            self.events.push_back(AcpEvent::PolicyChanged);
        }
        self.audit(AuditEvent::Decided {
            tool_call,
            option: option.clone(),
            allowed,
            by: by.clone(),
            reason: reason.clone(),
        });
        let outcome = PermissionOutcome::Auto { option_id: option.id, allowed, by: by.clone(), reason: reason.clone() };
        let told = reason.unwrap_or_else(|| format!("Approved by the person's {by}"));
        self.resolve_permission(key, outcome, Some(told));
        true
    }

    /// Puts every waiting request to the policy again, after it changed.
    pub(super) fn reevaluate_waiting(&mut self) {
        let keys: Vec<PermissionKey> = self.cards.waiting.keys().copied().collect();
        for key in keys {
            self.decide_by_policy(key);
        }
    }

    /// Answers every waiting request `cancelled`, as ACP requires when a turn is cancelled.
    pub(super) fn cancel_waiting(&mut self, why: &str) {
        let keys: Vec<PermissionKey> = self.cards.waiting.keys().copied().collect();
        for key in keys {
            if let Some(tool_call) = self.cards.waiting.get(&key).and_then(|pending| self.facts_of(pending.tool_call)) {
                self.audit(AuditEvent::Cancelled { tool_call, why: why.to_owned() });
            }
            self.resolve_permission(key, PermissionOutcome::Cancelled, None);
        }
    }

    /// The tool call at `index` as an audit record names it.
    pub(super) fn facts_of(&self, index: EntryIndex) -> Option<AuditedToolCall> {
        let call = self.thread.tool_call(index)?;
        Some(AuditedToolCall { id: call.id.clone(), facts: RequestFacts::of_tool_call(call, |path| self.place(path)) })
    }

    pub(super) fn audit(&mut self, event: AuditEvent) {
        self.events.push_back(AcpEvent::Audit(Box::new(AuditRecord { event, mode: self.policy.mode() })));
    }

    /// Answers a waiting permission request and shows the outcome on its tool call. `reason` is
    /// sent in the response's `_meta.tether.reason`: the only place ACP leaves for telling the
    /// agent why a client decided as it did.
    pub(super) fn resolve_permission(
        &mut self,
        key: PermissionKey,
        outcome: PermissionOutcome,
        reason: Option<String>,
    ) {
        let Some(pending) = self.cards.waiting.remove(&key) else { return };
        let allowed = self.outcome_allows(pending.tool_call, &outcome);
        if let Some(gate) = pending.gate.clone() {
            // Tether's own question: the request goes ahead or fails; the agent never saw a
            // permission request.
            self.show_outcome(&pending, outcome);
            match gate {
                Gate::Read(gate) => self.on_read_allowed(gate, allowed, pending.request_id, pending.tool_call),
                Gate::Run(gate) => self.on_run_allowed(gate, allowed, pending.request_id, pending.tool_call),
            }
            return;
        }
        if allowed {
            self.remember_approved_command(pending.tool_call);
        }
        let acp_outcome = match &outcome {
            PermissionOutcome::Selected { option_id } | PermissionOutcome::Auto { option_id, .. } => {
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(option_id.clone()))
            }
            PermissionOutcome::Cancelled | PermissionOutcome::Withdrawn => acp::RequestPermissionOutcome::Cancelled,
        };
        let mut response = acp::RequestPermissionResponse::new(acp_outcome);
        if let Some(reason) = reason {
            let mut meta = serde_json::Map::new();
            meta.insert("tether".to_owned(), serde_json::json!({ "reason": reason }));
            response = response.meta(meta);
        }
        self.push_outgoing(jsonrpc::encode_result(&pending.request_id, &response));
        self.show_outcome(&pending, outcome);
    }

    /// The agent withdrew its request (`$/cancel_request`): it is answered "request cancelled"
    /// and the card says so.
    pub(super) fn withdraw_permission(&mut self, key: PermissionKey) {
        let Some(pending) = self.cards.waiting.remove(&key) else { return };
        if let Some(tool_call) = self.facts_of(pending.tool_call) {
            self.audit(AuditEvent::Withdrawn { tool_call });
        }
        let error = RpcError::new(-32800, "Request cancelled");
        self.push_outgoing(jsonrpc::encode_error(&pending.request_id, &error));
        self.show_outcome(&pending, PermissionOutcome::Withdrawn);
    }

    /// Shows `call`, a card of Tether's own asking with permission key `key`, and holds the agent's
    /// `request` behind it: the policy may answer at once, else the person does, and
    /// [`AcpClient::resolve_permission`] then lets `gate` go ahead or fail.
    pub(super) fn hold_behind_card(&mut self, request: RequestId, key: PermissionKey, call: ToolCallView, gate: Gate) {
        let options = call.permission.as_ref().map(|permission| permission.options.clone()).unwrap_or_default();
        let index = self.thread.push(Entry::ToolCall(call));
        let pending = PendingPermission {
            request_id: request,
            tool_call: index,
            status_before: ToolStatus::Pending,
            gate: Some(gate),
            // Tether's own cards name paths already resolved.
            resolving: false,
        };
        self.cards.waiting.insert(key, pending);
        if !self.decide_by_policy(key) {
            if let Some(tool_call) = self.facts_of(index) {
                self.audit(AuditEvent::Asked { tool_call, options });
            }
            self.emit_permission_count();
        }
    }

    /// Whether `outcome` lets the tool call at `index` go ahead: an allow option chosen by the
    /// person, or approved by a rule or the mode.
    pub(super) fn outcome_allows(&self, index: EntryIndex, outcome: &PermissionOutcome) -> bool {
        match outcome {
            PermissionOutcome::Auto { allowed, .. } => *allowed,
            PermissionOutcome::Selected { option_id } => self
                .thread
                .tool_call(index)
                .and_then(|call| call.permission.as_ref())
                .and_then(|permission| permission.options.iter().find(|option| &option.id == option_id))
                .is_some_and(|option| option.kind.starts_with("allow")),
            PermissionOutcome::Cancelled | PermissionOutcome::Withdrawn => false,
        }
    }

    /// An execute tool call was approved: its command may run once through `terminal/create`
    /// without another question, until the turn ends.
    pub(super) fn remember_approved_command(&mut self, index: EntryIndex) {
        let Some(call) = self.thread.tool_call(index) else { return };
        if call.kind != "execute" {
            return;
        }
        let Some(command) = call.command.clone() else { return };
        if self.cards.approved_commands.len() >= MAX_APPROVED_COMMANDS {
            // An agent that asks for far more commands than it runs loses the oldest approvals;
            // running one of those asks again, which is the safe side.
            self.cards.approved_commands.pop_front();
        }
        self.cards.approved_commands.push_back(command);
    }

    /// Uses up one approval of `command` (see [`AcpClient::remember_approved_command`]); false
    /// when there is none.
    pub(super) fn take_approved_command(&mut self, command: &str) -> bool {
        match self.cards.approved_commands.iter().position(|approved| approved == command) {
            Some(position) => {
                self.cards.approved_commands.remove(position);
                true
            }
            None => false,
        }
    }

    pub(super) fn show_outcome(&mut self, pending: &PendingPermission, outcome: PermissionOutcome) {
        self.thread.update_tool_call(pending.tool_call, |call| {
            call.status = pending.status_before;
            if let Some(permission) = &mut call.permission {
                permission.outcome = Some(outcome);
            }
        });
        if pending.gate.is_some() {
            self.log_own_card(pending.tool_call);
        }
        self.emit_permission_count();
    }

    /// Changes Tether's own card at `index` (see [`own_card`]) with `change`, and writes it to the
    /// log once answered.
    pub(super) fn update_own_card(&mut self, index: EntryIndex, change: impl FnOnce(&mut ToolCallView)) {
        self.thread.update_tool_call(index, change);
        self.log_own_card(index);
    }

    /// Writes Tether's own card at `index` to the log as it now is, once it has been answered:
    /// the agent asked for nothing, so the wire has no trace of it, and a replay shows the card
    /// (the question, the answer, the command or read it let through) from this record. A card
    /// still waiting is not written: the agent's request waits for an answer, and a host going
    /// on with the agent asks again.
    pub(super) fn log_own_card(&mut self, index: EntryIndex) {
        let Some(call) = self.thread.tool_call(index) else { return };
        let answered = call.permission.as_ref().is_some_and(|permission| permission.outcome.is_some());
        if !answered || self.cards.logged_own.get(&call.id) == Some(call) {
            return;
        }
        let call = call.clone();
        if self.replaying {
            // What the log says already.
            self.cards.logged_own.insert(call.id.clone(), call);
            return;
        }
        // As an entry: the webview's posts encode entries already, and the replay reads entries
        // back for restored conversations, so no second encoder or decoder goes into the engine.
        let entry = Entry::ToolCall(call.clone());
        match crate::json_value::to_value(&entry) {
            Ok(card) => self.audit(AuditEvent::CardShown { tool_call: card }),
            Err(error) => self.events.push_back(AcpEvent::ProtocolProblem {
                message: format!("could not write the card \"{}\" to the log: {error}", call.title),
            }),
        }
        self.cards.logged_own.insert(call.id.clone(), call);
    }

    /// Tether's own card read back from the log (see [`AcpClient::log_own_card`]): shown as it was
    /// last written, replacing an earlier record of the same card.
    pub(super) fn reopen_own_card(&mut self, card: &serde_json::Value) {
        let Ok(Entry::ToolCall(call)) = crate::json_value::from_value::<Entry>(card) else { return };
        self.remember_run_card(&call);
        match self.thread.find_tool_call(&call.id) {
            Some(index) => self.thread.replace(index, Entry::ToolCall(call)),
            None => {
                self.thread.push(Entry::ToolCall(call));
            }
        }
    }

    /// When a turn ends, a permission request the agent left unanswered can no longer matter to
    /// it; it is answered cancelled so that nothing stays pending silently.
    pub(super) fn clear_stale_permissions(&mut self) {
        self.cancel_waiting("the turn ended before an answer");
        // An approval is for this turn's command: a later turn that runs it without asking is
        // asked about it.
        self.cards.approved_commands.clear();
    }

    /// The view's badge: permission requests and writes waiting for the person.
    pub(super) fn emit_permission_count(&mut self) {
        self.events
            .push_back(AcpEvent::PermissionsWaiting { count: self.permissions_waiting() + self.reviews_waiting() });
    }
}

/// A `session/request_permission` the person has not answered yet.
#[derive(Debug, Clone)]
pub(super) struct PendingPermission {
    pub(super) request_id: RequestId,
    pub(super) tool_call: EntryIndex,
    /// The tool call's status before the request, restored once the request is answered (the
    /// agent reports the real outcome with its next update).
    pub(super) status_before: ToolStatus,
    /// Set when Tether asks on its own behalf, for a request of the agent's that proceeds or
    /// fails by the answer.
    pub(super) gate: Option<Gate>,
    /// The tool call's paths are being resolved: the rules and the mode cannot decide it yet
    /// (the person can).
    pub(super) resolving: bool,
}

/// A request of the agent's held behind a card of Tether's own: the agent never sent a
/// permission request for it.
#[derive(Debug, Clone)]
pub(super) enum Gate {
    /// `fs/read_text_file` of a file outside the workspace.
    Read(fs::ReadGate),
    /// `terminal/create` of a command no permission request approved.
    Run(terminal::RunGate),
}

/// The card of Tether's own for a request the agent made without asking first: a tool call waiting
/// for the person, with the options `allow` (once), `allow_always` and `reject` named `names`.
pub(super) fn own_card(key: PermissionKey, id: String, title: String, kind: &str, names: [&str; 3]) -> ToolCallView {
    let [allow, always, reject] = names;
    let option = |id: &str, name: &str, kind: &str| PermissionOptionView {
        id: id.to_owned(),
        name: name.to_owned(),
        kind: kind.to_owned(),
    };
    let options = vec![
        option("allow", allow, "allow_once"),
        option("allow_always", always, "allow_always"),
        option("reject", reject, "reject_once"),
    ];
    ToolCallView {
        id,
        title,
        kind: kind.to_owned(),
        status: ToolStatus::WaitingForConfirmation,
        content: Vec::new(),
        locations: Vec::new(),
        raw_input: None,
        command: None,
        raw_output: None,
        permission: Some(PermissionView { key, options, outcome: None, links: Vec::new(), from_tether: true }),
    }
}

//! The person's side of a terminal: its mirror in a VS Code terminal (written once per frame,
//! bounded, reopened with its output replayed) and the card's Stop and Open.

use super::*;

impl AcpClient {
    /// Whether this client's thread has the terminal `terminal` (its own id, as cards and
    /// mirrors name it): a window with several sessions asks each.
    pub fn has_terminal(&self, terminal: &str) -> bool {
        self.terminals.get(terminal).is_some()
    }

    /// Whether tetherd's terminal `terminal` is one of this client's.
    pub fn has_sidecar_terminal(&self, terminal: TerminalId) -> bool {
        self.terminals.list.iter().any(|entry| entry.sidecar == Some(terminal))
    }

    /// The person typed into a mirrored terminal.
    pub fn terminal_input(&mut self, terminal: &str, data: String) {
        let Some(entry) = self.terminals.get(terminal) else { return };
        if let (TerminalOrigin::Client, Some(sidecar), true, false) =
            (entry.origin, entry.sidecar, entry.running(), entry.released)
        {
            self.events.push_back(AcpEvent::Terminal(TerminalCall::Input { terminal: sidecar, data }));
        }
    }

    pub fn terminal_resize(&mut self, terminal: &str, cols: u16, rows: u16) {
        let Some(entry) = self.terminals.get(terminal) else { return };
        if let (TerminalOrigin::Client, Some(sidecar), true, false) =
            (entry.origin, entry.sidecar, entry.running(), entry.released)
        {
            self.events.push_back(AcpEvent::Terminal(TerminalCall::Resize { terminal: sidecar, cols, rows }));
        }
    }

    /// The person closed a mirrored terminal: a command still running is only stopped if they
    /// confirm it.
    pub fn terminal_closed(&mut self, terminal: &str) {
        let Some(entry) = self.terminals.get_mut(terminal) else { return };
        entry.mirror = Mirror::Closed;
        entry.mirror_pending.clear();
        if entry.origin == TerminalOrigin::Client && entry.running() && !entry.released && !entry.stop_requested {
            let action = HostAction::ConfirmStopTerminal { terminal: entry.id.clone(), command: entry.command.clone() };
            self.events.push_back(AcpEvent::Host(Box::new(action)));
        }
    }

    pub fn terminal_intent(&mut self, intent: TerminalIntent) -> Result<(), IntentError> {
        match intent {
            TerminalIntent::Stop { terminal } => {
                let entry = self.terminals.get_mut(&terminal).ok_or(IntentError::UnknownTerminal)?;
                if entry.origin == TerminalOrigin::Agent {
                    return Err(IntentError::NotOurTerminal);
                }
                let Some(sidecar) = entry.sidecar.filter(|_| entry.running() && !entry.released) else {
                    return Ok(()); // It ended meanwhile: nothing to stop.
                };
                entry.stop_requested = true;
                self.ask_tetherd(PendingCall::Stop { terminal }, method::TERMINAL_KILL, sidecar);
                Ok(())
            }
            TerminalIntent::Open { terminal } => {
                let name = {
                    let entry = self.terminals.get(&terminal).ok_or(IntentError::UnknownTerminal)?;
                    match &entry.tool_call {
                        Some(tool_call) if entry.origin == TerminalOrigin::Agent => {
                            self.command_of_tool_call(tool_call)
                        }
                        _ => entry.command.clone(),
                    }
                };
                let entry = self.terminals.get_mut(&terminal).ok_or(IntentError::UnknownTerminal)?;
                let open = entry.open_action(&name, true);
                // Whatever waited for the old mirror is in the replay.
                entry.mirror_pending.clear();
                entry.mirror_skipped = 0;
                entry.mirror = Mirror::Open;
                self.events.push_back(AcpEvent::Host(Box::new(open)));
                Ok(())
            }
        }
    }

    /// Whether a terminal has news for the next frame.
    pub fn terminals_dirty(&self) -> bool {
        !self.terminals.dirty.is_empty()
    }

    /// Once per frame: the cards of terminals that changed go into the thread, and what they
    /// printed goes to their mirrored terminals (one write each).
    pub fn flush_terminals(&mut self, now: u64) -> Vec<HostAction> {
        let mut actions = Vec::new();
        for id in std::mem::take(&mut self.terminals.dirty) {
            let Some(index) = self.terminals.list.iter().position(|entry| entry.id == id) else { continue };
            let command = {
                let entry = &self.terminals.list[index];
                match (&entry.tool_call, entry.origin) {
                    (Some(tool_call), TerminalOrigin::Agent) => self.command_of_tool_call(tool_call),
                    _ => entry.command.clone(),
                }
            };
            let entry = &mut self.terminals.list[index];
            if entry.mirror == Mirror::Wanted {
                // The replay holds everything so far: the new terminal starts from it.
                actions.push(entry.open_action(&command, entry.running()));
                entry.mirror = Mirror::Open;
                entry.mirror_pending.clear();
                entry.mirror_skipped = 0;
            }
            if entry.mirror == Mirror::Open && !entry.mirror_pending.is_empty() {
                let mut data = std::mem::take(&mut entry.mirror_pending);
                if entry.mirror_skipped > 0 {
                    data.insert_str(
                        0,
                        &format!(
                            "\r\n\x1b[90m[Tether skipped {} of output here to keep up]\x1b[0m\r\n",
                            describe_bytes(entry.mirror_skipped)
                        ),
                    );
                    entry.mirror_skipped = 0;
                }
                actions.push(HostAction::TerminalWrite { terminal: id.clone(), data });
            } else if entry.mirror != Mirror::Open {
                entry.mirror_pending.clear();
            }
            let (lines, hidden_lines) = entry.screen.view();
            let finished_now = !entry.running();
            let view = TerminalView {
                id: id.clone(),
                command,
                cwd: entry.cwd.clone(),
                origin: entry.origin,
                lines,
                hidden_lines,
                state: entry.state.clone(),
                elapsed_ms: entry.ended_at.unwrap_or(now).saturating_sub(entry.started_at),
            };
            let approved_on = entry.approved_on;
            let status = match &view.state {
                TerminalState::Running => ToolStatus::InProgress,
                TerminalState::Exited { exit_code: Some(0), signal: None, killed: false } => ToolStatus::Completed,
                TerminalState::Exited { .. } | TerminalState::Failed { .. } => ToolStatus::Failed,
            };
            self.thread.set_terminal(view);
            if let Some(card) = approved_on
                && self.thread.tool_call(card).is_some_and(|call| call.status != status)
            {
                self.update_own_card(card, |call| call.status = status);
            }
            if finished_now {
                actions.extend(self.close_old_mirrors());
            }
        }
        actions
    }

    /// Closes the terminals of the oldest finished commands beyond [`OPEN_FINISHED_MIRRORS`].
    pub(in crate::acp) fn close_old_mirrors(&mut self) -> Vec<HostAction> {
        let finished: Vec<usize> = (0..self.terminals.list.len())
            .filter(|&index| {
                let entry = &self.terminals.list[index];
                entry.mirror == Mirror::Open && !entry.running()
            })
            .collect();
        let excess = finished.len().saturating_sub(OPEN_FINISHED_MIRRORS);
        finished[..excess]
            .iter()
            .map(|&index| {
                let entry = &mut self.terminals.list[index];
                entry.mirror = Mirror::Closed;
                entry.mirror_pending.clear();
                HostAction::CloseTerminal { terminal: entry.id.clone() }
            })
            .collect()
    }
}

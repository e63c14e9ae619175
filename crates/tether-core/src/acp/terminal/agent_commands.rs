//! Commands an agent runs by itself and streams through its tool calls' `_meta`
//! (`terminal_output`, `terminal_output_delta`, `terminal_exit`), as Claude's and Codex's
//! adapters do, and the terminals a tool call embeds.

use super::*;

impl AcpClient {
    /// The `_meta` of a tool call (update) from an agent that runs commands itself.
    pub(in crate::acp) fn on_terminal_meta(&mut self, tool_call: &str, meta: Option<&acp::Meta>) {
        let Some(meta) = meta else { return };
        let terminal_id = |key: &str| {
            meta.get(key).and_then(|value| value.get("terminal_id")).and_then(|id| id.as_str()).map(str::to_owned)
        };
        let now = self.event_time();
        if let Some(id) = terminal_id("terminal_info") {
            let cwd = meta["terminal_info"].get("cwd").and_then(|cwd| cwd.as_str()).map(str::to_owned);
            self.agent_terminal(&id, tool_call, now).cwd = cwd.filter(|cwd| cwd != self.cwd());
        }
        for key in ["terminal_output", "terminal_output_delta"] {
            let Some(id) = terminal_id(key) else { continue };
            let Some(data) = meta[key].get("data").and_then(|data| data.as_str()) else { continue };
            // Not through a PTY: bare line feeds must return to the first column in VS Code's
            // terminal too.
            let data = with_carriage_returns(data);
            let entry = self.agent_terminal(&id, tool_call, now);
            // Claude's adapter sends the whole output once, at the end, as `terminal_output`;
            // newer adapters stream `terminal_output_delta` pieces and may still send the whole.
            if key == "terminal_output_delta" {
                entry.streamed = true;
            } else if entry.streamed {
                continue;
            }
            entry.push_output(&data);
            if entry.mirror == Mirror::NotYet {
                entry.mirror = Mirror::Wanted;
            }
            self.terminals.dirty.insert(id);
        }
        if let Some(id) = terminal_id("terminal_exit") {
            let exit = &meta["terminal_exit"];
            let status = TerminalExitStatus {
                exit_code: exit.get("exit_code").and_then(|code| code.as_u64()).map(|code| code as u32),
                signal: exit.get("signal").and_then(|signal| signal.as_str()).map(str::to_owned),
            };
            self.agent_terminal(&id, tool_call, now).exited(status, false, now);
            self.terminals.dirty.insert(id);
        }
    }

    /// The agent's own terminal `id`, created when first heard of.
    fn agent_terminal(&mut self, id: &str, tool_call: &str, now: u64) -> &mut TerminalEntry {
        let index = match self.terminals.list.iter().position(|entry| entry.id == id) {
            Some(index) => index,
            None => {
                let mut entry = TerminalEntry::new(id.to_owned(), TerminalOrigin::Agent, String::new(), None, now);
                entry.tool_call = Some(tool_call.to_owned());
                self.terminals.list.push(entry);
                self.terminals.dirty.insert(id.to_owned());
                self.terminals.list.len() - 1
            }
        };
        &mut self.terminals.list[index]
    }

    /// Remembers which tool call embeds which terminal (for the name and command of an agent's
    /// own command), after a tool call changed.
    pub(in crate::acp) fn link_terminals(&mut self, tool_call_index: crate::thread::EntryIndex) {
        let Some(call) = self.thread.tool_call(tool_call_index) else { return };
        let call_id = call.id.clone();
        let ids: Vec<String> = call.terminal_ids().map(str::to_owned).collect();
        for id in ids {
            let Some(entry) = self.terminals.get_mut(&id) else { continue };
            let previous = entry.tool_call.replace(call_id.clone());
            // The command line or title may have changed: the card shows it.
            self.terminals.dirty.insert(id.clone());
            // An agent that ran a command without asking may still show it on a tool call of its
            // own afterwards: the terminal moves there, and Tether's card keeps the question and
            // its answer, so the output is not shown twice.
            if let Some(previous) = previous.filter(|previous| *previous != call_id && is_run_card(previous))
                && let Some(card) = self.thread.find_tool_call(&previous)
            {
                self.update_own_card(card, |call| {
                    call.content.retain(
                        |content| !matches!(content, ToolContent::Terminal { terminal_id } if *terminal_id == id),
                    );
                });
            }
        }
    }

    pub(in crate::acp) fn command_of_tool_call(&self, tool_call: &str) -> String {
        self.thread
            .find_tool_call(tool_call)
            .and_then(|index| self.thread.tool_call(index))
            .map(|call| call.command.clone().unwrap_or_else(|| call.title.clone()))
            .unwrap_or_default()
    }
}

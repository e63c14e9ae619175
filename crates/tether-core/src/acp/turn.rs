//! The prompt turn: the person's prompt held until its snapshot is taken and the files it
//! mentions are read, the prompt in flight to the agent, and cancelling it.
//!
//! One turn runs at a time and a prompt sent while one runs is refused, so the turn is two slots
//! (held, in flight), not a queue.

use agent_client_protocol_schema::v1 as acp;

use crate::jsonrpc::RequestId;
use crate::permissions::AuditEvent;
use crate::thread::{Entry, NoticeLevel, TurnState};
use crate::webview::PromptAttachment;

use super::{AcpClient, AcpEvent, IntentError, Phase, RequestKind, links, prompt_content};

/// The person's prompt, before and after it leaves for the agent.
#[derive(Debug, Default)]
pub(super) struct Turn {
    /// The prompt waiting for its snapshot and its mentioned files before it is sent.
    pub(super) held: Option<prompt_content::HeldPrompt>,
    /// The `session/prompt` the agent has not answered yet.
    pub(super) in_flight: Option<RequestId>,
    /// The serial of the last prompt made, which its mention reads carry.
    serial: u64,
    /// The person stopped this turn (`session/cancel` was sent): what the agent reports failed
    /// from then on was stopped (see [`AcpClient::shown_status`]). Until the next prompt, since
    /// an agent may report its tools after it answered the prompt.
    pub(super) stopped: bool,
}

impl AcpClient {
    /// Sends the person's prompt and starts a turn: its text, then what it attaches (see
    /// `prompt_content`). The prompt waits for the turn's snapshot and for the mentioned files
    /// it embeds to be read.
    pub fn prompt(&mut self, text: &str, attachments: &[PromptAttachment], _now: u64) -> Result<(), IntentError> {
        if self.phase == Phase::SigningIn {
            // The person dismissed the sign-in (or a login did not finish): this prompt waits for
            // the sign-in it asks for again.
            return self.hold_prompt_for_sign_in(text, attachments);
        }
        let Some(session_id) = self.session.id.clone().filter(|_| self.phase == Phase::Ready) else {
            return Err(IntentError::NotReady);
        };
        if self.turn.in_flight.is_some() {
            return Err(IntentError::TurnRunning);
        }
        if self.turn.held.is_some() {
            return Err(IntentError::TurnRunning);
        }
        let (mut blocks, reads) =
            prompt_content::prompt_blocks(text, attachments, self.controls.view.prompt, &self.workspace)?;
        self.start_turn_files();
        self.turn.stopped = false;
        self.remember_prompt(text, attachments);
        self.thread.push(Entry::User(prompt_content::user_message(&blocks, &self.workspace)));
        // What a restored conversation must tell the agent goes with the first prompt, after the
        // person's blocks (whose places the reads below refer to), for the agent alone.
        if let Some(preface) = self.session.preface.take() {
            blocks.push(prompt_content::context_block(preface));
        }
        self.thread.set_turn(TurnState::Running);
        self.turn.serial += 1;
        let serial = self.turn.serial;
        self.turn.held = Some(prompt_content::HeldPrompt {
            serial,
            session_id,
            blocks,
            // The prompt leaves once the workspace is snapshotted, so that every edit the agent
            // makes by itself can be found and reverted.
            snapshot_pending: self.wants_snapshot(),
            reads_pending: reads.len(),
            notices: Vec::new(),
        });
        if self.wants_snapshot() {
            self.events.push_back(AcpEvent::TakeSnapshot);
        }
        for (block, path) in reads {
            self.resolve_then(vec![path.clone()], links::Waiting::Mention { prompt: serial, block, path });
        }
        self.send_held_prompt_if_ready();
        Ok(())
    }

    /// Sends the held prompt once nothing it waits for is missing.
    pub(super) fn send_held_prompt_if_ready(&mut self) {
        if !self.turn.held.as_ref().is_some_and(prompt_content::HeldPrompt::ready) {
            return;
        }
        let Some(held) = self.turn.held.take() else { return };
        let (request, notices) = held.into_request();
        // A turn has no deadline: agents legitimately work for many minutes.
        let id = self.send_request("session/prompt", &request, RequestKind::Prompt, None);
        self.turn.in_flight = Some(id);
        for text in notices {
            self.notice(NoticeLevel::Warning, text.clone());
            // The wire does not say why a file went as a link; the log must.
            self.audit(AuditEvent::Notice { level: NoticeLevel::Warning, text, detail: None });
        }
    }

    /// A file the held prompt mentions was resolved: it is read from where it leads, unless that
    /// is outside the workspace. The person picked the file from the workspace's list, but not
    /// its target: a link out of the workspace goes as a link (the agent's read of it then asks),
    /// never with the content of a file the person did not see.
    pub(super) fn mention_resolved(&mut self, prompt: u64, block: usize, path: String) {
        let target = self.target(&path);
        if !target.is_outside() {
            self.read_mention(prompt, block, path, target.leads_to);
            return;
        }
        let shown = target.shown(&self.workspace);
        self.mention_done(
            prompt,
            block,
            Err(format!("{shown} was sent as a link, not its content: it leads outside the workspace.")),
        );
    }

    /// A file the held prompt mentions was read (or could not be).
    pub(super) fn on_mention_read(
        &mut self,
        prompt: u64,
        block: usize,
        path: &str,
        read: Result<Option<String>, String>,
    ) {
        let shown = self.workspace.label(path);
        self.mention_done(prompt, block, prompt_content::embed_file(path, &shown, read));
    }

    /// A mentioned file's block is settled: embedded, or left a link for the reason given (shown
    /// once the prompt has gone).
    pub(super) fn mention_done(&mut self, prompt: u64, block: usize, embedded: Result<acp::ContentBlock, String>) {
        let Some(held) = self.turn.held.as_mut().filter(|held| held.serial == prompt) else {
            // The prompt was cancelled before its files were read.
            return;
        };
        held.reads_pending -= 1;
        match embedded {
            Ok(embedded) => {
                if let Some(slot) = held.blocks.get_mut(block) {
                    *slot = embedded;
                }
            }
            Err(why) => held.notices.push(why),
        }
        self.send_held_prompt_if_ready();
    }

    /// Asks the agent to stop the running turn. The turn ends when the agent answers the prompt
    /// (with stop reason `cancelled`); every permission request still waiting is answered
    /// `cancelled` now, as ACP requires.
    pub fn cancel(&mut self, now: u64) {
        self.thread.set_now(now);
        if let Some(held) = self.turn.held.take() {
            // The prompt never left: the turn ends here, and only the log's record tells a
            // replay that it was asked.
            self.thread.set_turn(TurnState::ended(acp::StopReason::Cancelled));
            let (request, _) = held.into_request();
            self.audit(AuditEvent::PromptCancelled {
                prompt: crate::json_value::to_value(&request.prompt).unwrap_or_default(),
            });
            return;
        }
        let (Some(session_id), Some(_)) = (self.session.id.clone(), &self.turn.in_flight) else {
            return;
        };
        self.send_notification("session/cancel", &acp::CancelNotification::new(session_id));
        self.turn.stopped = true;
        self.cancel_waiting("the person cancelled the turn");
        self.settle_waiting_writes("The turn was cancelled");
    }
}

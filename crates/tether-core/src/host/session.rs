//! One session's own state and the rules about it that need nothing of the window: which of
//! tetherd's events are its own, what it keeps of the agent's stderr, and what it asks tetherd
//! to write to the agent.
//!
//! A Claude CLI session (`AgentProfile::protocol`) has a [`ClaudeCli`] between its client and
//! tetherd: the client's ACP goes to it and its answers come back to the client here, and what
//! reaches tetherd is the CLI's own wire, for whichever CLI process runs now.

use std::collections::{BTreeMap, VecDeque};

use crate::acp::AcpClient;
use crate::claude_cli::ClaudeCli;
use crate::host_api::AgentProfile;
use crate::session_log::shortened;
use crate::sidecar::{AgentId, method};
use crate::terminal_screen::TerminalScreen;
use crate::webview::SessionKey;

use super::session_io::FolderAnswers;

/// How much of an agent's stderr is kept to explain a crash.
pub(super) const STDERR_TAIL_LINES: usize = 40;
pub(super) const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// How many characters of the agent's last stderr line the header shows while it starts.
const LAST_STDERR_CHARS: usize = 200;

/// One session of the window: the agent process that serves it and its ACP client, which holds
/// the thread, the permission policy in force, the changes under review and the terminals.
///
/// The window has as many as the person opened, each a value of this type with its own key,
/// agent and client (see `tabs.rs`).
#[derive(Debug)]
pub(super) struct Session {
    /// The session's key for as long as the window has it open: the generation it was made in.
    /// Its client numbers everything it hands out (permission keys, changes, edits, reads) from
    /// `key << 32`, so an id says which session it belongs to (see `tabs.rs`).
    pub(super) key: SessionKey,
    /// The agent process now serving it: bumped for every new process, so that late messages
    /// about an older one are recognised.
    pub(super) generation: u64,
    pub(super) profile: AgentProfile,
    /// Known once tetherd answered `agent/spawn`.
    pub(super) agent_id: Option<AgentId>,
    pub(super) client: AcpClient,
    pub(super) stderr_tail: VecDeque<String>,
    /// The session folder tetherd created, holding the audit log.
    pub(super) session_dir: Option<String>,
    /// Audit records made before tetherd said which agent this is; sent once it has.
    pub(super) unsent_audit: Vec<String>,
    /// The `seq` of the last event of the session's log the thread was rebuilt from: the agent's
    /// events up to it are already in the thread.
    pub(super) replayed_through: u64,
    /// The person cancelled the running turn and the agent has not ended it yet: Stop agent is
    /// offered.
    pub(super) cancel_sent: bool,
    /// The person stopped the agent and tetherd has not said it is gone yet: Restart waits,
    /// since the session's log is the old agent's until then.
    pub(super) stopping: bool,
    /// `profile` is one the person configured. False for a session whose agent is no longer
    /// configured: its transcript is shown, but nothing is ever started for it (the command a
    /// session's log recorded is never run).
    pub(super) configured: bool,
    /// tetherd could not write the session's log and ended the agent (`agent/logFailed`): the
    /// thread and the header say so already, and the exit that follows adds nothing.
    pub(super) log_failed: bool,
    /// The Claude CLI translator, for a Claude CLI session; its processes come and go (one per
    /// turn, or one kept alive) while the session's "agent" stays. `agent_id` is the CLI now
    /// running.
    pub(super) claude: Option<ClaudeCli>,
    /// The Claude CLI processes tetherd runs for this session, by agent id: the translator's
    /// number for each (an older one may still be finishing when a newer one starts).
    pub(super) cli_processes: BTreeMap<AgentId, u64>,
    /// For a conversation restored from a checkpoint: how many of its thread's entries were
    /// copied from the session it came from, and the prompt it went back to before (its tab says
    /// so until the person prompts in it).
    pub(super) restored_from: Option<(usize, String)>,
    /// The folders the turn's snapshot was taken in, each with its store: the turn's scans
    /// compare those, whatever folders the workspace gained or lost since.
    pub(super) snapshot_folders: Vec<(String, String)>,
    /// tetherd's answers to the snapshot being taken, folder by folder (see `session_io.rs`).
    pub(super) snapshot_answers: FolderAnswers,
    /// tetherd's answers to the scan for changes in flight, folder by folder.
    pub(super) scan_answers: FolderAnswers,
}

impl Session {
    /// A session of generation `generation` for `profile`'s agent (`configured`: one the person
    /// has; see [`Session::configured`]), not started yet.
    pub(super) fn new(
        generation: u64,
        profile: AgentProfile,
        client: AcpClient,
        configured: bool,
        claude: Option<ClaudeCli>,
    ) -> Self {
        Session {
            key: generation,
            generation,
            profile,
            agent_id: None,
            client,
            stderr_tail: VecDeque::new(),
            session_dir: None,
            unsent_audit: Vec::new(),
            replayed_through: 0,
            cancel_sent: false,
            stopping: false,
            configured,
            log_failed: false,
            claude,
            cli_processes: BTreeMap::new(),
            restored_from: None,
            snapshot_folders: Vec::new(),
            snapshot_answers: FolderAnswers::default(),
            scan_answers: FolderAnswers::default(),
        }
    }

    /// Whether `agent_id` is this session's agent: messages from an agent that was replaced are
    /// not.
    pub(super) fn is_served_by(&self, agent_id: AgentId) -> bool {
        self.agent_id == Some(agent_id)
    }

    /// Whether the event numbered `seq` in the session's log is new to the thread: one the
    /// thread was rebuilt from after a window reload is there already.
    pub(super) fn is_new_event(&self, seq: Option<u64>) -> bool {
        seq.is_none_or(|seq| seq > self.replayed_through)
    }

    /// Keeps a line of the agent's stderr, within [`STDERR_TAIL_LINES`] and
    /// [`STDERR_TAIL_BYTES`], to explain a crash.
    pub(super) fn keep_stderr(&mut self, line: &str) {
        let tail = &mut self.stderr_tail;
        tail.push_back(line.to_owned());
        while tail.len() > STDERR_TAIL_LINES
            || (tail.len() > 1 && tail.iter().map(String::len).sum::<usize>() > STDERR_TAIL_BYTES)
        {
            tail.pop_front();
        }
    }

    /// The last line the agent wrote to stderr that shows any text, as a terminal would show it
    /// (colours and other escapes interpreted, a line redrawn with `\r` as it ended up), cut to
    /// [`LAST_STDERR_CHARS`]; `None` when the agent wrote nothing yet. It goes with the header
    /// while the agent starts (`SessionStatus::Starting`).
    pub(super) fn last_stderr_text(&self) -> Option<String> {
        self.stderr_tail.iter().rev().find_map(|line| {
            let mut screen = TerminalScreen::new();
            screen.feed(line);
            let text = screen.plain_text();
            let words = text.lines().rev().map(str::trim).find(|words| !words.is_empty())?;
            Some(shortened(words, LAST_STDERR_CHARS))
        })
    }

    /// The session goes on with a new agent process, numbered `generation`: nothing of the old
    /// one's is kept but the thread and the session folder.
    pub(super) fn prepare_new_agent(&mut self, generation: u64, now: u64) {
        self.generation = generation;
        self.agent_id = None;
        self.replayed_through = 0;
        self.cancel_sent = false;
        self.log_failed = false;
        self.stderr_tail.clear();
        self.client.prepare_new_agent(now);
    }

    /// The client's lines for the agent, as `agent/send` notifications to tetherd (empty until
    /// tetherd has said which agent this is: they wait in the client until then). A Claude CLI
    /// session's client talks to its translator here, until neither has more to say; what goes
    /// to tetherd is the translator's lines for the CLI now running.
    pub(super) fn take_agent_writes(&mut self, now: u64) -> String {
        let mut writes = String::new();
        if let Some(claude) = &mut self.claude {
            loop {
                let mut moved = false;
                while let Some(line) = self.client.poll_outgoing() {
                    moved = true;
                    claude.handle_client_line(&line, now);
                }
                while let Some(line) = claude.poll_client_line() {
                    moved = true;
                    self.client.handle_message(&line, now);
                }
                if !moved {
                    break;
                }
            }
            let Some(agent_id) = self.agent_id else { return writes };
            while let Some(line) = claude.poll_cli_line() {
                push_agent_send(&mut writes, agent_id, &line);
            }
            return writes;
        }
        let Some(agent_id) = self.agent_id else { return writes };
        while let Some(line) = self.client.poll_outgoing() {
            push_agent_send(&mut writes, agent_id, &line);
        }
        writes
    }

    /// The session's audit log, once tetherd has made its folder.
    pub(super) fn audit_log(&self) -> Option<String> {
        self.session_dir.as_ref().map(|dir| format!("{dir}/audit.jsonl"))
    }
}

/// Appends an `agent/send` of `line` to `writes`. The line is JSON the engine encoded itself, so
/// it is embedded as it is: no re-escaping, no second parse.
fn push_agent_send(writes: &mut String, agent_id: AgentId, line: &str) {
    writes.push_str(&format!(
        r#"{{"jsonrpc":"2.0","method":"{}","params":{{"agentId":{agent_id},"message":{line}}}}}"#,
        method::AGENT_SEND
    ));
    writes.push('\n');
}

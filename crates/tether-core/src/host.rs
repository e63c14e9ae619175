//! The engine of one VS Code window: the tetherd connection, the live session, the chat view
//! and VS Code's commands, as one state machine with no IO.
//!
//! The TypeScript host feeds it socket bytes, webview messages, commands and the time, and
//! carries out the [`HostAction`]s it polls; everything that decides what a message means lives
//! here (see ARCHITECTURE.md, "extension/": the host holds no protocol logic).
//!
//! The window is split by owner, each module owning its state:
//!
//! | module | owns |
//! |---|---|
//! | `tetherd` | `TetherdLink`: the connection, its requests and notifications, restarts |
//! | `session` | `Session`: one session's agent process, its ACP client (thread, policy in force, reviews, terminals) |
//! | `agent` | the live session's lifecycle: start, stop, exit, restart, prompts |
//! | `agent_picker` | `AgentNotes`: what each agent said of itself; the picker's list |
//! | `session_io` | carrying out what the session's client asks of the window (tetherd, host, view) |
//! | `history` | `History`: the workspace's sessions, reopening, the picker, export |
//! | `sign_in` | `SignInState`: the keys the person gave, asking how to sign in |
//! | `policy` | `PolicyKeeper`: the permission policy between sessions; every change of mode or rule |
//! | `chat_view` | `ChatView`: the header, the outbox posted once per frame, the badge |
//! | `tabs` | the sessions open beside the shown one, and which session an input is for |
//!
//! This file keeps the engine's public face: its inputs (`handle_*`), its outputs (`poll_*`),
//! and the one dispatcher of the person's [`Intent`]s.
//!
//! Several sessions can be open at once, each with its own agent, client, mode and rules; one is
//! shown, the others go on in the background (`tabs.rs`). "New Session" and "Select Agent" open
//! a new one beside them (replacing the shown one only when nothing was ever asked in it). The
//! person's permission policy outlives sessions in the same window: a new session starts from the
//! mode and the workspace rules (session rules end with their session).
//!
//! The webview gets a snapshot when it says `ready` and then patches, batched so that at most one
//! post leaves per [`FRAME_MS`] of the host's clock however fast the agent streams: the engine holds
//! patches back and asks for a timer (`poll_timeout`) instead of posting early.

mod agent;
mod agent_picker;
mod chat_view;
mod claude_processes;
mod editor_questions;
mod history;
mod mcp_config;
mod policy;
mod session;
mod session_io;
mod sign_in;
mod tabs;
mod tetherd;

pub use tetherd::{MAX_AUTOMATIC_SIDECAR_RESTARTS, SIDECAR_RESTART_WINDOW_MS};

use std::collections::VecDeque;

use crate::acp::IntentError;
use crate::claude_cli::ClaudeCli;
use crate::host_api::{AgentProfile, EngineConfig, FileReadReply, HostAction, HostCommand, HostEvent, LogLevel};
use crate::intent::Intent;
use crate::mentions::{self, FindOutcome, MentionIndex};
use crate::webview::{HostToWebview, PromptAttachment, SessionKey, ViewEvent, WebviewToHost};
use crate::workspace_path::{Workspace, absolute_path};

use chat_view::{ChatView, WebviewOutbox};
use history::History;
use policy::PolicyKeeper;
use session::Session;
use sign_in::SignInState;
use tetherd::TetherdLink;

/// The shortest time between two posts to the webview: one animation frame at 60 Hz.
pub const FRAME_MS: u64 = 16;

#[derive(Debug)]
pub struct HostEngine {
    config: EngineConfig,
    tetherd: TetherdLink,
    /// The session in focus (the shown one, unless another is being handled: see `tabs.rs`):
    /// its agent, thread, permissions, reviews and terminals.
    session: Option<Session>,
    /// The other open sessions, going on in the background.
    parked: Vec<tabs::ParkedSession>,
    /// The key of the session shown in the chat view.
    shown: SessionKey,
    /// Bumped for every new session, so that late messages about an older one are recognised.
    generation: u64,
    /// The profile the next session uses.
    selected_profile: Option<String>,
    /// The built-in agents and the `tether.agents` profiles, merged (see `profiles.rs`).
    configured_profiles: Vec<AgentProfile>,
    /// What each agent said of itself as it started, for the agent picker.
    agent_notes: agent_picker::AgentNotes,
    /// The chat view: its header, and what it has not been sent yet (see `chat_view.rs`).
    view: ChatView,
    /// The person's permission policy between sessions, and the rules in the settings it cannot
    /// use (see `policy.rs`).
    policy: PolicyKeeper,
    /// The files open in editors, for the snapshot before each turn.
    open_documents: Vec<String>,
    /// The time of the input being handled, for deadlines of requests made while reacting to the
    /// client's events.
    now: u64,
    /// The keys the person gave for agents, and whom they were tried on (see `sign_in.rs`).
    sign_in: SignInState,
    /// The files and selection the composer's `@` list offers.
    mentions: MentionIndex,
    /// Why the session being reopened after a lost tetherd was cut off: its agent's turn ends
    /// with this when the log has been folded.
    interrupted_by: Option<String>,
    /// A prompt that was on its way when tetherd was lost (see [`LostPrompt`]).
    lost_prompt: Option<LostPrompt>,
    /// A prompt the person sent before its session could take it (the agent not running, or
    /// still starting): it goes out once the session of that agent (`generation`) is ready.
    waiting_prompt: Option<WaitingPrompt>,
    /// The workspace's sessions, and the one being read.
    history: History,
    actions: VecDeque<HostAction>,
    /// The person's MCP servers, read from the settings with their secrets.
    mcp_settings: mcp_config::McpSettings,
    /// What agents' MCP tools asked VS Code, waiting for its answers.
    editor_questions: editor_questions::EditorQuestions,
}

/// The prompt of the turn running in the shown session when tetherd was lost. tetherd may have
/// gone before it wrote the prompt to the session's log (and to the agent); the session is then
/// read back from the log without it, and the prompt goes back to the text box.
#[derive(Debug)]
struct LostPrompt {
    /// The session's folder.
    dir: String,
    /// How many prompts the thread had, this one included.
    prompts: usize,
    text: String,
}

#[derive(Debug)]
struct WaitingPrompt {
    /// The session generation of the agent it waits for; `None` when tetherd is being started
    /// again, or has just been, and the session it reopens is not known yet.
    generation: Option<u64>,
    /// With no `generation`: the folder of the session it was written in, which the reopening
    /// brings back; the prompt goes to that session and no other tab's (`None`: to whichever
    /// session starts, as one with no folder is not reopened but started anew).
    session_dir: Option<String>,
    text: String,
    attachments: Vec<PromptAttachment>,
}

impl WaitingPrompt {
    /// Whether the prompt is for `slot`'s session.
    fn is_for(&self, slot: &session::Session) -> bool {
        match self.generation {
            Some(generation) => generation == slot.generation,
            None => self.session_dir.as_ref().is_none_or(|dir| slot.session_dir.as_ref() == Some(dir)),
        }
    }
}

impl HostEngine {
    pub fn new(config: EngineConfig) -> Self {
        let policy = PolicyKeeper::new(config.permissions.default_mode);
        let selected_profile = config.default_profile.clone();
        let mut engine = HostEngine {
            config,
            tetherd: TetherdLink::new(),
            session: None,
            parked: Vec::new(),
            shown: 0,
            generation: 0,
            selected_profile,
            configured_profiles: Vec::new(),
            agent_notes: agent_picker::AgentNotes::default(),
            view: ChatView::new(),
            policy,
            open_documents: Vec::new(),
            now: 0,
            history: History::default(),
            sign_in: SignInState::default(),
            mentions: MentionIndex::default(),
            interrupted_by: None,
            lost_prompt: None,
            waiting_prompt: None,
            actions: VecDeque::new(),
            editor_questions: editor_questions::EditorQuestions::default(),
            mcp_settings: mcp_config::McpSettings::default(),
        };
        engine.read_agent_settings();
        engine.read_mcp_settings();
        let settings = engine.config.permissions.clone();
        engine.configure_permissions(&settings);
        engine.view.header.agent = engine.current_profile().map(|profile| profile.name).unwrap_or_default();
        engine.view.header.follow_agent = engine.config.follow_agent;
        engine.start_sidecar();
        engine
    }

    /// A message from the chat view.
    pub fn handle_webview(&mut self, message: impl Into<WebviewToHost>, now: u64) {
        self.now = now;
        match message.into() {
            WebviewToHost::View(ViewEvent::Ready) => {
                self.view.outbox.ready = true;
                self.post_snapshot(now);
                if let Some(mention) = self.view.outbox.mention_waiting.take() {
                    self.post_now(HostToWebview::AddMention { mention });
                }
            }
            WebviewToHost::View(ViewEvent::FindMentions { query, fresh }) => {
                match self.mentions.find(&query, fresh, &self.workspace()) {
                    FindOutcome::ListFiles => self.actions.push_back(HostAction::ListWorkspaceFiles),
                    FindOutcome::Wait => {}
                    FindOutcome::Answer(items) => self.post_now(HostToWebview::Mentions { query, items }),
                }
            }
            WebviewToHost::Intent(intent) => return self.handle_intent(intent, now),
        }
        self.refresh_permissions_view();
        self.finish(now);
    }

    /// A VS Code command or event.
    pub fn handle_command(&mut self, command: impl Into<HostCommand>, now: u64) {
        self.now = now;
        match command.into() {
            HostCommand::Intent(intent) => return self.handle_intent(intent, now),
            HostCommand::Event(event) => self.host_event(event),
        }
        self.refresh_permissions_view();
        self.finish(now);
    }

    /// Something the person asked for, from the chat view or from VS Code: the one place that
    /// decides what each intent does.
    pub fn handle_intent(&mut self, intent: Intent, now: u64) {
        self.now = now;
        // An answer to a card or a review decided in the diff editor may be a parked session's:
        // it is handled with that session in focus.
        let owner = match &intent {
            Intent::AnswerPermission { key, .. } => Some(tabs::key_of_id(*key)),
            Intent::Review { intent } => intent.change().map(tabs::key_of_id),
            Intent::Terminal { intent } => self.key_of_terminal(intent.terminal()),
            _ => None,
        };
        if let Some(key) = owner.filter(|key| *key != self.shown)
            && self.with_session(key, |engine| engine.handle_session_intent(intent.clone(), now)).is_some()
        {
            self.refresh_permissions_view();
            return self.finish(now);
        }
        self.handle_session_intent(intent, now);
        self.refresh_permissions_view();
        self.finish(now);
    }

    /// An intent, for the session in focus where it is about one.
    fn handle_session_intent(&mut self, intent: Intent, now: u64) {
        match intent {
            Intent::Prompt { text, mut attachments } => {
                let typed = self.mentions.typed_mentions(&text, &attachments);
                attachments.extend(typed);
                self.prompt(&text, &attachments, now)
            }
            Intent::Cancel => self.cancel(now),
            Intent::AnswerPermission { key, option_id } => self.answer_permission(key, &option_id, now),
            Intent::NewSession => self.new_session_like_shown(now),
            Intent::RestoreCode { entry } => {
                self.with_client("The code was not restored", |client| client.restore_code(entry));
            }
            Intent::UndoRestore { restore } => {
                self.with_client("The restore was not undone", |client| client.undo_restore(restore));
            }
            Intent::RestoreConversation { entry } => self.restore_conversation(entry, now),
            Intent::ShowSession { key } => self.show_session(key, now),
            Intent::CloseSession { key, confirmed } => self.close_session(key, confirmed, now),
            Intent::SelectAgent { name } => self.select_agent(name, now),
            Intent::SetMode { mode } => self.set_mode(mode, now),
            Intent::SetConfigOption { config_id, value } => {
                self.with_client("The option was not changed", |client| {
                    client.set_config_option(&config_id, value, now)
                });
            }
            Intent::AddRule { spec, scope } => self.add_rule(spec, scope),
            Intent::RemoveRule { id } => self.remove_rule(id),
            Intent::ClearRules { scope } => self.clear_rules(scope),
            Intent::KeepRuleForWorkspace { id } => self.keep_rule_for_workspace(id),
            Intent::OpenAuditLog => match self.audit_log() {
                Some(path) => self.actions.push_back(HostAction::OpenFile { path, line: None }),
                None => self.show(
                    LogLevel::Info,
                    "This session has no audit log yet (it is kept once the agent has started, in a workspace folder)."
                        .to_owned(),
                ),
            },
            Intent::Review { intent } => self.review(intent, now),
            Intent::Terminal { intent } => self.terminal_intent(intent),
            Intent::ShowHistory => self.show_history(now),
            Intent::OpenSession { id } => self.open_history_session(&id, now),
            Intent::RenameSession { id, title } => self.rename_session(id, title, now),
            Intent::DeleteSession { id } => self.delete_session(id, now),
            Intent::ExportSession { id, format } => self.export_session(id, format, now),
            Intent::Restart => self.restart(now),
            Intent::StopAgent => self.stop_agent(now),
            Intent::SignIn => self.sign_in_again(),
            Intent::Authenticate { method_id, env } => self.authenticate(&method_id, env, now),
            Intent::SetAgentMode { id } => {
                self.with_client("The agent's mode was not changed", |client| client.set_agent_mode(&id, now));
            }
            Intent::SetFollowAgent { on } => self.set_follow_agent(on),
            Intent::ToggleFollowAgent => self.set_follow_agent(!self.view.header.follow_agent),
            Intent::ManageTrust => self.actions.push_back(HostAction::ManageWorkspaceTrust),
            Intent::CopyText { text } => self.actions.push_back(HostAction::WriteClipboard { text }),
            Intent::InsertAtCursor { text } => self.actions.push_back(HostAction::InsertAtCursor { text }),
            Intent::OpenInNewFile { text, language } => {
                self.actions.push_back(HostAction::OpenUntitled { content: text, language });
            }
            Intent::OpenLocation { path, line } => {
                // A card names a path as the agent did: one relative to the workspace is there.
                let path = absolute_path(&self.config.workspace_root, &path);
                self.actions.push_back(HostAction::OpenFile { path, line });
            }
            Intent::OpenAgentSettings => {
                self.actions.push_back(HostAction::OpenSettings { query: "tether.agents".to_owned() })
            }
            Intent::ShowLog => self.actions.push_back(HostAction::ShowLog),
            Intent::MentionSelection { selection } => {
                let mention = mentions::selection_suggestion(&selection, &self.workspace());
                if self.view.outbox.ready {
                    self.post_now(HostToWebview::AddMention { mention });
                } else {
                    // The command shows the chat view too: the mention waits for it.
                    self.view.outbox.mention_waiting = Some(mention);
                }
            }
        }
    }

    fn host_event(&mut self, event: HostEvent) {
        let now = self.now;
        match event {
            HostEvent::Configure {
                agents,
                builtin_profiles,
                missing_builtins,
                default_profile,
                permissions,
                claude_cli,
                mcp_servers,
            } => {
                self.config.claude_cli = claude_cli;
                self.config.mcp_servers = mcp_servers;
                self.read_mcp_settings();
                self.config.agents = agents;
                self.config.builtin_profiles = builtin_profiles;
                self.config.missing_builtins = missing_builtins;
                self.read_agent_settings();
                self.config.default_profile = default_profile;
                // The agent picker lists the profiles as they are now.
                self.view.header_changed();
                self.configure_permissions(&permissions);
                self.config.permissions = permissions;
            }
            HostEvent::OpenDocuments { paths } => self.open_documents = paths,
            HostEvent::DocumentSaved { path } => self.for_each_session(|engine| {
                if let Some(slot) = &mut engine.session {
                    slot.client.handle_document_saved(&path);
                }
            }),
            HostEvent::FileChanged { path } => self.for_each_session(|engine| {
                if let Some(slot) = &mut engine.session {
                    slot.client.handle_file_changed(&path);
                }
            }),
            HostEvent::EditDone { edit, outcome } => {
                self.with_session(tabs::key_of_id(edit), |engine| {
                    if let Some(slot) = &mut engine.session {
                        slot.client.handle_edit_done(edit, outcome);
                    }
                });
            }
            HostEvent::EditorAnswered { question, answer, error } => self.on_editor_answered(question, answer, error),
            HostEvent::McpSecrets { values } => {
                self.mcp_settings.secrets = values;
                self.read_mcp_settings();
            }
            HostEvent::PathsResolved { resolve, roots, paths } => {
                self.with_session(tabs::key_of_id(resolve), |engine| {
                    if let Some(slot) = &mut engine.session {
                        slot.client.handle_paths_resolved(resolve, roots, paths, now);
                    }
                });
            }
            HostEvent::TerminalInput { terminal, data } => {
                let key = self.key_of_terminal(&terminal).unwrap_or(self.shown);
                self.with_session(key, |engine| {
                    if let Some(slot) = &mut engine.session {
                        slot.client.terminal_input(&terminal, data);
                    }
                });
            }
            HostEvent::TerminalResize { terminal, cols, rows } => {
                let key = self.key_of_terminal(&terminal).unwrap_or(self.shown);
                self.with_session(key, |engine| {
                    if let Some(slot) = &mut engine.session {
                        slot.client.terminal_resize(&terminal, cols, rows);
                    }
                });
            }
            HostEvent::TerminalClosed { terminal } => {
                let key = self.key_of_terminal(&terminal).unwrap_or(self.shown);
                self.with_session(key, |engine| {
                    if let Some(slot) = &mut engine.session {
                        slot.client.terminal_closed(&terminal);
                    }
                });
            }
            HostEvent::AgentSecrets { profile, env } => self.sign_in.secrets.add(&profile, env),
            HostEvent::WorkspaceFiles { files, selection } => {
                if let Some((query, items)) = self.mentions.handle_files(files, selection, &self.workspace()) {
                    self.post_now(HostToWebview::Mentions { query, items });
                }
            }
            HostEvent::WorkspaceTrusted => self.workspace_trusted(),
            HostEvent::WorkspaceFolders { folders } => self.set_workspace_folders(folders),
        }
    }

    /// The host's answer to a `ReadFile` action.
    pub fn handle_file_read(&mut self, reply: FileReadReply, data: &[u8], now: u64) {
        self.with_session(tabs::key_of_id(reply.read), |engine| {
            if let Some(slot) = &mut engine.session {
                slot.client.handle_file_read(reply, data, now);
            }
        });
        self.finish(now);
    }

    /// The webview went away (its view was closed); posts stop until it says `ready` again.
    pub fn handle_webview_gone(&mut self) {
        self.view.outbox = WebviewOutbox::default();
    }

    pub fn handle_timeout(&mut self, now: u64) {
        self.now = now;
        self.expire_tetherd_requests(now);
        self.for_each_session(|engine| {
            if let Some(slot) = &mut engine.session {
                slot.client.handle_timeout(now);
                if let Some(claude) = &mut slot.claude {
                    claude.handle_timeout(now);
                }
            }
        });
        self.finish(now);
    }

    /// The workspace's folders, each of them inside (see [`Workspace`]).
    fn workspace(&self) -> Workspace {
        Workspace::new(self.config.workspace_root.clone(), self.config.workspace_folders.iter().cloned())
    }

    /// The workspace's folders changed while the window is open ([`HostEvent::WorkspaceFolders`]).
    /// Every open session counts them from its next request on. A Claude CLI started from now on
    /// gets them as `--add-dir`; a persistent one already running keeps the list it started with,
    /// as the CLI has no way to change it. The agents' MCP tools keep the folders they were
    /// started with (tetherd checks their reads against those), the safe side of the change.
    fn set_workspace_folders(&mut self, folders: Vec<String>) {
        if folders.first().is_some_and(|first| *first != self.config.workspace_root) {
            // VS Code restarts the extensions before a change of the first folder could get
            // here; sessions keep working in the folder they started in meanwhile.
            self.log(
                LogLevel::Warn,
                "the workspace's first folder changed; it counts from the next window on".to_owned(),
            );
        }
        self.log(LogLevel::Info, format!("the workspace's folders are now {}", folders.join(", ")));
        self.config.workspace_folders = folders;
        let folders = self.config.workspace_folders.clone();
        self.for_each_session(|engine| {
            if let Some(slot) = &mut engine.session {
                slot.client.set_workspace_folders(folders.iter().cloned());
                if let Some(claude) = &mut slot.claude {
                    claude.set_workspace_folders(folders.iter().cloned());
                }
            }
        });
    }

    pub fn poll_action(&mut self) -> Option<HostAction> {
        self.actions.pop_front()
    }

    /// When `handle_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<u64> {
        let webview_due = self.frame_has_news().then(|| self.view.next_frame_at());
        let sessions = self.session.iter().chain(self.parked.iter().filter_map(|parked| parked.session.as_ref()));
        let session_due = sessions
            .flat_map(|slot| [slot.client.poll_timeout(), slot.claude.as_ref().and_then(ClaudeCli::poll_timeout)])
            .flatten()
            .min();
        [self.tetherd.next_deadline(), session_due, webview_due].into_iter().flatten().min()
    }

    /// Asks the focused session's client for something the person wants; when it cannot, the
    /// person is told `failed` and why.
    fn with_client(&mut self, failed: &str, ask: impl FnOnce(&mut crate::acp::AcpClient) -> Result<(), IntentError>) {
        let result = match &mut self.session {
            Some(slot) => ask(&mut slot.client),
            None => Err(IntentError::NotReady),
        };
        if let Err(error) = result {
            self.show(LogLevel::Warn, format!("{failed}: {error}."));
        }
    }

    fn log(&mut self, level: LogLevel, text: String) {
        self.actions.push_back(HostAction::Log { level, text });
    }

    fn show(&mut self, level: LogLevel, text: String) {
        self.actions.push_back(HostAction::ShowMessage { level, text });
    }
}

// Generated from Rust by tether-core (src/typescript.rs). Do not edit:
// run `cargo xtask codegen` after changing a wire type.

export type AgentProfile = { name: string, command: string, args: Array<string>, env: { [key in string]: string }, 
/**
 * Working directory of the agent process; the workspace folder when absent.
 */
cwd: string | null, 
/**
 * What the command speaks on its stdio.
 */
protocol: AgentProtocol, };

export type AgentProtocol = "acp" | "claude-cli";

export type ClaudeCliSettings = { 
/**
 * Keep one CLI across turns instead of one per turn (`tether.claudeCode.processMode`).
 */
persistent: boolean, 
/**
 * How long a kept CLI may sit idle before it is ended (`tether.claudeCode.idleTimeoutMinutes`).
 */
idleTimeoutMinutes: number, };

export type EngineConfig = { 
/**
 * The token the host gave tetherd at spawn; presented in `hello`.
 */
token: string, 
/**
 * Sent to the agent as `clientInfo`.
 */
clientName: string, clientVersion: string, 
/**
 * The workspace's first folder: the cwd of sessions and agent processes.
 */
workspaceRoot: string, 
/**
 * Every folder of the workspace (a multi-root workspace has several), absolute, in VS
 * Code's order: each is inside the workspace (for the permissions, the chat's names of files
 * and the `@` list), and the agent's MCP tools may read them. Empty means `workspace_root`
 * alone.
 */
workspaceFolders: Array<string>, 
/**
 * The workspace's `.tether` folder, where sessions and their audit logs are kept; absent
 * when no folder is open (nothing is written then).
 */
tetherDir: string | null, 
/**
 * Path of the scripted test agent binary shipped with the extension, for the "Demo" profile.
 */
demoAgentCommand: string | null, 
/**
 * The `tether.agents` setting, as the person wrote it (anything: the engine reads it, see
 * `profiles.rs`); `null` when it is not set.
 */
agents: unknown, 
/**
 * The agents built into the extension, where the host found them installed; a
 * `tether.agents` profile of the same name replaces one.
 */
builtinProfiles: Array<AgentProfile>, 
/**
 * The built-in agents (by name) the host did not find on this machine: choosing one offers
 * to install it, and the agent picker says so.
 */
missingBuiltins: Array<string>, 
/**
 * The `tether.defaultAgent` setting; the first profile when absent or unknown.
 */
defaultProfile: string | null, permissions: PermissionSettings, 
/**
 * The `tether.followAgent` setting: open each place the agent's tool calls point at.
 */
followAgent: boolean, 
/**
 * VS Code's workspace trust says the person trusts this workspace. Until they do, nothing
 * is started (no tetherd, no agent): a repository someone else wrote must not run anything
 * the person did not choose. Absent means untrusted.
 */
workspaceTrusted: boolean, claudeCli: ClaudeCliSettings, 
/**
 * The `tether.mcpServers` setting (the person's user value only), as written: the engine
 * reads it (see `mcp_settings.rs`); `null` when it is not set.
 */
mcpServers: unknown, };

export type HostCommand = HostEvent | Intent;

export type HostEvent = { "type": "configure", agents: unknown, builtinProfiles: Array<AgentProfile>, 
/**
 * See [`EngineConfig::missing_builtins`].
 */
missingBuiltins: Array<string>, defaultProfile: string | null, permissions: PermissionSettings, 
/**
 * New sessions run the Claude CLI this way; a running one goes on as it started.
 */
claudeCli: ClaudeCliSettings, 
/**
 * `tether.mcpServers`, for sessions started from now on.
 */
mcpServers: unknown, } | { "type": "mcpSecrets", values: { [key in string]: string }, } | { "type": "openDocuments", paths: Array<string>, } | { "type": "fileChanged", path: string, } | { "type": "documentSaved", path: string, } | { "type": "editDone", edit: number, outcome: EditOutcome, } | { "type": "terminalInput", terminal: string, data: string, } | { "type": "terminalResize", terminal: string, cols: number, rows: number, } | { "type": "terminalClosed", terminal: string, } | { "type": "agentSecrets", profile: string, env: { [key in string]: string }, } | { "type": "workspaceFiles", files: Array<string>, selection: EditorSelection | null, } | { "type": "workspaceTrusted" } | { "type": "workspaceFolders", folders: Array<string>, } | { "type": "pathsResolved", resolve: number, roots: Array<ResolvedPath>, paths: Array<ResolvedPath>, } | { "type": "editorAnswered", question: number, answer: EditorAnswer | null, error: string | null, };

export type Intent = { "type": "prompt", text: string, 
/**
 * Files and selections the text mentions with `@`, images pasted or dropped; absent
 * from a webview older than mentions.
 */
attachments: Array<PromptAttachment>, } | { "type": "cancel" } | { "type": "answerPermission", key: number, optionId: string, } | { "type": "newSession" } | { "type": "showSession", key: number, } | { "type": "closeSession", key: number, confirmed: boolean, } | { "type": "restoreCode", entry: number, } | { "type": "undoRestore", restore: number, } | { "type": "restoreConversation", entry: number, } | { "type": "selectAgent", name: string, } | { "type": "setMode", mode: Mode, } | { "type": "setAgentMode", id: string, } | { "type": "setConfigOption", configId: string, value: ConfigValue, } | { "type": "addRule", spec: RuleSpec, scope: RuleScope, } | { "type": "removeRule", id: number, } | { "type": "clearRules", scope: RuleScope, } | { "type": "keepRuleForWorkspace", id: number, } | { "type": "openAuditLog" } | { "type": "review", intent: ReviewIntent, } | { "type": "terminal", intent: TerminalIntent, } | { "type": "showHistory" } | { "type": "openSession", id: string, } | { "type": "renameSession", id: string, title: string, } | { "type": "deleteSession", id: string, } | { "type": "exportSession", id: string | null, format: ExportFormat, } | { "type": "restart" } | { "type": "stopAgent" } | { "type": "signIn" } | { "type": "authenticate", methodId: string, env: { [key in string]: string }, } | { "type": "setFollowAgent", on: boolean, } | { "type": "toggleFollowAgent" } | { "type": "manageTrust" } | { "type": "openAgentSettings" } | { "type": "showLog" } | { "type": "copyText", text: string, } | { "type": "insertAtCursor", text: string, } | { "type": "openInNewFile", text: string, language: string | null, } | { "type": "openLocation", path: string, line: number | null, } | { "type": "mentionSelection", selection: EditorSelection, };

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

export type HostAction = { "type": "startSidecar" } | { "type": "sidecarWrite", data: string, } | { "type": "postWebview", message: HostToWebview, } | { "type": "showMessage", level: LogLevel, text: string, } | { "type": "log", level: LogLevel, text: string, } | { "type": "setBadge", count: number, } | { "type": "saveWorkspaceRules", rules: unknown[], } | { "type": "openFile", path: string, line: number | null, } | { "type": "readFile", read: number, path: string, offset: number, maxBytes: number, } | { "type": "editFile", edit: number, path: string, expected: string | null, result: string | null, edits: Array<TextEdit>, } | { "type": "showReview", document: ReviewDocument, open: boolean, } | { "type": "updateReview", change: number, hunks: Array<ReviewHunk>, settled: boolean, } | { "type": "openReviews", changes: Array<number>, title: string, } | { "type": "clearReviews", session: number, } | { "type": "openTerminal", terminal: string, name: string, interactive: boolean, replay: string, reveal: boolean, } | { "type": "terminalWrite", terminal: string, data: string, } | { "type": "confirmStopTerminal", terminal: string, command: string, } | { "type": "confirmCloseSession", key: number, title: string, } | { "type": "closeTerminal", terminal: string, } | { "type": "showHistory", items: Array<HistoryItem>, } | { "type": "saveExport", suggestedName: string, content: string, } | { "type": "exportFile", source: string, suggestedName: string, } | { "type": "askAuthentication", agent: string, methods: Array<AuthMethodView>, } | { "type": "revealLocation", path: string, line: number | null, } | { "type": "listWorkspaceFiles" } | { "type": "resolvePaths", resolve: number, roots: Array<string>, paths: Array<string>, } | { "type": "manageWorkspaceTrust" } | { "type": "writeClipboard", text: string, } | { "type": "insertAtCursor", text: string, } | { "type": "openUntitled", content: string, language: string | null, } | { "type": "openSettings", query: string, } | { "type": "showLog" } | { "type": "askEditor", question: number, query: EditorQuery, maxResults: number, };

export type PermissionSettings = { 
/**
 * The mode the window starts in (`tether.permissions.defaultMode`).
 */
defaultMode: Mode, 
/**
 * The workspace's rules (`tether.permissions.rules`), as written: the engine checks each and
 * reports the ones it cannot use without dropping them.
 */
rules: unknown[], };

export type EditOutcome = { "type": "applied", saved: boolean, } | { "type": "conflict" } | { "type": "failed", message: string, };

export type FileReadReply = { read: number, outcome: FileReadOutcome, };

export type FileReadOutcome = { "type": "data", eof: boolean, fromEditor: boolean, } | { "type": "notFound" } | { "type": "failed", message: string, };

export type ResolvedPath = { "type": "found", path: string, } | { "type": "failed", message: string, };

export type ExportFormat = "markdown" | "jsonl";

export type HistoryItem = { 
/**
 * What the `openSession`, `renameSession`, `deleteSession` and `exportSession` commands
 * name it by.
 */
id: string, title: string, 
/**
 * The agent profile it ran with.
 */
agent: string, 
/**
 * When something last happened in it (UTC, RFC 3339), when known.
 */
lastActivity: string | null, 
/**
 * How many prompts it holds, when known.
 */
turns: number | null, source: HistorySource, 
/**
 * It is the session the chat shows now.
 */
current: boolean, 
/**
 * Its agent is still running.
 */
live: boolean, 
/**
 * How many times the code was restored to a checkpoint in it.
 */
restores: number, 
/**
 * It went on with a conversation restored from a checkpoint of another session.
 */
fromCheckpoint: boolean, };

export type HistorySource = "tether" | "agent";

export type AuthMethodView = { 
/**
 * What `authenticate` names it by.
 */
id: string, name: string, description: string | null, kind: AuthMethodKind, };

export type AuthMethodKind = { "type": "envVar", vars: Array<AuthVariable>, } | { "type": "terminal", command: string, args: Array<string>, env: { [key in string]: string }, } | { "type": "agent" };

export type AuthVariable = { name: string, 
/**
 * What to call it when asking, when the agent said.
 */
label: string | null, 
/**
 * It may be left empty.
 */
optional: boolean, };

export type EditorSelection = { 
/**
 * The document's absolute path.
 */
path: string, startLine: number, endLine: number, text: string, };

export type SessionView = { 
/**
 * The agent profile in use ("Demo", "Claude Code", ...).
 */
agent: string, 
/**
 * The agent's own name and version from `initialize`, once known.
 */
agentInfo: string | null, status: SessionStatus, 
/**
 * Every profile the person can pick from, in settings order, with what the window knows of
 * each (the header's agent picker).
 */
profiles: Array<ProfileView>, permissions: PermissionsView, 
/**
 * The changes bar: the files changed in the current (or last) turn, and any earlier change
 * still waiting for a decision.
 */
changes: Array<ChangedFileView>, 
/**
 * The agent has exited (or could not be reached) and the session can be continued: the
 * header offers Restart, which starts the agent again and resumes its session.
 */
canRestart: boolean, 
/**
 * The session's agent is a built-in one the host did not find on this machine, and its
 * start failed for want of it: the header offers "Install <agent>…" in place of Restart
 * (which would only fail again). It picks the agent again, which the host answers with its
 * install offer, as for a pick in the agent picker.
 */
canInstall: boolean, 
/**
 * The agent process runs and may be hung: it is still starting, or it was asked to cancel
 * the turn and has not ended it. The header offers Stop (Stop agent during a turn), which
 * kills the process (`StopAgent`).
 */
canStop: boolean, 
/**
 * The agent waits for the person to sign in and they dismissed the choice (or a login did
 * not finish): the header offers "Sign in", which asks again (`SignIn`).
 */
canSignIn: boolean, 
/**
 * "Follow the agent" is on: each place a tool call points at opens in an editor.
 */
followAgent: boolean, 
/**
 * What the agent offers beside the thread: the session's title, slash commands, config
 * options and context usage.
 */
controls: SessionControlsView, 
/**
 * Every session open in the window, in the order they were opened: the tab strip. The
 * rest of this header and the thread are the shown one's.
 */
tabs: Array<SessionTabView>, 
/**
 * The key of the session shown (0 before any session exists).
 */
shown: number, };

export type SessionStatus = { "type": "starting", step: string, elapsedMs: number, 
/**
 * The last line the starting agent wrote to its stderr, as plain text: a start that
 * takes long is often waiting for something the agent says (a sign-in, a download, a
 * network it cannot reach), and the chat shows it once the step is slow.
 */
agentSaid?: string, } | { "type": "ready" } | { "type": "failed", message: string, } | { "type": "exited", message: string, } | { "type": "untrusted", message: string, };

export type SessionTabView = { key: number, 
/**
 * The session's title (the agent's, else the first prompt's start), else the agent's name.
 */
label: string, 
/**
 * The agent profile it runs.
 */
agent: string, activity: TabActivity, };

export type ProfileView = { name: string, state: ProfileState, 
/**
 * The state in words, then, once the agent has started in this window, its own name and
 * version and what it can do: "Running · Claude Code 1.2 · images, resumes sessions".
 */
description: string, };

export type ProfileState = "notInstalled" | "notRunning" | "starting" | "running" | "signIn" | "failed";

export type TabActivity = "idle" | "working" | "waiting" | "review" | "stopped";

export type ViewSnapshot = { session: SessionView, 
/**
 * How many entries come before `entries` and are not in this snapshot: a long thread's
 * snapshot carries its last entries, the ones in sight, and the earlier ones follow in
 * `earlierEntries` messages, from the most recent back, a batch a frame.
 */
earlier: number, entries: Array<Entry>, plan: Array<PlanEntryView>, turn: TurnState, 
/**
 * The terminals that tool calls show, in the order they were created.
 */
terminals: Array<TerminalView>, };

export type HostToWebview = { "type": "snapshot", snapshot: ViewSnapshot, } | { "type": "earlierEntries", from: number, entries: Array<Entry>, } | { "type": "patch", 
/**
 * Present when the session header changed.
 */
session: SessionView | null, thread: Array<ThreadPatch>, } | { "type": "mentions", query: string, items: Array<MentionSuggestion>, } | { "type": "addMention", mention: MentionSuggestion, } | { "type": "promptReturned", text: string, reason: string, };

export type WebviewToHost = ViewEvent | Intent;

export type ViewEvent = { "type": "ready" } | { "type": "findMentions", query: string, fresh: boolean, };

export type PermissionsView = { mode: Mode, 
/**
 * The agent's own current mode, when it has modes (Tether's mode is sent to it when one
 * matches).
 */
agentMode: string | null, 
/**
 * The agent's own modes, as it listed them, for the header's agent mode picker (empty when
 * the agent has no modes).
 */
agentModes: Array<AgentModeView>, 
/**
 * The id of the agent's current mode.
 */
agentModeId: string | null, 
/**
 * Every rule in force: the session's first, then the workspace's.
 */
rules: Array<RuleView>, 
/**
 * Rules in the workspace settings that could not be used, and why.
 */
ruleProblems: Array<string>, 
/**
 * The session's audit log, once tetherd created it.
 */
auditLog: string | null, };

export type AgentModeView = { id: string, name: string, };

export type ChangedFileView = { change: number, label: string, 
/**
 * Who made it: a restore's change is told apart from the agent's to the same file.
 */
origin: ChangeOrigin, kind: FileChangeKind, phase: ChangePhase, added: number, removed: number, 
/**
 * Hunks (or the whole change, when it has none) still waiting for a decision.
 */
pending: number, };

export type ReviewIntent = { "type": "hunk", change: number, hunk: number, keep: boolean, } | { "type": "all", change: number, keep: boolean, } | { "type": "open", change: number, } | { "type": "openAll" } | { "type": "retry", change: number, };

export type TerminalIntent = { "type": "stop", terminal: string, } | { "type": "open", terminal: string, };

export type SessionControlsView = { 
/**
 * The session's title, from `session_info_update`.
 */
title: string | null, 
/**
 * The slash commands the composer completes, from `available_commands_update`.
 */
commands: Array<SlashCommandView>, 
/**
 * Every config option, in the agent's order (its mode option included: Tether's mode picker
 * stays the way to switch it, and this one follows it).
 */
configOptions: Array<ConfigOptionView>, 
/**
 * How full the agent's context window is, from `usage_update`.
 */
usage: UsageView | null, 
/**
 * What a prompt may hold besides text and links, from the agent's `promptCapabilities`.
 */
prompt: PromptCapabilitiesView, 
/**
 * The MCP servers the session offered its agent, and those it left out (the header's
 * "MCP" section).
 */
mcpServers: Array<McpServerView>, };

export type SlashCommandView = { 
/**
 * The name, without the leading "/".
 */
name: string, description: string, 
/**
 * What to type after the name, when the command takes input.
 */
inputHint: string | null, };

export type ConfigOptionView = { id: string, name: string, description: string | null, 
/**
 * ACP's category as on the wire (`mode`, `model`, `model_config`, `thought_level`, or the
 * agent's own), for ordering and icons.
 */
category: string | null, kind: ConfigOptionKind, };

export type ConfigOptionKind = { "type": "select", current: string, choices: Array<ConfigChoiceView>, } | { "type": "boolean", current: boolean, };

export type ConfigChoiceView = { value: string, name: string, description: string | null, 
/**
 * The heading the agent groups this value under, when it groups them.
 */
group: string | null, };

export type ConfigValue = boolean | string;

export type UsageView = { used: number, size: number, cost: CostView | null, 
/**
 * How long the last turn took, when the agent said (`_meta.turnDurationMs`; the Claude
 * CLI's `result` says it).
 */
lastTurnMs: number | null, };

export type CostView = { amount: number, 
/**
 * ISO 4217 currency code ("USD").
 */
currency: string, };

export type PromptCapabilitiesView = { 
/**
 * Images may be pasted or dropped into the composer.
 */
image: boolean, 
/**
 * Mentioned files and selections are sent with their text (embedded resources) rather than
 * as links the agent reads itself.
 */
embeddedContext: boolean, };

export type McpServerView = { name: string, 
/**
 * `stdio`, `http` or `sse`.
 */
transport: string, 
/**
 * Tether's own server (the editor's tools), not one of the person's.
 */
builtIn: boolean, 
/**
 * Why the agent did not get it, when it did not.
 */
leftOut: string | null, 
/**
 * How the agent says the server is doing (`connected`, `failed`, `pending`, `needs-auth`),
 * when it says (the Claude CLI does; ACP has no word for it yet).
 */
state: string | null, 
/**
 * The host of a server that is not on this machine (`mcp_settings::remote_host`): what the
 * agent sends it leaves the computer.
 */
remote: string | null, };

export type PromptAttachment = { "type": "file", path: string, } | { "type": "folder", path: string, } | { "type": "selection", path: string, startLine: number, endLine: number, text: string, } | { "type": "image", mimeType: string, data: string, };

export type MentionSuggestion = { 
/**
 * What picking it writes after the `@` in the text, without spaces (e.g. `src/main.rs`,
 * `src/main.rs#L3-9`).
 */
label: string, 
/**
 * A second line for the list (e.g. "Selection, lines 3-9").
 */
detail: string | null, attachment: PromptAttachment, };

export type ChangeOrigin = "write" | "agent" | "restore";

export type FileChangeKind = "modified" | "created" | "deleted";

export type HunkState = "pending" | "kept" | "rejected";

export type ChangePhase = { "type": "proposed" } | { "type": "applied" } | { "type": "writing" } | { "type": "settled" } | { "type": "conflict", message: string, } | { "type": "failed", message: string, } | { "type": "unreviewable", reason: string, };

export type DiffSign = "context" | "removed" | "added" | "gap";

export type DiffLineView = { sign: DiffSign, text: string, highlights: Array<[number, number]>, };

export type HunkView = { 
/**
 * The hunk's index in its change, for decisions.
 */
index: number, 
/**
 * 1-based first line on each side, and line counts.
 */
oldLine: number, oldCount: number, newLine: number, newCount: number, state: HunkState, 
/**
 * The removed then the added lines, up to the card's limit.
 */
lines: Array<DiffLineView>, 
/**
 * Lines of this hunk the card leaves out.
 */
hiddenLines: number, };

export type FileChangeView = { id: number, 
/**
 * Absolute path.
 */
path: string, 
/**
 * The path relative to the workspace (absolute when outside it), for people.
 */
label: string, origin: ChangeOrigin, kind: FileChangeKind, phase: ChangePhase, 
/**
 * The lines the change adds and removes, rejected hunks left out: what the file gets (or
 * got) of it, once the person has decided.
 */
added: number, removed: number, hunks: Array<HunkView>, 
/**
 * The decision on a change without hunks (an empty file created or deleted).
 */
whole: HunkState, 
/**
 * The change is in the file (the agent wrote it itself, a rule or the mode let it through, or
 * it was written after review): rejecting a hunk now reverts it.
 */
applied: boolean, 
/**
 * The diff ran out of budget: hunks are coarser than they need be (still exact).
 */
degraded: boolean, 
/**
 * What came of a write, once the agent was answered (see `acp::fs::review`).
 */
outcome: string | null, };

export type TextEdit = { start: number, end: number, text: string, };

export type ReviewHunk = { index: number, 
/**
 * 0-based first line in the new text, and how many lines the hunk has there (0 for a pure
 * deletion, which sits before line `newStart`).
 */
newStart: number, newCount: number, oldStart: number, oldCount: number, state: HunkState, };

export type ReviewDocument = { change: number, path: string, label: string, 
/**
 * The text before the change (empty for a file the change creates).
 */
original: string, 
/**
 * The right side's text when it is not the file itself: the proposed text while nothing is
 * written, or empty for a file the change deleted. `None`: the right side is the file.
 */
proposed: string | null, 
/**
 * The change is in the file: rejecting a hunk reverts it.
 */
applied: boolean, hunks: Array<ReviewHunk>, 
/**
 * No hunk is left to decide.
 */
settled: boolean, 
/**
 * The session whose change it is (set by the window, which knows its sessions).
 */
session: number, };

export type Mode = "ask" | "acceptEdits" | "plan" | "bypass";

export type RuleDecision = "allow" | "deny";

export type RuleSpec = { decision: RuleDecision, 
/**
 * Tool kinds (`execute`, `edit`, ...); empty matches every kind.
 */
kinds?: Array<string>, 
/**
 * A glob (`*` any text, `?` one character) the whole command line or the whole tool title
 * must match: `npm test`, `npm run *`, `Read *`.
 */
pattern?: string, 
/**
 * A glob over workspace-relative paths: `src/**`, `docs/*.md`; without a `/` it matches a
 * file name at any depth (`*.lock`), and `**` is every path inside the workspace.
 */
path?: string, };

export type RuleScope = "session" | "workspace";

export type RuleOrigin = { "type": "chosen", option: string, toolTitle: string, } | { "type": "added" } | { "type": "settings" };

export type RuleView = { id: number, spec: RuleSpec, scope: RuleScope, origin: RuleOrigin, 
/**
 * How many requests it answered.
 */
fired: number, 
/**
 * [`RuleSpec::describe`].
 */
description: string, };

export type DecidedBy = { "type": "rule", id: number, description: string, scope: RuleScope, } | { "type": "mode", mode: Mode, };

export type Entry = { "type": "user" } & UserMessage | { "type": "agent" } & AgentMessage | { "type": "toolCall" } & ToolCallView | { "type": "fileChange" } & FileChangeView | { "type": "notice" } & NoticeView | { "type": "restore" } & RestoreView;

export type UserMessage = { 
/**
 * The text of the prompt (markdown, rendered like the agent's).
 */
text: string, 
/**
 * What the person attached to it: files and selections mentioned with `@`, images.
 */
attachments: Array<AttachmentView>, };

export type AttachmentView = { "type": "file", path: string, } | { "type": "folder", path: string, } | { "type": "selection", path: string, startLine: number, endLine: number, } | { "type": "image", mimeType: string, bytes: number, } | { "type": "other", label: string, };

export type AgentMessage = { chunks: Array<MessageChunk>, };

export type ChunkKind = "text" | "thought";

export type MessageChunk = { kind: ChunkKind, text: string, 
/**
 * How long the agent thought, in milliseconds: set on a thought once something else follows
 * it (text, a tool call, the end of the turn). Absent while the thought goes on, on text, and
 * when its start is not known (a thought that went on across a window reload).
 */
durationMs?: number, };

export type ToolStatus = "pending" | "in_progress" | "waiting_for_confirmation" | "completed" | "failed" | "cancelled";

export type ToolCallView = { id: string, title: string, 
/**
 * ACP's tool kind, as the agent sent it (`read`, `edit`, `execute`, ... `other`).
 */
kind: string, status: ToolStatus, content: Array<ToolContent>, locations: Array<Location>, rawInput: unknown, 
/**
 * The command line in `raw_input` (`command`, `cmd` or `commandLine`; an argument vector
 * joined, `["bash", "-lc", script]` read as the script): what the card shows and what rule
 * patterns are matched against, derived once here so the two cannot disagree.
 */
command: string | null, rawOutput: unknown, 
/**
 * The permission request attached to this tool call, if the agent asked for one.
 */
permission: PermissionView | null, };

export type ToolContent = { "type": "text", text: string, } | { "type": "diff", 
/**
 * The file as the agent named it (absolute: ACP requires it), for opening it.
 */
path: string, 
/**
 * The path as the person reads it: relative to the workspace when inside it.
 */
label: string, 
/**
 * The file change card that shows this same change (a write under review, an edit found
 * on disk), when there is one: the tool call's card then links to it rather than
 * showing the diff a second time.
 */
change: number | null, added: number, removed: number, lines: Array<DiffLineView>, 
/**
 * Changed lines the card leaves out.
 */
hiddenLines: number, } | { "type": "terminal", terminalId: string, };

export type Location = { 
/**
 * The path as the agent named it, for opening it.
 */
path: string, line: number | null, 
/**
 * The path as the person reads it: relative to the workspace when inside it, else absolute.
 */
label: string, };

export type PermissionView = { key: number, 
/**
 * The agent's options, in the agent's order.
 */
options: Array<PermissionOptionView>, 
/**
 * `None` while the person has not answered.
 */
outcome: PermissionOutcome | null, 
/**
 * The paths of the tool call that lead somewhere else through a symbolic link, each as
 * `path → where it leads`, so the person sees what would really be touched. A path leading
 * outside the workspace ends with `(outside the workspace)`.
 */
links?: Array<string>, 
/**
 * Tether asks, not the agent: a request the agent made without asking first (a command to
 * run, a file outside the workspace to read) held behind a card of Tether's own.
 */
fromTether?: boolean, };

export type PermissionOptionView = { id: string, name: string, 
/**
 * ACP's option kind: `allow_once`, `allow_always`, `reject_once`, `reject_always`.
 */
kind: string, };

export type PermissionOutcome = { "type": "selected", optionId: string, } | { "type": "auto", optionId: string, allowed: boolean, by: DecidedBy, 
/**
 * What the agent was told (a rejection's reason).
 */
reason: string | null, } | { "type": "cancelled" } | { "type": "withdrawn" };

export type NoticeLevel = "info" | "warning" | "error";

export type NoticeView = { level: NoticeLevel, text: string, 
/**
 * Extra detail shown collapsed (an agent's stderr tail, a malformed line's preview).
 */
detail: string | null, };

export type RestoreView = { id: number, 
/**
 * The prompt whose checkpoint it restores (its entry), or, for an undo, the restore's
 * checkpoint.
 */
checkpoint: number, 
/**
 * The prompt's words, shortened as a title.
 */
prompt: string, 
/**
 * The restore this one undoes.
 */
undoes: number | null, state: RestoreState, 
/**
 * Something it restored was written and it was not undone yet: Undo is offered.
 */
undoable: boolean, 
/**
 * The files the agent changed since the checkpoint that differ from it now, in the order
 * they were first changed.
 */
files: Array<RestoreFileView>, };

export type RestoreState = "reading" | "planned" | "decided" | "nothingToRestore" | "undone";

export type RestoreFileView = { path: string, label: string, 
/**
 * Its change to review (absent for a file that could not be read).
 */
change: number | null, 
/**
 * The file changed since the agent last left it: the person edited it after the
 * checkpoint, and restoring reverts those edits too.
 */
conflict: boolean, 
/**
 * Why nothing is proposed for it, when nothing is.
 */
problem: string | null, };

export type PlanEntryView = { content: string, 
/**
 * `high`, `medium`, `low`.
 */
priority: string, 
/**
 * `pending`, `in_progress`, `completed`.
 */
status: string, };

export type TurnState = { "type": "idle" } | { "type": "running" } | { "type": "ended", stopReason: string, } | { "type": "failed", message: string, };

export type ThreadPatch = { "op": "push", index: number, entry: Entry, } | { "op": "appendChunk", index: number, kind: ChunkKind, text: string, } | { "op": "replace", index: number, entry: Entry, } | { "op": "plan", entries: Array<PlanEntryView>, } | { "op": "turn", state: TurnState, } | { "op": "terminal", view: TerminalView, } | { "op": "thoughtEnded", index: number, chunk: number, durationMs: number, };

export type TerminalView = { 
/**
 * The terminal's ACP id.
 */
id: string, 
/**
 * The command line, as it would be typed.
 */
command: string, 
/**
 * The working directory, when it is not the workspace folder: relative to the workspace
 * when inside it, with where it leads when it goes through a link.
 */
cwd: string | null, origin: TerminalOrigin, 
/**
 * The last lines of output, oldest first.
 */
lines: Array<TerminalLine>, 
/**
 * How many lines of output came before `lines` (shown in the VS Code terminal, not here).
 */
hiddenLines: number, state: TerminalState, 
/**
 * How long the command has run (or ran), in milliseconds, as of this view. While it runs the
 * webview counts on from here with its own clock.
 */
elapsedMs: number, };

export type TerminalOrigin = "client" | "agent";

export type TerminalState = { "type": "running" } | { "type": "exited", exitCode: number | null, signal: string | null, killed: boolean, } | { "type": "failed", message: string, };

export type TerminalLine = { spans: Array<TerminalSpan>, };

export type TerminalSpan = { text: string, style: TerminalStyle, };

export type TerminalStyle = { fg: TerminalColor | null, bg: TerminalColor | null, bold: boolean, dim: boolean, italic: boolean, underline: boolean, strikethrough: boolean, };

export type TerminalColor = { "type": "palette", index: number, } | { "type": "rgb", hex: string, };

export type BadLineKind = "tooLong" | "invalidUtf8" | "invalidJson";

export type EditorQuery = { "kind": "selection" } | { "kind": "openEditors" } | { "kind": "diagnostics", path: string | null, } | { "kind": "definition", path: string, position: EditorPosition, } | { "kind": "references", path: string, position: EditorPosition, } | { "kind": "hover", path: string, position: EditorPosition, } | { "kind": "documentSymbols", path: string, } | { "kind": "workspaceSymbols", query: string, } | { "kind": "openFile", path: string, line: number | null, focus: boolean, };

export type EditorAnswer = { "kind": "selection", selection: ActiveSelection | null, } | { "kind": "openEditors", editors: Array<OpenEditor>, } | { "kind": "diagnostics", diagnostics: Array<EditorDiagnostic>, } | { "kind": "locations", locations: Array<EditorLocation>, } | { "kind": "hover", contents: Array<string>, } | { "kind": "symbols", symbols: Array<EditorSymbol>, } | { "kind": "opened", path: string, };

export type EditorPosition = { line: number, character: number, };

export type EditorRange = { start: EditorPosition, end: EditorPosition, };

export type ActiveSelection = { path: string, languageId: string, range: EditorRange, 
/**
 * The selected text (empty for a bare cursor).
 */
text: string, };

export type OpenEditor = { path: string, languageId: string | null, 
/**
 * Has unsaved changes.
 */
dirty: boolean, 
/**
 * The tab the person is looking at.
 */
active: boolean, };

export type EditorDiagnostic = { path: string, range: EditorRange, 
/**
 * `error`, `warning`, `information` or `hint`.
 */
severity: string, message: string, source: string | null, code: string | null, };

export type EditorLocation = { path: string, range: EditorRange, };

export type EditorSymbol = { name: string, 
/**
 * VS Code's `SymbolKind`, by name (`Function`, `Class`...).
 */
kind: string, path: string, range: EditorRange, container: string | null, };

/** Type aliases used above. */
export type EntryIndex = number;
export type PermissionKey = number;
export type RuleId = number;
export type SessionKey = number;
export type RestoreId = number;

/** Tether's permission modes in the picker's order, from the most careful to the least, with the words the chat uses for them. */
export const MODES: readonly { mode: Mode; label: string; description: string }[] = [
  { mode: "ask", label: "Ask", description: "Ask before anything the agent wants to do, unless one of your rules answers." },
  { mode: "acceptEdits", label: "Accept edits", description: "Approve file edits inside the workspace; commands and everything else still ask." },
  { mode: "plan", label: "Plan", description: "Read only: reject anything that writes or runs, and tell the agent why." },
  { mode: "bypass", label: "Bypass", description: "Approve every request without asking, except what a deny rule rejects. Use with care." },
];

/** The tool kinds a rule may name: ACP's own, as its schema crate writes them, in the rules form's order. */
export const TOOL_KINDS: readonly string[] = ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"];

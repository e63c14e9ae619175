// The wire types this webview speaks, re-exported from the code generated from Rust.
//
// `extension/src/generated/protocol.ts` is generated from tether-core (thread.rs, webview.rs,
// permissions.rs, review.rs); the types are imported type-only, so the bundle carries only the
// few generated values (the modes, the tool kinds) while the compiler checks every field the UI
// reads. `VsCodeApi` is the part of `acquireVsCodeApi()` this
// webview uses.

export type {
  AgentMessage,
  AttachmentView,
  ChangeOrigin,
  ChangePhase,
  ChangedFileView,
  ChunkKind,
  ConfigChoiceView,
  ConfigOptionKind,
  ConfigOptionView,
  ConfigValue,
  CostView,
  DecidedBy,
  DiffLineView,
  DiffSign,
  Entry,
  ExportFormat,
  FileChangeKind,
  FileChangeView,
  HostToWebview,
  HunkView,
  Location,
  MentionSuggestion,
  MessageChunk,
  Mode,
  PromptAttachment,
  PromptCapabilitiesView,
  RestoreFileView,
  RestoreState,
  RestoreView,
  McpServerView,
  NoticeView,
  PermissionKey,
  PermissionOptionView,
  PermissionOutcome,
  PermissionView,
  PermissionsView,
  PlanEntryView,
  ProfileState,
  ProfileView,
  ReviewIntent,
  RuleDecision,
  RuleOrigin,
  RuleScope,
  RuleSpec,
  RuleView,
  SessionControlsView,
  SessionKey,
  SessionStatus,
  SessionTabView,
  SessionView,
  SlashCommandView,
  TabActivity,
  TerminalColor,
  TerminalIntent,
  TerminalLine,
  TerminalOrigin,
  TerminalSpan,
  TerminalState,
  TerminalStyle,
  TerminalView,
  ThreadPatch,
  ToolCallView,
  ToolContent,
  ToolStatus,
  TurnState,
  UsageView,
  UserMessage,
  ViewSnapshot,
  WebviewToHost,
} from "../../extension/src/generated/protocol";

// The generated values: the permission modes with their words, and the tool kinds rules name.
export { MODES, TOOL_KINDS } from "../../extension/src/generated/protocol";

import type { WebviewToHost } from "../../extension/src/generated/protocol";

/** What `acquireVsCodeApi()` returns, narrowed to the messages this webview may send. */
export interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** Sends one intent to the host. Views get this rather than the whole API. */
export type PostIntent = (message: WebviewToHost) => void;

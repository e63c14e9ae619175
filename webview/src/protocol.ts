// The wire types this webview speaks, re-exported from the code generated from Rust.
//
// `extension/src/generated/protocol.ts` is generated from tether-core (thread.rs, webview.rs,
// permissions.rs, review.rs); importing it type-only keeps the bundle free of it while the
// compiler checks every field the UI reads. `VsCodeApi` is the part of `acquireVsCodeApi()` this
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
  NoticeView,
  PermissionKey,
  PermissionOptionView,
  PermissionOutcome,
  PermissionView,
  PermissionsView,
  PlanEntryView,
  ReviewIntent,
  RuleDecision,
  RuleOrigin,
  RuleScope,
  RuleSpec,
  RuleView,
  SessionControlsView,
  SessionStatus,
  SessionView,
  SlashCommandView,
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

import type { WebviewToHost } from "../../extension/src/generated/protocol";

/** What `acquireVsCodeApi()` returns, narrowed to the messages this webview may send. */
export interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** Sends one intent to the host. Views get this rather than the whole API. */
export type PostIntent = (message: WebviewToHost) => void;

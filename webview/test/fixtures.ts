// Wire values the tests build on, spelled as the host sends them.

import type {
  ChangedFileView,
  Entry,
  FileChangeView,
  HostToWebview,
  HunkView,
  PermissionOutcome,
  PermissionsView,
  RestoreFileView,
  RestoreView,
  RuleView,
  SessionTabView,
  SessionView,
  TerminalLine,
  TerminalStyle,
  TerminalView,
  ThreadPatch,
  ToolCallView,
  ViewSnapshot,
} from "../src/protocol";

export function permissions(overrides: Partial<PermissionsView> = {}): PermissionsView {
  return { mode: "ask", agentMode: null, agentModes: [], agentModeId: null, rules: [], ruleProblems: [], auditLog: null, ...overrides };
}

export function session(overrides: Partial<SessionView> = {}): SessionView {
  return {
    agent: "Demo",
    agentInfo: "tether-test-agent 0.1.0",
    status: { type: "ready" },
    profiles: [
      { name: "Demo", state: "running", description: "Running · tether-test-agent 0.1.0" },
      { name: "Claude Code", state: "notInstalled", description: "Not installed: choosing it offers to install it" },
    ],
    permissions: permissions(),
    changes: [],
    canRestart: false,
    canInstall: false,
    canStop: false,
    canSignIn: false,
    followAgent: false,
    controls: { title: null, commands: [], configOptions: [], usage: null, prompt: { image: false, embeddedContext: false }, mcpServers: [] },
    tabs: [tab(1)],
    shown: 1,
    ...overrides,
  };
}

/** Session `key`'s tab: idle, labelled "Session <key>", running Demo. */
export function tab(key: number, overrides: Partial<SessionTabView> = {}): SessionTabView {
  return { key, label: `Session ${key}`, agent: "Demo", activity: "idle", ...overrides };
}

export function snapshot(entries: Entry[], overrides: Partial<ViewSnapshot> = {}): HostToWebview {
  return {
    type: "snapshot",
    snapshot: { session: session(), earlier: 0, entries, plan: [], turn: { type: "idle" }, terminals: [], ...overrides },
  };
}

export function patch(thread: ThreadPatch[], header: SessionView | null = null): HostToWebview {
  return { type: "patch", session: header, thread };
}

export const editPermissionOptions = [
  { id: "allow-once", name: "Allow once", kind: "allow_once" },
  { id: "allow-always", name: "Always allow", kind: "allow_always" },
  { id: "reject-once", name: "Reject", kind: "reject_once" },
  { id: "reject-always", name: "Always reject", kind: "reject_always" },
];

export function editToolCall(outcome: PermissionOutcome | null): Entry {
  return {
    type: "toolCall",
    id: "call-2",
    title: "Edit notes.md",
    kind: "edit",
    status: outcome === null ? "waiting_for_confirmation" : "completed",
    content: [
      {
        type: "diff",
        path: "/workspace/notes.md",
        label: "notes.md",
        change: null,
        added: 1,
        removed: 1,
        lines: [
          { sign: "context", text: "one", highlights: [] },
          { sign: "removed", text: "two", highlights: [[0, 3]] },
          { sign: "added", text: "2", highlights: [[0, 1]] },
        ],
        hiddenLines: 0,
      },
    ],
    locations: [{ path: "/workspace/notes.md", line: 2, label: "notes.md" }],
    rawInput: { path: "notes.md" },
    command: null,
    rawOutput: null,
    permission: { key: 7, options: editPermissionOptions, outcome },
  };
}

/** An `execute` tool call asking to run `command` (the engine reads it from `rawInput`). */
export function commandToolCall(
  key: number,
  command: string,
  outcome: PermissionOutcome | null = null,
  overrides: Partial<ToolCallView> = {},
): Entry {
  return {
    type: "toolCall",
    id: `call-${key}`,
    title: `Run tests (${key})`,
    kind: "execute",
    status: outcome === null ? "waiting_for_confirmation" : "completed",
    content: [],
    locations: [],
    rawInput: { command },
    command,
    rawOutput: null,
    permission: { key, options: editPermissionOptions, outcome },
    ...overrides,
  };
}

export function rule(overrides: Partial<RuleView> = {}): RuleView {
  return {
    id: 1,
    spec: { decision: "allow", kinds: ["execute"], pattern: "npm test" },
    scope: "session",
    origin: { type: "chosen", option: "Always allow", toolTitle: "Run tests" },
    fired: 0,
    description: "Allow execute matching “npm test”",
    ...overrides,
  };
}

/** A hunk replacing line `line` of the old text with one new line. */
export function hunk(index: number, overrides: Partial<HunkView> = {}): HunkView {
  const line = 10 * index + 1;
  return {
    index,
    oldLine: line,
    oldCount: 1,
    newLine: line,
    newCount: 1,
    state: "pending",
    lines: [
      { sign: "removed", text: `old line ${line}`, highlights: [[0, 3]] },
      { sign: "added", text: `new line ${line}`, highlights: [[0, 3]] },
    ],
    hiddenLines: 0,
    ...overrides,
  };
}

/** A file change entry: change 7 to src/app.ts, two hunks, a write waiting for review. */
export function fileChange(overrides: Partial<FileChangeView> = {}): Entry {
  return {
    type: "fileChange",
    id: 7,
    path: "/workspace/src/app.ts",
    label: "src/app.ts",
    origin: "write",
    kind: "modified",
    phase: { type: "proposed" },
    added: 2,
    removed: 2,
    hunks: [hunk(0), hunk(1)],
    whole: "pending",
    applied: overrides.origin === "agent" || overrides.phase?.type === "applied",
    degraded: false,
    outcome: null,
    ...overrides,
  };
}

/** A row of the changes bar. */
export function changedFile(overrides: Partial<ChangedFileView> = {}): ChangedFileView {
  return {
    change: 7,
    label: "src/app.ts",
    origin: "write",
    kind: "modified",
    phase: { type: "proposed" },
    added: 2,
    removed: 2,
    pending: 2,
    ...overrides,
  };
}

/** No colour, no attributes: what plain output is drawn with. */
export const plainStyle: TerminalStyle = {
  fg: null,
  bg: null,
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  strikethrough: false,
};

/** Lines of unstyled output, one per string. */
export function plainLines(...texts: string[]): TerminalLine[] {
  return texts.map((text) => ({ spans: [{ text, style: plainStyle }] }));
}

/** Terminal "term-1" running `npm test` for the agent (Tether runs it), with two lines so far. */
export function terminalView(overrides: Partial<TerminalView> = {}): TerminalView {
  return {
    id: "term-1",
    command: "npm test",
    cwd: null,
    origin: "client",
    lines: plainLines("> tether@0.1.0 test", "ok 1 - adds"),
    hiddenLines: 0,
    state: { type: "running" },
    elapsedMs: 1200,
    ...overrides,
  };
}

/** A finished `read` tool call with nothing in it but what `overrides` adds. */
export function toolCall(overrides: Partial<ToolCallView> = {}): Entry {
  return {
    type: "toolCall",
    id: "call-1",
    title: "Read README.md",
    kind: "read",
    status: "completed",
    content: [],
    locations: [],
    rawInput: null,
    command: null,
    rawOutput: null,
    permission: null,
    ...overrides,
  };
}

/** An `execute` tool call whose content is terminal `terminalId`. */
export function terminalToolCall(index: number, terminalId: string, overrides: Partial<ToolCallView> = {}): Entry {
  return toolCall({
    id: `call-${index}`,
    title: `Run command ${index}`,
    kind: "execute",
    status: "in_progress",
    content: [{ type: "terminal", terminalId }],
    ...overrides,
  });
}

/** A prompt's entry with `text` and nothing attached. */
export function userMessage(text: string): Entry {
  return { type: "user", text, attachments: [] };
}

/** An agent's reply of one text chunk. */
export function agentMessage(text: string): Entry {
  return { type: "agent", chunks: [{ kind: "text", text }] };
}

/** A file a restore puts back: src/app.ts, its change 7 to review, edited by no one since. */
export function restoreFile(overrides: Partial<RestoreFileView> = {}): RestoreFileView {
  return { path: "/workspace/src/app.ts", label: "src/app.ts", change: 7, conflict: false, problem: null, ...overrides };
}

/** Restore 1 to the checkpoint of the prompt at entry 0, planned, with src/app.ts to review. */
export function restoreEntry(overrides: Partial<RestoreView> = {}): Entry {
  return {
    type: "restore",
    id: 1,
    checkpoint: 0,
    prompt: "Add a greeting",
    undoes: null,
    state: "planned",
    undoable: false,
    files: [restoreFile()],
    ...overrides,
  };
}

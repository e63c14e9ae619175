// A fake VS Code host for the dev page: defines `acquireVsCodeApi` and answers the webview the
// way the real host does (a snapshot on `ready`, then patches), from a script.
//
//   ?scenario=demo                  the demo agent's turn: text, a read, a command a session rule
//                                   approves, an edit that asks permission, and the end of the
//                                   turn after "Allow once", which leaves two file changes to
//                                   review (a proposed write and an edit the agent made on disk)
//                                   in the thread and the changes bar; the header's mode picker
//                                   and the rules panel work on a fake policy (a session rule, a
//                                   workspace rule, and a setting that could not be used)
//   ?scenario=stress&chunks=5000&shape=blocks
//                                   one reply streamed as N chunks of 20 characters, posted as
//                                   one message per chunk (worse than the real host, which
//                                   batches per frame), to measure how the webview keeps up;
//                                   shape is blocks, paragraph or code (see `stress`)
//   ?scenario=tabs                  three sessions open as tabs: the shown one idle, one whose
//                                   agent is working and one that waits for a permission answer;
//                                   clicking a tab shows its thread, closing one takes it away
//   ?scenario=restore               two prompts, then the code restored to before the first: the
//                                   restore card (planned, one file edited by the person since,
//                                   undoable) above its two file change cards; Undo answers with
//                                   an undo's card, Restore on a prompt with a new restore
//
// What happened is recorded on `window.tetherDev` for dev/run.mjs to read.

import type {
  ChangedFileView,
  DiffLineView,
  Entry,
  FileChangeView,
  HostToWebview,
  HunkView,
  PlanEntryView,
  RestoreView,
  RuleSpec,
  ReviewIntent,
  RuleView,
  SessionTabView,
  SessionView,
  ThreadPatch,
  ToolCallView,
  WebviewToHost,
} from "../src/protocol";

interface DevRecord {
  posted: WebviewToHost[];
  cspViolations: string[];
  /** performance.now() when the stress scenario posted its first and last chunk. */
  firstChunkAt: number | null;
  lastChunkAt: number | null;
  /** The text the stress reply ends with, to wait for in the DOM. */
  finalMarker: string | null;
  /** Main-thread tasks over 50 ms (the page is janky while they run), with their durations. */
  longTasks: number[];
}

const record: DevRecord = {
  posted: [],
  cspViolations: [],
  firstChunkAt: null,
  lastChunkAt: null,
  finalMarker: null,
  longTasks: [],
};
new PerformanceObserver((list) => {
  for (const task of list.getEntries()) record.longTasks.push(Math.round(task.duration));
}).observe({ type: "longtask", buffered: true });
(window as unknown as { tetherDev: DevRecord }).tetherDev = record;

document.addEventListener("securitypolicyviolation", (event) => {
  record.cspViolations.push(`${event.violatedDirective}: ${event.blockedURI}`);
});

const parameters = new URLSearchParams(location.search);
const scenario = parameters.get("scenario") ?? "demo";

let state: unknown = undefined;
let entries: Entry[] = [];
let session: SessionView = {
  agent: "Demo",
  agentInfo: "tether-test-agent 0.1.0",
  status: { type: "starting", step: "Starting the agent…", elapsedMs: 0 },
  profiles: [
    { name: "Demo", state: "running", description: "Running · tether-test-agent 0.1.0 · file contents" },
    {
      name: "Claude Code",
      state: "notRunning",
      description: "Not running · Claude Code 0.12.1 · images, file contents, resumes sessions, MCP over HTTP",
    },
    {
      name: "Codex",
      state: "failed",
      description: 'Could not start the agent "Codex": cannot start "codex-acp": No such file or directory (os error 2)',
    },
    { name: "Gemini CLI", state: "notInstalled", description: "Not installed: choosing it offers to install it" },
  ],
  permissions: {
    mode: "ask",
    agentMode: null,
    agentModes: [],
    agentModeId: null,
    rules: [
      {
        id: 1,
        spec: { decision: "allow", kinds: ["execute"], pattern: "npm test" },
        scope: "session",
        origin: { type: "chosen", option: "Always allow", toolTitle: "Run npm test" },
        fired: 2,
        description: "Allow execute matching “npm test”",
      },
      {
        id: 2,
        spec: { decision: "deny", path: ".env" },
        scope: "workspace",
        origin: { type: "settings" },
        fired: 0,
        description: "Deny any tool on .env",
      },
    ],
    ruleProblems: ['Rule 3 in tether.permissions.rules: unknown tool kind "exec"; the kinds are read, edit, …'],
    auditLog: "/workspace/.tether/sessions/demo/audit.jsonl",
  },
  changes: [],
  canRestart: false,
  canInstall: false,
  canStop: false,
  canSignIn: false,
  followAgent: false,
  controls: {
    title: "Tidy the notes",
    commands: [
      { name: "review", description: "Review the current changes", inputHint: null },
      { name: "memory", description: "Show or add to the agent's memory", inputHint: "show | add <text>" },
    ],
    configOptions: [
      {
        id: "model",
        name: "Model",
        description: null,
        category: "model",
        kind: {
          type: "select",
          current: "small",
          choices: [
            { value: "small", name: "Small", description: "Quick answers", group: null },
            { value: "large", name: "Large", description: null, group: null },
          ],
        },
      },
    ],
    usage: { used: 53000, size: 200000, cost: { amount: 0.42, currency: "USD" }, lastTurnMs: 8_200 },
    prompt: { image: true, embeddedContext: true },
    mcpServers: [
      { name: "tether", transport: "stdio", builtIn: true, leftOut: null, state: "connected", remote: null },
      { name: "search", transport: "http", builtIn: false, leftOut: null, state: null, remote: "mcp.example.com" },
      { name: "docs", transport: "http", builtIn: false, leftOut: "The MCP server \"docs\" was left out: this agent does not connect to MCP servers over HTTP.", state: null, remote: "docs.example.com" },
    ],
  },
  tabs: [{ key: 1, label: "Tidy the notes", agent: "Demo", activity: "idle" }],
  shown: 1,
};
let nextRuleId = 3;

const utf8 = new TextEncoder();

/** Posts `message` as the extension's host does: as JSON bytes (see src/host-message.ts). */
function send(message: HostToWebview): void {
  window.postMessage(utf8.encode(JSON.stringify(message)), "*");
}

function sendPatch(thread: ThreadPatch[], header: SessionView | null = null): void {
  for (const patch of thread) {
    if (patch.op === "push" || patch.op === "replace") entries[patch.index] = patch.entry;
  }
  send({ type: "patch", session: header, thread });
}

function push(entry: Entry): number {
  const index = entries.length;
  sendPatch([{ op: "push", index, entry }]);
  return index;
}

/** The demo's plan, with each step's status in order. */
function sendPlan(...statuses: [string, string, string]): void {
  const steps: Array<[string, string]> = [
    ["Read README.md", "high"],
    ["Edit notes.md", "medium"],
    ["Summarise", "low"],
  ];
  const entries: PlanEntryView[] = steps.map(([content, priority], index) => ({
    content,
    priority,
    status: statuses[index] ?? "pending",
  }));
  sendPatch([{ op: "plan", entries }]);
}

/** Changes the fake policy and sends the header, as the engine does after an intent. */
function updatePermissions(change: (permissions: SessionView["permissions"]) => SessionView["permissions"]): void {
  session = { ...session, permissions: change(session.permissions) };
  sendPatch([], session);
}

/** A rough `RuleSpec::describe`, enough for the dev page. */
function describe(spec: RuleSpec): string {
  const kinds = spec.kinds !== undefined && spec.kinds.length > 0 ? spec.kinds.join(", ") : "any tool";
  const pattern = spec.pattern !== undefined ? ` matching “${spec.pattern}”` : "";
  const path = spec.path !== undefined ? ` on ${spec.path}` : "";
  return `${spec.decision === "allow" ? "Allow" : "Deny"} ${kinds}${pattern}${path}`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function streamText(index: number, text: string, kind: "text" | "thought" = "text"): Promise<void> {
  for (const piece of text.match(/.{1,6}/gs) ?? []) {
    sendPatch([{ op: "appendChunk", index, kind, text: piece }]);
    await sleep(4);
  }
}

function toolCall(overrides: Partial<ToolCallView>): Entry {
  return {
    type: "toolCall",
    id: "call",
    title: "",
    kind: "other",
    status: "pending",
    content: [],
    locations: [],
    rawInput: null,
    command: null,
    rawOutput: null,
    permission: null,
    ...overrides,
  };
}

let pendingEdit: { index: number; call: Entry } | null = null;

async function demoTurn(prompt: string): Promise<void> {
  push({ type: "user", text: prompt, attachments: [] });
  sendPatch([{ op: "turn", state: { type: "running" } }]);
  const reply = push({ type: "agent", chunks: [] });
  await streamText(reply, "The user wants a tour. I'll read the README, then propose an edit.", "thought");
  await streamText(
    reply,
    "Hello! I'm the Tether demo agent. I'll show you what a turn looks like:\n\n" +
      "- streamed **markdown** with `code`\n- a tool call that reads a file\n- an edit that asks your permission\n\n" +
      "```rust\nfn main() {\n    println!(\"hello from the demo\");\n}\n```\n",
  );
  sendPlan("in_progress", "pending", "pending");
  const readCall = { id: "call-1", title: "Read README.md", kind: "read", locations: [{ path: "/demo/README.md", line: null, label: "README.md" }] };
  const read = push(toolCall({ ...readCall, status: "in_progress", rawInput: { path: "README.md" } }));
  await sleep(300);
  sendPatch([
    {
      op: "replace",
      index: read,
      entry: toolCall({
        ...readCall,
        status: "completed",
        rawInput: { path: "README.md" },
        content: [{ type: "text", text: "# Tether\n\nA VS Code sidebar chat for ACP agents." }],
      }),
    },
  ]);
  // A command the session rule "Allow execute matching “npm test”" answers without asking.
  const testRule = session.permissions.rules.find((rule) => rule.id === 1);
  push(
    toolCall({
      id: "call-3",
      title: "Run npm test",
      kind: "execute",
      status: "completed",
      rawInput: { command: ["bash", "-lc", "npm test"] },
      command: "npm test",
      content: [{ type: "text", text: "```\n> tether@0.1.0 test\n> node --test\n\n# pass 12\n```" }],
      permission: {
        key: 2,
        options: [
          { id: "allow", name: "Allow", kind: "allow_once" },
          { id: "reject", name: "Reject", kind: "reject_once" },
        ],
        outcome:
          testRule === undefined
            ? { type: "selected", optionId: "allow" }
            : {
                type: "auto",
                optionId: "allow",
                allowed: true,
                by: { type: "rule", id: testRule.id, description: testRule.description, scope: testRule.scope },
                reason: null,
              },
      },
    }),
  );
  if (testRule !== undefined) {
    updatePermissions((permissions) => ({
      ...permissions,
      rules: permissions.rules.map((rule) => (rule.id === testRule.id ? { ...rule, fired: rule.fired + 1 } : rule)),
    }));
  }
  const editCall = {
    id: "call-2",
    title: "Edit notes.md",
    kind: "edit",
    locations: [{ path: "/demo/notes.md", line: 2, label: "notes.md" }],
    content: [
      {
        type: "diff" as const,
        path: "/demo/notes.md",
        label: "notes.md",
        change: null,
        added: 2,
        removed: 1,
        lines: [
          { sign: "context" as const, text: "# Notes", highlights: [] },
          { sign: "context" as const, text: "", highlights: [] },
          { sign: "removed" as const, text: "Nothing yet.", highlights: [[0, 12] as [number, number]] },
          { sign: "added" as const, text: "Tether was here.", highlights: [[0, 16] as [number, number]] },
          { sign: "added" as const, text: "And left a second line.", highlights: [] },
        ],
        hiddenLines: 0,
      },
    ],
  };
  const call = toolCall({
    ...editCall,
    status: "waiting_for_confirmation",
    permission: {
      key: 1,
      options: [
        { id: "allow-once", name: "Allow once", kind: "allow_once" },
        { id: "allow-always", name: "Always allow", kind: "allow_always" },
        { id: "reject-once", name: "Reject", kind: "reject_once" },
        { id: "reject-always", name: "Always reject", kind: "reject_always" },
      ],
      outcome: null,
    },
  });
  sendPlan("completed", "in_progress", "pending");
  pendingEdit = { index: push(call), call };
}

async function answerEdit(optionId: string): Promise<void> {
  if (pendingEdit === null) return;
  const { index, call } = pendingEdit;
  if (call.type !== "toolCall" || call.permission === null) return;
  const permission = call.permission;
  pendingEdit = null;
  await sleep(150);
  sendPatch([
    {
      op: "replace",
      index,
      entry: {
        ...call,
        status: optionId.startsWith("allow") ? "completed" : "failed",
        permission: { ...permission, outcome: { type: "selected", optionId } },
      },
    },
  ]);
  const reply = push({ type: "agent", chunks: [] });
  await streamText(reply, "Permission granted: the edit is done.\n\nThat was a full turn.");
  showChange(proposedWrite);
  showChange(agentEdit);
  sendPlan("completed", "completed", "completed");
  sendPatch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]);
}

function line(sign: DiffLineView["sign"], text: string, highlights: Array<[number, number]> = []): DiffLineView {
  return { sign, text, highlights };
}

function demoHunk(index: number, oldLine: number, lines: DiffLineView[]): HunkView {
  const removed = lines.filter((shown) => shown.sign === "removed").length;
  const added = lines.filter((shown) => shown.sign === "added").length;
  return { index, oldLine, oldCount: removed, newLine: oldLine, newCount: added, state: "pending", lines, hiddenLines: 0 };
}

const proposedWrite: FileChangeView = {
  id: 1,
  path: "/workspace/notes.md",
  label: "notes.md",
  origin: "write",
  kind: "modified",
  phase: { type: "proposed" },
  added: 2,
  removed: 1,
  hunks: [
    demoHunk(0, 3, [
      line("removed", "Nothing yet.", [[0, 12]]),
      line("added", "Tether was here.", [[0, 16]]),
      line("added", "And left a second line."),
    ]),
  ],
  whole: "pending",
  applied: false,
  degraded: false,
  outcome: null,
};

const agentEdit: FileChangeView = {
  id: 2,
  path: "/workspace/src/greet.ts",
  label: "src/greet.ts",
  origin: "agent",
  kind: "modified",
  phase: { type: "applied" },
  added: 3,
  removed: 2,
  hunks: [
    demoHunk(0, 1, [
      line("removed", "export function greet(name: string) {", [[16, 21]]),
      line("added", "export function welcome(name: string, café = \"naïve\") {", [[16, 23], [36, 52]]),
    ]),
    demoHunk(1, 2, [
      line("removed", "  return `Hello, ${name}`;", [[10, 15]]),
      line("added", "  // 🎉 friendlier", [[2, 18]]),
      line("added", "  return `Welcome, ${name}!`;", [[10, 17], [26, 27]]),
    ]),
  ],
  whole: "pending",
  applied: true,
  degraded: false,
  outcome: null,
};

/** The file changes the demo showed, by id, with their entry index. */
const reviews = new Map<number, { index: number; change: FileChangeView }>();

/** Pushes or replaces a change's card and sends the changes bar, as the engine does. */
function showChange(change: FileChangeView): void {
  const entry: Entry = { type: "fileChange", ...change };
  const known = reviews.get(change.id);
  if (known === undefined) reviews.set(change.id, { index: push(entry), change });
  else {
    known.change = change;
    sendPatch([{ op: "replace", index: known.index, entry }]);
  }
  const changes: ChangedFileView[] = [...reviews.values()].map(({ change: shown }) => ({
    change: shown.id,
    label: shown.label,
    origin: shown.origin,
    kind: shown.kind,
    phase: shown.phase,
    added: shown.added,
    removed: shown.removed,
    pending: shown.hunks.filter((hunk) => hunk.state === "pending").length,
  }));
  session = { ...session, changes };
  sendPatch([], session);
}

/** Keep and reject decisions; opening a diff is only recorded (there is no diff editor here). */
function review(intent: ReviewIntent): void {
  if (intent.type !== "hunk" && intent.type !== "all") return;
  const known = reviews.get(intent.change);
  if (known === undefined) return;
  const decided: HunkView["state"] = intent.keep ? "kept" : "rejected";
  const hunks = known.change.hunks.map((hunk) =>
    hunk.state === "pending" && (intent.type === "all" || hunk.index === intent.hunk) ? { ...hunk, state: decided } : hunk,
  );
  const settled = hunks.every((hunk) => hunk.state !== "pending");
  const kept = hunks.filter((hunk) => hunk.state === "kept").length;
  const outcome =
    settled && known.change.origin === "write"
      ? kept === hunks.length
        ? "Written as proposed."
        : `The person rejected ${hunks.length - kept} of ${hunks.length} hunks; the file has the rest.`
      : null;
  showChange({ ...known.change, hunks, phase: settled ? { type: "settled" } : known.change.phase, outcome });
}

async function stress(chunkCount: number, shape: string): Promise<void> {
  push({ type: "user", text: `Stream ${chunkCount} chunks, please.`, attachments: [] });
  sendPatch([{ op: "turn", state: { type: "running" } }]);
  const reply = push({ type: "agent", chunks: [] });
  const words = ["agent ", "stream ", "chunk ", "frame ", "**bold** ", "`code` ", "tether "];
  record.finalMarker = `END-OF-STREAM-${chunkCount}`;
  record.firstChunkAt = performance.now();
  for (let chunk = 0; chunk < chunkCount; chunk++) {
    let text = "";
    while (text.length < 20) text += words[(chunk * 7 + text.length) % words.length];
    text = text.slice(0, 20);
    // "blocks": paragraphs every 40 chunks; "paragraph": one paragraph that never ends (the
    // worst case: the whole reply is the growing tail); "code": one long fenced code block.
    if (shape === "blocks" && chunk % 40 === 39) text = text.slice(0, 18) + "\n\n";
    if (shape === "code" && chunk === 0) text = "```\n" + text.slice(0, 16);
    if (shape === "code" && chunk % 4 === 3) text = text.slice(0, 19) + "\n";
    if (chunk === chunkCount - 1) text = ` ${record.finalMarker}`;
    sendPatch([{ op: "appendChunk", index: reply, kind: "text", text }]);
    // Bursts of 50 between timer ticks (which the browser clamps to 4 ms): 5,000 chunks in
    // about half a second, like the peer's test.
    if (chunk % 50 === 49) await sleep(1);
  }
  record.lastChunkAt = performance.now();
  sendPatch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]);
}

/** The restore scenario's restores, by id, with their entry index. */
const restores = new Map<number, { index: number; view: RestoreView }>();

/** Pushes a restore's card, or replaces it, as the engine does. */
function showRestore(view: RestoreView): void {
  const entry: Entry = { type: "restore", ...view };
  const known = restores.get(view.id);
  if (known === undefined) restores.set(view.id, { index: push(entry), view });
  else {
    known.view = view;
    sendPatch([{ op: "replace", index: known.index, entry }]);
  }
}

/** The restore scenario's thread: two prompts, the agent's changes, and a restore to the first. */
function openRestore(): void {
  session = { ...session, status: { type: "ready" } };
  entries = [
    { type: "user", text: "Rename greet to welcome and make it friendlier.", attachments: [] },
    { type: "agent", chunks: [{ kind: "text", text: "Done: `welcome()` in **src/greet.ts**, and a note in **notes.md**." }] },
    { type: "fileChange", ...agentEdit, phase: { type: "settled" }, hunks: agentEdit.hunks.map((hunk) => ({ ...hunk, state: "kept" })) },
    { type: "user", text: "Now add a test for it.", attachments: [] },
    { type: "agent", chunks: [{ kind: "text", text: "Added `greet.test.ts`." }] },
  ];
  const view: RestoreView = {
    id: 1,
    checkpoint: 0,
    prompt: "Rename greet to welcome and make it friendlier.",
    undoes: null,
    state: "planned",
    undoable: true,
    files: [
      { path: "/workspace/src/greet.ts", label: "src/greet.ts", change: 11, conflict: true, problem: null },
      { path: "/workspace/notes.md", label: "notes.md", change: 12, conflict: false, problem: null },
    ],
  };
  restores.set(view.id, { index: entries.length, view });
  entries.push({ type: "restore", ...view });
  const back = (change: FileChangeView, id: number): FileChangeView => ({
    ...change,
    id,
    origin: "restore",
    phase: { type: "proposed" },
    added: change.removed,
    removed: change.added,
    applied: false,
    hunks: change.hunks.map((hunk) => ({
      ...hunk,
      newCount: hunk.oldCount,
      oldCount: hunk.newCount,
      // What the agent added is taken out again, and what it took out comes back, in that order.
      lines: [
        ...hunk.lines.filter((shown) => shown.sign === "added").map((shown) => ({ ...shown, sign: "removed" as const })),
        ...hunk.lines.filter((shown) => shown.sign === "removed").map((shown) => ({ ...shown, sign: "added" as const })),
      ],
    })),
  });
  for (const change of [back(agentEdit, 11), back(proposedWrite, 12)]) {
    reviews.set(change.id, { index: entries.length, change });
    entries.push({ type: "fileChange", ...change });
  }
}

/** Restore on a prompt: a card with nothing to restore, enough for the dev page. */
function restoreCode(entry: number): void {
  const prompt = entries[entry];
  if (prompt?.type !== "user") return;
  const id = Math.max(0, ...restores.keys()) + 1;
  showRestore({ id, checkpoint: entry, prompt: prompt.text, undoes: null, state: "reading", undoable: false, files: [] });
  void sleep(300).then(() => showRestore({ ...restores.get(id)!.view, state: "nothingToRestore" }));
}

/** Undo: the restore is marked undone and an undo's card says what it puts back. */
function undoRestore(id: number): void {
  const known = restores.get(id);
  if (known === undefined) return;
  showRestore({ ...known.view, state: "undone", undoable: false });
  const undo = Math.max(0, ...restores.keys()) + 1;
  showRestore({ ...known.view, id: undo, undoes: id, state: "planned", undoable: false, files: known.view.files.map((file) => ({ ...file, change: null, conflict: false })) });
}

/** The tabs scenario's sessions that are not shown: their threads, by session key. */
const parkedThreads = new Map<number, Entry[]>();

/** Opens the tabs scenario's three sessions, the first one shown. */
function openTabs(): void {
  const tabs: SessionTabView[] = [
    { key: 1, label: "Tidy the notes", agent: "Demo", activity: "idle" },
    { key: 2, label: "Fix the flaky parser test", agent: "Claude Code", activity: "working" },
    { key: 3, label: "Review the release notes before tagging v0.2", agent: "Gemini CLI", activity: "waiting" },
  ];
  session = { ...session, status: { type: "ready" }, tabs, shown: 1 };
  entries = [
    { type: "user", text: "Tidy the notes: one heading per topic.", attachments: [] },
    { type: "agent", chunks: [{ kind: "text", text: "Done: **notes.md** now has a heading per topic." }] },
  ];
  parkedThreads.set(2, [
    { type: "user", text: "Why does the parser test fail one run in ten?", attachments: [] },
    { type: "agent", chunks: [{ kind: "text", text: "Looking at `parser.rs`: the test shares a temporary directory with" }] },
  ]);
  parkedThreads.set(3, [
    { type: "user", text: "Review the release notes before tagging v0.2.", attachments: [] },
    toolCall({
      id: "call-9",
      title: "Edit CHANGELOG.md",
      kind: "edit",
      status: "waiting_for_confirmation",
      locations: [{ path: "/demo/CHANGELOG.md", line: 3, label: "CHANGELOG.md" }],
      permission: {
        key: 9,
        options: [
          { id: "allow-once", name: "Allow once", kind: "allow_once" },
          { id: "reject-once", name: "Reject", kind: "reject_once" },
        ],
        outcome: null,
      },
    }),
  ]);
}

/** Shows session `key` of the tabs scenario with a snapshot, as the engine does. */
function showTab(key: number): void {
  const tab = session.tabs.find((each) => each.key === key);
  if (tab === undefined || key === session.shown) return;
  if (session.tabs.some((each) => each.key === session.shown)) parkedThreads.set(session.shown, entries);
  entries = parkedThreads.get(key) ?? [];
  parkedThreads.delete(key);
  session = { ...session, shown: key, agent: tab.agent, controls: { ...session.controls, title: tab.label } };
  const turn = tab.activity === "working" ? { type: "running" as const } : { type: "idle" as const };
  send({ type: "snapshot", snapshot: { session, earlier: 0, entries, plan: [], turn, terminals: [] } });
}

/** Closes session `key`'s tab; closing the shown one shows its neighbour, as the engine does. */
function closeTab(key: number): void {
  const index = session.tabs.findIndex((each) => each.key === key);
  if (index < 0) return;
  const tabs = session.tabs.filter((each) => each.key !== key);
  parkedThreads.delete(key);
  session = { ...session, tabs };
  const neighbour = tabs[index] ?? tabs[index - 1];
  if (key === session.shown && neighbour !== undefined) showTab(neighbour.key);
  else sendPatch([], session);
}

async function onIntent(message: WebviewToHost): Promise<void> {
  record.posted.push(message);
  switch (message.type) {
    case "ready":
      if (scenario === "tabs" && session.tabs.length === 1) openTabs();
      if (scenario === "restore" && entries.length === 0) openRestore();
      send({ type: "snapshot", snapshot: { session, earlier: 0, entries, plan: [], turn: { type: "idle" }, terminals: [] } });
      if (session.status.type === "starting") {
        await sleep(200);
        session = { ...session, status: { type: "ready" } };
        sendPatch([], session);
        if (scenario === "stress") {
          await stress(Number(parameters.get("chunks") ?? "5000"), parameters.get("shape") ?? "blocks");
        }
      }
      return;
    case "prompt":
      await demoTurn(message.text);
      return;
    case "answerPermission":
      await answerEdit(message.optionId);
      return;
    case "cancel":
      sendPatch([{ op: "turn", state: { type: "ended", stopReason: "cancelled" } }]);
      return;
    case "newSession":
      entries = [];
      send({ type: "snapshot", snapshot: { session, earlier: 0, entries, plan: [], turn: { type: "idle" }, terminals: [] } });
      return;
    case "selectAgent":
      session = { ...session, agent: message.name };
      sendPatch([], session);
      return;
    case "setMode":
      updatePermissions((permissions) => ({ ...permissions, mode: message.mode }));
      return;
    case "addRule": {
      const rule: RuleView = {
        id: nextRuleId++,
        spec: message.spec,
        scope: message.scope,
        origin: { type: "added" },
        fired: 0,
        description: describe(message.spec),
      };
      // Session rules come first, as the engine lists them.
      updatePermissions((permissions) => {
        const inScope = (scope: string) => permissions.rules.filter((other) => other.scope === scope);
        const rules =
          rule.scope === "session"
            ? [...inScope("session"), rule, ...inScope("workspace")]
            : [...permissions.rules, rule];
        return { ...permissions, rules };
      });
      return;
    }
    case "removeRule":
      updatePermissions((permissions) => ({
        ...permissions,
        rules: permissions.rules.filter((rule) => rule.id !== message.id),
      }));
      return;
    case "clearRules":
      updatePermissions((permissions) => ({
        ...permissions,
        rules: permissions.rules.filter((rule) => rule.scope !== message.scope),
      }));
      return;
    case "keepRuleForWorkspace":
      updatePermissions((permissions) => {
        const kept = permissions.rules.find((rule) => rule.id === message.id);
        if (kept === undefined) return permissions;
        const others = permissions.rules.filter((rule) => rule.id !== message.id);
        return { ...permissions, rules: [...others, { ...kept, scope: "workspace" }] };
      });
      return;
    case "openAuditLog":
      // The real host opens the file in an editor; the dev page only records the intent.
      return;
    case "review":
      review(message.intent);
      return;
    case "showSession":
      showTab(message.key);
      return;
    case "closeSession":
      closeTab(message.key);
      return;
    case "restoreCode":
      restoreCode(message.entry);
      return;
    case "undoRestore":
      undoRestore(message.restore);
      return;
  }
}

(window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => ({
  postMessage: (message: WebviewToHost) => {
    // The fake host answers asynchronously, like the real one; nothing waits for it here.
    void onIntent(message);
  },
  getState: () => state,
  setState: (next: unknown) => {
    state = next;
  },
});

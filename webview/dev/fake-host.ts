// A fake VS Code host for the dev page: defines `acquireVsCodeApi` and answers the webview the
// way the real host does (a snapshot on `ready`, then patches), from a script.
//
//   ?scenario=demo                  the demo agent's turn: text, a read, an edit that asks
//                                   permission, and the end of the turn after "Allow once"
//   ?scenario=stress&chunks=5000&shape=blocks
//                                   one reply streamed as N chunks of 20 characters, posted as
//                                   one message per chunk (worse than the real host, which
//                                   batches per frame), to measure how the webview keeps up;
//                                   shape is blocks, paragraph or code (see `stress`)
//
// What happened is recorded on `window.tetherDev` for dev/run.mjs to read.

import type {
  Entry,
  HostToWebview,
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
  status: { type: "starting", step: "Starting the agent…" },
  profiles: ["Demo", "Claude Code", "Gemini CLI"],
};

function send(message: HostToWebview): void {
  window.postMessage(message, "*");
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
    rawOutput: null,
    permission: null,
    ...overrides,
  };
}

let pendingEdit: { index: number; call: Entry } | null = null;

async function demoTurn(prompt: string): Promise<void> {
  push({ type: "user", text: prompt });
  sendPatch([{ op: "turn", state: { type: "running" } }]);
  const reply = push({ type: "agent", chunks: [] });
  await streamText(reply, "The user wants a tour. I'll read the README, then propose an edit.", "thought");
  await streamText(
    reply,
    "Hello! I'm the Tether demo agent. I'll show you what a turn looks like:\n\n" +
      "- streamed **markdown** with `code`\n- a tool call that reads a file\n- an edit that asks your permission\n\n" +
      "```rust\nfn main() {\n    println!(\"hello from the demo\");\n}\n```\n",
  );
  sendPatch([
    {
      op: "plan",
      entries: [
        { content: "Read README.md", priority: "high", status: "in_progress" },
        { content: "Edit notes.md", priority: "medium", status: "pending" },
        { content: "Summarise", priority: "low", status: "pending" },
      ],
    },
  ]);
  const readCall = { id: "call-1", title: "Read README.md", kind: "read", locations: [{ path: "README.md", line: null }] };
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
  const editCall = {
    id: "call-2",
    title: "Edit notes.md",
    kind: "edit",
    locations: [{ path: "notes.md", line: 2 }],
    content: [
      {
        type: "diff" as const,
        path: "notes.md",
        oldText: "# Notes\n\nNothing yet.\n",
        newText: "# Notes\n\nTether was here.\nAnd left a second line.\n",
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
  sendPatch([
    {
      op: "plan",
      entries: [
        { content: "Read README.md", priority: "high", status: "completed" },
        { content: "Edit notes.md", priority: "medium", status: "in_progress" },
        { content: "Summarise", priority: "low", status: "pending" },
      ],
    },
  ]);
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
  push({ type: "notice", level: "info", text: "The demo agent wrote 1 file.", detail: "notes.md (+2 -1)" });
  sendPatch([
    {
      op: "plan",
      entries: [
        { content: "Read README.md", priority: "high", status: "completed" },
        { content: "Edit notes.md", priority: "medium", status: "completed" },
        { content: "Summarise", priority: "low", status: "completed" },
      ],
    },
    { op: "turn", state: { type: "ended", stopReason: "end_turn" } },
  ]);
}

async function stress(chunkCount: number, shape: string): Promise<void> {
  push({ type: "user", text: `Stream ${chunkCount} chunks, please.` });
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

async function onIntent(message: WebviewToHost): Promise<void> {
  record.posted.push(message);
  switch (message.type) {
    case "ready":
      send({ type: "snapshot", snapshot: { session, entries, plan: [], turn: { type: "idle" } } });
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
      send({ type: "snapshot", snapshot: { session, entries, plan: [], turn: { type: "idle" } } });
      return;
    case "selectAgent":
      session = { ...session, agent: message.name };
      sendPatch([], session);
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

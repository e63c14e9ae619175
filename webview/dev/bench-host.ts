// A fake VS Code host for the webview's benchmarks (tests/bench/thread.bench.mjs) and profiles
// (dev/profile-stream.mjs): it answers `ready` the way the real host does, with one snapshot,
// and records when it posted what, for the driving script to read from `window.tetherBench`.
//
//   ?scenario=session&entries=10000  a reopened session: the snapshot holds that many entries
//                                    (prompts, agent replies with paragraphs and fenced code,
//                                    read / execute / edit tool calls with their text, terminal
//                                    and diff content) and the terminals the execute calls show
//   ?scenario=stream&chunks=20000&rate=2000
//                                    a prompt and an empty reply, then, once the script calls
//                                    `tetherBench.startStream()`, the reply's chunks of 20
//                                    characters (`#000001 quick brown `, one paragraph) arriving
//                                    at `rate` a second and posted as the engine posts them: at
//                                    most one patch per frame, the chunks since the last post
//                                    merged into one appendChunk (tether-core's thread.rs);
//                                    `&before=N` puts N earlier turns above it, each replied
//                                    with such a paragraph of 20,000 chunks, already drawn
//
// The page's own frames and timers are counted here too (this script runs before the webview's
// bundle, so it wraps `requestAnimationFrame`, `setTimeout` and `setInterval` before the
// webview takes them): the "idle: no frames or timers" is read from those counts.

import type { Entry, HostToWebview, SessionView, TerminalView, ToolCallView, WebviewToHost } from "../src/protocol";

interface BenchRecord {
  /** performance.now() just before the snapshot was posted. */
  snapshotPostedAt: number | null;
  /** The thread's length in the snapshot. */
  entries: number;
  /** Frames and timers the webview asked for, since the page loaded. */
  frames: number;
  timers: number;
  /** Main-thread tasks over 50 ms: when they started and how long they took. */
  longTasks: Array<{ start: number; duration: number }>;
  /** stream: when the first and the last chunk's patch was posted, and the text ending it. */
  firstChunkAt: number | null;
  lastChunkAt: number | null;
  finalMarker: string | null;
  patches: number;
  startStream: () => void;
  /** session: when the frame showing the thread's end (its last entry in sight) was painted. */
  endPaintedAt: number | null;
  /** stream: when the frame showing the last chunk's text was painted. */
  lastChunkPaintedAt: number | null;
  /** The page's own `requestAnimationFrame`, not counted (for the scripts' own measuring). */
  raf: typeof requestAnimationFrame;
}

const parameters = new URLSearchParams(location.search);
const scenario = parameters.get("scenario") ?? "session";

const nativeRaf = window.requestAnimationFrame.bind(window);
const nativeSetTimeout = window.setTimeout.bind(window);
const nativeSetInterval = window.setInterval.bind(window);

const record: BenchRecord = {
  snapshotPostedAt: null,
  entries: 0,
  frames: 0,
  timers: 0,
  longTasks: [],
  firstChunkAt: null,
  lastChunkAt: null,
  finalMarker: null,
  patches: 0,
  startStream: () => {},
  endPaintedAt: null,
  lastChunkPaintedAt: null,
  raf: nativeRaf,
};
(window as unknown as { tetherBench: BenchRecord }).tetherBench = record;

window.requestAnimationFrame = (callback: FrameRequestCallback): number => {
  record.frames++;
  return nativeRaf(callback);
};
window.setTimeout = ((handler: TimerHandler, timeout?: number, ...rest: unknown[]) => {
  record.timers++;
  return nativeSetTimeout(handler, timeout, ...rest);
}) as typeof setTimeout;
window.setInterval = ((handler: TimerHandler, timeout?: number, ...rest: unknown[]) => {
  record.timers++;
  return nativeSetInterval(handler, timeout, ...rest);
}) as typeof setInterval;

new PerformanceObserver((list) => {
  for (const task of list.getEntries()) {
    record.longTasks.push({ start: Math.round(task.startTime), duration: Math.round(task.duration) });
  }
}).observe({ type: "longtask", buffered: true });

const session: SessionView = {
  agent: "Demo",
  agentInfo: "tether-test-agent 0.1.0",
  status: { type: "ready" },
  profiles: [{ name: "Demo", state: "running", description: "Running · tether-test-agent 0.1.0" }],
  permissions: {
    mode: "ask",
    agentMode: null,
    agentModes: [],
    agentModeId: null,
    rules: [],
    ruleProblems: [],
    auditLog: "/workspace/.tether/sessions/bench/audit.jsonl",
  },
  changes: [],
  canRestart: false,
  canInstall: false,
  canStop: false,
  canSignIn: false,
  followAgent: false,
  controls: {
    title: "A long session",
    commands: [],
    configOptions: [],
    usage: null,
    prompt: { image: true, embeddedContext: true },
    mcpServers: [],
  },
  tabs: [{ key: 1, label: "A long session", agent: "Demo", activity: "idle" }],
  shown: 1,
};

/** What tether-core's host/chat_view.rs puts in a snapshot, and sends a frame after it. */
const SNAPSHOT_ENTRIES = 200;
const EARLIER_ENTRIES_PER_FRAME = 500;

const utf8 = new TextEncoder();

/** Posts `message` as the extension's host does: as JSON bytes (see src/host-message.ts). */
function send(message: HostToWebview): void {
  window.postMessage(utf8.encode(JSON.stringify(message)), "*");
}

const WORDS = (
  "the engine keeps each session's thread and sends the webview what changed since the last frame " +
  "so a reply streams without redrawing what is already shown while tool calls report their " +
  "progress and the person reviews every change before it lands in the workspace"
).split(" ");

/** Deterministic prose: `count` words starting at word `seed`, with a few marks of markdown. */
function prose(seed: number, count: number): string {
  const words: string[] = [];
  for (let word = 0; word < count; word++) {
    let text = WORDS[(seed * 7 + word * 3) % WORDS.length]!;
    if (word % 17 === 5) text = `**${text}**`;
    if (word % 23 === 11) text = `\`${text}()\``;
    words.push(text);
  }
  return `${words.join(" ")}.`;
}

function rustBlock(seed: number): string {
  return [
    "```rust",
    `fn step_${seed}(thread: &mut Thread, chunk: &str) -> Result<usize, Error> {`,
    `    let index = thread.entries.len().saturating_sub(${seed % 9});`,
    "    for (line, text) in chunk.lines().enumerate() {",
    `        thread.append(index, text, line as u32 + ${seed % 5})?;`,
    "    }",
    "    Ok(index)",
    "}",
    "```",
  ].join("\n");
}

function tsBlock(seed: number): string {
  return [
    "```ts",
    `export function render${seed}(entries: Entry[]): number {`,
    `  const shown = entries.filter((entry) => entry.type !== "notice");`,
    `  return shown.length + ${seed % 13};`,
    "}",
    "```",
  ].join("\n");
}

function toolCall(fields: Partial<ToolCallView> & Pick<ToolCallView, "id" | "title" | "kind">): Entry {
  return {
    type: "toolCall",
    status: "completed",
    content: [],
    locations: [],
    rawInput: null,
    command: null,
    rawOutput: null,
    permission: null,
    ...fields,
  };
}

function terminal(id: string, command: string, seed: number): TerminalView {
  const plain = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, strikethrough: false };
  const lines = [];
  for (let line = 0; line < 12; line++) {
    const passed = { ...plain, fg: { type: "palette" as const, index: 2 }, bold: true };
    lines.push({
      spans:
        line % 3 === 0
          ? [{ text: "   Compiling ", style: passed }, { text: `tether-core v0.${seed % 7}.${line}`, style: plain }]
          : [{ text: `test thread::tests::case_${seed}_${line} ... `, style: plain }, { text: "ok", style: passed }],
    });
  }
  return {
    id,
    command,
    cwd: null,
    origin: "client",
    lines,
    hiddenLines: seed % 40,
    state: { type: "exited", exitCode: 0, signal: null, killed: false },
    elapsedMs: 1200 + seed,
  };
}

/** A reopened session of `count` entries, in turns of a prompt, replies and tool calls. */
function reopenedSession(count: number): { entries: Entry[]; terminals: TerminalView[] } {
  const entries: Entry[] = [];
  const terminals: TerminalView[] = [];
  for (let turn = 0; entries.length < count; turn++) {
    const file = `src/module_${turn % 50}.rs`;
    const termId = `term-${turn}`;
    terminals.push(terminal(termId, `cargo test -p tether-core module_${turn % 50}`, turn));
    const turnEntries: Entry[] = [
      { type: "user", text: `Turn ${turn}: ${prose(turn, 18)}`, attachments: [] },
      {
        type: "agent",
        chunks: [
          { kind: "thought", text: prose(turn + 1, 30), durationMs: 2300 },
          { kind: "text", text: `${prose(turn + 2, 45)}\n\n${rustBlock(turn)}\n\n${prose(turn + 3, 25)}` },
        ],
      },
      toolCall({
        id: `read-${turn}`,
        title: `Read ${file}`,
        kind: "read",
        locations: [{ path: `/workspace/${file}`, line: null, label: file }],
        rawInput: { path: file },
        content: [{ type: "text", text: `\`\`\`\n${prose(turn + 4, 20)}\n\`\`\`` }],
      }),
      toolCall({
        id: `edit-${turn}`,
        title: `Edit ${file}`,
        kind: "edit",
        locations: [{ path: `/workspace/${file}`, line: 10 + (turn % 30), label: file }],
        content: [
          {
            type: "diff",
            path: `/workspace/${file}`,
            label: file,
            change: null,
            added: 4,
            removed: 2,
            hiddenLines: 0,
            lines: [
              { sign: "context", text: `fn step_${turn}(thread: &mut Thread) {`, highlights: [] },
              { sign: "removed", text: "    let index = thread.len();", highlights: [[16, 28]] },
              { sign: "removed", text: "    thread.append(index)?;", highlights: [] },
              { sign: "added", text: "    let index = thread.entries.len();", highlights: [[16, 36]] },
              { sign: "added", text: "    thread.append(index, text)?;", highlights: [[24, 30]] },
              { sign: "added", text: `    // Turn ${turn} keeps the index stable.`, highlights: [] },
              { sign: "added", text: "    Ok(index)", highlights: [] },
              { sign: "context", text: "}", highlights: [] },
            ],
          },
        ],
      }),
      toolCall({
        id: `run-${turn}`,
        title: `Run cargo test -p tether-core module_${turn % 50}`,
        kind: "execute",
        command: `cargo test -p tether-core module_${turn % 50}`,
        rawInput: { command: ["cargo", "test", "-p", "tether-core", `module_${turn % 50}`] },
        content: [{ type: "terminal", terminalId: termId }],
      }),
      {
        type: "agent",
        chunks: [{ kind: "text", text: `${prose(turn + 5, 35)}\n\n${tsBlock(turn)}\n\n- ${prose(turn + 6, 8)}\n- ${prose(turn + 7, 9)}` }],
      },
    ];
    for (const entry of turnEntries) if (entries.length < count) entries.push(entry);
  }
  return { entries, terminals };
}

/** The stream scenario: posts the reply's chunks as the engine would, one patch a frame at most. */
function stream(replyIndex: number, chunks: number, rate: number): void {
  // The chunk's number alone: a long line is shown in pieces cut at spaces before letters
  // (markdown-stream.ts), so the words after the number may be in the next piece's node.
  record.finalMarker = `#${String(chunks).padStart(6, "0")}`;
  const started = performance.now();
  let sent = 0;
  const post = (): void => {
    // The chunks that have arrived from the agent by now (all of them when rate is 0: a burst).
    const due = rate > 0 ? Math.min(chunks, Math.floor(((performance.now() - started) * rate) / 1000) + 1) : chunks;
    if (due > sent) {
      let text = "";
      for (let chunk = sent + 1; chunk <= due; chunk++) text += `#${String(chunk).padStart(6, "0")} quick brown `;
      if (record.firstChunkAt === null) {
        record.firstChunkAt = performance.now();
        performance.mark("bench-first-chunk");
      }
      send({ type: "patch", session: null, thread: [{ op: "appendChunk", index: replyIndex, kind: "text", text }] });
      record.patches++;
      sent = due;
      if (sent === chunks) {
        record.lastChunkAt = performance.now();
        performance.mark("bench-last-chunk");
      }
    }
    // The engine posts at most once per animation frame (the host's frame, not the webview's).
    if (sent < chunks) nativeSetTimeout(post, 16);
  };
  post();
}

/**
 * Calls `done` with the time the first frame for which `shown()` holds was painted: `shown` is
 * asked in a task queued from each frame's animation callbacks, which runs once that frame is
 * rendered (a frame's callbacks run in the order they were asked for, so asking from inside one
 * could see the webview's drawing of the frame before or after; a task after it sees it drawn).
 */
function whenPainted(shown: () => boolean, done: (at: number) => void): void {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    if (shown()) {
      done(performance.now());
      channel.port1.close();
    } else nativeRaf(() => channel.port2.postMessage(null));
  };
  nativeRaf(() => channel.port2.postMessage(null));
}

/** Whether entry `index` is in the thread's DOM with its bottom in sight. */
function entryEndInSight(index: number): boolean {
  const thread = document.querySelector("main.thread");
  const entry = thread?.querySelector(`[data-index="${index}"]`);
  if (thread == null || entry == null) return false;
  const view = thread.getBoundingClientRect();
  const box = entry.getBoundingClientRect();
  return box.bottom <= view.bottom + 1 && box.bottom > view.top;
}

function onReady(): void {
  if (scenario === "stream") {
    const before = Number(parameters.get("before") ?? "0");
    const entries: Entry[] = [];
    for (let turn = 0; turn < before; turn++) {
      let text = "";
      for (let chunk = 1; chunk <= 20000; chunk++) text += `#${String(chunk).padStart(6, "0")} quick brown `;
      entries.push({ type: "user", text: "Stream a long paragraph, please.", attachments: [] }, { type: "agent", chunks: [{ kind: "text", text }] });
    }
    entries.push({ type: "user", text: "Stream a long paragraph, please.", attachments: [] }, { type: "agent", chunks: [] });
    const replyIndex = entries.length - 1;
    record.entries = entries.length;
    record.snapshotPostedAt = performance.now();
    send({ type: "snapshot", snapshot: { session, earlier: 0, entries, plan: [], turn: { type: "running" }, terminals: [] } });
    record.startStream = () => {
      whenPainted(
        () => record.lastChunkAt !== null && (document.querySelector(`main.thread [data-index="${replyIndex}"]`)?.textContent?.includes(record.finalMarker!) ?? false),
        (at) => {
          record.lastChunkPaintedAt = at;
          performance.mark("bench-last-chunk-painted");
        },
      );
      stream(replyIndex, Number(parameters.get("chunks") ?? "20000"), Number(parameters.get("rate") ?? "2000"));
    };
    return;
  }
  const { entries, terminals } = reopenedSession(Number(parameters.get("entries") ?? "10000"));
  record.entries = entries.length;
  // Built before the clock starts: the real host has the session in memory already.
  record.snapshotPostedAt = performance.now();
  // As tether-core's host/chat_view.rs does: the last entries in the snapshot, the earlier ones a
  // batch a frame after it, the most recent first.
  const earlier = Math.max(0, entries.length - SNAPSHOT_ENTRIES);
  send({ type: "snapshot", snapshot: { session, earlier, entries: entries.slice(earlier), plan: [], turn: { type: "idle" }, terminals } });
  const sendEarlier = (end: number): void => {
    if (end === 0) return;
    const from = Math.max(0, end - EARLIER_ENTRIES_PER_FRAME);
    send({ type: "earlierEntries", from, entries: entries.slice(from, end) });
    setTimeout(() => sendEarlier(from), 16);
  };
  setTimeout(() => sendEarlier(earlier), 16);
  whenPainted(() => entryEndInSight(entries.length - 1), (at) => (record.endPaintedAt = at));
}

(window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => {
  let state: unknown = undefined;
  return {
    postMessage: (message: WebviewToHost) => {
      // The real host answers asynchronously; so does this one.
      if (message.type === "ready") queueMicrotask(onReady);
    },
    getState: () => state,
    setState: (next: unknown) => {
      state = next;
    },
  };
};

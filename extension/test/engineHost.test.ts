// The pump: whatever the engine asks for after an input is carried out, in order, with the VS
// Code API it names; the engine's timer fires; a failing engine call is logged, not fatal.
// Saving the workspace's rules and opening the audit log reach the settings and the editor, and
// tell the person when they cannot. Reads and edits of files answer the engine when they are
// done; review actions reach the review registry. An exported session is saved where the person
// says, in the save dialog, and a cancelled dialog saves nothing. An engine that panics is logged
// with the input it panicked on, replaced by a new one that reconnects to tetherd, and given up on
// when it keeps panicking.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { type TestContext, test } from "node:test";

import {
  type EngineFactory,
  EngineHost,
  MAX_PANICS,
  type ReviewActions,
  type TerminalActions,
} from "../src/engineHost";
import type { EngineConfig, HistoryItem, HostAction, ReviewDocument, ReviewHunk } from "../src/generated/protocol";
import type { HistoryActions } from "../src/history";
import type { OpenTerminalRequest } from "../src/terminals";
import { eventually, fakeView, recordingLog, tempFolder } from "./fakes";
import {
  ConfigurationTarget,
  Uri,
  executedCommands,
  failures,
  openDocument,
  openedDocuments,
  openedLines,
  resetWorkspace,
  choiceAnswers,
  offeredChoices,
  saveDialogAnswers,
  settingUpdates,
  shownMessages,
  shownSaveDialogs,
  workspace,
} from "./vscodeStub";

/** A structured input as the host encoded it for the engine. */
function decoded(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** One recorded call into the fake engine. */
type Input = { method: string; args: unknown[] };

/** The error a WASM trap throws (`WebAssembly.RuntimeError`), as the host sees it. */
class RuntimeError extends Error {
  override name = "RuntimeError";
}

/**
 * A stand-in engine: records its inputs and hands out whatever actions a test queued. A panic is
 * played as the real engine's: the panic hook reports the message, then the call traps.
 */
class ScriptedEngine {
  static last: ScriptedEngine | undefined;
  static created = 0;
  /** Every engine made from now on panics on this input method, as one replaying a bad log would. */
  static panicOn: string | undefined;
  /** Every engine made from now on starts by asking for tetherd, as the real one does. */
  static startsSidecar = false;
  readonly inputs: Input[] = [];
  readonly actions: HostAction[] = [];
  /** How many times the host asked for actions. */
  polls = 0;
  deadline: number | undefined;
  failNextInput: string | undefined;
  panicNextInput: string | undefined;
  /** Called on each input, so a test can queue the actions that input causes. */
  react: (input: Input) => void = () => {};

  constructor(
    readonly config: EngineConfig,
    private readonly onPanic: (message: string) => void = () => {},
  ) {
    ScriptedEngine.last = this;
    ScriptedEngine.created += 1;
    if (ScriptedEngine.startsSidecar) {
      this.actions.push({ type: "startSidecar" });
    }
  }

  private input(method: string, args: unknown[]): void {
    if (ScriptedEngine.panicOn === method) {
      this.panicNextInput = `index out of bounds in ${method}`;
    }
    if (this.panicNextInput !== undefined) {
      this.onPanic(`${this.panicNextInput} (crates/tether-core/src/host.rs:1:1)`);
      this.panicNextInput = undefined;
      throw new RuntimeError("unreachable");
    }
    if (this.failNextInput !== undefined) {
      const message = this.failNextInput;
      this.failNextInput = undefined;
      throw new Error(message);
    }
    const input = { method, args };
    this.inputs.push(input);
    this.react(input);
  }

  handleSidecarConnected(now: number) { this.input("handleSidecarConnected", [now]); }
  handleSidecarBytes(bytes: Uint8Array, now: number) { this.input("handleSidecarBytes", [bytes, now]); }
  handleSidecarClosed(reason: string, now: number) { this.input("handleSidecarClosed", [reason, now]); }
  // Structured inputs arrive as the JSON bytes the real engine reads; they are recorded decoded.
  handleWebview(message: Uint8Array, now: number) { this.input("handleWebview", [decoded(message), now]); }
  handleCommand(command: Uint8Array, now: number) { this.input("handleCommand", [decoded(command), now]); }
  handleTimeout(now: number) { this.input("handleTimeout", [now]); }
  handleFileRead(reply: Uint8Array, data: Uint8Array, now: number) { this.input("handleFileRead", [decoded(reply), data, now]); }
  handleWebviewGone() { this.input("handleWebviewGone", []); }
  /** The messages of the last poll's posts to the webview, as JSON bytes. */
  private webviewPosts: Uint8Array[] = [];
  /** Every queued action at once, as the real engine gives them: JSON, or "" for none; a post
   * to the webview without its message, which `takeWebviewPost` gives. */
  pollActions(): string {
    this.polls += 1;
    this.webviewPosts = [];
    if (this.actions.length === 0) return "";
    const actions = this.actions.splice(0).map((action) => {
      if (action.type !== "postWebview") return action;
      this.webviewPosts.push(new TextEncoder().encode(JSON.stringify(action.message)));
      return { type: "postWebview" };
    });
    return JSON.stringify(actions);
  }
  takeWebviewPost(): Uint8Array | undefined { return this.webviewPosts.shift(); }
  pollTimeout(): number | undefined { return this.deadline; }
  profiles(): string { return "[]"; }
  free() {}
}

const config: EngineConfig = {
  token: "t0ken",
  clientName: "Tether",
  clientVersion: "0.1.0",
  workspaceRoot: "/workspace",
  workspaceFolders: ["/workspace"],
  mcpServers: null,
  tetherDir: "/workspace/.tether",
  demoAgentCommand: null,
  agents: null,
  builtinProfiles: [],
  missingBuiltins: [],
  defaultProfile: null,
  permissions: { defaultMode: "ask", rules: [] },
  followAgent: false,
  workspaceTrusted: true,
  claudeCli: { persistent: false, idleTimeoutMinutes: 30 },
};

/** Records the review actions the host carried out, as calls. */
class RecordingReviews implements ReviewActions {
  readonly calls: unknown[][] = [];
  show(review: ReviewDocument, open: boolean) { this.calls.push(["show", review.change, open]); }
  update(change: number, hunks: ReviewHunk[], settled: boolean) { this.calls.push(["update", change, hunks.length, settled]); }
  open(changes: number[], title: string) { this.calls.push(["open", changes, title]); }
  clear(session?: number) { this.calls.push(session === undefined ? ["clear"] : ["clear", session]); }
}

/** Records the terminal actions the host carried out, as calls. */
class RecordingTerminals implements TerminalActions {
  readonly calls: unknown[][] = [];
  show(request: OpenTerminalRequest) { this.calls.push(["show", request]); }
  write(terminal: string, data: string) { this.calls.push(["write", terminal, data]); }
  confirmStop(terminal: string, command: string) { this.calls.push(["confirmStop", terminal, command]); }
  close(terminal: string) { this.calls.push(["close", terminal]); }
  dispose() { this.calls.push(["dispose"]); }
}

/** Records the lists the host showed in the history picker. */
class RecordingHistory implements HistoryActions {
  readonly shown: HistoryItem[][] = [];
  show(items: HistoryItem[]) { this.shown.push(items); }
}

function startHost() {
  const newEngine = ((onPanic: (message: string) => void) => new ScriptedEngine(config, onPanic)) as unknown as EngineFactory;
  const { log, lines, shown: logShown } = recordingLog();
  let sidecarStarts = 0;
  const reconnects: boolean[] = [];
  const restarts = { restarted: 0, stopped: [] as string[] };
  const reviews = new RecordingReviews();
  const terminals = new RecordingTerminals();
  const history = new RecordingHistory();
  const asked: { agent: string; methods: string[] }[] = [];
  const host = EngineHost.create(
    newEngine,
    log,
    (reconnect) => {
      sidecarStarts += 1;
      reconnects.push(reconnect);
    },
    reviews,
    terminals,
    history,
    { ask: (agent, methods) => asked.push({ agent, methods: methods.map((method) => method.id) }) },
    { restarted: () => (restarts.restarted += 1), stopped: (reason) => restarts.stopped.push(reason) },
  );
  const engine = ScriptedEngine.last;
  assert.ok(engine, "the host constructed an engine");
  return {
    host,
    engine,
    lines,
    logShown,
    reviews,
    terminals,
    history,
    asked,
    sidecarStarts: () => sidecarStarts,
    reconnects,
    restarts,
  };
}

test("every action an input causes is carried out, in the engine's order", () => {
  const { host, engine, lines } = startHost();
  const { view, posted } = fakeView();
  host.attachView(view);
  const written: string[] = [];
  shownMessages.length = 0;
  engine.react = (input) => {
    if (input.method === "handleSidecarConnected") {
      engine.actions.push(
        { type: "sidecarWrite", data: '{"jsonrpc":"2.0","id":1,"method":"hello"}\n' },
        { type: "log", level: "info", text: "said hello" },
        { type: "postWebview", message: { type: "patch", session: null, thread: [] } },
        { type: "setBadge", count: 2 },
        { type: "showMessage", level: "error", text: "agent crashed" },
        { type: "showMessage", level: "warn", text: "agent slow" },
      );
    }
  };

  host.sidecarConnected((data) => written.push(data));

  assert.deepEqual(written, ['{"jsonrpc":"2.0","id":1,"method":"hello"}\n']);
  assert.deepEqual(lines, [{ level: "info", text: "said hello" }]);
  assert.deepEqual(posted, [{ type: "patch", session: null, thread: [] }]);
  assert.deepEqual(view.badge, { value: 2, tooltip: "2 requests waiting for you (permissions and file changes)" });
  assert.deepEqual(shownMessages, [
    { level: "error", text: "agent crashed" },
    { level: "warning", text: "agent slow" },
  ]);

  engine.actions.push({ type: "setBadge", count: 0 });
  host.command({ type: "newSession" });
  assert.equal(view.badge, undefined, "a zero count hides the badge");
  host.dispose();
});

test("a streaming burst's patches all reach the view, in order, taken from the engine in one poll", () => {
  const { host, engine, lines } = startHost();
  const { view, posted } = fakeView();
  host.attachView(view);
  const chunks = 2_000;
  engine.react = (input) => {
    if (input.method !== "handleSidecarBytes") return;
    for (let n = 1; n <= chunks; n++) {
      engine.actions.push({
        type: "postWebview",
        message: { type: "patch", session: null, thread: [{ op: "appendChunk", index: 1, kind: "text", text: `#${n} ` }] },
      });
      // A write with no connection fails (a warning) without costing the actions after it.
      if (n === chunks / 2) engine.actions.push({ type: "sidecarWrite", data: "{}\n" });
    }
  };
  const pollsBefore = engine.polls;

  host.sidecarBytes(new Uint8Array([10]));

  const texts = posted.map((message) => {
    const patch = (message as { thread: { text: string }[] }).thread[0];
    return patch?.text;
  });
  assert.deepEqual(texts, Array.from({ length: chunks }, (_, index) => `#${index + 1} `));
  assert.deepEqual(lines, [{ level: "warn", text: "Dropped a message for tetherd: there is no connection to it." }]);
  // One poll took the burst, one more found nothing left.
  assert.equal(engine.polls - pollsBefore, 2);
  host.dispose();
});

test("tetherd is started when the engine asks, first when the host starts", () => {
  const { host, engine, sidecarStarts } = startHost();
  engine.actions.push({ type: "startSidecar" });
  assert.equal(sidecarStarts(), 0, "nothing happens before start()");
  host.start();
  assert.equal(sidecarStarts(), 1);

  // After a loss the engine asks again; the old connection's writer must not be used any more.
  const written: string[] = [];
  host.sidecarConnected((data) => written.push(data));
  engine.actions.push({ type: "startSidecar" }, { type: "sidecarWrite", data: "{}\n" });
  host.command({ type: "newSession" });
  assert.equal(sidecarStarts(), 2);
  assert.deepEqual(written, []);
  host.dispose();
});

test("Manage Workspace Trust opens VS Code's trust editor", () => {
  resetWorkspace();
  const { host, engine } = startHost();
  engine.actions.push({ type: "manageWorkspaceTrust" });
  host.start();
  assert.deepEqual(executedCommands, [{ command: "workbench.trust.manage", args: [] }]);
  host.dispose();
});

test("Agent settings opens VS Code's settings at Tether's agent profiles", () => {
  resetWorkspace();
  const { host, engine } = startHost();
  engine.actions.push({ type: "openSettings", query: "tether.agents" });
  host.start();
  assert.deepEqual(executedCommands, [{ command: "workbench.action.openSettings", args: ["tether.agents"] }]);
  host.dispose();
});

test("Show log beside a slow start shows Tether's log, leaving the focus where it is", () => {
  resetWorkspace();
  const { host, engine, logShown } = startHost();
  engine.actions.push({ type: "showLog" });
  host.start();
  assert.deepEqual(logShown, [true]);
  host.dispose();
});

test("webview messages and commands reach the engine untouched", () => {
  const { host, engine } = startHost();
  host.webviewMessage({ type: "prompt", text: "hi" });
  host.command({ type: "selectAgent", name: "Demo" });
  host.sidecarBytes(new Uint8Array([123, 10]));
  host.sidecarClosed("tetherd closed the connection");
  assert.deepEqual(
    engine.inputs.map((input) => [input.method, input.args[0]]),
    [
      ["handleWebview", { type: "prompt", text: "hi" }],
      ["handleCommand", { type: "selectAgent", name: "Demo" }],
      ["handleSidecarBytes", new Uint8Array([123, 10])],
      ["handleSidecarClosed", "tetherd closed the connection"],
    ],
  );
  host.dispose();
});

test("posts without a view are dropped, and the badge shows once a view appears", () => {
  const { host, engine } = startHost();
  engine.actions.push(
    { type: "postWebview", message: { type: "patch", session: null, thread: [] } },
    { type: "setBadge", count: 1 },
  );
  host.command({ type: "cancel" });
  assert.equal(engine.actions.length, 0, "the host drained the engine even with no view");

  const { view, posted, dispose } = fakeView();
  host.attachView(view);
  assert.deepEqual(posted, []);
  assert.deepEqual(view.badge, { value: 1, tooltip: "1 request waiting for you (permissions and file changes)" });

  dispose();
  assert.equal(engine.inputs.at(-1)?.method, "handleWebviewGone", "the engine learns the view is gone");
  engine.actions.push({ type: "postWebview", message: { type: "patch", session: null, thread: [] } });
  host.command({ type: "cancel" });
  assert.deepEqual(posted, [], "a disposed view gets nothing");
  host.dispose();
});

test("a write with no sidecar connection is dropped with a warning", () => {
  const { host, engine, lines } = startHost();
  engine.actions.push({ type: "sidecarWrite", data: "{}\n" });
  host.command({ type: "newSession" });
  assert.match(lines.at(-1)?.text ?? "", /no connection/);
  host.dispose();
});

test("an engine that throws is logged and the host keeps pumping", () => {
  const { host, engine, lines } = startHost();
  const { view, posted } = fakeView();
  host.attachView(view);
  engine.failNextInput = "invalid WebviewToHost: unknown variant `bogus`";
  host.webviewMessage({ type: "bogus" });
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.level, "error");
  assert.match(lines[0]?.text ?? "", /unknown variant `bogus`/);

  engine.react = () => engine.actions.push({ type: "postWebview", message: { type: "patch", session: null, thread: [] } });
  host.webviewMessage({ type: "ready" });
  assert.equal(posted.length, 1, "the next input still works");
  host.dispose();
});

test("an engine that panics is replaced by a fresh one that reconnects to tetherd, and the person is told", (t) => {
  ScriptedEngine.startsSidecar = true;
  t.after(() => (ScriptedEngine.startsSidecar = false));
  const { host, engine, lines, reviews, reconnects, restarts } = startHost();
  host.start();
  const written: string[] = [];
  host.sidecarConnected((data) => written.push(data));
  assert.deepEqual(reconnects, [true], "a window's first tetherd start reconnects to the recorded one");
  engine.deadline = performance.now() + 60_000;
  host.command({ type: "newSession" });
  shownMessages.length = 0;
  lines.length = 0;
  const before = ScriptedEngine.created;

  engine.panicNextInput = "index out of bounds";
  host.webviewMessage({ type: "prompt", text: "hello" });

  assert.deepEqual(lines.slice(0, 1), [
    {
      level: "error",
      text:
        'The engine panicked while handling a "prompt" message from the chat view: ' +
        "index out of bounds (crates/tether-core/src/host.rs:1:1)",
    },
  ]);
  assert.equal(shownMessages.length, 1);
  assert.equal(shownMessages[0]?.level, "warning");
  assert.match(shownMessages[0]?.text ?? "", /failed while handling a "prompt" message .* restarted; the session goes on/);
  assert.equal(ScriptedEngine.created, before + 1, "one new engine");
  const fresh = ScriptedEngine.last;
  assert.ok(fresh !== undefined && fresh !== engine);
  assert.equal(restarts.restarted, 1, "the chat loads again for the new engine");
  assert.deepEqual(reviews.calls, [["clear"]], "the old engine's reviews are gone with it");
  assert.deepEqual(reconnects, [true, true], "the new engine reconnects to the running tetherd");
  const panickedInputs = engine.inputs.length;

  // Everything from now on reaches the new engine, never the broken one, and the old
  // connection's writer is not used for it.
  engine.actions.push({ type: "sidecarWrite", data: "stale\n" });
  host.command({ type: "cancel" });
  host.sidecarConnected((data) => written.push(data));
  fresh.actions.push({ type: "sidecarWrite", data: "fresh\n" });
  host.command({ type: "newSession" });
  assert.deepEqual(written, ["fresh\n"], "only the new engine's lines, on the new connection");
  assert.equal(engine.inputs.length, panickedInputs, "the engine that panicked is never called again");
  assert.deepEqual(
    fresh.inputs.map((input) => input.method),
    ["handleCommand", "handleSidecarConnected", "handleCommand"],
  );
  assert.deepEqual(restarts.stopped, []);
  host.dispose();
});

test("an engine that keeps panicking is not restarted forever: the host stops and says why", (t) => {
  ScriptedEngine.startsSidecar = true;
  t.after(() => {
    ScriptedEngine.startsSidecar = false;
    ScriptedEngine.panicOn = undefined;
  });
  const { host, lines, reconnects, restarts } = startHost();
  host.start();
  shownMessages.length = 0;
  const before = ScriptedEngine.created;
  // As an engine would that panics on what tetherd replays to it from the session's log.
  ScriptedEngine.panicOn = "handleSidecarConnected";

  for (let attempt = 0; attempt <= MAX_PANICS + 1; attempt += 1) {
    host.sidecarConnected(() => {});
  }

  assert.equal(ScriptedEngine.created - before, MAX_PANICS, "a new engine after each of the first panics only");
  assert.equal(reconnects.length, 1 + MAX_PANICS);
  const panics = lines.filter((line) => line.text.startsWith("The engine panicked while handling the sidecar connection"));
  assert.equal(panics.length, MAX_PANICS + 1);
  assert.equal(restarts.stopped.length, 1);
  assert.match(restarts.stopped[0] ?? "", /failed 4 times in a few minutes, last while handling the sidecar connection/);
  assert.deepEqual(
    shownMessages.map((message) => message.level),
    [...Array<string>(MAX_PANICS).fill("warning"), "error"],
  );
  assert.match(shownMessages.at(-1)?.text ?? "", /Reload the window to start it again/);
  host.dispose();
});

test("the engine's deadline fires handleTimeout, once, and is re-armed from the new deadline", async (t) => {
  const { host, engine } = startHost();
  const { view, posted } = fakeView();
  host.attachView(view);
  let timeouts = 0;
  engine.react = (input) => {
    if (input.method === "handleTimeout") {
      timeouts += 1;
      engine.deadline = timeouts < 2 ? performance.now() + 5 : undefined;
      engine.actions.push({ type: "postWebview", message: { type: "patch", session: null, thread: [] } });
    }
  };
  engine.deadline = performance.now() + 5;
  host.command({ type: "newSession" });
  await eventually(() => timeouts === 2, "two timeouts");
  assert.equal(posted.length, 2, "actions from a timeout are carried out");
  // A replaced deadline must not leave a second timer behind. From here the test owns the clock:
  // every timer the host arms is fired by the tick below, so one left behind would fire too.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  engine.deadline = performance.now() + 5;
  host.command({ type: "cancel" });
  engine.deadline = performance.now() + 5;
  host.command({ type: "cancel" });
  t.mock.timers.tick(60_000);
  assert.equal(timeouts, 3, "only the latest deadline fired");
  host.dispose();
});

test("the workspace's rules are saved to the workspace settings, exactly as the engine gave them", async () => {
  const { host, engine } = startHost();
  settingUpdates.length = 0;
  const rules = [
    { decision: "allow", kinds: ["execute"], pattern: "npm test" },
    { decision: "alow", kinds: ["read"] },
  ];
  engine.actions.push({ type: "saveWorkspaceRules", rules }, { type: "saveWorkspaceRules", rules: [] });
  host.command({ type: "cancel" });
  await eventually(() => settingUpdates.length === 2, "two settings updates");
  assert.deepEqual(settingUpdates, [
    { key: "tether.permissions.rules", value: rules, target: ConfigurationTarget.Workspace },
    { key: "tether.permissions.rules", value: [], target: ConfigurationTarget.Workspace },
  ]);
  host.dispose();
});

test("a workspace that cannot take the rules says so, in a notification and the log", async () => {
  const { host, engine, lines } = startHost();
  shownMessages.length = 0;
  failures.update = "Unable to write to Workspace Settings because no workspace is opened.";
  try {
    engine.actions.push({ type: "saveWorkspaceRules", rules: [{ decision: "deny", kinds: ["delete"] }] });
    host.command({ type: "cancel" });
    await eventually(() => shownMessages.length === 1, "an error notification");
  } finally {
    delete failures.update;
  }
  assert.deepEqual(shownMessages, [
    {
      level: "error",
      text: "Tether could not save the workspace's permission rules: Unable to write to Workspace Settings because no workspace is opened.",
    },
  ]);
  assert.deepEqual(lines.map((line) => line.level), ["error"]);
  host.dispose();
});

test("the audit log opens in an editor, and a file that cannot be opened is reported", async () => {
  const { host, engine, lines } = startHost();
  openedDocuments.length = 0;
  shownMessages.length = 0;
  engine.actions.push({ type: "openFile", path: "/workspace/.tether/sessions/s1/audit.jsonl", line: null });
  host.command({ type: "cancel" });
  await eventually(() => openedDocuments.length === 1, "the document to open");
  assert.deepEqual(openedDocuments, ["/workspace/.tether/sessions/s1/audit.jsonl"]);

  failures.showTextDocument = "cannot open file:///gone.jsonl";
  try {
    engine.actions.push({ type: "openFile", path: "/gone.jsonl", line: null });
    host.command({ type: "cancel" });
    await eventually(() => shownMessages.length === 1, "an error notification");
  } finally {
    delete failures.showTextDocument;
  }
  assert.deepEqual(shownMessages, [
    { level: "error", text: "Tether could not open /gone.jsonl: cannot open file:///gone.jsonl" },
  ]);
  assert.equal(lines.at(-1)?.level, "error");
  host.dispose();
});

test("a path on a card opens its file with the cursor on the line", async () => {
  const { host, engine } = startHost();
  openedDocuments.length = 0;
  openedLines.length = 0;
  engine.actions.push({ type: "openFile", path: "/workspace/src/app.ts", line: 12 });
  host.command({ type: "cancel" });
  await eventually(() => openedDocuments.length === 1, "the document to open");
  assert.deepEqual(openedDocuments, ["/workspace/src/app.ts"]);
  assert.deepEqual(openedLines, [11]);
  host.dispose();
});

test("nothing reaches the engine after dispose", (t) => {
  // The test owns the clock, so the deadline armed before dispose would fire on the tick below if
  // dispose left its timer behind.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const { host, engine } = startHost();
  engine.deadline = performance.now() + 5;
  host.command({ type: "newSession" });
  host.dispose();
  host.webviewMessage({ type: "ready" });
  t.mock.timers.tick(60_000);
  assert.deepEqual(engine.inputs.map((input) => input.method), ["handleCommand"]);
});

test("a file read is answered through handleFileRead, with the open document's unsaved text", async () => {
  resetWorkspace();
  const { host, engine } = startHost();
  openDocument("/workspace/notes.md", "unsaved ünïcode", { dirty: true });
  engine.actions.push({ type: "readFile", read: 7, path: "/workspace/notes.md", offset: 8, maxBytes: 1000 });
  host.command({ type: "cancel" });
  await eventually(() => engine.inputs.some((input) => input.method === "handleFileRead"), "the read's answer");
  const [reply, data] = engine.inputs.find((input) => input.method === "handleFileRead")?.args ?? [];
  assert.deepEqual(reply, { read: 7, outcome: { type: "data", eof: true, fromEditor: true } });
  assert.equal(new TextDecoder().decode(data as Uint8Array), "ünïcode");
  host.dispose();
});

test("an edit's outcome goes back to the engine as an editDone command", async (t) => {
  resetWorkspace();
  const folder = tempFolder(t);
  const file = path.join(folder, "a.txt");
  fs.writeFileSync(file, "one\n");
  const { host, engine } = startHost();
  engine.actions.push(
    { type: "editFile", edit: 3, path: file, expected: "one\n", result: "two\n", edits: [{ start: 0, end: 4, text: "two\n" }] },
    { type: "editFile", edit: 4, path: file, expected: "one\n", result: null, edits: [] },
  );
  host.command({ type: "cancel" });
  const editsDone = () => engine.inputs.filter((input) => (input.args[0] as { type?: string }).type === "editDone");
  await eventually(() => editsDone().length === 2, "both edits' outcomes");
  assert.deepEqual(
    editsDone().map((input) => input.args[0]),
    [
      { type: "editDone", edit: 3, outcome: { type: "applied", saved: true } },
      { type: "editDone", edit: 4, outcome: { type: "conflict" } },
    ],
  );
  assert.equal(fs.readFileSync(file, "utf8"), "two\n");
  host.dispose();
});

test("closing a session at work asks first, and only Stop and Close closes it", async () => {
  resetWorkspace();
  const { host, engine } = startHost();
  choiceAnswers.length = 0;
  offeredChoices.length = 0;
  choiceAnswers.push(undefined, "Stop and Close");
  engine.actions.push(
    { type: "confirmCloseSession", key: 2, title: "Fix the tests" },
    { type: "confirmCloseSession", key: 3, title: "Run the build" },
  );
  host.command({ type: "cancel" });
  const closes = () => engine.inputs.filter((input) => (input.args[0] as { type?: string }).type === "closeSession");
  await eventually(() => closes().length === 1, "the confirmed close");
  assert.deepEqual(
    offeredChoices.map(({ text, modal, items }) => [text, modal, items]),
    [
      ['"Fix the tests" is working or waiting for you. Closing its tab stops its agent; the session stays in the history.', true, ["Stop and Close"]],
      ['"Run the build" is working or waiting for you. Closing its tab stops its agent; the session stays in the history.', true, ["Stop and Close"]],
    ],
  );
  assert.deepEqual(closes().map((input) => input.args[0]), [{ type: "closeSession", key: 3, confirmed: true }], "a dismissed question closes nothing");
  host.dispose();
});

test("path resolutions are answered in the order the engine asked, whichever finishes first", async (t) => {
  const folder = tempFolder(t);
  // The first resolution walks up through thirty missing folders, a disk call or two each; the
  // second is one call. Answered as they finish, the second would come first.
  const deep = path.join(folder, ...Array.from({ length: 30 }, (_, index) => `missing-${index}`), "file.txt");
  const { host, engine } = startHost();
  engine.actions.push(
    { type: "resolvePaths", resolve: 1, roots: [folder], paths: [deep] },
    { type: "resolvePaths", resolve: 2, roots: [folder], paths: [folder] },
  );
  host.command({ type: "cancel" });
  const answers = () =>
    engine.inputs.flatMap((input) => {
      const command = input.args[0] as { type?: string; resolve?: number };
      return command.type === "pathsResolved" ? [command.resolve] : [];
    });
  await eventually(() => answers().length === 2, "both resolutions' answers");
  assert.deepEqual(answers(), [1, 2]);
  host.dispose();
});

test("every folder of a multi-root workspace is resolved through its links", async (t) => {
  const folder = tempFolder(t);
  const real = path.join(folder, "real-lib");
  fs.mkdirSync(real);
  const linked = path.join(folder, "lib");
  fs.symlinkSync(real, linked);
  const { host, engine } = startHost();
  engine.actions.push({ type: "resolvePaths", resolve: 1, roots: [folder, linked], paths: [path.join(linked, "a.ts")] });
  host.command({ type: "cancel" });
  const answer = () =>
    engine.inputs
      .map((input) => input.args[0] as { type?: string; roots?: unknown; paths?: unknown })
      .find((command) => command.type === "pathsResolved");
  await eventually(() => answer() !== undefined, "the resolution's answer");
  const realFolder = fs.realpathSync(folder);
  assert.deepEqual(answer()!.roots, [
    { type: "found", path: realFolder },
    { type: "found", path: path.join(realFolder, "real-lib") },
  ]);
  assert.deepEqual(answer()!.paths, [{ type: "found", path: path.join(realFolder, "real-lib", "a.ts") }]);
  host.dispose();
});

test("review actions reach the review registry in the engine's order", () => {
  const { host, engine, reviews } = startHost();
  const review: ReviewDocument = {
    change: 5,
    path: "/workspace/a.ts",
    label: "a.ts",
    original: "a\n",
    proposed: "b\n",
    applied: false,
    hunks: [],
    settled: false,
    session: 1,
  };
  engine.actions.push(
    { type: "showReview", document: review, open: true },
    { type: "updateReview", change: 5, hunks: [], settled: true },
    { type: "openReviews", changes: [5, 6], title: "Changes this turn" },
    { type: "clearReviews", session: 2 },
  );
  host.command({ type: "cancel" });
  assert.deepEqual(reviews.calls, [
    ["show", 5, true],
    ["update", 5, 0, true],
    ["open", [5, 6], "Changes this turn"],
    ["clear", 2],
  ]);
  host.dispose();
});

test("terminal actions reach the mirrored terminals in the engine's order, and the terminals go with the host", () => {
  const { host, engine, terminals } = startHost();
  engine.actions.push(
    { type: "openTerminal", terminal: "t1", name: "npm test", interactive: true, replay: "$ npm test\r\n", reveal: true },
    { type: "terminalWrite", terminal: "t1", data: "PASS\r\n" },
    { type: "confirmStopTerminal", terminal: "t1", command: "npm test" },
    { type: "closeTerminal", terminal: "t1" },
  );
  host.command({ type: "terminalClosed", terminal: "t1" });
  assert.deepEqual(terminals.calls, [
    [
      "show",
      { type: "openTerminal", terminal: "t1", name: "npm test", interactive: true, replay: "$ npm test\r\n", reveal: true },
    ],
    ["write", "t1", "PASS\r\n"],
    ["confirmStop", "t1", "npm test"],
    ["close", "t1"],
  ]);
  host.dispose();
  assert.deepEqual(terminals.calls.at(-1), ["dispose"]);
});

/** A fresh workspace with a temporary folder open in it, for this test only. */
function openWorkspaceFolder(t: TestContext): string {
  resetWorkspace();
  const folder = tempFolder(t);
  workspace.workspaceFolders = [{ uri: Uri.file(folder) }];
  t.after(() => {
    workspace.workspaceFolders = undefined;
  });
  return folder;
}

test("the engine's history list reaches the history picker", () => {
  const { host, engine, history } = startHost();
  const item: HistoryItem = {
    id: "s1",
    title: "Fix the tests",
    agent: "Demo",
    lastActivity: null,
    turns: 2,
    source: "tether",
    current: true,
    live: false,
    restores: 0,
    fromCheckpoint: false,
  };
  engine.actions.push({ type: "showHistory", items: [item] }, { type: "showHistory", items: [] });
  host.command({ type: "showHistory" });
  assert.deepEqual(history.shown, [[item], []]);
  host.dispose();
});

test("an agent that needs a sign-in gets the sign-in UI with its methods", () => {
  const { host, engine, asked } = startHost();
  engine.actions.push({
    type: "askAuthentication",
    agent: "Codex",
    methods: [{ id: "chatgpt", name: "Login with ChatGPT", description: null, kind: { type: "agent" } }],
  });
  host.command({ type: "newSession" });
  assert.deepEqual(asked, [{ agent: "Codex", methods: ["chatgpt"] }]);
  host.dispose();
});

test("a Markdown export is saved where the person says, as UTF-8, and opened", async (t) => {
  const folder = openWorkspaceFolder(t);
  openedDocuments.length = 0;
  const target = path.join(folder, "chosen.md");
  saveDialogAnswers.push(Uri.file(target));
  const { host, engine } = startHost();
  engine.actions.push({ type: "saveExport", suggestedName: "fix-the-tests.md", content: "# Fix the tests — ünïcode\n" });
  host.command({ type: "exportSession", id: null, format: "markdown" });
  await eventually(() => openedDocuments.length === 1, "the export to open");

  assert.deepEqual(shownSaveDialogs.map((dialog) => [dialog.defaultUri?.fsPath, dialog.filters]), [
    [path.join(folder, "fix-the-tests.md"), { Markdown: ["md"] }],
  ]);
  assert.equal(fs.readFileSync(target, "utf8"), "# Fix the tests — ünïcode\n");
  assert.deepEqual(openedDocuments, [target]);
  host.dispose();
});

test("a suggested name cannot propose a folder other than the workspace's", async (t) => {
  const folder = openWorkspaceFolder(t);
  const { host, engine } = startHost();
  engine.actions.push({ type: "saveExport", suggestedName: "../../home/.bashrc", content: "x" });
  host.command({ type: "exportSession", id: null, format: "markdown" });
  await eventually(() => shownSaveDialogs.length === 1, "the save dialog");
  assert.equal(shownSaveDialogs[0]?.defaultUri?.fsPath, path.join(folder, ".bashrc"));
  host.dispose();
});

test("a cancelled save dialog saves and opens nothing", async (t) => {
  const folder = openWorkspaceFolder(t);
  openedDocuments.length = 0;
  shownMessages.length = 0;
  const source = path.join(folder, "events.jsonl");
  fs.writeFileSync(source, "{}\n");
  const { host, engine } = startHost();
  engine.actions.push(
    { type: "saveExport", suggestedName: "a.md", content: "# A\n" },
    { type: "exportFile", source, suggestedName: "a.jsonl" },
  );
  host.command({ type: "exportSession", id: null, format: "markdown" });
  await eventually(() => shownSaveDialogs.length === 2, "both save dialogs");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(fs.readdirSync(folder), ["events.jsonl"]);
  assert.deepEqual(openedDocuments, []);
  assert.deepEqual(shownMessages, []);
  host.dispose();
});

test("a session log export copies the file, replacing the one the person chose to replace", async (t) => {
  const folder = openWorkspaceFolder(t);
  const source = path.join(folder, "events.jsonl");
  fs.writeFileSync(source, '{"seq":1}\n{"seq":2}\n');
  const target = path.join(folder, "kept.jsonl");
  fs.writeFileSync(target, "older export\n");
  saveDialogAnswers.push(Uri.file(target));
  const { host, engine, lines } = startHost();
  engine.actions.push({ type: "exportFile", source, suggestedName: "fix-the-tests.jsonl" });
  host.command({ type: "exportSession", id: "s1", format: "jsonl" });
  await eventually(() => lines.some((line) => line.text.startsWith("Exported")), "the copy");

  assert.deepEqual(shownSaveDialogs.map((dialog) => [dialog.defaultUri?.fsPath, dialog.filters]), [
    [path.join(folder, "fix-the-tests.jsonl"), { "JSON Lines": ["jsonl"] }],
  ]);
  assert.equal(fs.readFileSync(target, "utf8"), '{"seq":1}\n{"seq":2}\n');
  host.dispose();
});

test("an export that cannot be written is a warning naming the file", async (t) => {
  resetWorkspace();
  const folder = tempFolder(t);
  shownMessages.length = 0;
  const unwritable = path.join(folder, "no-such-folder", "a.md");
  const copyTarget = path.join(folder, "copy.jsonl");
  saveDialogAnswers.push(Uri.file(unwritable), Uri.file(copyTarget));
  const { host, engine } = startHost();
  engine.actions.push(
    { type: "saveExport", suggestedName: "a.md", content: "# A\n" },
    { type: "exportFile", source: path.join(folder, "gone.jsonl"), suggestedName: "a.jsonl" },
  );
  host.command({ type: "exportSession", id: null, format: "markdown" });
  await eventually(() => shownMessages.length === 2, "two warnings");

  assert.deepEqual(
    shownMessages.map((message) => message.level),
    ["warning", "warning"],
  );
  assert.ok(
    shownMessages.some((message) => message.text.startsWith(`Tether could not export the session to ${unwritable}: `)),
    JSON.stringify(shownMessages),
  );
  assert.ok(
    shownMessages.some((message) => message.text.startsWith(`Tether could not export the session to ${copyTarget}: `)),
    JSON.stringify(shownMessages),
  );
  assert.equal(fs.existsSync(copyTarget), false);
  host.dispose();
});

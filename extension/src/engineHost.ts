// Owns the WASM engine and pumps it: every input goes in through one of the methods below, and
// after each one the host drains the engine's actions, carries them out with VS Code APIs, and
// re-arms the single timer the engine asked for.
//
// Nothing here interprets a protocol message. An exception from the engine is logged and the
// host carries on: one bad message must never take the extension host down with it.
//
// A panic in the engine is different: it traps, and the engine it happened in can never be called
// again. The host logs it with the kind of input that caused it, tells the person, and carries on
// with a new engine in a fresh WASM instance, which reconnects to the running tetherd as a window
// reload does, so the live session (agent, log, thread) goes on. An engine that keeps panicking
// (say on a message it replays from the session's log) is not restarted forever: after
// `MAX_PANICS` panics within `PANIC_WINDOW_MS` the host stops and says so.

import * as os from "node:os";
import * as path from "node:path";

import * as vscode from "vscode";

import { answerEditorQuery } from "./editorQueries";
import { describeError } from "./errors";
import { FileAccess } from "./fileAccess";
import { WorkspaceMentions } from "./mentions";
import { MessageActions } from "./messageActions";
import { resolvePath } from "./pathResolution";
import type * as TetherWasm from "../dist/wasm/tether_wasm";
import type {
  AgentProfile,
  EngineConfig,
  FileReadReply,
  HostAction,
  HostCommand,
  LogLevel,
  ProfileView,
  ReviewDocument,
  ReviewHunk,
  WebviewToHost,
} from "./generated/protocol";
import type { AuthActions } from "./auth";
import type { HistoryActions } from "./history";
import type { OpenTerminalRequest } from "./terminals";

/** The wasm-bindgen module (`dist/wasm/tether_wasm.js`). */
export type WasmModule = typeof TetherWasm;

/** An action as `pollActions` gives it: a post to the chat view comes without its message,
 * which `takeWebviewPost` gives as UTF-8 JSON bytes. */
type PolledAction = Exclude<HostAction, { type: "postWebview" }> | { type: "postWebview" };

/** Writes NDJSON lines to the connected tetherd socket. */
export type SidecarWriter = (data: string) => void;

/**
 * Starts tetherd (replacing any earlier one) and reports back through `sidecarConnected` or
 * `sidecarClosed`. With `reconnect`, the tetherd this window recorded is connected to when it is
 * still running (the first start of a window, and the start of an engine that replaced one that
 * panicked); otherwise a new one is started.
 */
export type SidecarStarter = (reconnect: boolean) => void;

/**
 * Makes a new engine, in a fresh WASM instance (see `loadWasm`), with the configuration as the
 * settings are now. `onPanic` hears of the engine's panics. Throws when the configuration is
 * invalid.
 */
export type EngineFactory = (onPanic: (message: string) => void) => TetherWasm.Engine;

/** What the rest of the extension does when the engine is replaced, or given up on. */
export interface EngineRestarts {
  /** A new engine replaced one that panicked: the chat must load again to greet it. */
  restarted(): void;
  /** The engine panicked too often and no new one was started; `reason` says so. */
  stopped(reason: string): void;
}

/**
 * Loads the engine from next to the bundle, as a new WASM instance with its own memory each time:
 * an instance whose engine panicked may hold anything, so it is thrown away whole. The module is
 * required at run time rather than bundled because wasm-bindgen's Node.js output reads its
 * `.wasm` file from its own directory, and the build marks this exact path as external (see the
 * "build" script in package.json). wasm-bindgen instantiates when the module is evaluated, so
 * dropping it from Node's module cache is what makes the next `require` instantiate afresh.
 */
export function loadWasm(): WasmModule {
  const modulePath = require.resolve("./wasm/tether_wasm.js");
  delete require.cache[modulePath];
  return require(modulePath) as WasmModule;
}

/** The button that closes the tab of a session at work, stopping its agent. */
const STOP_AND_CLOSE = "Stop and Close";

/** How many engine panics within `PANIC_WINDOW_MS` the host restarts from before it gives up. */
export const MAX_PANICS = 3;
export const PANIC_WINDOW_MS = 5 * 60_000;

/** Carries out the engine's review actions: the `ReviewRegistry` (review.ts), or a test's fake. */
export interface ReviewActions {
  show(review: ReviewDocument, open: boolean): void;
  update(change: number, hunks: ReviewHunk[], settled: boolean): void;
  open(changes: number[], title: string): void;
  /** Forget the changes of session `session` (`ReviewDocument.session`), or every change. */
  clear(session?: number): void;
}

/**
 * Carries out the engine's terminal actions: the `MirroredTerminals` (terminals.ts), or a test's
 * fake. Disposed with the engine host.
 */
export interface TerminalActions extends vscode.Disposable {
  show(request: OpenTerminalRequest): void;
  write(terminal: string, data: string): void;
  confirmStop(terminal: string, command: string): void;
  close(terminal: string): void;
}

/**
 * A value for the engine, as the JSON bytes its shims read (`EngineConfig`, `WebviewToHost`,
 * `HostCommand`, `FileReadReply`): structured values cross the WASM boundary as text, which
 * costs one copy rather than a boundary call per field (see crates/tether-wasm).
 */
export function engineInput(value: EngineConfig | WebviewToHost | HostCommand | FileReadReply): Uint8Array {
  return utf8.encode(JSON.stringify(value));
}

const utf8 = new TextEncoder();

/** The longest delay `setTimeout` accepts; a later deadline is re-armed when this one fires. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export class EngineHost implements vscode.Disposable {
  /** Undefined after a panic, until the new engine is made, and for good once given up on. */
  private engine: TetherWasm.Engine | undefined;
  /** What the engine's panic hook reported during the call in progress. */
  private panicMessage: string | undefined;
  /** When the engine panicked recently (`performance.now()`), oldest first. */
  private panicTimes: number[] = [];
  private restartPending = false;
  /**
   * The last path resolution's answer to the engine. Resolutions run at once, side by side, but
   * are answered in the order the engine asked: what waits on them (two permission requests the
   * agent made one after the other) then goes on, is decided and audited in the agent's order,
   * whichever file system call happens to finish first.
   */
  private pathsAnswered: Promise<void> = Promise.resolve();
  /** Whether the next tetherd start connects to the recorded tetherd rather than a new one. */
  private reconnectSidecar = true;
  private sidecarWriter: SidecarWriter | undefined;
  private view: vscode.WebviewView | undefined;
  private badgeCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private pumping = false;
  private disposed = false;
  private readonly files: FileAccess;
  private readonly mentions = new WorkspaceMentions();
  private readonly messageActions: MessageActions;

  private constructor(
    private readonly newEngine: EngineFactory,
    private readonly log: vscode.LogOutputChannel,
    private readonly startSidecar: SidecarStarter,
    private readonly reviews: ReviewActions,
    private readonly terminals: TerminalActions,
    private readonly history: HistoryActions,
    private readonly auth: AuthActions,
    private readonly restarts: EngineRestarts,
  ) {
    this.files = new FileAccess(log);
    this.messageActions = new MessageActions(log);
    this.engine = newEngine((message) => this.enginePanicking(message));
  }

  /**
   * Creates the engine; throws (with the engine's message) when the configuration is invalid.
   * Call `start` once the caller is ready for the engine's first actions.
   */
  static create(
    newEngine: EngineFactory,
    log: vscode.LogOutputChannel,
    startSidecar: SidecarStarter,
    reviews: ReviewActions,
    terminals: TerminalActions,
    history: HistoryActions,
    auth: AuthActions,
    restarts: EngineRestarts,
  ): EngineHost {
    return new EngineHost(newEngine, log, startSidecar, reviews, terminals, history, auth, restarts);
  }

  /** Carries out what the engine asked for when it was created (it starts tetherd). */
  start(): void {
    if (!this.disposed) {
      this.pump();
    }
  }

  /** The socket to tetherd is open; `write` sends to it until `sidecarClosed`. */
  sidecarConnected(write: SidecarWriter): void {
    this.sidecarWriter = write;
    this.feed("the sidecar connection", (engine, now) => engine.handleSidecarConnected(now));
  }

  sidecarBytes(bytes: Uint8Array): void {
    this.feed("bytes from the sidecar", (engine, now) => engine.handleSidecarBytes(bytes, now));
  }

  /** The socket closed, or tetherd could not be started or reached. */
  sidecarClosed(reason: string): void {
    this.sidecarWriter = undefined;
    this.feed("the sidecar closing", (engine, now) => engine.handleSidecarClosed(reason, now));
  }

  /** A message the webview posted. It is untrusted: the engine validates it. */
  webviewMessage(message: unknown): void {
    // The type is only read to name the input in the log, should the engine fail on it.
    const type = typeof message === "object" && message !== null ? (message as { type?: unknown }).type : undefined;
    const what = typeof type === "string" ? `a "${type}" message from the chat view` : "a message from the chat view";
    this.feed(what, (engine, now) => engine.handleWebview(engineInput(message as WebviewToHost), now));
  }

  command(command: HostCommand): void {
    this.feed(`the ${command.type} command`, (engine, now) => engine.handleCommand(engineInput(command), now));
  }

  /**
   * The agents the person can choose now, as the engine merged them (the Demo, the built-ins and
   * `tether.agents`); none while no engine runs.
   */
  profiles(): AgentProfile[] {
    const profiles = this.callEngine("the question for its agents", (engine) => engine.profiles());
    return profiles === undefined ? [] : (JSON.parse(profiles) as AgentProfile[]);
  }

  /** The agent picker's list, as the chat header shows it; none while no engine runs. */
  profileViews(): ProfileView[] {
    const views = this.callEngine("the question for its agent picker", (engine) => engine.profileViews());
    return views === undefined ? [] : (JSON.parse(views) as ProfileView[]);
  }

  /** The answer to a `readFile` action, with the bytes read (empty unless there is data). */
  fileRead(reply: FileReadReply, data: Uint8Array): void {
    this.feed("the reply to a file read", (engine, now) => engine.handleFileRead(engineInput(reply), data, now));
  }

  /** The chat view was resolved: posts and the badge go to it until it is disposed. */
  attachView(view: vscode.WebviewView): void {
    this.view = view;
    this.applyBadge();
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        // Until a new webview says `ready`, the engine keeps its patches to itself.
        this.feed("the chat view closing", (engine) => engine.handleWebviewGone());
      }
    });
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sidecarWriter = undefined;
    this.view = undefined;
    this.terminals.dispose();
    this.mentions.dispose();
    this.messageActions.dispose();
    this.engine?.free();
    this.engine = undefined;
  }

  /** Hands one input to the engine, then carries out whatever it asks for. */
  private feed(what: string, input: (engine: TetherWasm.Engine, nowMs: number) => void): void {
    if (this.disposed) {
      return;
    }
    this.callEngine(what, (engine) => input(engine, engineClock()));
    this.pump();
  }

  /**
   * Makes one call into the engine. An error it throws is logged, and `undefined` returned; a
   * panic also marks the engine for replacement, which `pump` carries out once nothing is using
   * the engine any more. Without an engine (after a panic) nothing is called.
   */
  private callEngine<T>(what: string, call: (engine: TetherWasm.Engine) => T): T | undefined {
    const engine = this.engine;
    if (engine === undefined) {
      return undefined;
    }
    try {
      return call(engine);
    } catch (error) {
      // A panic traps: its hook has told us the message, and the error is WebAssembly's
      // `RuntimeError`. A trap without a hook's message (the stack or memory ran out) breaks the
      // engine all the same. The engine's own errors are plain `Error`s.
      const trapped = error instanceof Error && error.name === "RuntimeError";
      const panic = this.panicMessage ?? (trapped ? describeError(error) : undefined);
      this.panicMessage = undefined;
      if (panic === undefined) {
        this.log.error(`The engine failed to handle ${what}: ${describeError(error)}`);
      } else {
        this.enginePanicked(what, panic);
      }
      return undefined;
    }
  }

  /** The engine's panic hook, called while the call that panicked is still on the stack. */
  private enginePanicking(message: string): void {
    this.panicMessage = message;
  }

  /**
   * The engine panicked while handling `what`: it is dropped (never called again, not even to
   * free it, since it stays borrowed by the call that trapped; its whole WASM instance goes with
   * it), and a new one is due unless it panicked too often.
   */
  private enginePanicked(what: string, message: string): void {
    this.engine = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.log.error(`The engine panicked while handling ${what}: ${message}`);
    const now = performance.now();
    this.panicTimes = [...this.panicTimes.filter((time) => now - time < PANIC_WINDOW_MS), now];
    if (this.panicTimes.length > MAX_PANICS) {
      const reason =
        `Tether's engine failed ${this.panicTimes.length} times in a few minutes, last while handling ${what}, ` +
        "so it was not started again. Reload the window to start it again; the Tether output log has the details.";
      this.giveUp(reason);
      return;
    }
    void vscode.window.showWarningMessage(
      `Tether's engine failed while handling ${what} and was restarted; the session goes on. ` +
        "The Tether output log has the details.",
    );
    this.restartPending = true;
  }

  /** No engine any more: the person is told why, and the rest of the extension stands down. */
  private giveUp(reason: string): void {
    this.restartPending = false;
    this.sidecarWriter = undefined;
    this.log.error(reason);
    void vscode.window.showErrorMessage(reason);
    this.restarts.stopped(reason);
  }

  /**
   * A new engine, in a fresh WASM instance, replaces the one that panicked. It starts as at
   * activation: its first action reconnects to the running tetherd, whose live session it takes
   * over, and the chat loads again to show that session's thread.
   */
  private restartEngine(): void {
    this.restartPending = false;
    this.sidecarWriter = undefined;
    try {
      this.engine = this.newEngine((message) => this.enginePanicking(message));
    } catch (error) {
      this.giveUp(`Tether's engine could not be started again: ${describeError(error)}`);
      return;
    }
    this.log.info("Started a new engine; it reconnects to tetherd and takes over the session.");
    this.reconnectSidecar = true;
    // The old engine's reviews are numbered by it: the new one shows its own.
    this.reviews.clear();
    this.restarts.restarted();
    this.pump();
  }

  private pump(): void {
    // An action is carried out synchronously (reads and edits answer later, through `feed`) and
    // none of them calls back into the engine today, but if one ever did, the outer loop below
    // picks up what the inner input queued after the actions taken before it, in order.
    if (this.pumping) {
      return;
    }
    this.pumping = true;
    try {
      for (;;) {
        // Everything the engine has for the host, in one call. After a failure, polling again
        // would most likely fail the same way; the next input retries.
        const actions = this.callEngine("the poll for its next actions", (engine) => engine.pollActions());
        if (actions === undefined || actions === "") {
          break;
        }
        for (const action of JSON.parse(actions) as PolledAction[]) {
          try {
            this.carryOut(action);
          } catch (error) {
            this.log.error(`Could not carry out the engine's ${action.type} action: ${describeError(error)}`);
          }
        }
      }
    } finally {
      this.pumping = false;
    }
    this.armTimer();
    if (this.restartPending && !this.disposed) {
      this.restartEngine();
    }
  }

  private carryOut(action: PolledAction): void {
    switch (action.type) {
      case "startSidecar":
        // Whatever the old connection still had queued is meant for a tetherd that is gone.
        this.sidecarWriter = undefined;
        this.startSidecar(this.reconnectSidecar);
        this.reconnectSidecar = false;
        return;
      case "sidecarWrite":
        if (this.sidecarWriter === undefined) {
          this.log.warn("Dropped a message for tetherd: there is no connection to it.");
        } else {
          this.sidecarWriter(action.data);
        }
        return;
      case "postWebview": {
        // Taken whether or not a view is there, so that the next post takes the next message.
        const message = this.callEngine("the message for the chat view", (engine) => engine.takeWebviewPost());
        if (message === undefined) {
          this.log.error("The engine asked for a post to the chat view without its message.");
          return;
        }
        // Without a view the message is dropped: a webview asks for a snapshot when it appears.
        // The bytes go as they are: VS Code moves a Uint8Array to the webview without encoding
        // it, and the webview reads the JSON (`webview/src/host-message.ts`).
        this.view?.webview.postMessage(message).then(undefined, (error: unknown) => {
          this.log.warn(`Could not post to the chat view: ${describeError(error)}`);
        });
        return;
      }
      case "showMessage":
        this.showMessage(action.level, action.text);
        return;
      case "log":
        this.log[action.level](action.text);
        return;
      case "setBadge":
        this.badgeCount = action.count;
        this.applyBadge();
        return;
      case "saveWorkspaceRules":
        this.saveWorkspaceRules(action.rules);
        return;
      case "openFile":
        this.openFile(action.path, action.line);
        return;
      case "revealLocation":
        this.revealLocation(action.path, action.line);
        return;
      case "listWorkspaceFiles":
        this.mentions.files().then(
          (files) => this.command({ type: "workspaceFiles", files, selection: this.mentions.selection() ?? null }),
          (error: unknown) => {
            this.log.warn(`Could not list the workspace's files for @: ${describeError(error)}`);
            // The list still offers the selection, and the engine stops waiting.
            this.command({ type: "workspaceFiles", files: [], selection: this.mentions.selection() ?? null });
          },
        );
        return;
      case "readFile": {
        const { read, path, offset, maxBytes } = action;
        // `read` never rejects: a failure is an outcome the engine answers the agent with.
        void this.files
          .read(path, offset, maxBytes)
          .then(({ outcome, data }) => this.fileRead({ read, outcome }, data));
        return;
      }
      case "resolvePaths": {
        const { resolve, roots, paths } = action;
        // `resolvePath` never rejects: a path it cannot resolve is an answer too.
        const resolved = Promise.all([Promise.all(roots.map(resolvePath)), Promise.all(paths.map(resolvePath))]);
        this.pathsAnswered = this.pathsAnswered
          .then(() => resolved)
          .then(([rootsLeadTo, pathsLeadTo]) =>
            this.command({ type: "pathsResolved", resolve, roots: rootsLeadTo, paths: pathsLeadTo }),
          )
          .catch((error: unknown) => {
            // The answers after this one must still go.
            this.log.error(`Could not answer a path resolution: ${describeError(error)}`);
          });
        return;
      }
      case "editFile": {
        const { edit, ...request } = action;
        // `edit` never rejects, as above.
        void this.files.edit(request).then((outcome) => this.command({ type: "editDone", edit, outcome }));
        return;
      }
      case "showReview":
        this.reviews.show(action.document, action.open);
        return;
      case "updateReview":
        this.reviews.update(action.change, action.hunks, action.settled);
        return;
      case "openReviews":
        this.reviews.open(action.changes, action.title);
        return;
      case "clearReviews":
        this.reviews.clear(action.session);
        return;
      case "openTerminal":
        this.terminals.show(action);
        return;
      case "terminalWrite":
        this.terminals.write(action.terminal, action.data);
        return;
      case "confirmStopTerminal":
        this.terminals.confirmStop(action.terminal, action.command);
        return;
      case "closeTerminal":
        this.terminals.close(action.terminal);
        return;
      case "confirmCloseSession": {
        const { key, title } = action;
        vscode.window
          .showWarningMessage(
            `"${title}" is working or waiting for you. Closing its tab stops its agent; the session stays in the history.`,
            { modal: true },
            STOP_AND_CLOSE,
          )
          .then(
            (answer) => {
              if (answer === STOP_AND_CLOSE) this.command({ type: "closeSession", key, confirmed: true });
            },
            (error: unknown) => this.log.error(`Could not ask whether to close "${title}": ${describeError(error)}`),
          );
        return;
      }
      case "showHistory":
        this.history.show(action.items);
        return;
      case "saveExport":
        // Never rejects: a failure is shown to the person there.
        void this.saveExport(action.suggestedName, action.content);
        return;
      case "exportFile":
        // Never rejects, as above.
        void this.exportFile(action.source, action.suggestedName);
        return;
      case "writeClipboard":
        // These never reject: a failure is shown to the person there.
        void this.messageActions.copy(action.text);
        return;
      case "insertAtCursor":
        void this.messageActions.insert(action.text);
        return;
      case "openUntitled":
        void this.messageActions.openUntitled(action.content, action.language);
        return;
      case "manageWorkspaceTrust":
        vscode.commands.executeCommand("workbench.trust.manage").then(undefined, (error: unknown) => {
          this.log.error(`Could not open the workspace trust editor: ${describeError(error)}`);
        });
        return;
      case "openSettings":
        vscode.commands.executeCommand("workbench.action.openSettings", action.query).then(undefined, (error: unknown) => {
          this.log.error(`Could not open the settings: ${describeError(error)}`);
        });
        return;
      case "showLog":
        // Kept beside the chat: the person reads the agent's words and can still press Stop.
        this.log.show(true);
        return;
      case "askAuthentication":
        this.auth.ask(action.agent, action.methods);
        return;
      case "askEditor": {
        const { question, query, maxResults } = action;
        answerEditorQuery(query, maxResults).then(
          (answer) => this.command({ type: "editorAnswered", question, answer, error: null }),
          (error: unknown) =>
            this.command({ type: "editorAnswered", question, answer: null, error: describeError(error) }),
        );
        return;
      }
      default: {
        // The generated types make this unreachable; an engine newer than this host lands here.
        const unknown: never = action;
        this.log.warn(`Ignored an action this host does not know: ${JSON.stringify(unknown)}`);
      }
    }
  }

  private showMessage(level: LogLevel, text: string): void {
    // The notifications' promises resolve when they are dismissed; nothing waits for that.
    switch (level) {
      case "error":
        void vscode.window.showErrorMessage(text);
        return;
      case "warn":
        void vscode.window.showWarningMessage(text);
        return;
      default:
        void vscode.window.showInformationMessage(text);
    }
  }

  /**
   * Writes `tether.permissions.rules` in the workspace settings. The change comes back as a
   * configuration event, which sends the engine `configure` with these rules, as it expects.
   * Without a workspace (or with unwritable settings) VS Code refuses; the person is told, since
   * the rule they meant to keep is then only kept for the session.
   */
  private saveWorkspaceRules(rules: unknown[]): void {
    vscode.workspace
      .getConfiguration("tether")
      .update("permissions.rules", rules, vscode.ConfigurationTarget.Workspace)
      .then(undefined, (error: unknown) => {
        const message = `Tether could not save the workspace's permission rules: ${describeError(error)}`;
        this.log.error(message);
        void vscode.window.showErrorMessage(message);
      });
  }

  /** Opens `path` in an editor (focused), with the cursor at the start of `line` when given. */
  private openFile(path: string, line: number | null): void {
    const options: vscode.TextDocumentShowOptions = {};
    if (line !== null) {
      const position = new vscode.Position(Math.max(0, line - 1), 0);
      options.selection = new vscode.Range(position, position);
    }
    vscode.window.showTextDocument(vscode.Uri.file(path), options).then(undefined, (error: unknown) => {
      const message = `Tether could not open ${path}: ${describeError(error)}`;
      this.log.error(message);
      void vscode.window.showErrorMessage(message);
    });
  }

  /** Follow the agent: shows the place in a preview editor, leaving the focus where it is. */
  private revealLocation(path: string, line: number | null): void {
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    const options: vscode.TextDocumentShowOptions = {
      preview: true,
      preserveFocus: true,
      selection: new vscode.Range(position, position),
    };
    vscode.window.showTextDocument(vscode.Uri.file(path), options).then(undefined, (error: unknown) => {
      // The agent may point at a file it has not written yet: worth a log line, not a popup.
      this.log.info(`Following the agent: could not open ${path}: ${describeError(error)}`);
    });
  }

  /** Asks where to save an exported session, writes it there and opens it. */
  private async saveExport(suggestedName: string, content: string): Promise<void> {
    const target = await this.askExportTarget(suggestedName, { Markdown: ["md"] });
    if (target === undefined) {
      return;
    }
    try {
      await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(content));
    } catch (error) {
      this.exportFailed(target, error);
      return;
    }
    this.log.info(`Exported the session to ${target.fsPath}.`);
    try {
      await vscode.window.showTextDocument(target);
    } catch (error) {
      // The export itself is done; only showing it failed.
      this.log.warn(`Could not open the export ${target.fsPath}: ${describeError(error)}`);
    }
  }

  /** Asks where to save a copy of `source` (a session's event log), and copies it there. */
  private async exportFile(source: string, suggestedName: string): Promise<void> {
    const target = await this.askExportTarget(suggestedName, { "JSON Lines": ["jsonl"] });
    if (target === undefined) {
      return;
    }
    try {
      // The save dialog already asked before replacing a file.
      await vscode.workspace.fs.copy(vscode.Uri.file(source), target, { overwrite: true });
    } catch (error) {
      this.exportFailed(target, error);
      return;
    }
    this.log.info(`Exported ${source} to ${target.fsPath}.`);
  }

  /**
   * The save dialog, proposing `suggestedName` in the workspace folder; `undefined` when the
   * person cancels. VS Code's own dialog (`files.simpleDialog`, and in a browser) works the same.
   */
  private async askExportTarget(
    suggestedName: string,
    filters: Record<string, string[]>,
  ): Promise<vscode.Uri | undefined> {
    // Only a name is taken from the engine: the folder is the person's to choose.
    const name = path.basename(suggestedName);
    // Without a folder, the home folder, as the engine's workspace root is then.
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(os.homedir());
    try {
      return await vscode.window.showSaveDialog({
        title: "Tether: Export Session",
        saveLabel: "Export",
        filters,
        defaultUri: vscode.Uri.joinPath(folder, name),
      });
    } catch (error) {
      this.log.error(`Could not show the save dialog: ${describeError(error)}`);
      void vscode.window.showWarningMessage(`Tether could not export the session: ${describeError(error)}`);
      return undefined;
    }
  }

  private exportFailed(target: vscode.Uri, error: unknown): void {
    const message = `Tether could not export the session to ${target.fsPath}: ${describeError(error)}`;
    this.log.error(message);
    void vscode.window.showWarningMessage(message);
  }

  private applyBadge(): void {
    if (this.view === undefined) {
      return;
    }
    const count = this.badgeCount;
    // With nothing waiting the badge goes entirely, tooltip included: a stale "1 waiting" tooltip
    // on a view with nothing to answer would send the person looking for a request.
    this.view.badge =
      count > 0
        ? { value: count, tooltip: `${count} ${count === 1 ? "request" : "requests"} waiting for you (permissions and file changes)` }
        : undefined;
  }

  /** Replaces the pending timer with one for the engine's next deadline, if it has one. */
  private armTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = this.callEngine("the poll for its next deadline", (engine) => engine.pollTimeout());
    if (deadline === undefined) {
      return;
    }
    const delay = Math.min(Math.max(0, Math.ceil(deadline - engineClock())), MAX_TIMER_DELAY_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.feed("its timer", (engine, now) => engine.handleTimeout(now));
    }, delay);
  }
}

/**
 * The engine's clock: milliseconds since the Unix epoch, yet monotonic (the wall clock when this
 * process started, plus `performance.now()`). The session logs' times are UTC, so a log read back
 * after a reload and the live engine tell time on one scale: a command that ran across the reload
 * is timed from its start.
 */
function engineClock(): number {
  return performance.timeOrigin + performance.now();
}

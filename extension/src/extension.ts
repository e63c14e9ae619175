// The extension's entry point: wires VS Code (the chat view, commands, settings) to the engine
// host and the engine host to tetherd. Activation and deactivation only; each part lives in its
// own file.

import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import * as vscode from "vscode";

import { type AgentSearch, BuiltinAgents, type FoundAgent, agentsDir, ensureAgentInstalled } from "./agents";
import { CHAT_VIEW_ID, ChatViewProvider, FailedChatViewProvider } from "./chatView";
import { selectionOf } from "./mentions";
import {
  reportOpenDocuments,
  reportReviewedFileChanges,
  reportSavedDocuments,
  reportWorkspaceFolders,
  workspaceFolderPaths,
} from "./documentEvents";
import { type EngineFactory, EngineHost, type EngineRestarts, type SidecarStarter, engineInput, loadWasm } from "./engineHost";
import { AgentSignIn } from "./auth";
import { McpSecrets } from "./mcpSecrets";
import { HistoryPicker } from "./history";
import { describeError } from "./errors";
import type { EngineConfig, HostCommand, ProfileView } from "./generated/protocol";
import { HUNK_COMMAND, KEEP_ALL_COMMAND, REJECT_ALL_COMMAND, ReviewRegistry, registerReviewUi } from "./review";
import {
  builtinsOf,
  configureCommand,
  readAgentSettings,
  readSidecarSettings,
  reportProblems,
  watchSettings,
  workspaceTetherDir,
} from "./settings";
import { Sidecar, type SidecarOptions, readSidecarRecord } from "./sidecar";
import { MirroredTerminals } from "./terminals";

/** The tetherd this window started last; the engine asks for a new one when it is lost. */
let sidecar: Sidecar | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("Tether", { log: true });
  context.subscriptions.push(log);
  // tetherd is started with this token and the engine presents it in its `hello`, so only this
  // window (and the next one, after a reload) can drive the tetherd it started. A tetherd left
  // running by the previous window is driven with the token recorded for it; a new one, when
  // that tetherd is gone, gets the same token, which is no less secret.
  const recordFile = sidecarRecordFile(context);
  const token = readSidecarRecord(recordFile, log)?.token ?? randomBytes(32).toString("hex");
  let engineHost: EngineHost;
  // Called by the engine host, never before `engineHost` below is assigned: the engine's first
  // action (start tetherd) is only carried out by `engineHost.start()` at the end.
  const startSidecar = (reconnect: boolean) => {
    // The engine asks for tetherd only in a trusted workspace; this holds even if it ever did
    // otherwise, since tetherd runs programs.
    if (!vscode.workspace.isTrusted) {
      log.error("Not starting tetherd: the workspace is not trusted.");
      engineHost.sidecarClosed("Tether starts nothing in a workspace that is not trusted");
      return;
    }
    sidecar?.dispose();
    sidecar = startOrReconnectSidecar(context, { token, recordFile, reconnect }, log, engineHost);
  };
  const reviews = new ReviewRegistry(log);
  context.subscriptions.push(reviews);
  // The engine host disposes the terminals with itself. Like `startSidecar`, this only calls
  // `engineHost` on a terminal event, which comes after the engine host exists.
  const terminals = new MirroredTerminals((command) => engineHost.command(command), log);
  // Like the terminals, the picker only calls `engineHost` when the person uses it.
  const history = new HistoryPicker((command) => engineHost.command(command));
  context.subscriptions.push(history);
  // Like the picker, sign-in only calls `engineHost` when an agent asks for it.
  const auth = new AgentSignIn(context.secrets, context.globalState, (command) => engineHost.command(command), log);
  // Like sign-in, only calls `engineHost` once it exists (at start, and from its command).
  const mcpSecrets = new McpSecrets(context.secrets, context.globalState, (command) => engineHost.command(command));
  // Looked up again at every use: an agent installed (or put on PATH) since is found.
  const agentSearch = (): AgentSearch => ({
    agentsDir: agentsDir(context.globalStorageUri.fsPath),
    searchPath: process.env.PATH,
    nodePath: process.execPath,
  });
  const builtins = new BuiltinAgents(agentSearch);
  const builtinAgents = () => builtins.find();
  const profileNames = () => engineHost.profiles().map((profile) => profile.name);
  // Set once the chat view provider exists; the engine is only ever restarted after that.
  let chatView: ChatViewProvider | undefined;
  const restarts: EngineRestarts = {
    restarted: () => {
      chatView?.reload();
      // The new engine starts agents again only when asked to: the kept keys reach it well
      // before anyone can.
      void auth
        .sendKeptSecrets(profileNames())
        .catch((error: unknown) => log.warn(`Could not read the agents' kept keys: ${describeError(error)}`));
      void mcpSecrets
        .sendKept()
        .catch((error: unknown) => log.warn(`Could not read the MCP servers' secrets: ${describeError(error)}`));
    },
    stopped: (reason) => {
      // tetherd keeps the session's agent for its grace period: a window reload takes it over.
      sidecar?.dispose();
      sidecar = undefined;
      chatView?.fail(reason);
    },
  };
  try {
    engineHost = createEngine(context, token, log, startSidecar, reviews, terminals, history, auth, restarts, builtinAgents);
  } catch (error) {
    const failure = describeError(error);
    log.error(`Tether could not start: ${failure}`);
    void vscode.window.showErrorMessage(`Tether could not start: ${failure}`);
    context.subscriptions.push(
      vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, new FailedChatViewProvider(failure)),
      ...[
        "tether.newSession",
        "tether.cancel",
        "tether.selectAgent",
        "tether.showHistory",
        "tether.exportMarkdown",
        "tether.exportLog",
        "tether.restartAgent",
        "tether.stopAgent",
        "tether.mentionSelection",
        "tether.signIn",
        HUNK_COMMAND,
        KEEP_ALL_COMMAND,
        REJECT_ALL_COMMAND,
      ].map((command) =>
        vscode.commands.registerCommand(command, () => {
          void vscode.window.showErrorMessage(`Tether could not start: ${failure}`);
        }),
      ),
    );
    return;
  }
  context.subscriptions.push(engineHost, { dispose: deactivate });
  const send = (command: HostCommand) => engineHost.command(command);
  const reconfigure = () => send(configureCommand(readAgentSettings(), builtinAgents()));
  /** Selects agent `name` once it is installed; `select` tells the engine. */
  const chooseAgent = async (name: string, select: () => void) => {
    if (!vscode.workspace.isTrusted) {
      // Nothing is installed (npm runs scripts) until the workspace is trusted; the engine
      // remembers the choice and starts nothing meanwhile.
      select();
      return;
    }
    const installed = await ensureAgentInstalled(name, agentSearch(), engineHost.profiles(), log);
    // After an install the engine needs the agent's new command. Without one, the webview's
    // picker still shows the agent that was not installed: the new snapshot of the session that
    // `configure` makes puts it back on the agent that runs. One installed from a terminal
    // since the engine was last told is "present" here, and the engine needs its command too.
    if (installed !== "present" || builtins.changed()) {
      reconfigure();
    }
    if (installed !== "missing") {
      select();
    }
  };
  // The chat header's agent picker goes through the same install offer as the command: its
  // `selectAgent` message waits until a missing built-in agent is installed. Only that message's
  // type and name are read; the engine still validates every message.
  const deliverWebviewMessage = (message: unknown) => {
    const name = selectedAgentName(message);
    if (name === undefined) {
      engineHost.webviewMessage(message);
    } else {
      void chooseAgent(name, () => engineHost.webviewMessage(message));
    }
  };

  chatView = new ChatViewProvider(context.extensionUri, engineHost, deliverWebviewMessage);
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    vscode.commands.registerCommand("tether.newSession", () => engineHost.command({ type: "newSession" })),
    vscode.commands.registerCommand("tether.cancel", () => engineHost.command({ type: "cancel" })),
    vscode.commands.registerCommand("tether.selectAgent", (name?: unknown) =>
      selectAgent(name, engineHost.profileViews(), (chosen) => chooseAgent(chosen, () => send({ type: "selectAgent", name: chosen }))),
    ),
    vscode.commands.registerCommand("tether.showHistory", () => send({ type: "showHistory" })),
    vscode.commands.registerCommand("tether.mentionSelection", () => mentionSelection(send)),
    vscode.commands.registerCommand("tether.signIn", () => send({ type: "signIn" })),
    vscode.commands.registerCommand("tether.setMcpSecret", () =>
      mcpSecrets.set().catch((error: unknown) => log.error(`Could not keep the MCP secret: ${describeError(error)}`)),
    ),
    vscode.commands.registerCommand("tether.exportMarkdown", () =>
      send({ type: "exportSession", id: null, format: "markdown" }),
    ),
    vscode.commands.registerCommand("tether.exportLog", () => send({ type: "exportSession", id: null, format: "jsonl" })),
    vscode.commands.registerCommand("tether.restartAgent", () => send({ type: "restart" })),
    vscode.commands.registerCommand("tether.stopAgent", () => send({ type: "stopAgent" })),
    vscode.commands.registerCommand("tether.toggleFollowAgent", () => send({ type: "toggleFollowAgent" })),
    watchSettings(send, log, builtinAgents),
    // An agent installed (or removed) from a terminal while the window was open: the engine runs
    // the right command and its agent picker says so once the person is back in the window.
    vscode.window.onDidChangeWindowState((state) => {
      if (state.focused && builtins.changed()) {
        reconfigure();
      }
    }),
    // Trusting the workspace starts tetherd and the session, without a reload.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log.info("The workspace is trusted now.");
      send({ type: "workspaceTrusted" });
      void offerDefaultAgentInstall();
    }),
    registerReviewUi(reviews, send, log),
    reportReviewedFileChanges(reviews, send),
    // A folder added or removed from now on counts at once, without a reload.
    reportWorkspaceFolders(send),
    // A file the person saves during a turn is not offered to revert as the agent's change.
    reportSavedDocuments(send),
  );
  // The keys kept for the agents and the MCP servers' secrets reach the engine before any agent
  // starts; then the engine's first action starts tetherd.
  void Promise.all([
    auth
      .sendKeptSecrets(profileNames())
      .catch((error: unknown) => log.warn(`Could not read the agents' kept keys: ${describeError(error)}`)),
    mcpSecrets
      .sendKept()
      .catch((error: unknown) => log.warn(`Could not read the MCP servers' secrets: ${describeError(error)}`)),
  ]).finally(() => {
    engineHost.start();
    // After the start, so that the engine has its first actions behind it when this arrives.
    context.subscriptions.push(reportOpenDocuments(send));
    void offerDefaultAgentInstall();
  });
  /**
   * `tether.defaultAgent` names an agent as much as a pick in the header does: a built-in one
   * that is not installed is offered for install at start too (its session has failed to start
   * meanwhile, saying why). Once installed, a new session starts with it.
   */
  async function offerDefaultAgentInstall(): Promise<void> {
    if (!vscode.workspace.isTrusted) return; // Offered once the workspace is trusted.
    const settings = readAgentSettings();
    const name = settings.defaultProfile;
    if (name === null) return;
    if ((await ensureAgentInstalled(name, agentSearch(), engineHost.profiles(), log)) === "installed") {
      reconfigure();
      send({ type: "selectAgent", name });
    }
  }
}

export function deactivate(): void {
  // Only the socket is closed: tetherd's grace period keeps the agents alive for a reload.
  sidecar?.dispose();
  sidecar = undefined;
}

function createEngine(
  context: vscode.ExtensionContext,
  token: string,
  log: vscode.LogOutputChannel,
  startSidecar: SidecarStarter,
  reviews: ReviewRegistry,
  terminals: MirroredTerminals,
  history: HistoryPicker,
  auth: AgentSignIn,
  restarts: EngineRestarts,
  builtinAgents: () => FoundAgent[],
): EngineHost {
  const extensionVersion = String(context.extension.packageJSON.version ?? "0.0.0");
  const demoAgent = bundledBinary(context, "tether-test-agent");
  const demoAgentCommand = fs.existsSync(demoAgent) ? demoAgent : null;
  if (demoAgentCommand !== null) {
    ensureExecutable(demoAgentCommand, log);
  }
  // Only an end-to-end test sets this, to see the chat survive a panic in the engine.
  const panicPrompt = process.env.TETHER_TEST_ENGINE_PANIC_PROMPT;
  // Each engine, the first and any that replaces one that panicked, gets a fresh WASM instance
  // and the configuration as the settings are now, as a new window would.
  const newEngine: EngineFactory = (onPanic) => {
    const wasm = loadWasm();
    log.info(`Tether ${extensionVersion}, engine ${wasm.version()}.`);
    const settings = readAgentSettings();
    reportProblems(settings, log);
    const config: EngineConfig = {
      token,
      clientName: "Tether",
      clientVersion: extensionVersion,
      workspaceRoot: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir(),
      workspaceFolders: workspaceFolderPaths(),
      tetherDir: workspaceTetherDir(),
      demoAgentCommand,
      agents: settings.agents,
      ...builtinsOf(builtinAgents()),
      defaultProfile: settings.defaultProfile,
      permissions: settings.permissions,
      followAgent: vscode.workspace.getConfiguration("tether").get<boolean>("followAgent") === true,
      workspaceTrusted: vscode.workspace.isTrusted,
      claudeCli: settings.claudeCli,
      mcpServers: settings.mcpServers,
    };
    const engine = new wasm.Engine(engineInput(config), onPanic);
    if (panicPrompt !== undefined && panicPrompt !== "") {
      engine.panicOnPromptForTesting(panicPrompt);
    }
    return engine;
  };
  return EngineHost.create(newEngine, log, startSidecar, reviews, terminals, history, auth, restarts);
}

/**
 * Where the window records the tetherd it runs with, for the next window of the same workspace:
 * the workspace's own storage, or the extension's global storage in a window without a folder.
 */
function sidecarRecordFile(context: vscode.ExtensionContext): string {
  return path.join((context.storageUri ?? context.globalStorageUri).fsPath, "tetherd.json");
}

/**
 * Connects to the recorded tetherd when `reconnect` says to and it is still running, else starts
 * one with the current settings; either way its connection is wired to the engine.
 */
function startOrReconnectSidecar(
  context: vscode.ExtensionContext,
  { token, recordFile, reconnect }: Pick<SidecarOptions, "token" | "recordFile" | "reconnect">,
  log: vscode.LogOutputChannel,
  engineHost: EngineHost,
): Sidecar {
  const { tetherdPath, graceSeconds } = readSidecarSettings();
  const binaryPath = tetherdPath ?? bundledBinary(context, "tetherd");
  if (tetherdPath === undefined) {
    ensureExecutable(binaryPath, log);
  }
  return Sidecar.start(
    { binaryPath, token, graceSeconds, logDirectory: context.logUri.fsPath, recordFile, reconnect, log },
    {
      connected: (write) => engineHost.sidecarConnected(write),
      bytes: (bytes) => engineHost.sidecarBytes(bytes),
      closed: (reason) => engineHost.sidecarClosed(reason),
      // The engine tells the person, with this message (binary path, tetherd's last output).
      failedToStart: (message) => engineHost.sidecarClosed(message),
    },
  );
}

/**
 * `tether.selectAgent`: with a name (from another extension or a test) it selects that agent,
 * otherwise the person picks one.
 */
async function selectAgent(
  name: unknown,
  profiles: ProfileView[],
  choose: (name: string) => Promise<void>,
): Promise<void> {
  let chosen = typeof name === "string" && name !== "" ? name : undefined;
  if (chosen === undefined) {
    // Each agent as the chat's picker lists it: how it stands here, and what it can do.
    const items = profiles.map((profile) => ({ label: profile.name, detail: profile.description }));
    chosen = (
      await vscode.window.showQuickPick(items, {
        title: "Tether: Select Agent",
        placeHolder: "The agent to run in the chat",
      })
    )?.label;
  }
  if (chosen !== undefined) {
    await choose(chosen);
  }
}

/** The agent a webview's `selectAgent` message names, or undefined for any other message. */
function selectedAgentName(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) {
    return undefined;
  }
  const { type, name } = message as { type?: unknown; name?: unknown };
  return type === "selectAgent" && typeof name === "string" ? name : undefined;
}

function bundledBinary(context: vscode.ExtensionContext, name: string): string {
  const executable = process.platform === "win32" ? `${name}.exe` : name;
  return path.join(context.extensionPath, "bin", executable);
}

/**
 * Restores the execute bit on a binary shipped in the extension, in case unpacking the .vsix
 * lost it; without it the spawn fails with EACCES.
 */
function ensureExecutable(binaryPath: string, log: vscode.LogOutputChannel): void {
  if (process.platform === "win32") {
    return;
  }
  try {
    const mode = fs.statSync(binaryPath).mode;
    if ((mode & 0o111) !== 0o111) {
      fs.chmodSync(binaryPath, mode | 0o111);
    }
  } catch (error) {
    // A missing binary is reported when it is spawned, with a clearer message than this one.
    log.debug(`Could not check ${binaryPath}: ${describeError(error)}`);
  }
}

/**
 * "Tether: Mention Selection": adds the active editor's selection (or the caret's line) to the
 * composer, showing the chat first. The engine keeps the mention until the chat view is ready.
 */
async function mentionSelection(send: (command: HostCommand) => void): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const selection = editor === undefined ? undefined : selectionOf(editor, editor.selection);
  if (selection === undefined) {
    void vscode.window.showInformationMessage("Tether: open a file in an editor to mention its selection.");
    return;
  }
  send({ type: "mentionSelection", selection });
  await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
}

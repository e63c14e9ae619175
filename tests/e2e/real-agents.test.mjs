// End to end with the real agents from npm: Claude Code's ACP adapter
// (@zed-industries/claude-code-acp), Codex's (@zed-industries/codex-acp) and Gemini CLI
// (@google/gemini-cli --acp), which `cargo xtask setup` installs into the tools cache. The cache's
// install is linked into the extension's global storage, where Tether's "Install" puts agents, so
// the built-in profiles find them exactly as they find an agent Tether installed itself (a
// JavaScript agent runs under VS Code's own Node; Codex's native binary runs directly).
//
// The agents cannot reach a model here: each test stops before any model call. What they check is
// what a person sees on choosing an agent: the sign-in it asks for (Codex and Gemini want an API
// key before session/new; a dummy one is enough to create a session), the session starting
// (initialize and session/new really happened), the pickers listing what the agent announced, and
// a mode chosen in the header reaching the agent, and Claude's login running in a VS Code terminal
// (offline it cannot finish). Claude, Codex and Gemini keep what a sign-in stores in their own
// folders: those are pointed into the launch folder, so the tests leave nothing in the person's
// home.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { ACTIVATION_TIMEOUT_MS, STEP_TIMEOUT_MS, newestSessionLog, waitForFile, withVSCode, pick, pickedValue, pickerChoices, chosenItem } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const toolsDir = process.env.TETHER_TOOLS_DIR ?? path.join(os.homedir(), ".cache", "tether-dev");
const cachedAgents = path.join(toolsDir, "agents");
const cachedPackage = (name) => path.join(cachedAgents, "node_modules", ...name.split("/"), "package.json");
const claudeAdapter = cachedPackage("@zed-industries/claude-code-acp");
const codexAdapter = cachedPackage("@zed-industries/codex-acp");
const geminiCli = cachedPackage("@google/gemini-cli");

// A short grace: the test has no window reload (teardown ends tetherd anyway).
const testSettings = { "tether.sidecarGraceSeconds": 5 };

// Where the extension (publisher "tether", name "tether") keeps agents it installed, in the
// launch's user data: `<globalStorage>/agents`.
function linkCachedAgents(root) {
  const storage = path.join(root, "user-data", "User", "globalStorage", "tether.tether");
  fs.mkdirSync(storage, { recursive: true });
  fs.symlinkSync(cachedAgents, path.join(storage, "agents"), "dir");
}

const settings = (root) => {
  linkCachedAgents(root);
  return testSettings;
};

// Where Codex (its auth.json holds the key it was signed in with) and Gemini CLI (its settings
// remember the sign-in method) keep their state: inside the launch folder. Codex refuses to start
// with a CODEX_HOME that does not exist.
const agentHomes = (root) => {
  const homes = { CODEX_HOME: path.join(root, "codex-home"), GEMINI_CLI_HOME: path.join(root, "gemini-home") };
  for (const home of Object.values(homes)) fs.mkdirSync(home, { recursive: true });
  return homes;
};

// Where Claude Code keeps its settings and what its login stores: inside the launch folder.
const claudeHome = (root) => {
  const home = path.join(root, "claude-home");
  fs.mkdirSync(home, { recursive: true });
  return { CLAUDE_CONFIG_DIR: home };
};

// A key that is not one: the agents accept any value to create a session.
const DUMMY_KEY = "tether-e2e-dummy-key-4c1d";

test("Claude Code from npm: the session starts, its models are listed, a mode is sent to it, and the prompt it refuses asks for its login, which runs in a terminal", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  assert.ok(fs.existsSync(claudeAdapter), `${claudeAdapter} is missing: run \`cargo xtask setup\``);
  await withVSCode({ name: "real-agents-claude", settings, env: claudeHome }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    const picker = chat.locator(".session-picker");
    assert.deepEqual(
      (await pickerChoices(picker)).map((choice) => choice.name),
      ["Demo", "Claude Code", "Claude Code (direct)", "Codex", "Gemini CLI"],
    );

    await pick(picker, "Claude Code");
    await chat.locator(".session-agent", { hasText: "Claude Code" }).waitFor();
    // Ready only after the agent answered initialize and session/new.
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    // The picker says what the adapter said of itself as it started: its name, and what it can do.
    // (The picker shows the choice at once, so the status above may still be the Demo's: the
    // choice's own state is waited for.)
    await picker.locator('[role="option"][data-value="Claude Code"][data-state="running"]').waitFor({ state: "attached", timeout: ACTIVATION_TIMEOUT_MS });
    const described = (await pickerChoices(picker)).find((choice) => choice.value === "Claude Code");
    assert.match(described.description, /^Running · Claude Code [\d.]+ · images, file contents, resumes sessions, MCP over HTTP$/);

    const models = chat.locator('.config-option-select[data-config-id="tether.model"]');
    await models.waitFor();
    assert.deepEqual((await pickerChoices(models)).map((choice) => choice.name), [
      "Default (recommended)",
      "Opus",
      "Opus (1M context)",
      "Haiku",
    ]);
    assert.equal(await pickedValue(models), "default");

    // The agent's own modes are listed as it returned them, its current one chosen.
    const agentModes = chat.locator(".agent-mode-select");
    const agentModeIs = (name) =>
      chosenItem(chat.locator(".agent-mode-select"), name).waitFor({ state: "attached" });
    assert.deepEqual((await pickerChoices(agentModes)).map((choice) => choice.name), [
      "Default",
      "Accept Edits",
      "Plan Mode",
      "Don't Ask",
    ]);
    await agentModeIs("Default");
    // Tether's Plan mode matches the agent's "plan" mode: Tether sends it.
    await pick(chat.locator(".mode-select"), "plan");
    await agentModeIs("Plan Mode");
    await pick(chat.locator(".mode-select"), "acceptEdits");
    await agentModeIs("Accept Edits");
    // The agent's "Don't Ask" means none of Tether's modes: it is sent as it is, and Tether's own
    // mode stays.
    await pick(agentModes, "dontAsk");
    await agentModeIs("Don't Ask");
    assert.equal(await pickedValue(chat.locator(".mode-select")), "acceptEdits");

    // The session's log holds the agent's own answers (its modes) and every switch sent to it.
    const log = await waitForFile(newestSessionLog(vscode.workspace), (text) => text.includes('"modeId":"dontAsk"'));
    assert.match(log, /"availableModes":\[\{"id":"default","name":"Default"/);
    assert.match(log, /"method":"session\/set_mode","params":\{"sessionId":"[^"]+","modeId":"plan"\}/);
    assert.match(log, /"method":"session\/set_mode","params":\{"sessionId":"[^"]+","modeId":"acceptEdits"\}/);

    await vscode.screenshot("real-agents-claude.png");

    // Claude needs a login before it calls its model: the prompt is refused with "authentication
    // required", and the person is offered the agent's way to sign in.
    await vscode.sendPrompt("Say hello");
    await chat.locator(".entry.user", { hasText: "Say hello" }).waitFor();
    assert.deepEqual(await vscode.quickPickLabels("Sign in to Claude Code"), ["Log in with Claude Code"]);
    await vscode.screenshot("real-agents-claude-sign-in.png");
    // Dismissed: the thread says a sign-in is needed, and what was there stays.
    await vscode.dismissQuickInput();
    await chat.locator(".entry.notice", { hasText: "The agent needs you to sign in." }).waitFor();
    await chat.locator(".turn-state", { hasText: "the agent needs you to sign in" }).waitFor();
    assert.equal(await chat.locator(".entry.user").count(), 1);
    await chat.locator(".entry.user", { hasText: "Say hello" }).waitFor();
    assert.equal(await pickedValue(agentModes), "dontAsk");
    assert.equal(await pickedValue(models), "default");
    const refused = await waitForFile(newestSessionLog(vscode.workspace), (text) => text.includes('"code":-32000'));
    assert.match(refused, /"method":"session\/prompt"/);

    // In a new session the prompt is refused again, and this time the login is chosen: Tether
    // says `_meta["terminal-auth"]` in initialize, so the adapter names the command that logs in,
    // and it runs Claude Code's own CLI in a VS Code terminal, under VS Code's Node.
    await vscode.runCommand("Tether: New Session");
    await chat.locator(".entry.user").first().waitFor({ state: "detached" });
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    await vscode.sendPrompt("Say hello again");
    const login = (await vscode.quickInput("Sign in to Claude Code")).locator(".quick-input-list .monaco-list-row");
    await login.locator(".label-description", { hasText: "log in in a terminal" }).waitFor();
    await vscode.chooseQuickPickItem("Sign in to Claude Code", "Log in with Claude Code");
    const page = vscode.page;
    await page.locator(".terminal-tabs-entry, .single-terminal-tab, .panel .composite-title", { hasText: "Sign in: Claude Code" }).first().waitFor();
    // Offline the login cannot reach Anthropic: Claude Code's CLI ends with code 1 and VS Code
    // says which process it ran. The sign-in did not finish: Tether says so, nothing is sent to
    // the agent, and it still waits for a sign-in.
    const ended = page.locator(".notification-toast", { hasText: "terminated with exit code: 1" });
    assert.match(await ended.innerText(), /"\/\S+\/bin\/node '\S+\/@anthropic-ai\/claude-agent-sdk\/cli\.js'"/);
    await page.locator(".notification-toast", { hasText: "The sign-in to Claude Code did not finish (exit 1)" }).waitFor();
    await vscode.screenshot("real-agents-claude-login.png");
    const wire = readWire(fs.readFileSync(newestSessionLog(vscode.workspace), "utf8"));
    assert.ok(!wire.some(({ to }) => to?.method === "authenticate"), "no authenticate was sent");
    await chat.locator('.session-status[data-status="starting"]', { hasText: "Sign in needed" }).waitFor();
  });
});

test("Codex from npm: an API key signs it in, then its modes, models and reasoning efforts are listed and a mode is sent to it", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  assert.ok(fs.existsSync(codexAdapter), `${codexAdapter} is missing: run \`cargo xtask setup\``);
  await withVSCode({ name: "real-agents-codex", settings, env: agentHomes }, async (vscode) => {
    const chat = await chooseAgent(vscode, "Codex");

    // Codex answers session/new "Authentication required": the person is asked how to sign in,
    // with the methods it announced.
    const signIn = "Sign in to Codex";
    assert.deepEqual(await vscode.quickPickLabels(signIn), [
      "Login with ChatGPT",
      "Use CODEX_API_KEY",
      "Use OPENAI_API_KEY",
    ]);
    await chat.locator('.session-status[data-status="starting"]', { hasText: "Sign in needed" }).waitFor();
    await vscode.chooseQuickPickItem(signIn, "Use OPENAI_API_KEY");
    assert.match(await vscode.answerInputBox(signIn, DUMMY_KEY), /^OPENAI_API_KEY \(kept in VS Code's secret storage\)/);

    // Ready only once the agent, started again with the key, was signed in and created the session.
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    const log = readWire(await waitForFile(newestSessionLog(vscode.workspace), (text) => text.includes('"configOptions"')));
    const authenticated = log.findIndex(({ to }) => to?.method === "authenticate" && to.params.methodId === "openai-api-key");
    assert.ok(authenticated >= 0, "authenticate was sent");
    const session = answerTo(log, "session/new");
    assert.ok(session.index > authenticated, "the session was created after authenticate");

    // Codex sends its mode, model and reasoning effort as config options: each picker lists the
    // agent's choices, its current value chosen. The mode option is the header's agent mode
    // picker, which shows the agent's mode as it is now (Tether sends its own mode when one of the
    // agent's matches it).
    const options = Object.fromEntries(session.result.configOptions.map((option) => [option.category, option]));
    assert.deepEqual(Object.keys(options).sort(), ["mode", "model", "thought_level"]);
    const agentModes = chat.locator(".agent-mode-select");
    await pickerLists(agentModes, options.mode.options);
    const current = await agentModeAgrees(vscode, agentModes);
    await pickerShows(chat.locator(`.config-option-select[data-config-id="${options.model.id}"]`), options.model);
    await pickerShows(
      chat.locator(`.config-option-select[data-config-id="${options.thought_level.id}"]`),
      options.thought_level,
    );

    // Another mode, chosen in the header, is sent to the agent, and the picker shows it.
    const other = options.mode.options.find((choice) => choice.value !== current);
    await pick(agentModes, other.value);
    const switched = await waitForAnswer(vscode, (to) => sendsMode(to, other.value));
    assert.ok(switched.result !== undefined, `the agent accepted the mode: ${JSON.stringify(switched)}`);
    await chosenItem(chat.locator(".agent-mode-select"), other.name).waitFor({ state: "attached" });
    assert.equal(await agentModeAgrees(vscode, agentModes), other.value);
    await vscode.screenshot("real-agents-codex.png");

    assertKeyKeptOutOfTetherFiles(vscode);
  });
});

test("Gemini CLI from npm: its API-key sign-in is asked for as GEMINI_API_KEY, then its modes and models are listed and a mode is sent to it", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  assert.ok(fs.existsSync(geminiCli), `${geminiCli} is missing: run \`cargo xtask setup\``);
  await withVSCode({ name: "real-agents-gemini", settings, env: agentHomes }, async (vscode) => {
    const chat = await chooseAgent(vscode, "Gemini CLI");
    // Gemini takes seconds to answer initialize; the header says what it waits for meanwhile.
    await chat.locator('.session-status[data-status="starting"]', { hasText: "Initializing the agent" }).waitFor();

    // Gemini answers session/new "Gemini API key is missing": its methods are offered. Its API-key
    // method says so only in `_meta`; Tether asks for the key it reads, GEMINI_API_KEY.
    const signIn = "Sign in to Gemini CLI";
    assert.deepEqual(await vscode.quickPickLabels(signIn), [
      "Log in with Google",
      "Gemini API key",
      "Vertex AI",
      "AI API Gateway",
    ]);
    await chat.locator('.session-status[data-status="starting"]', { hasText: "Sign in needed" }).waitFor();
    await vscode.chooseQuickPickItem(signIn, "Gemini API key");
    assert.match(await vscode.answerInputBox(signIn, DUMMY_KEY), /^Gemini API key \(kept in VS Code's secret storage\)/);

    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    const log = readWire(await waitForFile(newestSessionLog(vscode.workspace), (text) => text.includes('"availableModels"')));
    const authenticated = log.findIndex(({ to }) => to?.method === "authenticate" && to.params.methodId === "gemini-api-key");
    assert.ok(authenticated >= 0, "authenticate was sent");
    const session = answerTo(log, "session/new");
    assert.ok(session.index > authenticated, "the session was created after authenticate");

    // Gemini announces modes and models (session/set_model): both pickers list them.
    const { modes, models } = session.result;
    const agentModes = chat.locator(".agent-mode-select");
    await pickerLists(agentModes, modes.availableModes.map((mode) => ({ value: mode.id, name: mode.name })));
    await agentModeAgrees(vscode, agentModes);
    await pickerShows(chat.locator('.config-option-select[data-config-id="tether.model"]'), {
      currentValue: models.currentModelId,
      options: models.availableModels.map((model) => ({ value: model.modelId, name: model.name })),
    });

    // Tether's Plan mode matches Gemini's "plan": choosing it sends it. (Gemini refuses its
    // auto-approving modes in a folder it was not told to trust.)
    await pick(chat.locator(".mode-select"), "plan");
    const switched = await waitForAnswer(vscode, (to) => sendsMode(to, "plan"));
    assert.ok(switched.result !== undefined, `the agent accepted the mode: ${JSON.stringify(switched)}`);
    const plan = modes.availableModes.find((mode) => mode.id === "plan");
    await chosenItem(chat.locator(".agent-mode-select"), plan.name).waitFor({ state: "attached" });
    assert.equal(await agentModeAgrees(vscode, agentModes), "plan");
    await vscode.screenshot("real-agents-gemini.png");

    assertKeyKeptOutOfTetherFiles(vscode);
  });
});

/** Opens the chat (the demo agent starts first), chooses `agent` in the header's agent picker. */
async function chooseAgent(vscode, agent) {
  await vscode.openTetherView();
  const chat = vscode.chatFrame();
  await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
  await pick(chat.locator(".session-picker"), agent);
  await chat.locator(".session-agent", { hasText: agent }).waitFor();
  return chat;
}

/** `picker` lists exactly the choices of `option` (names, values), its current one chosen. */
async function pickerShows(picker, option) {
  await pickerLists(picker, option.options);
  assert.equal(await pickedValue(picker), option.currentValue);
}

/** `picker` lists exactly `choices` (`{ value, name }`), in order. */
async function pickerLists(picker, choices) {
  await picker.waitFor();
  const listed = await pickerChoices(picker);
  assert.deepEqual(
    listed.map(({ value, name }) => ({ value, name })),
    choices.map(({ value, name }) => ({ value, name })),
  );
}

/**
 * Waits until the agent mode picker shows the mode the agent is in by the session's log (Tether
 * may send a mode right after the session starts, and the picker follows its answer), and
 * returns it.
 */
async function agentModeAgrees(vscode, picker) {
  // The log has each answer before the picker can show it: once the picker shows the logged
  // mode and the log still says the same, the two agree.
  const log = () => agentModeIn(readWire(fs.readFileSync(newestSessionLog(vscode.workspace), "utf8")));
  for (;;) {
    const logged = log();
    const shown = picker.locator(`[role="option"][data-value=${JSON.stringify(logged)}][aria-selected="true"]`);
    await shown.waitFor({ state: "attached", timeout: STEP_TIMEOUT_MS }).catch(async () => {
      assert.fail(`the agent mode picker shows ${await pickedValue(picker)}; the log says ${logged}`);
    });
    if (log() === logged) return logged;
  }
}

/**
 * The agent's mode by the log: the session's answer, then each mode change the agent accepted or
 * announced (modes, or a config option of the "mode" category).
 */
function agentModeIn(wire) {
  const modeOption = (options) => options?.find((option) => option.category === "mode");
  const modeIds = new Set();
  const sent = new Map();
  let mode = null;
  for (const { to, from } of wire) {
    if (to?.method === "session/set_mode") sent.set(to.id, to.params.modeId);
    if (to?.method === "session/set_config_option" && modeIds.has(to.params.configId)) {
      sent.set(to.id, to.params.value);
    }
    if (from === undefined) continue;
    if (from.method === undefined && from.result?.sessionId !== undefined) {
      const option = modeOption(from.result.configOptions);
      if (option !== undefined) modeIds.add(option.id);
      mode = from.result.modes?.currentModeId ?? option?.currentValue ?? mode;
    }
    if (from.method === undefined && sent.has(from.id)) {
      if (from.result !== undefined) mode = sent.get(from.id);
      sent.delete(from.id);
    }
    const update = from.method === "session/update" ? from.params.update : null;
    if (update?.sessionUpdate === "current_mode_update") mode = update.currentModeId;
    if (update?.sessionUpdate === "config_option_update") mode = modeOption(update.configOptions)?.currentValue ?? mode;
  }
  return mode;
}

/** Whether the message sent to the agent sets its mode to `modeId`, either way ACP allows. */
function sendsMode(message, modeId) {
  if (message?.method === "session/set_mode") return message.params.modeId === modeId;
  return message?.method === "session/set_config_option" && message.params.value === modeId;
}

/**
 * The messages of an events.jsonl on the agent's wire, in order: `{ to }` for a line sent to the
 * agent, `{ from }` for one it printed.
 */
function readWire(text) {
  return text
    .split("\n")
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        // A line tetherd is still writing: the next read has it whole.
        return [];
      }
    })
    .map((entry) => (entry.event === "toAgent" ? { to: entry.message } : entry.event === "fromAgent" ? { from: entry.message } : {}));
}

/** The agent's answer to the request with `id` (after that request) and its place, or null. */
function answerToId(wire, id) {
  const sent = wire.findIndex(({ to }) => to?.id === id && to.method !== undefined);
  const index = wire.findIndex(({ from }, at) => at > sent && from?.id === id && from.method === undefined);
  return index < 0 ? null : { index, ...wire[index].from };
}

/** The agent's last successful answer to a `method` request, and where it is in the log. */
function answerTo(wire, method) {
  const answers = wire
    .map(({ to }) => (to?.method === method ? answerToId(wire, to.id) : null))
    .filter((answer) => answer?.result !== undefined);
  assert.ok(answers.length > 0, `the agent answered ${method}`);
  return answers.at(-1);
}

/** Waits until the session's log has a request `matches` picks and the agent's answer to it. */
async function waitForAnswer(vscode, matches) {
  const answered = (text) => {
    const wire = readWire(text);
    const request = wire.find(({ to }) => to?.method !== undefined && matches(to));
    return request === undefined ? null : answerToId(wire, request.to.id);
  };
  return answered(await waitForFile(newestSessionLog(vscode.workspace), (text) => answered(text) !== null));
}

/**
 * The key is kept in VS Code's secret storage only: not in the session logs, tetherd's log or
 * VS Code's logs (the Tether channel among them), nor in the user or workspace settings.
 */
function assertKeyKeptOutOfTetherFiles(vscode) {
  const places = [
    path.join(vscode.workspace, ".tether"),
    path.join(vscode.workspace, ".vscode"),
    path.join(vscode.userDataDir, "logs"),
    path.join(vscode.userDataDir, "User", "settings.json"),
  ];
  const files = places.flatMap((place) => listFiles(place));
  assert.ok(files.some((file) => path.basename(file) === "tetherd.log"), `tetherd's log is among ${files.join(", ")}`);
  assert.ok(files.some((file) => path.basename(file) === "events.jsonl"), "the session's log is among the files");
  const holding = files.filter((file) => fs.readFileSync(file).includes(DUMMY_KEY));
  assert.deepEqual(holding, [], "no file of Tether's or VS Code's holds the key");
}

/** Every file under `place` (itself when it is a file; nothing when it does not exist). */
function listFiles(place) {
  if (!fs.existsSync(place)) return [];
  if (!fs.statSync(place).isDirectory()) return [place];
  return fs.readdirSync(place).flatMap((name) => listFiles(path.join(place, name)));
}

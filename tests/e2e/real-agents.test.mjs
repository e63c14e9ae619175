// End to end with a real agent from npm: Claude Code's ACP adapter (@zed-industries/claude-code-acp),
// which `cargo xtask setup` installs into the tools cache. The cache's install is linked into the
// extension's global storage, where Tether's "Install" puts agents, so the built-in "Claude Code"
// profile finds it exactly as it finds an agent it installed itself (and runs it under VS Code's
// own Node, without IS_SANDBOX, which makes the Claude CLI refuse to run as root).
//
// The agent cannot reach a model here: the test stops before any prompt. What it checks is what a
// person sees on choosing the agent: the session starts (initialize and session/new really
// happened), the model picker lists the models the agent announced, the agent's mode is shown,
// and choosing a mode in the header is sent to the agent (which accepts it).
//
// Every wait is for something to appear in the chat; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { ACTIVATION_TIMEOUT_MS, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const toolsDir = process.env.TETHER_TOOLS_DIR ?? path.join(os.homedir(), ".cache", "tether-dev");
const cachedAgents = path.join(toolsDir, "agents");
const claudeAdapter = path.join(cachedAgents, "node_modules", "@zed-industries", "claude-code-acp", "package.json");

// A short grace: the test has no window reload (teardown ends tetherd anyway).
const testSettings = { "tether.sidecarGraceSeconds": 5 };

// Where the extension (publisher "tether", name "tether") keeps agents it installed, in the
// launch's user data: `<globalStorage>/agents`.
function linkCachedAgents(root) {
  const storage = path.join(root, "user-data", "User", "globalStorage", "tether.tether");
  fs.mkdirSync(storage, { recursive: true });
  fs.symlinkSync(cachedAgents, path.join(storage, "agents"), "dir");
}

test("Claude Code from npm: the session starts, its models are listed, and a mode is sent to it", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  assert.ok(fs.existsSync(claudeAdapter), `${claudeAdapter} is missing: run \`cargo xtask setup\``);
  const settings = (root) => {
    linkCachedAgents(root);
    return testSettings;
  };
  await withVSCode({ name: "real-agents-claude", settings }, async (vscode) => {
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    const picker = chat.locator("select.session-picker");
    assert.deepEqual(
      await picker.locator("option").allInnerTexts(),
      ["Demo", "Claude Code", "Codex", "Gemini CLI"],
    );

    await picker.selectOption("Claude Code");
    await chat.locator(".session-agent", { hasText: "Claude Code" }).waitFor();
    // Ready only after the agent answered initialize and session/new.
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });

    const models = chat.locator('select.config-option-select[data-config-id="tether.model"]');
    await models.waitFor();
    assert.deepEqual(await models.locator("option").allInnerTexts(), [
      "Default (recommended)",
      "Opus",
      "Opus (1M context)",
      "Haiku",
    ]);
    assert.equal(await models.inputValue(), "default");

    // The agent's own modes are listed as it returned them, its current one chosen.
    const agentModes = chat.locator("select.agent-mode-select");
    const agentModeIs = (name) =>
      chat.locator("select.agent-mode-select option:checked", { hasText: name }).waitFor({ state: "attached" });
    assert.deepEqual(await agentModes.locator("option").allInnerTexts(), [
      "Default",
      "Accept Edits",
      "Plan Mode",
      "Don't Ask",
    ]);
    await agentModeIs("Default");
    // Tether's Plan mode matches the agent's "plan" mode: Tether sends it.
    await chat.locator("select.mode-select").selectOption("plan");
    await agentModeIs("Plan Mode");
    await chat.locator("select.mode-select").selectOption("acceptEdits");
    await agentModeIs("Accept Edits");
    // The agent's "Don't Ask" means none of Tether's modes: it is sent as it is, and Tether's own
    // mode stays.
    await agentModes.selectOption("dontAsk");
    await agentModeIs("Don't Ask");
    assert.equal(await chat.locator("select.mode-select").inputValue(), "acceptEdits");

    // The session's log holds the agent's own answers (its modes) and every switch sent to it.
    const log = await waitForFile(sessionLogPath(vscode.workspace), (text) => text.includes('"modeId":"dontAsk"'));
    assert.match(log, /"availableModes":\[\{"id":"default","name":"Default"/);
    assert.match(log, /"method":"session\/set_mode","params":\{"sessionId":"[^"]+","modeId":"plan"\}/);
    assert.match(log, /"method":"session\/set_mode","params":\{"sessionId":"[^"]+","modeId":"acceptEdits"\}/);

    await vscode.screenshot("real-agents-claude.png");
  });
});

/** The newest session's events.jsonl in the workspace. */
function sessionLogPath(workspace) {
  const sessions = path.join(workspace, ".tether", "sessions");
  const newest = fs
    .readdirSync(sessions)
    .map((name) => path.join(sessions, name))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  return path.join(newest, "events.jsonl");
}

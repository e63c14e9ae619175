// End to end: the `tether.agents` setting, read by the engine. An entry that is not an agent
// profile is dropped with a warning naming it, and the others are used; an entry with a built-in
// agent's name replaces that built-in (here Codex, which this launch has not installed, runs the
// test agent instead: the session starts, and no install is offered). The agent picker lists the
// built-ins with the replacement in place, and not the dropped entry.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import {
  ACTIVATION_TIMEOUT_MS,
  findTetherLog,
  testAgent,
  waitForFile,
  withVSCode,
} from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const PROBLEM = 'tether.agents[0] was ignored: "Broken" has no "command".';

test("a bad tether.agents entry is reported and dropped; a profile named like a built-in replaces it", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  const settings = {
    "tether.sidecarGraceSeconds": 5,
    "tether.agents": [
      { name: "Broken" },
      { name: "Codex", command: testAgent, args: ["--scenario", "sessions"] },
    ],
    "tether.defaultAgent": "Codex",
  };
  await withVSCode({ name: "profiles", settings }, async (vscode) => {
    await vscode.openTetherView();
    const warning = vscode.page.locator(".notification-toast", { hasText: `Tether: ${PROBLEM}` });
    await warning.waitFor({ timeout: ACTIVATION_TIMEOUT_MS });

    const chat = vscode.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    assert.equal((await chat.locator(".session-agent").innerText()).trim(), "Codex");
    await vscode.sendPrompt("Are you the Codex of the settings?");
    await chat.locator(".entry.agent", { hasText: "Answered: the agent is listening." }).waitFor();
    assert.equal(
      await vscode.page.locator(".notification-toast", { hasText: "Codex is not installed." }).count(),
      0,
      "the settings' Codex is no built-in to install",
    );

    await vscode.runCommand("Tether: Select Agent");
    assert.deepEqual(await vscode.quickPickLabels("Tether: Select Agent"), [
      "Demo",
      "Claude Code",
      "Claude Code (direct)",
      "Codex",
      "Gemini CLI",
    ]);
    await vscode.dismissQuickInput();

    const tetherLog = await waitForFile(findTetherLog(vscode.userDataDir), (text) => text.includes(PROBLEM));
    assert.match(tetherLog, /\[warning\] tether\.agents\[0\] was ignored: "Broken" has no "command"\./);
    await vscode.screenshot("profiles.png");
  });
});

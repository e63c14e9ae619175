// End to end: a panic in the engine does not take the chat down. The extension host is started
// with TETHER_TEST_ENGINE_PANIC_PROMPT, which makes the engine panic on a prompt with exactly that
// text (a hook only a test's environment turns on), as a bug in the engine would on some input.
//
// The test agent runs its "sessions" scenario (crates/tether-test-agent/scenarios/sessions.toml),
// which answers any ordinary prompt at once and, with `--state-dir`, offers `session/load`: had
// the agent been started again rather than taken over, the chat would say it resumed the session.
//
// After the panic: VS Code shows a notice naming the input, Tether's log has the panic with the
// kind of input and the engine's message, the chat shows the same session's thread (nothing
// replaced, the agent still the one that ran before), and the next prompt completes a turn. Every
// wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { findTetherLog, testAgent, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const PANIC_PROMPT = "Please make the engine panic";
const ANSWER = "Answered: the agent is listening.";
const RESUMED = "The agent resumed this session.";

const settings = (root) => ({
  // The new engine connects to the same tetherd, as a reloaded window does.
  "tether.sidecarGraceSeconds": 60,
  "tether.agents": [
    {
      name: "Resumable",
      command: testAgent,
      args: ["--scenario", "sessions", "--state-dir", path.join(root, "agent-sessions")],
    },
  ],
  "tether.defaultAgent": "Resumable",
});

test("a panic in the engine is logged and shown, and the same session goes on", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode(
    { name: "panics", settings, env: { TETHER_TEST_ENGINE_PANIC_PROMPT: PANIC_PROMPT } },
    async (vscode) => {
      const { chat, prompt, turnEnded } = await vscode.startChat();
      await prompt("Hello before the panic");
      await chat.locator(".entry.agent", { hasText: ANSWER }).first().waitFor();
      await turnEnded();
      const sessions = path.join(vscode.workspace, ".tether", "sessions");
      const sessionsBefore = fs.readdirSync(sessions);
      assert.equal(sessionsBefore.length, 1);

      // The chat loads again once the new engine is there: mark the old page to tell them apart.
      await chat.locator("body").evaluate((body) => {
        body.dataset.e2eReplaced = "pending";
      });
      await vscode.sendPrompt(PANIC_PROMPT);

      const notice = vscode.page.locator(".notification-toast", {
        hasText: `Tether's engine failed while handling a "prompt" message from the chat view and was restarted`,
      });
      await notice.waitFor();
      const tetherLog = await waitForFile(findTetherLog(vscode.userDataDir), (text) =>
        text.includes("The engine panicked while handling"),
      );
      assert.match(
        tetherLog,
        /The engine panicked while handling a "prompt" message from the chat view: the test prompt "Please make the engine panic" asked the engine to panic \(crates\/tether-wasm\/src\/lib\.rs:\d+:\d+\)/,
      );

      // The reloaded chat shows the same session, taken over from tetherd: its earlier turn is
      // there, the agent is the one that was running (it did not have to resume anything), and
      // no other session was started.
      await chat.locator("body:not([data-e2e-replaced]) #app").waitFor();
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      await chat.locator(".entry.user", { hasText: "Hello before the panic" }).waitFor();
      await chat.locator(".entry.agent", { hasText: ANSWER }).first().waitFor();
      assert.equal(await chat.locator(".entry.user").count(), 1, "the thread as it was, without the panicking prompt");
      assert.equal(await chat.locator(".entry.notice", { hasText: RESUMED }).count(), 0, "the running agent was taken over");
      assert.deepEqual(fs.readdirSync(sessions), sessionsBefore, "still the same session");
      await vscode.screenshot("panics-after-restart.png");

      // A new prompt completes a turn with the new engine.
      await vscode.sendPrompt("Are you still there after the panic?");
      await chat.locator(".entry.user", { hasText: "Are you still there after the panic?" }).waitFor();
      await chat.locator(".entry.agent", { hasText: ANSWER }).nth(1).waitFor();
      await turnEnded();
      assert.equal(await chat.locator(".entry.notice", { hasText: RESUMED }).count(), 0);
    },
  );
});

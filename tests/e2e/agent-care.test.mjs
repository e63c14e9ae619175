// End to end: a hung agent can be stopped (agent process care). The scripted test agent
// plays two hung agents: "Stubborn" runs the "ignore-cancel" scenario (a prompt with "hang"
// works for ten minutes whatever `session/cancel` says; any other prompt is answered at once)
// and stores its sessions, so that Restart resumes; "Hanging" runs "hang-initialize" and never
// answers `initialize`. Each writes its process id to a file in the launch folder, so the test
// can tell its process is gone.
//
// The steps, in one VS Code, in order (a step that fails skips the rest):
// 1. Cancel does not stop Stubborn's turn; Stop agent does: the notice says so, the turn ends,
//    the process is gone, and Restart resumes the session for a next prompt;
// 2. Hanging's slow start shows the step and its seconds (the seconds whole in a narrow side
//    bar), then (after 15 s) a note with what the agent wrote on its stderr, whose Show log opens
//    Tether's log with that line; Stop kills it and offers Restart.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import { orderedSteps, testAgent, waitForFile, withVSCode, pick } from "./harness.mjs";

const TEST_TIMEOUT_MS = 5 * 60_000;

const RESUMED = "The agent resumed this session.";
const IGNORED_CANCEL = "The agent did not stop when asked; Tether stopped it.";
const HUNG_START = "The agent did not finish starting; Tether stopped it.";
/** What the hang-initialize scenario writes on its stderr as it hangs. */
const LICENSE_WAIT = "Waiting for the license server at license.example.com…";

const pidFile = (root, name) => path.join(root, `${name}.pid`);

const settings = (root) => ({
  "tether.agents": [
    {
      name: "Stubborn",
      command: testAgent,
      args: [
        "--scenario",
        "ignore-cancel",
        "--state-dir",
        path.join(root, "agent-sessions"),
        "--pid-file",
        pidFile(root, "stubborn"),
      ],
    },
    { name: "Hanging", command: testAgent, args: ["--scenario", "hang-initialize", "--pid-file", pidFile(root, "hanging")] },
  ],
  "tether.defaultAgent": "Stubborn",
});

/** Whether process `pid` still exists (signal 0 only asks). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (error.code === "ESRCH") return false;
    throw error;
  }
}

test("a hung agent can be stopped and restarted", { timeout: TEST_TIMEOUT_MS }, async (t) => {
  await withVSCode({ name: "agent-care", settings }, async (vscode) => {
    const { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
    const step = orderedSteps(t, vscode);
    const stop = chat.locator("button.session-stop");
    const restart = chat.locator("button.session-restart");
    const status = chat.locator(".session-status");
    const notices = (words) => chat.locator(".entry.notice", { hasText: words });

    await step("1. an agent that ignores Cancel is stopped with Stop agent, and Restart resumes it", async () => {
      await prompt("Please hang");
      await agentSays("not stopping for anyone").waitFor();
      const pid = Number(await waitForFile(pidFile(vscode.root, "stubborn"), (text) => /^\d+$/.test(text)));
      assert.equal(await stop.isVisible(), false, "no Stop agent while the turn runs and nobody cancelled");

      await chat.locator("button.composer-cancel").click();
      await stop.filter({ hasText: "Stop agent" }).waitFor();
      assert.ok(alive(pid), "Cancel alone does not end this agent");
      await stop.click();
      await notices(IGNORED_CANCEL).waitFor();
      await turnEnded();
      // Restart is offered once tetherd has reaped the agent.
      await restart.waitFor();
      assert.equal(alive(pid), false, `the agent process ${pid} is gone`);

      await restart.click();
      await notices(RESUMED).waitFor();
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      await prompt("Say hello");
      await agentSays("Hello again").waitFor();
      await chat.locator('.turn-state[data-state="ended"]').last().waitFor();
    });

    await step("2. an agent that hangs while starting shows its seconds and its words, and Stop kills it", async () => {
      await pick(chat.locator(".session-picker"), "Hanging");
      // The step counts its seconds while the agent does not answer.
      await status.filter({ hasText: /^Initializing the agent… \d+ s$/ }).waitFor();
      // In the side bar's width the step's words may be cut, never its seconds.
      const statusBox = await status.boundingBox();
      const secondsBox = await chat.locator(".session-status-seconds").boundingBox();
      assert.ok(
        secondsBox.width > 0 && secondsBox.x + secondsBox.width <= statusBox.x + statusBox.width + 0.5,
        `the seconds (${JSON.stringify(secondsBox)}) are drawn within the status (${JSON.stringify(statusBox)})`,
      );
      const pid = Number(await waitForFile(pidFile(vscode.root, "hanging"), (text) => /^\d+$/.test(text)));
      // Once the step is slow, the note says what the agent wrote on its stderr
      // (the scenario's `stderr_at_initialize`).
      await chat.locator(".session-slow-notice", { hasText: `The agent last said: “${LICENSE_WAIT}”` }).waitFor();
      await vscode.screenshot("agent-care-slow-start.png");
      await chat.locator("button.session-show-log").click();
      await vscode.page.locator(".part.panel .view-lines", { hasText: `[Hanging] ${LICENSE_WAIT}` }).waitFor();
      await stop.filter({ hasText: /^Stop$/ }).click();
      await notices(HUNG_START).waitFor();
      await restart.waitFor();
      assert.equal(alive(pid), false, `the agent process ${pid} is gone`);
    });
  });
});

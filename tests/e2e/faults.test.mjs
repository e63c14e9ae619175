// End to end: faults a session survives with nothing lost, in code-server with the real extension.
// The scripted test agent runs its built-in "faults" scenario, records every line it
// writes (`--record-stdout`), writes its pid to a file and stores its sessions (`--state-dir`), so
// that a restarted agent can resume one with `session/load`.
//
// The steps, in one VS Code, in order (a step that fails skips the rest):
// 1. tetherd is killed with SIGKILL while a turn streams: the turn shows as interrupted, a new
//    tetherd and a new agent run without the person doing anything, the old agent is gone, the
//    session is resumed with its transcript, and a next prompt is answered;
// 2. the agent is killed with SIGKILL while a permission card waits: the card can no longer be
//    answered, the turn shows why it ended, and a next prompt starts the agent again;
// 3. nothing was lost: the session log's messages from the agents are the agents' own record of
//    every line they wrote, in order.
//
// Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import {
  newestSessionLog,
  orderedSteps,
  STEP_TIMEOUT_MS,
  testAgent,
  withVSCode,
} from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

// What the built-in "faults" scenario answers to a prompt that is neither "count" nor "edit".
const ANSWER = "Answered by the agent started again.";

const files = (root) => ({
  record: path.join(root, "record.jsonl"),
  pid: path.join(root, "agent.pid"),
  state: path.join(root, "agent-sessions"),
});

const settings = (root) => {
  const { record, pid, state } = files(root);
  return {
    "tether.agents": [
      {
        name: "Recorded",
        command: testAgent,
        args: ["--scenario", "faults", "--record-stdout", record, "--pid-file", pid, "--state-dir", state],
      },
    ],
    "tether.defaultAgent": "Recorded",
  };
};

test("tetherd and the agent killed mid-turn: the session goes on and nothing is lost", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "faults", settings }, async (vscode) => {
    const { chat, prompt, turnEnded } = await vscode.startChat();
    const step = orderedSteps(t, vscode);
    const { record, pid } = files(vscode.root);
    const agentPid = () => Number(fs.readFileSync(pid, "utf8").trim());
    const tetherdPids = () =>
      vscode
        .processes()
        .filter(({ exe }) => path.basename(exe) === "tetherd")
        .map((process) => process.pid);
    const answers = () => chat.locator(".entry.agent", { hasText: ANSWER });
    const ready = chat.locator('.session-status[data-status="ready"]');

    await step("1. tetherd killed mid-turn: it runs again, the turn shows as interrupted, the session goes on", async () => {
      await prompt("Please count");
      await chat.locator(".entry.agent", { hasText: "still counting." }).waitFor();
      await chat.locator('.turn-state[data-state="running"]').waitFor();
      const [oldTetherd, ...others] = tetherdPids();
      assert.deepEqual(others, [], "one tetherd");
      const oldAgent = agentPid();

      process.kill(oldTetherd, "SIGKILL");
      const interrupted = chat.locator('.turn-state[data-state="failed"]', {
        hasText: "interrupted: Tether lost the connection to tetherd",
      });
      await interrupted.waitFor();
      await ready.waitFor();
      await chat.locator(".entry.notice", { hasText: "The agent resumed this session." }).waitFor();
      await vscode.screenshot("faults-tetherd-killed.png");

      const newTetherds = await waitUntil("a new tetherd", () => {
        const pids = tetherdPids();
        return pids.length === 1 && pids[0] !== oldTetherd ? pids : null;
      });
      assert.equal(newTetherds.length, 1);
      await waitUntil("the old agent to be gone", () => !isAlive(oldAgent));
      assert.notEqual(agentPid(), oldAgent, "a new agent");
      assert.ok(isAlive(agentPid()), "the new agent runs");
      // The transcript is still there, once; nothing asks the person to restart anything.
      assert.equal(await chat.locator(".entry.user").count(), 1);
      assert.equal(await chat.locator(".entry.agent", { hasText: "still counting." }).count(), 1);
      assert.equal(await chat.locator("button.session-restart").isVisible(), false);

      await prompt("Are you there?");
      await answers().nth(0).waitFor();
      await turnEnded();
    });

    await step("2. the agent killed while a card waits: the card is settled, a prompt starts it again", async () => {
      await prompt("Please edit notes.md");
      const card = chat.locator('.permission-card[data-state="waiting"]');
      await card.waitFor();
      const oldAgent = agentPid();

      process.kill(oldAgent, "SIGKILL");
      await chat.locator('.turn-state[data-state="failed"]', { hasText: "ended by signal 9" }).waitFor();
      await chat.locator('.entry.notice[data-level="error"]', { hasText: "The agent was ended by signal 9." }).waitFor();
      // The card no longer waits: no option can be clicked.
      await card.waitFor({ state: "detached" });
      assert.equal(await chat.locator("button.permission-option").count(), 0, "nothing left to click");
      await vscode.screenshot("faults-agent-killed.png");

      await prompt("Are you back?");
      await answers().nth(1).waitFor();
      await turnEnded();
      assert.notEqual(agentPid(), oldAgent, "a new agent");
    });

    await step("3. nothing was lost: the log has every message the agents wrote, in order", async () => {
      const log = fs.readFileSync(newestSessionLog(vscode.workspace), "utf8");
      const fromAgents = log
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((event) => event.event === "fromAgent")
        .map((event) => JSON.stringify(event.message));
      const recorded = fs
        .readFileSync(record, "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.stringify(JSON.parse(line)));
      assert.ok(recorded.length > 20, `the agents wrote ${recorded.length} messages`);
      assert.deepEqual(fromAgents, recorded, "the log has what the agents wrote, nothing more, nothing less");
    });
  });
});

// Whether process `pid` runs (a zombie has ended, merely not yet been reaped).
function isAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

// Polls `check` until it returns something truthy, and returns that.
async function waitUntil(what, check) {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const result = check();
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

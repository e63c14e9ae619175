// End to end: a session survives everything. The scripted test agent runs its
// "sessions" scenario (crates/tether-test-agent/scenarios/sessions.toml): a prompt with "count"
// streams the numbers 001 to 200, one chunk every 50 ms; one with "crash" dies mid-turn with
// "fatal: simulated crash" on stderr; anything else gets one short answer at once.
//
// Two profiles run it: "Resumable" with `--state-dir` in the launch folder, so the agent stores
// its sessions and offers `session/load`, as real agents do; "Forgetful" without, so the engine
// must fall back to a new agent session and say so.
//
// The steps, in one VS Code, in order (a step that fails skips the rest):
// 1. the webview reloads mid-stream: the transcript is back and the stream goes on;
// 2. the window reloads mid-turn: the new window shows every chunk once and the turn ends;
// 3. code-server stops (every process of it: tetherd and the agent too) and starts again: the
//    session reopens with its transcript, the agent resumes its session, a next prompt works;
// 4. the agent dies mid-turn: the error with its stderr, Restart, which resumes, a next prompt;
// 5. an agent that cannot resume: after a restart of code-server, the notice says so, and a
//    next prompt works;
// 6. the history lists both sessions, and the session's log exports as JSONL.
//
// A lost or doubled chunk shows in the numbers: each turn's agent text must hold 001 to 200,
// each once, in order. Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import {
  exactText,
  orderedSteps,
  testAgent,
  waitForFile,
  withVSCode,
  pick,
  openMoreActions,
  numbersOfTurns,
} from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const ANSWER = "Answered: the agent is listening.";
const RESUMED = "The agent resumed this session.";
const CANNOT_RESUME = "This agent cannot resume an earlier session";

// `root` is the launch folder: the agent's store of sessions lives in it, so it outlives a
// restart of code-server and goes away with the test.
const settings = (root) => ({
  // A reloaded window must find tetherd, and its agent, still running: the new window connects
  // after its extension host has started again, which takes several seconds on busy cores.
  "tether.sidecarGraceSeconds": 60,
  "tether.agents": [
    {
      name: "Resumable",
      command: testAgent,
      args: ["--scenario", "sessions", "--state-dir", path.join(root, "agent-sessions")],
    },
    { name: "Forgetful", command: testAgent, args: ["--scenario", "sessions"] },
  ],
  "tether.defaultAgent": "Resumable",
});

// 001, 002, ... 200: what a counting turn must show.
const ALL_NUMBERS = Array.from({ length: 200 }, (_, index) => String(index + 1).padStart(3, "0"));

test("sessions survive a webview reload, a window reload, a restart of VS Code and a dead agent", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "sessions", settings }, async (vscode) => {
    let { chat, prompt, turnEnded } = await vscode.startChat();
    const step = orderedSteps(t, vscode);
    const userEntries = () => chat.locator(".entry.user");
    const answers = () => chat.locator(".entry.agent", { hasText: ANSWER });
    const notices = (words) => chat.locator(".entry.notice", { hasText: words });
    // The `n`th (from 0) counting turn's agent message that has reached `number`.
    const countedTo = (n, number) => chat.locator(".entry.agent", { hasText: number }).nth(n);
    // After a reload, a restart or a new session, the chat's helpers count turns again from
    // the ones it shows.
    const reopenChat = async () => ({ chat, prompt, turnEnded } = await vscode.startChat());
    // Whether a reload came in time to see the turn run depends on how fast it was: it is said,
    // not asserted (the numbers are: none lost, none doubled, whenever the reload came).
    const sayWhetherRunning = async (what) => {
      const running = await chat.locator('.turn-state[data-state="running"]').isVisible();
      t.diagnostic(`${what} first showed the turn ${running ? "still running" : "ended"}`);
    };

    await step("1. reloading the webview mid-stream keeps the transcript and the stream goes on", async () => {
      await prompt("Please count to 200");
      await countedTo(0, "050").waitFor();
      await vscode.reloadWebview();
      await chat.locator(".entry.user", { hasText: "Please count to 200" }).waitFor();
      await sayWhetherRunning("the reloaded webview");
      await countedTo(0, "200").waitFor();
      await turnEnded();
      assert.deepEqual(await numbersOfTurns(chat), [ALL_NUMBERS], "every number once, in order");
    });

    await step("2. reloading the window mid-turn shows every chunk once, and the turn ends", async () => {
      await prompt("Count slowly this time, please");
      await countedTo(1, "010").waitFor();
      await vscode.reloadWindow();
      await vscode.openTetherView();
      await chat.locator(".entry.user", { hasText: "Count slowly this time, please" }).waitFor();
      await sayWhetherRunning("the reloaded window");
      await countedTo(1, "200").waitFor();
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      assert.equal(await userEntries().count(), 2, "the two prompts, each once");
      assert.deepEqual(await numbersOfTurns(chat), [ALL_NUMBERS, ALL_NUMBERS], "every number once, in order");
      // tetherd outlives the window (its grace period), so the new window goes on with the same
      // agent: nothing was restarted or resumed.
      assert.equal(await notices(RESUMED).count(), 0, "the running agent was taken over, not resumed");
      await reopenChat();
    });

    await step("3. after a restart of VS Code the session reopens and its agent resumes it", async () => {
      await vscode.restart();
      await reopenChat();
      await notices(RESUMED).waitFor();
      assert.equal((await chat.locator(".session-agent").innerText()).trim(), "Resumable");
      assert.equal(await userEntries().count(), 2, "the transcript, not doubled by the agent's replay");
      assert.deepEqual(await numbersOfTurns(chat), [ALL_NUMBERS, ALL_NUMBERS], "the transcript as it was");
      await prompt("Are you still there?");
      await answers().nth(0).waitFor();
      await turnEnded();
    });

    await step("4. an agent that dies mid-turn shows why, and Restart resumes its session", async () => {
      await prompt("Now crash, please");
      const error = chat.locator('.entry.notice[data-level="error"]', { hasText: "exited with code 3" });
      await error.waitFor();
      // The stderr tail is the notice's detail, folded by default: its text is in the DOM.
      assert.match(await error.textContent(), /fatal: simulated crash/);
      await chat.locator('.turn-state[data-state="failed"]').waitFor();
      const restart = chat.locator("button.session-restart");
      await restart.waitFor();
      await vscode.screenshot("sessions-agent-died.png");

      await restart.click();
      await notices(RESUMED).nth(1).waitFor();
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      assert.equal(await restart.isVisible(), false, "no Restart while the agent runs");
      await prompt("Are you back?");
      await answers().nth(1).waitFor();
      await turnEnded();
    });

    await step("5. an agent that cannot resume: the session reopens, the notice says so, a prompt works", async () => {
      await pick(chat.locator(".session-picker"), "Forgetful");
      await chat.locator(".session-agent", { hasText: exactText("Forgetful") }).waitFor();
      // The picker shows the choice at once; the composer names the agent once the host has
      // shown the new session (until then the old one's status and thread are still there).
      await chat.locator('textarea.composer-input[placeholder="Ask Forgetful…"]').waitFor();
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      assert.equal(await userEntries().count(), 0, "a new session starts empty");
      await reopenChat();
      await prompt("Say hello, Forgetful");
      await answers().nth(0).waitFor();
      await turnEnded();

      await vscode.restart();
      await reopenChat();
      await notices(CANNOT_RESUME).waitFor();
      assert.equal((await chat.locator(".session-agent").innerText()).trim(), "Forgetful");
      await chat.locator(".entry.user", { hasText: "Say hello, Forgetful" }).waitFor();
      assert.equal(await userEntries().count(), 1, "the transcript as it was");
      await prompt("Hello again");
      await answers().nth(1).waitFor();
      await turnEnded();
      await vscode.screenshot("sessions-fallback.png");
    });

    await step("6. the history lists both sessions, and the log exports as JSONL", async () => {
      const page = vscode.page;
      await vscode.runCommand("Tether: Show History");
      const rows = page.locator(".quick-input-list .monaco-list-row");
      const forgetful = rows.filter({ hasText: "Say hello, Forgetful" });
      const resumable = rows.filter({ hasText: "Please count to 200" });
      await forgetful.waitFor();
      await resumable.waitFor();
      assert.equal(await rows.count(), 2, "one row per session");
      assert.match(await forgetful.innerText(), /Forgetful/);
      assert.match(await resumable.innerText(), /Resumable/);
      await vscode.screenshot("sessions-history.png");
      await page.keyboard.press("Escape");
      await page.locator(".quick-input-widget").waitFor({ state: "hidden" });

      await openMoreActions(chat);
      await chat.locator('button.session-export-item[data-format="jsonl"]').click();
      // In the browser, VS Code's save dialog is its simple one: a path in a quick input.
      const target = path.join(vscode.workspace, "exported-session.jsonl");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor();
      // The dialog fills in its proposal (a path ending in .jsonl) after it shows: typing before
      // that would be overwritten.
      await page.waitForFunction(() =>
        document.querySelector(".quick-input-widget input")?.value.endsWith(".jsonl"),
      );
      await input.fill(target);
      await input.press("Enter");
      const text = await waitForFile(target, (written) => written.includes("Hello again"));
      // The whole log, before and after the restart: one JSON event a line, numbered 1, 2, ...
      const events = text.trimEnd().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(events.map((event) => event.seq), events.map((_, index) => index + 1));
      assert.ok(text.includes("Say hello, Forgetful"), "the first prompt, from before the restart");
    });
  });
});

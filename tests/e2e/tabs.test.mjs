// End to end: several sessions at once. The scripted test agent runs scenarios/tabs.toml: a
// prompt with "count" streams the numbers 001 to 200 over 20 s, one with "edit" asks before
// editing notes.md, anything else gets one short answer.
//
// In one VS Code, in order (a step that fails skips the rest):
// 1. a second session opens beside a first that is counting: two tabs, the new one shown and
//    empty, the first still working in the background;
// 2. the second asks a question while the first streams: the first tab shows its stream whole
//    when shown, the second's tab says it waits; the answer reaches the second's agent;
// 3. the window reloads with both sessions counting: both tabs come back, each with its own
//    thread, every number once.
//
// A lost or doubled chunk shows in the numbers. Every wait is for something to appear; none
// measures time.

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";

import { numbersOfTurns, orderedSteps, repoRoot, testAgent, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const scenario = path.join(repoRoot, "tests", "e2e", "scenarios", "tabs.toml");
const settings = {
  // A reloaded window must find tetherd, and its agents, still running.
  "tether.sidecarGraceSeconds": 60,
  "tether.agents": [{ name: "Tabs", command: testAgent, args: ["--scenario", scenario] }],
  "tether.defaultAgent": "Tabs",
};
const workspaceFiles = { "notes.md": "# Notes\n" };

// 001, 002, ... 200: what a counting turn must show.
const ALL_NUMBERS = Array.from({ length: 200 }, (_, index) => String(index + 1).padStart(3, "0"));

test("two sessions run at once in two tabs, answer questions in the background and survive a reload", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "tabs", settings, workspaceFiles }, async (vscode) => {
    const { chat } = await vscode.startChat();
    const step = orderedSteps(t, vscode);
    const tabs = () => chat.locator(".session-tabs:not([hidden]) .session-tab");
    const tab = (n) => tabs().nth(n);
    const shownTab = () => chat.locator('.session-tabs:not([hidden]) .session-tab[aria-selected="true"]');
    const counted = (number) => chat.locator(".entry.agent", { hasText: number });
    const sendAndSee = async (words) => {
      await vscode.sendPrompt(words);
      await chat.locator(".entry.user", { hasText: words }).waitFor();
    };

    await step("1. New session opens a second tab beside a first that goes on counting", async () => {
      assert.equal(await tabs().count(), 0, "one session needs no tabs");
      await sendAndSee("Please count to 200");
      await counted("005").waitFor();
      await chat.locator("button.session-new").click();
      await tabs().nth(1).waitFor();
      assert.equal(await tabs().count(), 2);
      assert.equal(await shownTab().getAttribute("data-key"), await tab(1).getAttribute("data-key"));
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      assert.equal(await chat.locator(".entry.user").count(), 0, "the new session starts empty");
      assert.equal(await tab(0).getAttribute("data-activity"), "working", "the first still counts");
      assert.match(await tab(0).innerText(), /Please count to 200/);
    });

    await step("2. a question in one session while the other streams; each tab shows its own", async () => {
      await sendAndSee("Please edit the notes");
      const card = chat.locator(".entry.tool-call", { hasText: "Edit notes.md" });
      await card.locator("button.permission-option").first().waitFor();
      assert.equal(await tab(1).getAttribute("data-activity"), "waiting");

      // The first session, shown: its stream went on in the background, and goes on here.
      await tab(0).click();
      await chat.locator(".entry.user", { hasText: "Please count to 200" }).waitFor();
      assert.equal(await chat.locator(".entry.user").count(), 1, "the first session's thread alone");
      await counted("120").waitFor();
      assert.equal(await tab(1).getAttribute("data-activity"), "waiting", "the question still waits there");
      await vscode.screenshot("tabs-background-question.png");

      // Back to the second: the question is answered there while the first goes on.
      await tab(1).click();
      await card.locator('button.permission-option[data-option-id="allow-once"]').click();
      await chat.locator(".entry.agent", { hasText: "Done editing." }).waitFor();
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      assert.match(await chat.locator("main.thread").innerText(), /Permission for edit-notes: allow_once/);

      await tab(0).click();
      await counted("200").waitFor();
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      assert.deepEqual(await numbersOfTurns(chat), [ALL_NUMBERS], "every number once, in order");
    });

    await step("3. a window reload with two sessions counting keeps both", async () => {
      await sendAndSee("Count again, please");
      await tab(1).click();
      // The composer is the second tab's once its thread is shown (typed earlier, the words would
      // go to the first tab, whose turn runs).
      await chat.locator(".entry.user", { hasText: "Please edit the notes" }).waitFor();
      await sendAndSee("You count too, please");
      await counted("010").waitFor();
      await vscode.reloadWindow();
      await vscode.openTetherView();
      await tabs().nth(1).waitFor();
      assert.equal(await tabs().count(), 2, "both sessions are open again");
      // Which one is shown after the reload (and so the tabs' order) follows the last activity,
      // which depends on which count ended last: each tab is found by its label.
      const labelled = (words) => tabs().filter({ hasText: words });
      await labelled("Please edit").click();
      await chat.locator(".entry.user", { hasText: "You count too, please" }).waitFor();
      await counted("200").last().waitFor();
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      assert.deepEqual(await numbersOfTurns(chat), [ALL_NUMBERS], "the second session's count");
      const second = await chat.locator(".entry.user").allInnerTexts();
      assert.equal(second.length, 2, "the second session's two prompts");

      await labelled("Please count").click();
      await chat.locator(".entry.user", { hasText: "Count again, please" }).waitFor();
      await chat.locator(".entry.user").nth(1).waitFor();
      await counted("200").nth(1).waitFor();
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      assert.deepEqual(await numbersOfTurns(chat), [ALL_NUMBERS, ALL_NUMBERS], "the first session's two counts");
      await vscode.screenshot("tabs-after-reload.png");
    });
  });
});

// End to end: every prompt is a checkpoint. The scripted test agent runs
// scenarios/checkpoints.toml: its first prompt edits a.txt and creates b.txt, its second edits
// a.txt again and c.txt, each through the client (acceptEdits lets them through at once).
//
// In one VS Code, in order (a step that fails skips the rest):
// 1. two turns change three files (checked on disk);
// 2. "Restore code to here" on the first prompt proposes each file back as it was before it;
//    keeping them puts the disk back (a.txt and c.txt as they were, b.txt gone);
// 3. the restore is undone: the files are as the agent left them again;
// 4. going on from before the second prompt, with an agent that offers session/fork: a new tab
//    with the first turn alone, the agent's session forked (the agent says from which), and a
//    notice naming the files the withdrawn turns changed, which stay as they are;
// 5. the same with an agent that cannot fork: a new session, told so plainly, whose first
//    prompt carries the earlier turns to the agent (checked in the session's log).
//
// Every wait is for something to appear or for a file's text; none measures time.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import {
  newestSessionLog,
  orderedSteps,
  pick,
  repoRoot,
  testAgent,
  waitForFile,
  withVSCode,
} from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

const scenario = path.join(repoRoot, "tests", "e2e", "scenarios", "checkpoints.toml");
// An agent without session/fork: the tabs test's, whose other prompts get one short answer.
const plainScenario = path.join(repoRoot, "tests", "e2e", "scenarios", "tabs.toml");
const settings = {
  "tether.agents": [
    { name: "Checkpoints", command: testAgent, args: ["--scenario", scenario] },
    { name: "Plain", command: testAgent, args: ["--scenario", plainScenario] },
  ],
  "tether.defaultAgent": "Checkpoints",
  "tether.permissions.defaultMode": "acceptEdits",
};
const workspaceFiles = { "a.txt": "a\n", "c.txt": "c\n" };

test("restoring the code to a checkpoint puts three files back over two turns, and the restore is undone", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "checkpoints", settings, workspaceFiles }, async (vscode) => {
    const { chat, prompt, turnEnded } = await vscode.startChat();
    const step = orderedSteps(t, vscode);
    const file = (name) => path.join(vscode.workspace, name);
    const onDisk = (name) => (fs.existsSync(file(name)) ? fs.readFileSync(file(name), "utf8") : null);
    // Waits until `name` holds `text` (`null`: until it is gone).
    const waitForText = async (name, text) => {
      if (text === null) {
        await waitForFile(file(name), () => !fs.existsSync(file(name)));
      } else {
        await waitForFile(file(name), (written) => written === text);
      }
    };
    // Keeps every change a restore card proposes, from each file's own card.
    const keepEachFile = async (restore) => {
      const changes = await restore.locator("[data-change-id]").evaluateAll((items) =>
        items.map((item) => item.getAttribute("data-change-id")),
      );
      assert.equal(changes.length, 3, "one change a file");
      for (const change of changes) {
        const card = chat.locator(`.file-change[data-change-id="${change}"]`);
        await card.locator("button.change-keep-all").click();
        await card.locator("button.change-keep-all").waitFor({ state: "detached" });
      }
    };

    await step("1. two turns change three files", async () => {
      await prompt("Do the first thing");
      await chat.locator(".entry.agent", { hasText: "Done with the first." }).waitFor();
      await turnEnded();
      await prompt("Now the second thing");
      await chat.locator(".entry.agent", { hasText: "Done with the second." }).waitFor();
      await chat.locator('.turn-state[data-state="ended"]').last().waitFor();
      await waitForText("a.txt", "a, twice\n");
      await waitForText("b.txt", "b, new\n");
      await waitForText("c.txt", "c, by the agent\n");
    });

    await step("2. restoring the code to before the first prompt puts the three files back", async () => {
      // A message's actions show when the pointer is on it, as a person finds them.
      const first = chat.locator(".entry.user").first();
      await first.hover();
      await first.locator("button.restore-code").click();
      const restore = chat.locator('.entry.restore[data-state="planned"]').first();
      await restore.waitFor();
      assert.match(await restore.innerText(), /Do the first thing/);
      for (const name of ["a.txt", "b.txt", "c.txt"]) {
        assert.match(await restore.innerText(), new RegExp(name.replace(".", "\\.")));
      }
      // Nothing is written until kept.
      assert.equal(onDisk("a.txt"), "a, twice\n");
      await vscode.screenshot("checkpoints-restore-planned.png");
      await keepEachFile(restore);
      await waitForText("a.txt", "a\n");
      await waitForText("b.txt", null);
      await waitForText("c.txt", "c\n");
      // With every file decided, the card says it is done rather than asking for a review.
      await chat.locator('.entry.restore[data-state="decided"]').first().waitFor();
    });

    await step("3. the restore is undone: the files are as the agent left them", async () => {
      const restore = chat.locator(".entry.restore").first();
      await restore.locator("button.restore-undo").click();
      // The undo is a restore card of its own, which undoes the first.
      const undo = chat.locator('.entry.restore[data-undoes][data-state="planned"]');
      await undo.waitFor();
      assert.match(await undo.innerText(), /Undo/);
      await keepEachFile(undo);
      await waitForText("a.txt", "a, twice\n");
      await waitForText("b.txt", "b, new\n");
      await waitForText("c.txt", "c, by the agent\n");
      await chat.locator('.entry.restore[data-state="undone"]').waitFor();
      // The changes bar lists the agent's four changes still waiting, and not the restore's and
      // the undo's six settled ones beside them (it listed ten rows for three files).
      const rows = chat.locator(".changes-row");
      await rows.nth(4).waitFor({ state: "detached" });
      assert.deepEqual(
        await rows.evaluateAll((found) => found.map((row) => row.querySelector(".changes-state")?.textContent)),
        ["1 to review", "1 to review", "1 to review", "1 to review"],
      );
      await vscode.screenshot("checkpoints-undone.png");
    });

    const tabs = () => chat.locator(".session-tabs:not([hidden]) .session-tab");
    // Goes on from before the `n`th prompt (from 0) of the session shown, in a new tab.
    const goBackBefore = async (n) => {
      const before = await tabs().count();
      const message = chat.locator(".entry.user").nth(n);
      await message.hover();
      await message.locator("button.restore-conversation").click();
      await tabs().nth(Math.max(before, 1)).waitFor();
      await chat.locator('.session-status[data-status="ready"]').waitFor();
    };

    await step("4. going on from before the second prompt forks the agent's session", async () => {
      await goBackBefore(1);
      await chat.locator(".entry.notice", { hasText: "The agent forked its earlier session" }).waitFor();
      assert.deepEqual(await chat.locator(".entry.user").allInnerTexts(), ["Do the first thing"], "the first turn alone");
      // The files are not gone back with the conversation, and the new session says which the
      // withdrawn turns changed (the second prompt's a.txt and c.txt, and what the restore and
      // its undo wrote).
      const unchanged = chat.locator(".entry.notice", { hasText: "going back in the conversation does not undo" });
      await unchanged.waitFor();
      assert.match(await unchanged.innerText(), /a\.txt.*c\.txt|c\.txt.*a\.txt/s);
      await chat.locator(".entry.agent", { hasText: "Done with the first." }).waitFor();
      await vscode.sendPrompt("Which session is this?");
      const report = chat.locator(".entry.agent", { hasText: "This session was forked from" });
      await report.waitFor();
      assert.match(await report.innerText(), /This session was forked from test-session-\d+\./);
      await vscode.screenshot("checkpoints-forked.png");
    });

    await step("5. an agent that cannot fork gets the earlier turns with the next prompt", async () => {
      await pick(chat.locator(".session-picker"), "Plain");
      // The picker shows its choice at once, beside the previous session's status: the new
      // session is the one shown once its tab is selected, and "ready" is its status from then.
      await chat.locator('.session-tab[aria-selected="true"]', { hasText: "Plain" }).waitFor();
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      const answers = () => chat.locator(".entry.agent", { hasText: "Answered: the agent is listening." });
      await vscode.sendPrompt("Hello, plain agent");
      await answers().nth(0).waitFor();
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      await vscode.sendPrompt("A second thing");
      await answers().nth(1).waitFor();
      await chat.locator('.turn-state[data-state="ended"]').last().waitFor();

      await goBackBefore(1);
      await chat.locator(".entry.notice", { hasText: "This agent cannot fork a session" }).waitFor();
      assert.deepEqual(await chat.locator(".entry.user").allInnerTexts(), ["Hello, plain agent"]);
      await vscode.sendPrompt("Something else instead");
      await chat.locator(".entry.user", { hasText: "Something else instead" }).waitFor();
      await answers().nth(1).waitFor();
      // The person's message shows their words alone; the agent got the earlier turns with it.
      assert.equal(await chat.locator(".entry.user").nth(1).innerText(), "Something else instead");
      const log = await waitForFile(newestSessionLog(vscode.workspace), (text) =>
        text.includes("Something else instead"),
      );
      assert.match(log, /restoredContext/);
      assert.match(log, /That conversation, up to that point, was:/);
      assert.match(log, /Hello, plain agent/);
    });
  });
});


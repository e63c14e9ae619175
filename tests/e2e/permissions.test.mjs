// End to end: the person's permission decisions in a real VS Code. The scripted test agent runs
// its "permissions" scenario (crates/tether-test-agent/scenarios/permissions.toml): each prompt
// makes it ask for one kind of permission, and it reports every answer it gets in the chat,
// including the reason Tether sends in `_meta`, so the tests see what the agent saw.
//
// One VS Code serves every step (starting one costs most of a minute on two cores). The steps run
// in order in one session, as a person would use it, each as its own subtest; a step that fails
// skips the rest. Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

import { orderedSteps, testAgent, waitForFile, withVSCode, pick, chosenItem, openMoreActions } from "./harness.mjs";

const TEST_TIMEOUT_MS = 15 * 60_000;

const settings = {
  "tether.sidecarGraceSeconds": 5,
  "tether.agents": [{ name: "Permissions", command: testAgent, args: ["--scenario", "permissions"] }],
  "tether.defaultAgent": "Permissions",
};

test("permissions: cards, rules, modes, concurrent requests, withdrawal and the audit log", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "permissions", settings }, async (vscode) => {
    const { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
    const badge = vscode.page.locator(
      '.activitybar .action-item:has(a[aria-label^="Tether"]) .badge .badge-content',
    );

    // The tool call entry of this turn with this title (earlier turns have the same titles).
    const toolCall = (title) => chat.locator(".entry.tool-call", { hasText: title }).last();

    const step = orderedSteps(t, vscode);

    await step("(1) a request is shown with what it is about, and answered by a click", async () => {
      await prompt("edit");
      const edit = toolCall("Edit notes.md");
      const card = edit.locator('.permission-card[data-state="waiting"]');
      await card.waitFor();
      assert.deepEqual(await optionIds(card), ["allow-once", "allow-always", "reject-once", "reject-always"]);
      assert.match(await edit.innerText(), /notes\.md/, "the card names the file");
      assert.equal(await edit.getAttribute("data-status"), "waiting_for_confirmation");
      // The Tether view's badge says one request waits, even if the view were hidden.
      await badge.filter({ hasText: /^1$/ }).waitFor();

      await card.locator('button.permission-option[data-option-id="allow-once"]').click();
      await agentSays("Permission for edit-notes: allow_once (allow-once).").waitFor();
      await edit.locator('.permission-card[data-state="answered"]').waitFor();
      await turnEnded();
      await badge.waitFor({ state: "hidden" });
    });

    await step("(2) always allow makes a rule; it answers the next request; deleting it asks again", async () => {
      await prompt("run tests");
      let card = toolCall("Run npm test").locator('.permission-card[data-state="waiting"]');
      await card.waitFor();
      assert.equal((await card.locator(".permission-command").innerText()).trim(), "$ npm test");
      await card.locator('button.permission-option[data-option-id="allow-always"]').click();
      await agentSays("Permission for run-tests: allow_always (allow-always).").waitFor();
      await turnEnded();

      // The same command again: approved by the rule without a question, and the agent is told so.
      await prompt("run tests");
      const auto = toolCall("Run npm test").locator('.permission-auto[data-allowed="true"]');
      await auto.waitFor();
      assert.match(await auto.innerText(), /Auto-approved by rule/);
      // Each request is a tool call of its own: the agent numbers a command it ran before.
      await agentSays("Permission for run-tests-2: allow_once (allow-once). Reason: Approved by the person's rule").waitFor();
      await turnEnded();
      assert.equal(await toolCall("Run npm test").locator("button.permission-option").count(), 0);

      // The rules panel lists the rule, where it came from and that it fired once.
      await openMoreActions(chat);
      await chat.locator("button.rules-toggle").click();
      const rule = chat.locator('.rules-panel .rule[data-scope="session"]');
      await rule.waitFor();
      assert.equal(await rule.count(), 1);
      assert.match(await rule.locator(".rule-description").innerText(), /Allow execute matching .npm test./);
      assert.match(await rule.locator(".rule-origin").innerText(), /Always allow/);
      assert.match(await rule.locator(".rule-fired").innerText(), /fired 1 time\b/);

      // Deleted: the next request asks again, and is answered from the keyboard (3 = Reject).
      await rule.locator("button.rule-delete").click();
      await chat.locator(".rules-panel .rules-empty").waitFor();
      await prompt("run tests");
      card = toolCall("Run npm test").locator('.permission-card[data-state="waiting"]');
      await card.waitFor();
      await card.locator("button.permission-option").first().focus();
      await card.locator("button.permission-option").first().press("3");
      await agentSays("Permission for run-tests-3: reject_once (reject-once).").waitFor();
      await turnEnded();
    });

    // The agent's current mode, as its own mode picker shows it.
    const agentModeIs = (name) =>
      chosenItem(chat.locator(".agent-mode-select"), name).waitFor({ state: "attached" });

    await step("(3) Plan mode rejects a write, and the agent is told why", async () => {
      await pick(chat.locator(".mode-select"), "plan");
      await chat.locator('[data-mode="plan"]').first().waitFor();
      // The scripted agent offers a "plan" mode of its own: Tether switched it too, and the
      // agent's mode picker says so.
      await agentModeIs("Plan");
      await prompt("mode");
      await agentSays("Agent mode: plan.").waitFor();
      await turnEnded();

      await prompt("edit");
      const rejected = toolCall("Edit notes.md").locator('.permission-auto[data-allowed="false"]');
      await rejected.waitFor();
      assert.match(await rejected.innerText(), /Rejected by Plan mode/);
      await agentSays(
        "Permission for edit-notes-2: reject_once (reject-once). Reason: Plan mode is read only",
      ).waitFor();
      await turnEnded();
      assert.equal(
        await fsp.readFile(path.join(vscode.workspace, "notes.md"), "utf8"),
        "# Notes\n\n- Try the Tether sidebar.\n",
        "nothing was written",
      );

      await pick(chat.locator(".mode-select"), "ask");
      await agentModeIs("Ask");
    });

    await step("(4) two requests wait at once; one always-allow answers both", async () => {
      await prompt("two edits");
      const a = toolCall("Edit a.txt");
      const b = toolCall("Edit b.txt");
      await a.locator('.permission-card[data-state="waiting"]').waitFor();
      await b.locator('.permission-card[data-state="waiting"]').waitFor();
      await badge.filter({ hasText: /^2$/ }).waitFor();

      await a.locator('button.permission-option[data-option-id="allow-always"]').click();
      await b.locator('.permission-auto[data-allowed="true"]').waitFor();
      await agentSays("Permission for edit-a: allow_always (allow-always).").waitFor();
      await agentSays("Permission for edit-b: allow_once (allow-once). Reason: Approved by the person's rule").waitFor();
      await agentSays("Both answers are in.").waitFor();
      await turnEnded();
      await badge.waitFor({ state: "hidden" });

      // The rule the choice made can be kept for the workspace: it lands in the workspace settings.
      const rule = chat.locator('.rules-panel .rule[data-scope="session"]', { hasText: "Allow edit" });
      await rule.locator("button.rule-keep").click();
      await chat.locator('.rules-panel .rule[data-scope="workspace"]', { hasText: "Allow edit" }).waitFor();
      const saved = await waitForFile(path.join(vscode.workspace, ".vscode", "settings.json"), (text) =>
        text.includes("tether.permissions.rules"),
      );
      assert.deepEqual(JSON.parse(saved)["tether.permissions.rules"], [
        { decision: "allow", kinds: ["edit"], path: "**" },
      ]);
    });

    await step("(5) the agent withdraws a pending request and the card goes away with a note", async () => {
      await prompt("withdraw");
      const fetch = toolCall("Fetch https://example.com/docs");
      // Not waited for as "waiting" here: the agent withdraws 1.5 s after asking, and a slow machine
      // may render both states in one frame. That the request was first asked is shown by the
      // audit log below ("asked fetch-docs" before "withdrawn fetch-docs").
      await fetch.locator('.permission-card[data-state="withdrawn"]').waitFor();
      assert.match(await fetch.locator(".permission-note").innerText(), /withdrew/);
      assert.equal(await fetch.locator("button.permission-option").count(), 0);
      await agentSays("Permission for fetch-docs: withdrawn (Request cancelled).").waitFor();
      await agentSays("I withdrew my request.").waitFor();
      await turnEnded();
      await badge.waitFor({ state: "hidden" });
    });

    await step("the audit log holds every decision, with the time", async () => {
      const tetherDir = path.join(vscode.workspace, ".tether");
      assert.equal(await fsp.readFile(path.join(tetherDir, ".gitignore"), "utf8"), "*\n");
      const [session] = await fsp.readdir(path.join(tetherDir, "sessions"));
      const log = path.join(tetherDir, "sessions", session, "audit.jsonl");
      const records = (await fsp.readFile(log, "utf8")).trim().split("\n").map((line) => JSON.parse(line));
      for (const record of records) assert.ok(!Number.isNaN(Date.parse(record.time)), JSON.stringify(record));
      const summary = records.map((r) =>
        [r.event, r.toolCall?.id, r.option?.id ?? r.by?.type ?? r.to ?? r.rule?.description].filter(Boolean).join(" "),
      );
      assert.deepEqual(summary, [
        "asked edit-notes",
        "answered edit-notes allow-once",
        "asked run-tests",
        "answered run-tests allow-always",
        "ruleAdded Allow execute matching “npm test”",
        "decided run-tests-2 allow-once",
        "ruleRemoved Allow execute matching “npm test”",
        "asked run-tests-3",
        "answered run-tests-3 reject-once",
        "modeChanged plan",
        "decided edit-notes-2 reject-once",
        "modeChanged ask",
        "asked edit-a",
        "asked edit-b",
        "answered edit-a allow-always",
        "ruleAdded Allow edit in the workspace",
        "decided edit-b allow-once",
        "ruleKept Allow edit in the workspace",
        "asked fetch-docs",
        "withdrawn fetch-docs",
      ]);
      const planned = records.find((r) => r.event === "decided" && r.by?.type === "mode");
      assert.equal(planned.allowed, false);
      assert.match(planned.reason, /Plan mode/);

      // The rules panel opens the same log in an editor.
      await chat.locator("button.audit-open").click();
      await vscode.page.locator(".tabs-container .tab", { hasText: "audit.jsonl" }).waitFor();
      await vscode.screenshot("permissions.png");
    });
  });
});

// The option ids a permission card offers, in the order shown.
async function optionIds(card) {
  return card.locator("button.permission-option").evaluateAll((buttons) => buttons.map((b) => b.dataset.optionId));
}

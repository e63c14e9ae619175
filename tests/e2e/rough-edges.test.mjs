// End to end: the three rough edges issue 20 found, each in a real VS Code. The scripted test
// agent runs its "rough-edges" scenario (crates/tether-test-agent/scenarios/rough-edges.toml): it
// announces its models as Claude Code's and Gemini CLI's ACP adapters do (`models` in the session
// answers, `session/set_model`) and says which is current when asked; it writes files through the
// client, for review; and it reports every answer it gets as chat text, so the tests see what the
// agent was told.
//
// 1. The Model picker survives a window reload, with the model chosen before it.
// 2. Once a change is decided (Keep all, hunk by hunk, Reject all), its "(Tether review)" diff
//    tab closes, rather than staying open with an empty side; the files on disk are right.
// 3. A kept write to a file with unsaved edits lands in the editor only: the card says "Applied
//    to the unsaved editor", the agent is told the change is not on disk, and the disk is as it
//    was while the editor has the change.
//
// One VS Code serves every step, in order, each as its own subtest; a step that fails skips the
// rest. Every wait is for something to appear (or go); none measures time.

import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

import { orderedSteps, testAgent, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 15 * 60_000;

const settings = {
  // A reloaded window must find tetherd, and its agent, still running: the new window connects
  // after its extension host has started again, which takes several seconds on busy cores.
  "tether.sidecarGraceSeconds": 60,
  "tether.agents": [{ name: "Rough edges", command: testAgent, args: ["--scenario", "rough-edges"] }],
  "tether.defaultAgent": "Rough edges",
  // In a browser VS Code saves edits a second after typing by default; step 3 needs an edit that
  // stays unsaved.
  "files.autoSave": "off",
};

// The texts the scenario's writes are made against: change them together.
const notes = "# Notes\n\n- Try the Tether sidebar.\n";
const typed = "Typed but not saved.";
const editLines = Array.from({ length: 12 }, (_, i) => `edit ${i + 1}`);
const dropped = "Kept by the person.\n";

const workspaceFiles = {
  "notes.md": notes,
  "edited.txt": `${editLines.join("\n")}\n`,
  "dropped.txt": dropped,
};

// The id of the model picker Tether makes from an agent's `models` (the engine's
// LEGACY_MODEL_OPTION): the picker's stable hook is `data-config-id`.
const MODEL_OPTION = "tether.model";

test("rough edges: the model picker after a reload, review tabs once decided, a write to an unsaved editor", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "rough-edges", settings, workspaceFiles }, async (vscode) => {
    const page = vscode.page;
    const workspaceFile = (name) => path.join(vscode.workspace, name);
    let { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
    // The newest change card for a file (a card's label is the file's name).
    const card = (name) => chat.locator(".file-change", { hasText: name }).last();
    // Editor tabs whose title holds `words` (a review tab's is "<file> (Tether review)").
    const tabs = (words) => page.locator(".tabs-container .tab", { hasText: words });
    const reviewTabGone = (name) => tabs(`${name} (Tether review)`).first().waitFor({ state: "detached" });

    const step = orderedSteps(t, vscode);

    await step("1. the Model picker is back after a window reload, with the model chosen before", async () => {
      const picker = modelPicker(chat);
      await picker.waitFor();
      await pickerShows(chat, "default");
      await choose(picker, "opus");
      await pickerShows(chat, "opus");
      await prompt("which model are you?");
      await agentSays("Model: opus.").waitFor();
      await turnEnded();

      await vscode.reloadWindow();
      ({ chat, prompt, turnEnded, agentSays } = await vscode.startChat());
      // The reloaded window went on with the same agent: no new session was started.
      await agentSays("Model: opus.").waitFor();
      await pickerShows(chat, "opus");
      assert.equal(await modelPicker(chat).count(), 1, "one Model picker");
      await prompt("which model now?");
      // The agent, asked again, still has the model chosen before the reload.
      await chat.locator(".entry.agent", { hasText: "Model: opus." }).nth(1).waitFor();
      await turnEnded();
    });

    await step("2. a decided change's review tab closes: Keep all, hunk by hunk, Reject all", async () => {
      await prompt("change files");

      // A new file, kept as a whole: its tab would have two empty sides if it stayed.
      const created = card("created.txt");
      await created.and(chat.locator('[data-phase="proposed"]')).waitFor();
      await vscode.activeEditorTab("created.txt (Tether review)").waitFor();
      await created.locator("button.change-keep-all").click();
      await created.and(chat.locator('[data-phase="settled"]')).waitFor();
      await reviewTabGone("created.txt");
      await waitForFile(workspaceFile("created.txt"), (now) => now === "Created by the agent.\n");

      // Two hunks, decided one by one: the tab stays while one waits, and goes with the last.
      const edited = card("edited.txt");
      await edited.and(chat.locator('[data-phase="proposed"]')).waitFor();
      await vscode.activeEditorTab("edited.txt (Tether review)").waitFor();
      assert.equal(await edited.locator(".hunk").count(), 2);
      await edited.locator('.hunk[data-hunk-index="0"] button.hunk-keep').click();
      await edited.locator('.hunk[data-hunk-index="0"][data-state="kept"]').waitFor();
      assert.equal(await tabs("edited.txt (Tether review)").count(), 1, "one hunk still waits");
      await edited.locator('.hunk[data-hunk-index="1"] button.hunk-reject').click();
      await edited.and(chat.locator('[data-phase="settled"]')).waitFor();
      await reviewTabGone("edited.txt");
      const editedNow = editLines.map((line, i) => (i === 1 ? "edit 2, changed by the agent" : line));
      await waitForFile(workspaceFile("edited.txt"), (now) => now === `${editedNow.join("\n")}\n`);

      // Rejected as a whole: nothing is written, and the tab goes too.
      const rejected = card("dropped.txt");
      await rejected.and(chat.locator('[data-phase="proposed"]')).waitFor();
      await vscode.activeEditorTab("dropped.txt (Tether review)").waitFor();
      await rejected.locator("button.change-reject-all").click();
      await rejected.and(chat.locator('[data-phase="settled"]')).waitFor();
      await reviewTabGone("dropped.txt");

      await agentSays("Done changing files.").waitFor();
      await turnEnded();
      assert.equal(await tabs("(Tether review)").count(), 0, "no review tab is left open");
      assert.equal(await fsp.readFile(workspaceFile("dropped.txt"), "utf8"), dropped, "nothing was written");
      assert.equal(await fsp.readFile(workspaceFile("created.txt"), "utf8"), "Created by the agent.\n");
      await vscode.screenshot("rough-edges-review-tabs.png");
    });

    await step("3. a kept write to an unsaved editor says so, on the card and to the agent", async () => {
      await vscode.openFile("notes.md");
      await vscode.typeAtEndOfEditor(typed);
      await vscode.activeEditorTab("notes.md").and(page.locator(".tab.dirty")).waitFor();

      await prompt("edit the unsaved notes");
      const change = card("notes.md");
      await change.and(chat.locator('[data-phase="proposed"]')).waitFor();
      await change.locator("button.change-keep-all").click();
      await change.and(chat.locator('[data-phase="settled"]')).waitFor();
      assert.equal((await change.locator(".change-outcome").innerText()).trim(), "Applied to the unsaved editor");
      assert.doesNotMatch(await change.innerText(), /Written/);

      const told = agentSays("The client says:");
      await told.waitFor();
      assert.match(await told.innerText(), /unsaved buffer of notes\.md, not on disk/);
      await agentSays("Done with the notes.").waitFor();
      await turnEnded();

      assert.equal(await fsp.readFile(workspaceFile("notes.md"), "utf8"), notes, "the disk is as it was");
      await reviewTabGone("notes.md");
      await vscode.openFile("notes.md");
      await vscode.activeEditorTab("notes.md").and(page.locator(".tab.dirty")).waitFor();
      const shown = await page.locator(".editor-group-container.active .monaco-editor .view-lines").innerText();
      const editorText = shown.replace(/\u00a0/g, " ");
      assert.match(editorText, /Typed but not saved\./, "the person's edit is still there");
      assert.match(editorText, /Added by the agent\./, "the editor has the agent's change");
      await vscode.screenshot("rough-edges-unsaved.png");
    });
  });
});

// The Model picker, by its stable hook: whichever control draws it (a `<select>` or the compact
// picker), it carries the option's id as `data-config-id`.
function modelPicker(chat) {
  return chat.locator(`[data-config-id="${MODEL_OPTION}"]`);
}

// Waits until the Model picker shows `value` as its choice: a `<select>` with that option
// selected, or a compact picker whose `data-value` is it.
async function pickerShows(chat, value) {
  const hook = `[data-config-id="${MODEL_OPTION}"]`;
  await chat
    .locator(`${hook}[data-value="${value}"], select${hook}:has(option[value="${value}"]:checked)`)
    .waitFor({ state: "attached" });
}

// Chooses `value` in the Model picker, as a person would.
async function choose(picker, value) {
  if (await picker.evaluate((node) => node instanceof HTMLSelectElement)) {
    await picker.selectOption(value);
    return;
  }
  await picker.locator("button").first().click();
  await picker.locator(`[role="option"][data-value="${value}"]`).click();
}

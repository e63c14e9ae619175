// End to end: an agent that writes a file and runs a command without asking first (the test
// agent's fs-and-terminal scenario calls fs/write_text_file and terminal/create with no permission
// request) gets a card for each in Ask mode, and nothing lands or runs until the person answers:
// the file is unchanged on disk while its review card waits, and the command has no terminal
// while Tether's "Run …" card waits.

import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

import { demoWorkspaceFiles, testAgent, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 5 * 60_000;

const settings = {
  "tether.sidecarGraceSeconds": 5,
  "tether.agents": [{ name: "Unasked", command: testAgent, args: ["--scenario", "fs-and-terminal"] }],
  "tether.defaultAgent": "Unasked",
};

const written = "# Notes\n\nWritten by the test agent.\n";

test("a write and a command the agent did not ask about wait for the person's answer on cards", {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  await withVSCode({ name: "no-skipped-asks", settings }, async (vscode) => {
    const { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
    const notes = path.join(vscode.workspace, "notes.md");

    await prompt("Take a note and run a command");

    // The write: a review card, and the file as it was until the person keeps the change.
    const change = chat.locator(".file-change", { hasText: "notes.md" }).last();
    await change.and(chat.locator('[data-phase="proposed"]')).waitFor();
    assert.equal(await fsp.readFile(notes, "utf8"), demoWorkspaceFiles["notes.md"], "nothing lands before review");
    assert.equal(await chat.locator(".terminal-card").count(), 0, "nothing ran yet");
    await change.locator("button.change-keep-all").click();
    await waitForFile(notes, (text) => text === written);

    // The command: Tether's own card, and no terminal until the person says Run.
    const run = chat.locator(".entry.tool-call", { hasText: "Run echo hi" });
    const card = run.locator('.permission-card[data-state="waiting"]');
    await card.waitFor();
    assert.equal(await run.getAttribute("data-status"), "waiting_for_confirmation");
    assert.equal(await chat.locator(".terminal-card").count(), 0, "the command did not run before the answer");
    await vscode.screenshot("no-skipped-asks.png");
    await card.locator('button.permission-option[data-option-id="allow"]').click();

    await chat.locator('.terminal-card[data-state="exited"] .terminal-status', { hasText: "Finished" }).waitFor();
    await agentSays("Done.").waitFor();
    await turnEnded();
  });
});

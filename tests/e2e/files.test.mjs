// End to end: file review in a real VS Code. The scripted test agent runs its "files" scenario
// (crates/tether-test-agent/scenarios/files.toml): it reads a file through the client, writes
// files through the client (which Tether reviews per hunk before anything is written), and edits
// a file on disk itself (which Tether finds afterwards and offers to keep or revert per hunk). It
// reports every answer it gets as chat text, so the tests see what the agent saw.
//
// One VS Code serves every step, in order, each as its own subtest; a step that fails skips the
// rest. Every wait is for something to appear; none measures time.

import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

import { orderedSteps, testAgent, waitForFile, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 15 * 60_000;

const settings = {
  // The last step reloads the window, which must find tetherd still running: the new window
  // connects after its extension host has started again, several seconds on busy cores.
  "tether.sidecarGraceSeconds": 60,
  "tether.agents": [{ name: "Files", command: testAgent, args: ["--scenario", "files"] }],
  "tether.defaultAgent": "Files",
  // Not "diffEditor.codeLens": VS Code hides CodeLens in diff editors by default, and the
  // extension turns it on (configurationDefaults) so the review's Keep/Reject show; the CodeLens
  // step below checks that default.
  // In a browser VS Code saves edits a second after typing by default; these tests need edits
  // that stay unsaved.
  "files.autoSave": "off",
};

// The texts the scenario's steps are written against: change them together.
const lines = (prefix, count) => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}`);
const text = (list) => `${list.join("\n")}\n`;
const withLine = (list, number, replacement) => list.map((line, i) => (i === number - 1 ? replacement : line));

const notes = "# Notes\n\n- Try the Tether sidebar.\n";
const app = lines("line", 30);
const appProposed = withLine(withLine(app, 3, "line 3, changed by the agent"), 28, "line 28, changed by the agent");
const draft = "Draft, as the person wrote it.\n";
const lib = lines("lib", 20);
const libEdited = withLine(withLine(lib, 2, "lib 2, edited on disk"), 18, "lib 18, edited on disk");

const workspaceFiles = {
  "notes.md": notes,
  "app.txt": text(app),
  "draft.txt": draft,
  "lib.txt": text(lib),
  "todo.md": "# To do\n",
};

test("files: reads see unsaved edits, writes are reviewed per hunk, edits on disk can be reverted", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "files", settings, workspaceFiles }, async (vscode) => {
    const page = vscode.page;
    const workspaceFile = (name) => path.join(vscode.workspace, name);
    const { chat, prompt, turnEnded, agentSays } = await vscode.startChat();
    // The newest change card for a file (a card's label is the file's name).
    const card = (name) => chat.locator(".file-change", { hasText: name }).last();
    const diffEditor = page.locator(".monaco-diff-editor");

    const step = orderedSteps(t, vscode);
    // The hunks' states of app.txt's change as step (b) left them, for the reload in step (f).
    let appStates = [];

    await step("(a) the agent reads what the editor holds, unsaved edits included", async () => {
      await vscode.openFile("notes.md");
      await vscode.typeAtEndOfEditor("Typed but not saved.");
      await vscode.activeEditorTab("notes.md").and(page.locator(".tab.dirty")).waitFor();

      await prompt("read");
      await agentSays("Done reading.").waitFor();
      await turnEnded();
      const reply = await agentSays("Read ").innerText();
      assert.match(reply, /notes\.md/);
      // Control+End lands on the empty line after the file's last newline.
      assert.match(reply, /- Try the Tether sidebar\.\nTyped but not saved\./);
      assert.equal(await fsp.readFile(workspaceFile("notes.md"), "utf8"), notes, "the edit was not saved");
    });

    await step("(b) a write opens the diff editor; one hunk kept, one rejected → only the kept one is written", async () => {
      await prompt("write");
      const change = card("app.txt");
      await change.and(chat.locator('[data-phase="proposed"][data-origin="write"]')).waitFor();
      assert.equal(await change.locator(".hunk").count(), 2);
      assert.deepEqual(await hunkStates(change), ["pending", "pending"]);
      await vscode.activeEditorTab("app.txt (Tether review)").waitFor();
      await diffEditor.waitFor();
      assert.equal(await fsp.readFile(workspaceFile("app.txt"), "utf8"), text(app), "nothing is written before review");

      // The changes bar lists the waiting change.
      const changeId = await change.getAttribute("data-change-id");
      await chat.locator(`.changes-row[data-change-id="${changeId}"][data-phase="proposed"]`).waitFor({ state: "attached" });

      // Keep one hunk from a CodeLens above it in the diff editor, and reject the other in the
      // card.
      await diffEditor.locator(".editor.modified .codelens-decoration a", { hasText: /^Keep$/ }).first().click();
      const keptHunk = change.locator('.hunk[data-state="kept"]');
      await keptHunk.waitFor();
      const kept = Number(await keptHunk.getAttribute("data-hunk-index"));
      const rejected = 1 - kept;
      await change.locator(`.hunk[data-hunk-index="${rejected}"] button.hunk-reject`).click();

      await change.and(chat.locator('[data-phase="settled"]')).waitFor();
      const states = ["kept", "kept"];
      states[rejected] = "rejected";
      assert.deepEqual(await hunkStates(change), states);
      appStates = states;
      const changedLines = [3, 28];
      const [keptLine, rejectedLine] = [changedLines[kept], changedLines[rejected]];
      const expected = text(withLine(app, keptLine, appProposed[keptLine - 1]));
      await waitForFile(workspaceFile("app.txt"), (now) => now === expected);

      // The agent was told which hunk it did not get.
      const reply = agentSays("Could not write");
      await reply.waitFor();
      const told = await reply.innerText();
      assert.match(told, /app\.txt/);
      assert.match(told, /kept 1 of 2 hunks/);
      assert.ok(told.includes(appProposed[rejectedLine - 1]), `the agent is shown the rejected hunk:\n${told}`);
      assert.ok(!told.includes(appProposed[keptLine - 1]), `the agent is not shown the kept hunk:\n${told}`);
      assert.match(await change.locator(".change-outcome").innerText(), /kept 1 of 2 hunks/);
      await agentSays("Done writing.").waitFor();
      await turnEnded();
      await vscode.screenshot("files-write.png");
    });

    await step("(c) a write to a file edited meanwhile in the editor is a conflict; nothing is written", async () => {
      await vscode.openFile("draft.txt");
      await prompt("write again");
      const change = card("draft.txt");
      await change.and(chat.locator('[data-phase="proposed"]')).waitFor();
      await vscode.activeEditorTab("draft.txt (Tether review)").waitFor();

      // Back to the person's editor of the file, and an edit there while the review waits.
      await vscode.openFile("draft.txt");
      await vscode.typeAtEndOfEditor("A line the person added.");
      await change.and(chat.locator('[data-phase="conflict"]')).waitFor();
      assert.match(await change.locator(".change-message").innerText(), /draft\.txt changed/);
      assert.equal(await fsp.readFile(workspaceFile("draft.txt"), "utf8"), draft, "nothing was written");

      // Dropping the conflicted change answers the agent, and the turn ends.
      await change.locator("button.change-reject-all").click();
      await change.and(chat.locator('[data-phase="settled"]')).waitFor();
      await agentSays("Could not write").filter({ hasText: "draft.txt" }).waitFor();
      await agentSays("Done writing again.").waitFor();
      await turnEnded();
      assert.equal(await fsp.readFile(workspaceFile("draft.txt"), "utf8"), draft, "still nothing was written");
    });

    await step("(d) an edit the agent made on disk is shown after the fact and reverted hunk by hunk", async () => {
      await prompt("disk");
      await agentSays("Done editing on disk.").waitFor();
      await turnEnded();
      const change = card("lib.txt");
      await change.and(chat.locator('[data-origin="agent"][data-phase="applied"]')).waitFor();
      assert.equal(await change.locator(".hunk").count(), 2);
      assert.equal(await fsp.readFile(workspaceFile("lib.txt"), "utf8"), text(libEdited));
      // The change is shown once: the tool call's card names the file relative to the workspace
      // and links to the change card rather than drawing the same diff again.
      const edit = chat.locator(".entry.tool-call", { hasText: "Edit lib.txt" });
      await edit.locator("button.tool-diff-change").waitFor();
      assert.equal(await edit.locator(".diff-line").count(), 0);
      assert.equal((await edit.locator(".tool-diff-path").innerText()).trim(), "lib.txt");

      await change.locator('.hunk[data-hunk-index="1"] button.hunk-reject').click();
      await change.locator('.hunk[data-hunk-index="1"][data-state="rejected"]').waitFor();
      const oneReverted = text(withLine(lib, 2, "lib 2, edited on disk"));
      await waitForFile(workspaceFile("lib.txt"), (now) => now === oneReverted);
      // Hunk 0 still waits for a decision, after the reload of step (f) too.
      await change.and(chat.locator('[data-phase="applied"]')).waitFor();
      assert.deepEqual(await hunkStates(change), ["pending", "rejected"]);
    });

    await step("(e) the changes bar lists this turn's files", async () => {
      const bar = chat.locator("section.changes-bar");
      await bar.waitFor();
      const summary = bar.locator("button.changes-summary");
      if ((await summary.getAttribute("aria-expanded")) !== "true") await summary.click();
      const libId = await card("lib.txt").getAttribute("data-change-id");
      const rows = bar.locator(".changes-row");
      await rows.first().waitFor();
      assert.deepEqual(
        await rows.evaluateAll((all) => all.map((row) => [row.dataset.changeId, row.dataset.phase])),
        [[libId, "applied"]],
        "only this turn's file: earlier changes are all decided",
      );
      assert.match(await rows.first().innerText(), /lib\.txt/);
      await vscode.screenshot("files.png");
    });

    await step("(f) after a window reload the change cards are back as they were left; one still to decide is decided then", async () => {
      await vscode.reloadWindow();
      await vscode.openTetherView();
      await chat.locator(".entry.agent", { hasText: "Done editing on disk." }).waitFor();
      // A write that was kept is back as it was decided (its texts are in the log); one rejected
      // before anything was written is a record, to read.
      const app = card("app.txt");
      await app.and(chat.locator('[data-phase="settled"]')).waitFor();
      assert.deepEqual(await hunkStates(app), appStates, "app.txt: its hunks as they were decided");
      assert.match(await app.locator(".change-outcome").innerText(), /kept 1 of 2 hunks/);
      const draft = card("draft.txt");
      await draft.and(chat.locator('[data-phase="unreviewable"]')).waitFor();
      assert.match(await draft.locator(".change-phase").innerText(), /Reopened from the session's log/);
      assert.deepEqual(await hunkStates(draft), ["rejected"], "draft.txt: its hunk as it was decided");
      for (const decided of [app, draft]) {
        assert.equal(await decided.locator(".hunk-keep, .hunk-reject, .change-reject-all").count(), 0, "nothing left to decide");
      }
      await vscode.screenshot("files-reopened.png");

      // The agent's own edit, on disk with a hunk still to decide, goes on as it was: reverting
      // what is left of it puts the file back byte for byte. Before, it came back as a record,
      // and could no longer be reverted from Tether.
      const change = card("lib.txt");
      await change.and(chat.locator('[data-phase="applied"]')).waitFor();
      assert.deepEqual(await hunkStates(change), ["pending", "rejected"]);
      // Its diff editor opens as before the reload, with the review's CodeLens on what is left.
      await change.locator("button.change-open").click();
      await diffEditor.locator(".editor.modified .codelens-decoration a", { hasText: /^Revert$/ }).first().waitFor();
      await change.locator("button.change-reject-all").click();
      await change.and(chat.locator('[data-phase="settled"]')).waitFor();
      await waitForFile(workspaceFile("lib.txt"), (now) => now === text(lib));
      assert.ok(
        Buffer.from(text(lib)).equals(await fsp.readFile(workspaceFile("lib.txt"))),
        "reverting restores the old bytes exactly",
      );
    });

    await step("(g) a file the person saves during a turn is listed, but not offered to revert", async () => {
      await prompt("Think it over meanwhile");
      const waiting = chat.locator('.permission-card[data-state="waiting"]');
      await waiting.waitFor();
      // While the agent waits, the person writes a line of their own and saves it.
      await vscode.openFile("todo.md");
      await vscode.typeAtEndOfEditor("- My own item.");
      await page.keyboard.press("Control+S");
      await waitForFile(workspaceFile("todo.md"), (now) => now.includes("- My own item."));
      await waiting.locator("button", { hasText: "Allow" }).first().click();
      await agentSays("Done meanwhile.").waitFor();
      await turnEnded();
      // The snapshot found todo.md changed since the turn began: it says whose it may be, and
      // offers no Revert that would throw the person's line away.
      const mine = card("todo.md");
      await mine.and(chat.locator('[data-phase="unreviewable"]')).waitFor();
      assert.match(await mine.innerText(), /You saved todo\.md in an editor during this turn/);
      assert.equal(await mine.locator(".change-reject-all, .hunk-reject").count(), 0, "nothing to revert");
      await vscode.screenshot("files-saved-by-person.png");
      assert.match(await fsp.readFile(workspaceFile("todo.md"), "utf8"), /- My own item\./);
    });
  });
});

// The data-state of each hunk of a change card, in order.
async function hunkStates(card) {
  return card.locator(".hunk").evaluateAll((hunks) => hunks.map((hunk) => hunk.dataset.state));
}

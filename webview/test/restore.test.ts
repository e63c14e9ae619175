// Checkpoints as the person meets them in the chat: every prompt's Restore action (the intent it
// sends, and why it waits while the agent works), and the restore card the engine answers with:
// its words in each state, the files the person edited since, Undo, an undo's own card, and the
// way down to each file's change card.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Entry } from "../src/protocol";
import { agentMessage, fileChange, patch, restoreEntry, restoreFile, snapshot, userMessage } from "./fixtures";
import { type Harness, harness } from "./support";


/** Two prompts with their replies: the prompts are entries 0 and 2. */
const conversation: Entry[] = [
  userMessage("Add a greeting"),
  agentMessage("Added `greet()`."),
  userMessage("Now make it friendlier"),
  agentMessage("Done."),
];

function restoreButtons(ui: Harness): HTMLButtonElement[] {
  return ui.queryAll<HTMLButtonElement>(".entry.user button.restore-code");
}

/** The restore card's title, state line and files, as they read. */
function cardText(ui: Harness): { title: string; state: string; files: string[] } {
  const card = ui.query(".entry.restore");
  return {
    title: card.querySelector(".restore-title")?.textContent ?? "",
    state: card.querySelector(".restore-state")?.textContent ?? "",
    files: [...card.querySelectorAll(".restore-file")].map((file) => file.textContent ?? ""),
  };
}

describe("going on from before a prompt in a new session", () => {
  it("offers Go back on every prompt, sends that prompt's entry, and waits while the agent works", () => {
    const ui = harness();
    ui.frame(snapshot(conversation, { turn: { type: "running" } }));
    const buttons = () => ui.queryAll<HTMLButtonElement>(".entry.user button.restore-conversation");
    assert.equal(buttons().length, 2, "one per prompt");
    for (const button of buttons()) {
      assert.equal(button.getAttribute("aria-disabled"), "true");
      assert.match(button.title, /^The agent is still working/);
      button.click();
    }
    assert.deepEqual(ui.posted, [], "nothing is sent while the turn runs");

    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]));
    const second = buttons()[1]!;
    assert.equal(second.getAttribute("aria-disabled"), "false");
    assert.equal(second.getAttribute("aria-label"), "Go on from before this prompt in a new session (this one stays as it is)");
    second.click();
    assert.deepEqual(ui.posted, [{ type: "restoreConversation", entry: 2 }]);
  });
});

describe("restoring the code to a prompt", () => {
  it("offers Restore on every prompt, the first one too, and sends that prompt's entry", () => {
    const ui = harness();
    ui.frame(snapshot(conversation));
    const buttons = restoreButtons(ui);
    assert.equal(buttons.length, 2, "one Restore per prompt");
    for (const button of buttons) {
      assert.equal(button.getAttribute("aria-label"), "Restore the files the agent changed to how they were before this prompt");
      assert.equal(button.title, button.getAttribute("aria-label"));
      assert.equal(button.getAttribute("aria-disabled"), "false");
      assert.equal(button.querySelector(".codicon")?.className, "codicon codicon-discard");
    }
    assert.equal(
      ui.query(".entry.user .message-actions button").getAttribute("aria-label"),
      "Edit and send again",
      "Edit stays first",
    );
    buttons[1]!.click();
    buttons[0]!.click();
    assert.deepEqual(ui.posted, [
      { type: "restoreCode", entry: 2 },
      { type: "restoreCode", entry: 0 },
    ]);
  });

  it("waits while the agent works, says why, and works again once the turn ended", () => {
    const ui = harness();
    ui.frame(snapshot(conversation, { turn: { type: "running" } }));
    for (const button of restoreButtons(ui)) {
      assert.equal(button.getAttribute("aria-disabled"), "true");
      assert.match(button.title, /^The agent is still working: stop it or wait for it/);
      button.click();
    }
    assert.deepEqual(ui.posted, [], "nothing is sent while the turn runs");

    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]));
    for (const button of restoreButtons(ui)) {
      assert.equal(button.getAttribute("aria-disabled"), "false");
      assert.equal(button.title, "Restore the files the agent changed to how they were before this prompt");
    }
    restoreButtons(ui)[0]!.click();
    assert.deepEqual(ui.posted, [{ type: "restoreCode", entry: 0 }]);
  });

  it("turns unavailable on every prompt, new and old, when a new turn starts", () => {
    const ui = harness();
    ui.frame(snapshot(conversation));
    ui.frame(patch([{ op: "push", index: 4, entry: userMessage("One more") }, { op: "turn", state: { type: "running" } }]));
    assert.deepEqual(
      restoreButtons(ui).map((button) => button.getAttribute("aria-disabled")),
      ["true", "true", "true"],
    );
  });
});

describe("the restore card", () => {
  it("says which prompt it restores and where it stands, in each state", () => {
    const ui = harness();
    const states = [
      ["reading", "Reading the files…"],
      ["planned", "Review each file's change below: nothing is written until you keep it."],
      ["nothingToRestore", "Nothing to restore: the files are as they were then."],
      ["undone", "Undone."],
    ] as const;
    ui.frame(snapshot([userMessage("Add a greeting"), restoreEntry({ state: "reading", files: [] })]));
    const card = ui.query(".entry.restore");
    for (const [state, words] of states) {
      ui.frame(patch([{ op: "replace", index: 1, entry: restoreEntry({ state, files: state === "planned" ? [restoreFile()] : [] }) }]));
      assert.equal(ui.query(".entry.restore"), card, "the card is refilled in place");
      assert.equal(card.dataset["state"], state);
      assert.deepEqual(cardText(ui).title, "Restore the code to before “Add a greeting”");
      assert.equal(cardText(ui).state, words);
      assert.equal(card.querySelector(".restore-state")?.getAttribute("role"), "status");
    }
  });

  it("lists the files, marking those the person edited after the checkpoint, and says a problem in words", () => {
    const ui = harness();
    ui.frame(
      snapshot([
        userMessage("Add a greeting"),
        restoreEntry({
          files: [
            restoreFile(),
            restoreFile({ path: "/workspace/src/greet.ts", label: "src/greet.ts", change: 8, conflict: true }),
            restoreFile({ path: "/workspace/big.bin", label: "big.bin", change: null, problem: "The file could not be read: permission denied." }),
          ],
        }),
      ]),
    );
    assert.deepEqual(cardText(ui).files, [
      "src/app.ts",
      "src/greet.ts" + "you edited it after this checkpoint; restoring reverts your edits too",
      "big.bin" + "The file could not be read: permission denied.",
    ]);
    assert.deepEqual(
      ui.queryAll(".entry.restore [data-change-id]").map((file) => file.dataset["changeId"]),
      ["7", "8"],
      "each file names its change to review; the unreadable one has none",
    );
    const [plain, conflicting, unreadable] = ui.queryAll(".restore-file");
    assert.equal(plain!.dataset["conflict"], "false");
    assert.equal(plain!.querySelector(".codicon-warning"), null, "no mark on a file no one else edited");
    assert.equal(conflicting!.dataset["conflict"], "true");
    assert.ok(conflicting!.querySelector(".restore-file-conflict > .codicon-warning"), "a warning icon marks the conflict");
    assert.ok(unreadable!.querySelector(".restore-file-problem > .codicon-error"));

    // A file with no change to review opens the file itself.
    unreadable!.querySelector<HTMLButtonElement>("button.restore-file-link")!.click();
    assert.deepEqual(ui.posted, [{ type: "openLocation", path: "/workspace/big.bin", line: null }]);
  });

  it("takes the person from a file down to its change card, worded as a restore", () => {
    const ui = harness();
    ui.frame(
      snapshot([
        userMessage("Add a greeting"),
        restoreEntry({ files: [restoreFile(), restoreFile({ path: "/workspace/src/greet.ts", label: "src/greet.ts", change: 8 })] }),
        fileChange({ id: 7, origin: "restore" }),
        fileChange({ id: 8, origin: "restore", path: "/workspace/src/greet.ts", label: "src/greet.ts" }),
      ]),
    );
    const second = ui.query('.restore-file[data-change-id="8"] button.restore-file-link');
    assert.equal(second.getAttribute("aria-label"), "Go to the change to src/greet.ts");
    second.click();
    const target = ui.query('.file-change[data-change-id="8"]');
    assert.ok(target.contains(ui.window.document.activeElement), "the focus is on the change card of that file");
    assert.deepEqual(ui.posted, [], "going there sends nothing");

    assert.equal(target.getAttribute("aria-label"), "Restore: src/greet.ts");
    assert.equal(target.querySelector(".file-change-origin")?.textContent, "restore");
    assert.equal(target.querySelector(".change-phase")?.textContent, "Restore waiting for your review — nothing written yet");
  });

  it("offers Undo only while the restore can be undone, and sends its id", () => {
    const ui = harness();
    ui.frame(snapshot([userMessage("Add a greeting"), restoreEntry({ id: 4, undoable: false })]));
    assert.equal(ui.queryAll("button.restore-undo").length, 0, "nothing written yet: nothing to undo");

    ui.frame(patch([{ op: "replace", index: 1, entry: restoreEntry({ id: 4, undoable: true }) }]));
    const undo = ui.query<HTMLButtonElement>(".entry.restore button.restore-undo");
    assert.equal(undo.textContent, "Undo restore");
    undo.click();
    assert.deepEqual(ui.posted, [{ type: "undoRestore", restore: 4 }]);
    assert.equal(undo.disabled, true, "one click sends one undo");

    ui.frame(patch([{ op: "replace", index: 1, entry: restoreEntry({ id: 4, state: "undone", undoable: false }) }]));
    assert.equal(ui.queryAll("button.restore-undo").length, 0);
    assert.equal(cardText(ui).state, "Undone.");
  });

  it("words an undo as an undo of the restore", () => {
    const ui = harness();
    ui.frame(
      snapshot([
        userMessage("Add a greeting"),
        restoreEntry({ id: 1, state: "undone" }),
        fileChange({ id: 7, origin: "restore", phase: { type: "settled" } }),
        restoreEntry({ id: 2, undoes: 1, state: "planned", files: [restoreFile({ change: 9 })] }),
      ]),
    );
    const [restore, undo] = ui.queryAll(".entry.restore");
    assert.equal(restore!.querySelector(".restore-title")?.textContent, "Restore the code to before “Add a greeting”");
    assert.equal(undo!.querySelector(".restore-title")?.textContent, "Undo the restore to before “Add a greeting”");
    assert.equal(undo!.getAttribute("aria-label"), "Undo the restore to before “Add a greeting”");
    assert.equal(undo!.dataset["undoes"], "1");
    assert.equal(restore!.dataset["undoes"], undefined);
  });
});

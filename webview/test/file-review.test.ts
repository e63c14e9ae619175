// File review as the person meets it in the chat: a tool call's diff drawn from the engine's
// lines, the file change card in each phase with the buttons that phase allows and the exact
// intents they send, the card redrawn from the host's patch, and the changes bar.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { ChangePhase, ChangeOrigin, DiffLineView, Entry, ToolCallView } from "../src/protocol";
import { changedFile, fileChange, hunk, patch, session, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

/** Each drawn line as its class, its sign and its text, with the changed words in [brackets]. */
function shownLines(block: Element): string[] {
  return [...block.querySelectorAll(".diff-line")].map((line) => {
    const kind = [...line.classList].find((name) => name !== "diff-line") ?? "";
    const [sign, ...rest] = [...line.childNodes];
    const text = rest
      .map((node) => (node.nodeType === node.ELEMENT_NODE ? `[${node.textContent}]` : node.textContent))
      .join("")
      .replace(/\n$/, "");
    return `${kind} ${sign?.textContent}|${text}`;
  });
}

function toolCallWithDiff(lines: DiffLineView[], hiddenLines = 0): Entry {
  const call: ToolCallView = {
    id: "call-1",
    title: "Edit src/app.ts",
    kind: "edit",
    status: "completed",
    content: [{ type: "diff", path: "/workspace/src/app.ts", label: "src/app.ts", change: null, added: 12, removed: 3, lines, hiddenLines }],
    locations: [],
    rawInput: null,
    command: null,
    rawOutput: null,
    permission: null,
  };
  return { type: "toolCall", ...call };
}

function buttonsOf(ui: Harness): string[] {
  return ui.queryAll(".file-change button").map((button) => {
    const hunkIndex = button.closest<HTMLElement>(".hunk")?.dataset["hunkIndex"];
    return `${hunkIndex === undefined ? "" : `${hunkIndex}:`}${button.className}=${button.textContent}`;
  });
}

describe("tool call diff", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("draws the engine's lines with gaps, stats and the count of lines left out", () => {
    ui.frame(
      snapshot([
        toolCallWithDiff(
          [
            { sign: "gap", text: "", highlights: [] },
            { sign: "context", text: "fn main() {", highlights: [] },
            { sign: "removed", text: "    old();", highlights: [[4, 7]] },
            { sign: "added", text: "    new();", highlights: [[4, 7]] },
            { sign: "context", text: "}", highlights: [] },
            { sign: "gap", text: "", highlights: [] },
            { sign: "added", text: "// end", highlights: [] },
          ],
          10,
        ),
      ]),
    );
    const diff = ui.query(".tool-call .tool-diff");
    assert.equal(diff.querySelector(".tool-diff-path")?.textContent, "src/app.ts");
    assert.equal(diff.querySelector(".tool-diff-stats")?.textContent, "+12 −3");
    assert.deepEqual(shownLines(diff.querySelector(".tool-diff-lines")!), [
      "diff-gap ⋯|",
      "diff-context  |fn main() {",
      "diff-removed -|    [old]();",
      "diff-added +|    [new]();",
      "diff-context  |}",
      "diff-gap ⋯|",
      "diff-added +|// end",
    ]);
    assert.equal(diff.querySelector(".diff-hidden")?.textContent, "10 more changed lines not shown");
    assert.equal(
      diff.querySelector(".tool-diff-lines")?.textContent,
      "⋯\n fn main() {\n-    old();\n+    new();\n }\n⋯\n+// end\n",
      "copying the block gives the lines with their signs",
    );
  });

  it("says nothing is hidden when nothing is", () => {
    ui.frame(snapshot([toolCallWithDiff([{ sign: "added", text: "x", highlights: [] }])]));
    assert.equal(ui.queryAll(".tool-diff .diff-hidden").length, 0);
  });

  it("wraps the changed words at the right characters of non-ASCII text", () => {
    // UTF-16 offsets: "naïve " is 0..6, "café" 6..10, " " 10, the emoji is two code units 11..13.
    const text = "naïve café 🎉 done";
    ui.frame(
      snapshot([
        toolCallWithDiff([
          { sign: "added", text, highlights: [[6, 10], [11, 13]] },
          // Ranges out of order, overlapping or past the end are clamped, never drawn twice.
          { sign: "removed", text: "naïve", highlights: [[3, 9], [0, 2], [1, 4]] },
        ]),
      ]),
    );
    const words = ui.queryAll(".tool-diff-lines .diff-added .diff-word").map((word) => word.textContent);
    assert.deepEqual(words, ["café", "🎉"]);
    assert.deepEqual(shownLines(ui.query(".tool-diff-lines")), [
      "diff-added +|naïve [café] [🎉] done",
      "diff-removed -|[na][ïv][e]",
    ]);
  });
});

describe("file change card", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("shows the file, its kind, stats and each hunk with its header and lines", () => {
    ui.frame(
      snapshot([
        fileChange({
          kind: "created",
          hunks: [hunk(0, { oldLine: 0, oldCount: 0, newLine: 1, newCount: 3, hiddenLines: 1 })],
          degraded: true,
        }),
      ]),
    );
    const card = ui.query(".entry.file-change");
    assert.deepEqual({ ...card.dataset }, {
      index: "0",
      changeId: "7",
      phase: "proposed",
      origin: "write",
      kind: "created",
    });
    assert.equal(ui.query(".file-change-label").textContent, "src/app.ts");
    assert.equal(ui.query(".file-change-kind").textContent, "new file");
    assert.equal(ui.query(".file-change-stats").textContent, "+2 −2");
    assert.equal(ui.query(".change-phase").textContent, "Waiting for your review — nothing written yet");
    assert.equal(ui.query(".hunk-header").textContent, "Lines 1–3");
    assert.equal(ui.query(".hunk-header").title, "@@ -0,0 +1,3 @@");
    assert.deepEqual(shownLines(ui.query(".hunk .hunk-lines")), ["diff-removed -|[old] line 1", "diff-added +|[new] line 1"]);
    assert.equal(ui.query(".hunk .diff-hidden").textContent, "1 more changed line not shown");
    assert.match(ui.query(".change-degraded").textContent ?? "", /coarse/i);
    assert.equal(ui.queryAll(".change-outcome").length, 0);
  });

  it("offers the buttons each phase allows and says where the change stands", () => {
    const cases: Array<[string, ChangePhase, ChangeOrigin, Array<"pending" | "kept" | "rejected">, string, string[]]> = [
      [
        "a proposed write",
        { type: "proposed" },
        "write",
        ["pending", "pending"],
        "Waiting for your review — nothing written yet",
        [
          "file-change-label=src/app.ts",
          "change-keep-all=Keep all",
          "change-reject-all=Reject all",
          "change-open=Open diff",
          "0:hunk-keep=Keep",
          "0:hunk-reject=Reject",
          "1:hunk-keep=Keep",
          "1:hunk-reject=Reject",
        ],
      ],
      [
        "an edit the agent made on disk, half decided",
        { type: "applied" },
        "agent",
        ["kept", "pending"],
        "Changed on disk by the agent",
        [
          "file-change-label=src/app.ts",
          "change-keep-all=Keep all",
          "change-reject-all=Revert all",
          "change-open=Open diff",
          "1:hunk-keep=Keep",
          "1:hunk-reject=Revert",
        ],
      ],
      [
        "a write the mode let through",
        { type: "applied" },
        "write",
        ["pending", "pending"],
        "Written to disk, not reviewed yet",
        [
          "file-change-label=src/app.ts",
          "change-keep-all=Keep all",
          "change-reject-all=Revert all",
          "change-open=Open diff",
          "0:hunk-keep=Keep",
          "0:hunk-reject=Revert",
          "1:hunk-keep=Keep",
          "1:hunk-reject=Revert",
        ],
      ],
      [
        "a write being carried out",
        { type: "writing" },
        "write",
        ["kept", "rejected"],
        "Writing…",
        ["file-change-label=src/app.ts", "change-open=Open diff"],
      ],
      [
        "a settled write",
        { type: "settled" },
        "write",
        ["kept", "rejected"],
        "Kept 1, rejected 1",
        ["file-change-label=src/app.ts", "change-open=Open diff"],
      ],
      [
        "a settled edit on disk",
        { type: "settled" },
        "agent",
        ["rejected", "rejected"],
        "Kept 0, reverted 2",
        ["file-change-label=src/app.ts", "change-open=Open diff"],
      ],
      [
        "a conflict",
        { type: "conflict", message: "src/app.ts changed while the change waited; nothing was written." },
        "write",
        ["kept", "pending"],
        "src/app.ts changed while the change waited; nothing was written.",
        [
          "file-change-label=src/app.ts",
          "change-retry=Review again",
          "change-reject-all=Reject",
          "change-open=Open diff",
        ],
      ],
      [
        "a conflict while reverting an edit on disk",
        { type: "conflict", message: "src/app.ts changed since; nothing was reverted." },
        "agent",
        ["rejected", "pending"],
        "src/app.ts changed since; nothing was reverted.",
        ["file-change-label=src/app.ts", "change-retry=Review again", "change-open=Open diff"],
      ],
      [
        "a failed write",
        { type: "failed", message: "EACCES: permission denied" },
        "write",
        ["kept", "kept"],
        "EACCES: permission denied",
        ["file-change-label=src/app.ts", "change-retry=Review again", "change-open=Open diff"],
      ],
      [
        "a binary file",
        { type: "unreviewable", reason: "Binary file: not shown" },
        "agent",
        [],
        "Binary file: not shown",
        ["file-change-label=src/app.ts"],
      ],
    ];
    for (const [name, phase, origin, states, phaseText, buttons] of cases) {
      ui = harness();
      const hunks = states.map((state, index) => hunk(index, { state }));
      ui.frame(snapshot([fileChange({ phase, origin, hunks })]));
      assert.equal(ui.query(".file-change").dataset["phase"], phase.type, name);
      assert.equal(ui.query(".change-phase").textContent, phaseText, name);
      assert.deepEqual(buttonsOf(ui), buttons, name);
      const hasMessage = "message" in phase || "reason" in phase;
      assert.equal(ui.queryAll(".change-message").length, hasMessage ? 1 : 0, name);
      assert.deepEqual(
        ui.queryAll(".hunk").map((node) => node.dataset["state"]),
        states,
        name,
      );
    }
  });

  it("labels decided hunks: rejected before writing, reverted once on disk", () => {
    ui.frame(snapshot([fileChange({ hunks: [hunk(0, { state: "kept" }), hunk(1, { state: "rejected" })] })]));
    assert.deepEqual(ui.queryAll(".hunk-state").map((state) => state.textContent), ["Kept", "Rejected"]);
    ui.frame(
      snapshot([
        fileChange({ origin: "agent", phase: { type: "applied" }, hunks: [hunk(0, { state: "rejected" }), hunk(1)] }),
      ]),
    );
    assert.deepEqual(ui.queryAll(".hunk-state").map((state) => state.textContent), ["Reverted"]);
  });

  it("sends exactly the hunk's decision, then redraws from the host's replace", () => {
    ui.frame(snapshot([{ type: "user", text: "edit it", attachments: [] }, fileChange()]));
    const card = ui.query(".file-change");
    const keep = ui.query<HTMLButtonElement>('.hunk[data-hunk-index="1"] button.hunk-keep');
    keep.focus();
    keep.click();
    assert.deepEqual(ui.posted, [{ type: "review", intent: { type: "hunk", change: 7, hunk: 1, keep: true } }]);
    assert.equal(keep.disabled, true, "the hunk's buttons wait for the host");
    assert.equal(ui.query<HTMLButtonElement>('.hunk[data-hunk-index="1"] button.hunk-reject').disabled, true);
    assert.equal(ui.query<HTMLButtonElement>('.hunk[data-hunk-index="0"] button.hunk-keep').disabled, false);
    keep.click();
    assert.equal(ui.posted.length, 1, "a disabled button sends nothing more");

    ui.frame(patch([{ op: "replace", index: 1, entry: fileChange({ hunks: [hunk(0), hunk(1, { state: "kept" })] }) }]));
    assert.equal(ui.query(".file-change"), card, "the card's node is kept");
    const decided = ui.query('.hunk[data-hunk-index="1"]');
    assert.equal(decided.dataset["state"], "kept");
    assert.equal(decided.querySelectorAll("button").length, 0);
    assert.equal(decided.querySelector(".hunk-state")?.textContent, "Kept");
    const next = ui.query<HTMLButtonElement>('.hunk[data-hunk-index="0"] button.hunk-keep');
    assert.equal(next.disabled, false);
    assert.equal(ui.window.document.activeElement, next, "the focus goes to the hunk still pending");

    ui.query<HTMLButtonElement>('.hunk[data-hunk-index="0"] button.hunk-reject').click();
    assert.deepEqual(ui.posted[1], { type: "review", intent: { type: "hunk", change: 7, hunk: 0, keep: false } });
  });

  it("sends whole-change decisions, opening, and the conflict's retry and reject", () => {
    ui.frame(snapshot([fileChange({ origin: "agent", phase: { type: "applied" } })]));
    ui.query<HTMLButtonElement>("button.change-open").click();
    ui.query<HTMLButtonElement>("button.file-change-label").click();
    ui.query<HTMLButtonElement>("button.change-reject-all").click();
    assert.ok(
      ui.queryAll(".hunk button").every((button) => (button as HTMLButtonElement).disabled),
      "a whole-change decision disables every hunk's buttons",
    );
    ui.query<HTMLButtonElement>("button.change-keep-all").click();
    assert.deepEqual(ui.posted, [
      { type: "review", intent: { type: "open", change: 7 } },
      { type: "review", intent: { type: "open", change: 7 } },
      { type: "review", intent: { type: "all", change: 7, keep: false } },
    ]);

    ui.frame(patch([{ op: "replace", index: 0, entry: fileChange({ phase: { type: "conflict", message: "changed" } }) }]));
    ui.query<HTMLButtonElement>("button.change-retry").click();
    ui.frame(patch([{ op: "replace", index: 0, entry: fileChange({ phase: { type: "conflict", message: "changed" } }) }]));
    ui.query<HTMLButtonElement>("button.change-reject-all").click();
    assert.deepEqual(ui.posted.slice(3), [
      { type: "review", intent: { type: "retry", change: 7 } },
      { type: "review", intent: { type: "all", change: 7, keep: false } },
    ]);
  });

  it("shows what the agent was told once the write was answered", () => {
    ui.frame(
      snapshot([
        fileChange({
          phase: { type: "settled" },
          hunks: [hunk(0, { state: "kept" }), hunk(1, { state: "rejected" })],
          outcome: "The person rejected hunk 2 of 2; the file has the rest.",
        }),
      ]),
    );
    assert.equal(ui.query(".change-outcome").textContent, "The person rejected hunk 2 of 2; the file has the rest.");
  });
});

describe("changes bar", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("is hidden while no file changed, and appears with the host's list", () => {
    ui.frame(snapshot([]));
    assert.equal(ui.query("section.changes-bar").hidden, true);

    ui.frame(
      patch(
        [],
        session({
          changes: [
            changedFile(),
            changedFile({ change: 8, label: "src/lib.rs", phase: { type: "applied" }, added: 5, removed: 0, pending: 1 }),
            changedFile({ change: 9, label: "README.md", phase: { type: "settled" }, added: 1, removed: 1, pending: 0 }),
            changedFile({
              change: 10,
              label: "logo.png",
              phase: { type: "unreviewable", reason: "Binary file" },
              added: 0,
              removed: 0,
              pending: 0,
            }),
            // A restore of src/lib.rs: the same file, in a row of its own that says so.
            changedFile({ change: 11, label: "src/lib.rs", origin: "restore", added: 0, removed: 5, pending: 1 }),
          ],
        }),
      ),
    );
    const bar = ui.query("section.changes-bar");
    assert.equal(bar.hidden, false);
    assert.equal(ui.query(".changes-summary").textContent, "4 files changed, 3 waiting for review");
    // Cut to the sidebar's width, the line is whole in its tooltip.
    assert.equal(
      ui.query(".changes-summary").title,
      "4 files changed, 3 waiting for review. Show or hide the changed files",
    );
    assert.deepEqual(
      ui.queryAll(".changes-row").map((row) => [
        row.dataset["changeId"],
        row.dataset["phase"],
        row.querySelector(".changes-label")?.getAttribute("aria-label"),
        row.querySelector(".changes-stats")?.textContent,
        row.querySelector(".changes-state")?.textContent,
        [...row.querySelectorAll(".changes-buttons button")].map((button) => button.getAttribute("aria-label")?.split(":")[0]).join(","),
      ]),
      [
        ["7", "proposed", "src/app.ts", "+2 −2", "2 to review", "Keep all,Reject all"],
        ["8", "applied", "src/lib.rs", "+5 −0", "1 to review", "Keep all,Revert all"],
        ["9", "settled", "README.md", "+1 −1", "Reviewed", ""],
        ["10", "unreviewable", "logo.png", "+0 −0", "Not reviewable", ""],
        ["11", "proposed", "src/lib.rs", "+0 −5", "Restore: 1 to review", "Keep all,Reject all"],
      ],
    );
    // Each row shows the file's name first and its folder after it, which a narrow sidebar cuts
    // first: before, the path was cut from its end, the name ("src/compone…").
    assert.deepEqual(
      ui.queryAll(".changes-label").map((label) => [...label.children].map((part) => `${part.className}=${part.textContent}`)),
      [
        ["changes-name=app.ts", "changes-folder=src"],
        ["changes-name=lib.rs", "changes-folder=src"],
        ["changes-name=README.md"],
        ["changes-name=logo.png"],
        ["changes-name=lib.rs", "changes-folder=src"],
      ],
    );
    const composer = ui.query("footer.composer");
    assert.equal(bar.nextElementSibling, composer, "the bar sits right above the composer");

    ui.frame(patch([], session({ changes: [] })));
    assert.equal(bar.hidden, true);
  });

  it("sends openAll, open for a row, and a row's keep or reject", () => {
    ui.frame(
      snapshot([], {
        session: session({ changes: [changedFile(), changedFile({ change: 8, phase: { type: "applied" }, pending: 1 })] }),
      }),
    );
    ui.query<HTMLButtonElement>("button.changes-open-all").click();
    ui.query<HTMLButtonElement>('.changes-row[data-change-id="8"] .changes-label').click();
    ui.query('.changes-row[data-change-id="7"] .changes-state').click();
    ui.query<HTMLButtonElement>('.changes-row[data-change-id="7"] button.changes-keep-all').click();
    ui.query<HTMLButtonElement>('.changes-row[data-change-id="8"] button.changes-reject-all').click();
    assert.deepEqual(ui.posted, [
      { type: "review", intent: { type: "openAll" } },
      { type: "review", intent: { type: "open", change: 8 } },
      { type: "review", intent: { type: "open", change: 7 } },
      { type: "review", intent: { type: "all", change: 7, keep: true } },
      { type: "review", intent: { type: "all", change: 8, keep: false } },
    ]);
  });

  it("says one file in the singular and nothing waiting once all is decided", () => {
    ui.frame(snapshot([], { session: session({ changes: [changedFile({ phase: { type: "settled" }, pending: 0 })] }) }));
    assert.equal(ui.query(".changes-summary").textContent, "1 file changed");
  });

  it("collapses to its summary line and remembers it across a reload", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout"] });
    ui.frame(snapshot([], { session: session({ changes: [changedFile()] }) }));
    const summary = ui.query<HTMLButtonElement>("button.changes-summary");
    assert.equal(summary.getAttribute("aria-expanded"), "true", "the files are listed at first");
    summary.click();
    assert.equal(summary.getAttribute("aria-expanded"), "false");
    assert.equal(ui.query(".changes-list").hidden, true);
    assert.equal(ui.query("section.changes-bar").hidden, false, "the summary stays visible");
    assert.deepEqual(ui.posted, [], "collapsing is the webview's own state");
    context.mock.timers.tick(1_000);

    const reloaded = harness(ui.saved());
    reloaded.frame(snapshot([], { session: session({ changes: [changedFile()] }) }));
    assert.equal(reloaded.query(".changes-list").hidden, true);
  });
});

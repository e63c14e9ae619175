// The diff editor's side of review: Keep and Reject (Revert once on disk) above each pending hunk
// of a change's right side and nowhere else; the diff editor shows the registered texts, and
// follows a replaced change; one change opens the diff editor and several the multi-file diff
// view; Keep All/Reject All appear on a change waiting for a decision and act on it; a decided
// change's diff editor closes, and a view still showing it shows the file, never an empty side.

import assert from "node:assert/strict";
import { test } from "node:test";

import type { HostCommand, ReviewDocument, ReviewHunk } from "../src/generated/protocol";
import {
  HUNK_COMMAND,
  KEEP_ALL_COMMAND,
  REJECT_ALL_COMMAND,
  REVIEW_ACTIVE_CONTEXT,
  REVIEW_SCHEME,
  ReviewRegistry,
  registerReviewUi,
  reviewUri,
} from "../src/review";
import { eventually, recordingLog } from "./fakes";
import {
  TabInputTextDiff,
  TextDocument,
  Uri,
  closedTabs,
  codeLensProviders,
  commands,
  contentProviders,
  executedCommands,
  failures,
  focusEditor,
  openDocument,
  openTabs,
  resetWorkspace,
  shownMessages,
} from "./vscodeStub";

function hunk(index: number, newStart: number, newCount: number, state: ReviewHunk["state"] = "pending"): ReviewHunk {
  return { index, newStart, newCount, oldStart: newStart, oldCount: 1, state };
}

/** A proposed write of `/workspace/src/app.ts` (change 1), five lines long on the right. */
const proposed: ReviewDocument = {
  change: 1,
  path: "/workspace/src/app.ts",
  label: "src/app.ts",
  original: "a\nb\nc\n",
  proposed: "a\nB\nc\nd\ne",
  applied: false,
  hunks: [hunk(0, 1, 1), hunk(1, 3, 2, "kept"), hunk(2, 5, 0)],
  settled: false,
  session: 1,
};

/** A change the agent already made on disk (change 2): the right side is the file itself. */
const onDisk: ReviewDocument = {
  change: 2,
  path: "/workspace/README.md",
  label: "README.md",
  original: "old\n",
  proposed: null,
  applied: true,
  hunks: [hunk(0, 0, 1)],
  settled: false,
  session: 1,
};

/** A command argument with its URIs spelled out, for comparing. */
function plain(value: unknown): unknown {
  if (value instanceof Uri) {
    return value.toString();
  }
  return Array.isArray(value) ? value.map(plain) : value;
}

function setup() {
  resetWorkspace();
  shownMessages.length = 0;
  const { log, lines } = recordingLog();
  const registry = new ReviewRegistry(log);
  const sent: HostCommand[] = [];
  const ui = registerReviewUi(registry, (command) => sent.push(command), log);
  const provider = codeLensProviders[0]?.provider;
  assert.ok(provider, "a CodeLens provider is registered");
  const lenses = (document: TextDocument) =>
    provider.provideCodeLenses(document).map((lens) => [lens.range.start.line, lens.command?.title, lens.command?.arguments]);
  const content = (uri: Uri) => contentProviders.get(REVIEW_SCHEME)?.provideTextDocumentContent(uri);
  return { registry, sent, lines, lenses, content, dispose: () => ui.dispose() };
}

test("Keep and Reject sit above each pending hunk of a proposed write, inside the document", () => {
  const { registry, lenses, dispose } = setup();
  registry.show(proposed, false);
  const right = new TextDocument(reviewUri(proposed, "proposed"), proposed.proposed ?? "");
  assert.deepEqual(lenses(right), [
    [1, "Keep", [1, 0, true]],
    [1, "Reject", [1, 0, false]],
    // The last hunk removes the file's end: its lens goes on the last line there is.
    [4, "Keep", [1, 2, true]],
    [4, "Reject", [1, 2, false]],
  ]);
  assert.deepEqual(lenses(new TextDocument(reviewUri(proposed, "original"), proposed.original)), [], "not on the left side");
  assert.deepEqual(lenses(new TextDocument(Uri.file(proposed.path), "a\nb\nc\n")), [], "not on a file nothing was written to");

  registry.update(1, [hunk(0, 1, 1, "rejected"), hunk(1, 3, 2, "kept"), hunk(2, 5, 0)], false);
  assert.deepEqual(lenses(right), [
    [4, "Keep", [1, 2, true]],
    [4, "Reject", [1, 2, false]],
  ]);
  dispose();
});

test("a change already on disk gets Revert, on the file itself", () => {
  const { registry, lenses, dispose } = setup();
  registry.show(onDisk, false);
  assert.deepEqual(lenses(new TextDocument(Uri.file("/workspace/README.md"), "new\n")), [
    [0, "Keep", [2, 0, true]],
    [0, "Revert", [2, 0, false]],
  ]);
  assert.deepEqual(lenses(new TextDocument(Uri.file("/workspace/other.md"), "new\n")), []);
  dispose();
});

test("a lens decides its hunk through the engine; a command with bad arguments does nothing", async () => {
  const { sent, lines, dispose } = setup();
  await commands.executeCommand(HUNK_COMMAND, 1, 2, false);
  await commands.executeCommand(HUNK_COMMAND, "1", 2, true);
  assert.deepEqual(sent, [{ type: "review", intent: { type: "hunk", change: 1, hunk: 2, keep: false } }]);
  assert.equal(lines.at(-1)?.level, "warn");
  dispose();
});

test("the diff editor shows the registered texts, follows a replaced change, and empties on clear", () => {
  const { registry, content, lenses, dispose } = setup();
  registry.show(proposed, false);
  const left = reviewUri(proposed, "original");
  const right = reviewUri(proposed, "proposed");
  assert.equal(content(left), "a\nb\nc\n");
  assert.equal(content(right), "a\nB\nc\nd\ne");
  assert.equal(right.path, "/workspace/src/app.ts", "the file's name gives the language mode");

  const reloaded: string[] = [];
  const subscription = contentProviders.get(REVIEW_SCHEME)?.onDidChange?.((uri) => reloaded.push(uri.toString()));
  registry.show({ ...proposed, proposed: "a\nX\nc\n", hunks: [hunk(0, 1, 1)] }, false);
  assert.equal(content(right), "a\nX\nc\n");
  assert.deepEqual(reloaded, [left.toString(), right.toString()]);
  assert.deepEqual(registry.all().length, 1, "a repeat replaces the change");
  subscription?.dispose();

  registry.clear();
  assert.deepEqual(registry.all(), []);
  assert.equal(content(right), "");
  assert.deepEqual(lenses(new TextDocument(right, "a\nX\nc\n")), []);
  dispose();
});

test("closing a session forgets its changes and keeps the other sessions'", () => {
  const { registry, content, dispose } = setup();
  registry.show(proposed, false);
  registry.show({ ...onDisk, session: 2 }, false);
  registry.clear(1);
  assert.deepEqual(
    registry.all().map((review) => review.change),
    [2],
    "session 2's change is still there to decide",
  );
  assert.equal(content(reviewUri(proposed, "proposed")), "", "session 1's proposal is gone");
  dispose();
});

test("one change opens the diff editor, several the multi-file diff view", async () => {
  const { registry, lines, dispose } = setup();
  registry.show(proposed, true);
  registry.show(onDisk, false);
  registry.open([2], "ignored for one change");
  registry.open([1, 2, 99], "Changes this turn");
  registry.open([99], "nothing");
  const opened = executedCommands.filter((call) => call.command !== "setContext");
  assert.deepEqual(
    opened.map((call) => [call.command, ...call.args.map(plain)]),
    [
      [
        "vscode.diff",
        "tether-review:/workspace/src/app.ts?change=1&side=original",
        "tether-review:/workspace/src/app.ts?change=1&side=proposed",
        "src/app.ts (Tether review)",
        { preview: false },
      ],
      [
        "vscode.diff",
        "tether-review:/workspace/README.md?change=2&side=original",
        "file:/workspace/README.md",
        "README.md (Tether review)",
        { preview: false },
      ],
      [
        "vscode.changes",
        "Changes this turn",
        [
          [
            "file:/workspace/src/app.ts",
            "tether-review:/workspace/src/app.ts?change=1&side=original",
            "tether-review:/workspace/src/app.ts?change=1&side=proposed",
          ],
          ["file:/workspace/README.md", "tether-review:/workspace/README.md?change=2&side=original", "file:/workspace/README.md"],
        ],
      ],
    ],
  );
  assert.equal(lines.filter((line) => line.level === "warn").length, 2, "the unknown change is logged each time");

  failures.executeCommand = "no diff editor here";
  try {
    registry.open([1], "");
    await eventually(() => shownMessages.length === 1, "an error notification");
  } finally {
    delete failures.executeCommand;
  }
  assert.deepEqual(shownMessages, [
    { level: "error", text: "Tether could not open the diff editor: no diff editor here" },
  ]);
  dispose();
});

test("Keep All and Reject All show on a change waiting for a decision and decide it", async () => {
  const { registry, sent, dispose } = setup();
  const contextValues = () =>
    executedCommands.filter((call) => call.command === "setContext" && call.args[0] === REVIEW_ACTIVE_CONTEXT).map((call) => call.args[1]);
  registry.show(proposed, false);
  focusEditor(new TextDocument(reviewUri(proposed, "proposed"), proposed.proposed ?? ""));
  await commands.executeCommand(KEEP_ALL_COMMAND);
  // The editor title passes its editor's URI: the left side shows the same change.
  await commands.executeCommand(REJECT_ALL_COMMAND, reviewUri(proposed, "original"));
  assert.deepEqual(sent, [
    { type: "review", intent: { type: "all", change: 1, keep: true } },
    { type: "review", intent: { type: "all", change: 1, keep: false } },
  ]);

  registry.update(1, proposed.hunks.map((each) => ({ ...each, state: "kept" as const })), true);
  focusEditor(new TextDocument(Uri.file("/workspace/unrelated.ts"), ""));
  registry.show(onDisk, false);
  focusEditor(new TextDocument(Uri.file(onDisk.path), "new\n"));
  assert.deepEqual(contextValues(), [false, true, false, true], "off at start, on, off once settled, on for the file");

  focusEditor(undefined);
  await commands.executeCommand(KEEP_ALL_COMMAND);
  assert.equal(sent.length, 2, "nothing to decide without a change in the editor");
  assert.deepEqual(shownMessages, [
    { level: "information", text: "The active editor shows no Tether change waiting for a decision." },
  ]);
  dispose();
});

/** A diff editor tab on `review`, as `ReviewRegistry.open` opens one. */
function diffTab(review: ReviewDocument, options: { dirty?: boolean } = {}) {
  const right = review.proposed === null ? Uri.file(review.path) : reviewUri(review, "proposed");
  return {
    label: `${review.label} (Tether review)`,
    input: new TabInputTextDiff(reviewUri(review, "original"), right),
    isDirty: options.dirty ?? false,
    isActive: true,
  };
}

test("a change's diff editor closes once it is decided, whether all at once or hunk by hunk", () => {
  const { registry, dispose } = setup();
  /** A new file the agent proposes (change 3): both sides would be empty if its tab stayed. */
  const created: ReviewDocument = {
    change: 3,
    path: "/workspace/created.txt",
    label: "created.txt",
    original: "",
    proposed: "fresh\n",
    applied: false,
    hunks: [hunk(0, 0, 1)],
    settled: false,
    session: 1,
  };
  registry.show(proposed, false);
  registry.show(created, false);
  const unrelated = { label: "notes.md", input: undefined, isDirty: false, isActive: false };
  const proposedTab = diffTab(proposed);
  const createdTab = diffTab(created);
  openTabs.push(unrelated, proposedTab, createdTab);

  // Keep All: the engine marks the change settled, then registers it as written (on disk).
  registry.update(3, [hunk(0, 0, 1, "kept")], true);
  assert.deepEqual(closedTabs, [createdTab]);
  registry.show({ ...created, proposed: null, applied: true, hunks: [hunk(0, 0, 1, "kept")], settled: true }, false);
  assert.deepEqual(closedTabs, [createdTab], "closed once");

  // Hunk by hunk: still open while a hunk waits, closed with the last decision.
  registry.update(1, [hunk(0, 1, 1, "kept"), hunk(1, 3, 2, "kept"), hunk(2, 5, 0)], false);
  assert.deepEqual(closedTabs, [createdTab]);
  registry.update(1, [hunk(0, 1, 1, "kept"), hunk(1, 3, 2, "kept"), hunk(2, 5, 0, "rejected")], true);
  assert.deepEqual(closedTabs, [createdTab, proposedTab]);
  assert.deepEqual(openTabs, [unrelated], "other tabs stay");
  dispose();
});

test("a decided change already on disk closes its diff editor, unless the file there has unsaved edits", () => {
  const { registry, dispose } = setup();
  registry.show(onDisk, false);
  const dirty = diffTab(onDisk, { dirty: true });
  openTabs.push(dirty);
  // Reject All (Revert): the engine registers the change again, settled.
  registry.show({ ...onDisk, hunks: [hunk(0, 0, 1, "rejected")], settled: true }, false);
  assert.deepEqual(closedTabs, [], "closing it could ask to save; it shows the file, not an empty side");

  registry.show(onDisk, false);
  const clean = diffTab(onDisk);
  openTabs.length = 0;
  openTabs.push(clean);
  registry.show({ ...onDisk, hunks: [hunk(0, 0, 1, "rejected")], settled: true }, false);
  assert.deepEqual(closedTabs, [clean]);

  // A settled change opened again for a look stays open through later updates.
  const again = diffTab(onDisk);
  openTabs.push(again);
  registry.update(2, [hunk(0, 0, 1, "rejected")], true);
  assert.deepEqual(openTabs, [again]);
  dispose();
});

test("a view still showing a kept change's proposal shows the file as it is, not an empty side", async () => {
  const { registry, content, dispose } = setup();
  registry.show(proposed, false);
  const right = reviewUri(proposed, "proposed");
  assert.equal(content(right), "a\nB\nc\nd\ne");
  openDocument(proposed.path, "a\nB\nc\n");
  registry.show({ ...proposed, proposed: null, applied: true, settled: true }, false);
  assert.equal(await content(right), "a\nB\nc\n");
  // A file that is gone (a created file reverted) is empty.
  registry.show({ ...onDisk, path: "/nonexistent/gone.txt", settled: true }, false);
  assert.equal(await content(reviewUri({ ...onDisk, path: "/nonexistent/gone.txt" }, "proposed")), "");
  dispose();
});

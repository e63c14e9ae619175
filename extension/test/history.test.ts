// The history picker: each session shows its title, agent, age and turns, and says when it is
// the one shown, still running, or only the agent's; picking one opens it; Tether's own sessions
// can be renamed, exported and deleted (after a modal question) from their buttons, the agent's
// cannot. A new list refreshes the open picker instead of opening another.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import type { HistoryItem, HostCommand } from "../src/generated/protocol";
import { HistoryPicker, relativeTime } from "../src/history";
import {
  choiceAnswers,
  createdQuickPicks,
  inputAnswers,
  offeredChoices,
  resetWorkspace,
  shownInputBoxes,
} from "./vscodeStub";

const NOW = Date.parse("2025-06-15T12:00:00Z");

function session(overrides: Partial<HistoryItem> & Pick<HistoryItem, "id" | "title">): HistoryItem {
  return {
    agent: "Demo",
    lastActivity: null,
    turns: null,
    source: "tether",
    current: false,
    live: false,
    restores: 0,
    fromCheckpoint: false,
    ...overrides,
  };
}

function openPicker(items: HistoryItem[]) {
  const sent: HostCommand[] = [];
  const history = new HistoryPicker((command) => sent.push(command), () => NOW);
  history.show(items);
  const picker = createdQuickPicks.at(-1);
  assert.ok(picker, "a quick pick was created");
  return { history, picker, sent };
}

/** Lets the awaited input box or message answer, and what follows it run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

beforeEach(() => {
  resetWorkspace();
  offeredChoices.length = 0;
  choiceAnswers.length = 0;
});

test("ages read as a person says them", () => {
  const ago = (ms: number) => new Date(NOW - ms).toISOString();
  const minute = 60_000;
  const cases: Array<[string, string | undefined]> = [
    [ago(0), "just now"],
    [ago(59_000), "just now"],
    [new Date(NOW + 5 * minute).toISOString(), "just now"],
    [ago(minute), "1 min ago"],
    [ago(3 * minute + 30_000), "3 min ago"],
    [ago(59 * minute), "59 min ago"],
    [ago(60 * minute), "1 hour ago"],
    [ago(23 * 60 * minute), "23 hours ago"],
    [ago(24 * 60 * minute), "1 day ago"],
    [ago(30 * 24 * 60 * minute), "30 days ago"],
    ["2025-03-01T08:00:00Z", "2025-03-01"],
    ["2025-06-15T13:30:00+02:00", "30 min ago"],
    ["not a time", undefined],
  ];
  assert.deepEqual(
    cases.map(([timestamp]) => [timestamp, relativeTime(timestamp, NOW)]),
    cases,
  );
});

test("each session shows its title, agent, age and turns, and what is special about it", () => {
  const { picker } = openPicker([
    session({
      id: "a",
      title: "Fix the tests",
      agent: "Claude",
      lastActivity: "2025-06-15T11:57:00Z",
      turns: 4,
      current: true,
      live: true,
    }),
    session({
      id: "b",
      title: "Rename a module",
      lastActivity: "2025-06-14T09:00:00Z",
      turns: 1,
      restores: 2,
      fromCheckpoint: true,
    }),
    session({ id: "c", title: "", agent: "Codex", source: "agent" }),
  ]);
  assert.equal(picker.visible, true);
  assert.equal(picker.title, "Tether: History");
  assert.deepEqual(
    picker.items.map((item) => ({
      label: item.label,
      description: item.description,
      detail: item.detail,
      buttons: item.buttons?.map((button) => [button.tooltip, button.iconPath.id]),
    })),
    [
      {
        label: "Fix the tests",
        description: "Claude · 3 min ago · 4 turns",
        detail: "shown now · agent running",
        buttons: [
          ["Rename", "edit"],
          ["Export as Markdown", "markdown"],
          ["Export log (JSONL)", "json"],
          ["Delete", "trash"],
        ],
      },
      {
        label: "Rename a module",
        description: "Demo · 1 day ago · 1 turn",
        detail: "went on from a checkpoint of another session · code restored to a checkpoint 2 times",
        buttons: [
          ["Rename", "edit"],
          ["Export as Markdown", "markdown"],
          ["Export log (JSONL)", "json"],
          ["Delete", "trash"],
        ],
      },
      { label: "Untitled session", description: "Codex", detail: "from the agent's own list", buttons: [] },
    ],
  );
});

test("an empty history says so", () => {
  const { picker } = openPicker([]);
  assert.equal(picker.visible, true);
  assert.deepEqual(picker.items, []);
  assert.equal(picker.placeholder, "No sessions yet");
});

test("picking a session opens it and closes the picker", () => {
  const { picker, sent } = openPicker([session({ id: "a", title: "First" }), session({ id: "b", title: "Second" })]);
  picker.pick("Second");
  assert.deepEqual(sent, [{ type: "openSession", id: "b" }]);
  assert.equal(picker.visible, false);
  assert.equal(picker.disposed, true);
});

test("a new list refreshes the open picker and keeps the highlighted session; a closed one opens anew", () => {
  const { history, picker } = openPicker([session({ id: "a", title: "First" }), session({ id: "b", title: "Second" })]);
  picker.highlight("Second");
  history.show([session({ id: "b", title: "Second, renamed" }), session({ id: "c", title: "Third" })]);
  assert.equal(createdQuickPicks.length, 1, "the same picker");
  assert.deepEqual(picker.items.map((item) => item.label), ["Second, renamed", "Third"]);
  assert.deepEqual(picker.activeItems.map((item) => item.label), ["Second, renamed"]);

  picker.hide();
  history.show([session({ id: "c", title: "Third" })]);
  assert.equal(createdQuickPicks.length, 2, "a hidden picker is not brought back");
  assert.equal(createdQuickPicks[1]?.visible, true);
});

test("Rename asks for the title, prefilled, and renames only to a new, non-empty one", async () => {
  const { picker, sent } = openPicker([session({ id: "a", title: "Fix the tests" })]);
  inputAnswers.push("  Fix the flaky tests ");
  picker.pressButton("Fix the tests", "Rename");
  await settle();
  assert.equal(shownInputBoxes[0]?.value, "Fix the tests");
  assert.equal(shownInputBoxes[0]?.validateInput?.("   "), "A title cannot be empty.");
  assert.equal(shownInputBoxes[0]?.validateInput?.("x"), undefined);
  assert.deepEqual(sent, [{ type: "renameSession", id: "a", title: "Fix the flaky tests" }]);

  // Escape, then the title left as it was: nothing to rename.
  inputAnswers.push(undefined, "Fix the tests");
  picker.pressButton("Fix the tests", "Rename");
  picker.pressButton("Fix the tests", "Rename");
  await settle();
  assert.equal(sent.length, 1);
});

test("Delete asks in a modal first, and only its Delete button deletes", async () => {
  const { picker, sent } = openPicker([session({ id: "a", title: "Fix the tests" })]);
  choiceAnswers.push(undefined);
  picker.pressButton("Fix the tests", "Delete");
  await settle();
  assert.deepEqual(sent, []);
  assert.deepEqual(offeredChoices, [
    { text: "Delete session “Fix the tests”? Its transcript and logs are removed.", modal: true, items: ["Delete"] },
  ]);

  choiceAnswers.push("Delete");
  picker.pressButton("Fix the tests", "Delete");
  await settle();
  assert.deepEqual(sent, [{ type: "deleteSession", id: "a" }]);
});

test("the export buttons export that session, and the picker makes way for the save dialog", () => {
  const { history, picker, sent } = openPicker([session({ id: "a", title: "Fix the tests" })]);
  picker.pressButton("Fix the tests", "Export as Markdown");
  assert.equal(picker.visible, false);
  history.show([session({ id: "a", title: "Fix the tests" })]);
  createdQuickPicks.at(-1)?.pressButton("Fix the tests", "Export log (JSONL)");
  assert.deepEqual(sent, [
    { type: "exportSession", id: "a", format: "markdown" },
    { type: "exportSession", id: "a", format: "jsonl" },
  ]);
});

// The composer as a person types in it: it grows with the text, ↑ and ↓ walk the prompts already
// sent (the thread's), mentions show as chips that can be removed, Enter during a turn keeps the
// text and says why, and focusing the view puts the caret in it.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { Entry, MentionSuggestion } from "../src/protocol";
import { patch, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

const mainRs: MentionSuggestion = {
  label: "src/main.rs",
  detail: null,
  attachment: { type: "file", path: "/ws/src/main.rs" },
};

function prompt(text: string): Entry {
  return { type: "user", text, attachments: [] };
}

describe("composer", () => {
  let ui: Harness;
  const input = () => ui.query<HTMLTextAreaElement>("footer.composer textarea");
  const type = (text: string, caret = text.length) => {
    input().value = text;
    input().setSelectionRange(caret, caret);
    input().dispatchEvent(new ui.window.Event("input"));
  };
  const press = (key: string) => {
    const event = new ui.window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
    input().dispatchEvent(event);
    return event.defaultPrevented;
  };

  beforeEach(() => {
    ui = harness();
  });

  it("grows with its text up to a share of the view, then scrolls", () => {
    ui.frame(snapshot([]));
    // jsdom lays nothing out: the text's height is what the browser would measure.
    let measured = 40;
    Object.defineProperty(input(), "scrollHeight", { get: () => measured });
    type("one line");
    assert.equal(input().style.height, "42px");
    assert.equal(input().style.overflowY, "hidden");
    measured = 120;
    type("one line\ntwo\nthree\nfour\nfive");
    assert.equal(input().style.height, "122px");
    measured = 5000;
    type("a very long prompt");
    // jsdom's window is 768 px high: 40% of it.
    assert.equal(input().style.height, `${Math.round(ui.window.innerHeight * 0.4)}px`);
    assert.equal(input().style.overflowY, "auto");
  });

  it("walks the prompts already sent with ↑ and ↓, and gives back what was being written", () => {
    ui.frame(snapshot([prompt("first question"), prompt("second\nquestion")]));
    type("half a thought");
    assert.equal(press("ArrowUp"), true);
    assert.equal(input().value, "second\nquestion");
    // The caret is at the end, on the prompt's last line: ↑ moves within the text first.
    assert.equal(press("ArrowUp"), false, "a line above the caret: ↑ is the text area's");
    input().setSelectionRange(0, 0);
    assert.equal(press("ArrowUp"), true);
    assert.equal(input().value, "first question");
    assert.equal(press("ArrowUp"), false, "nothing older");
    assert.equal(press("ArrowDown"), true);
    assert.equal(input().value, "second\nquestion");
    input().setSelectionRange(input().value.length, input().value.length);
    assert.equal(press("ArrowDown"), true);
    assert.equal(input().value, "half a thought", "the text being written comes back");
    assert.deepEqual(ui.posted, []);
  });

  it("adds what it sends to the prompts ↑ walks", () => {
    ui.frame(snapshot([prompt("older")]));
    type("newest");
    press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "newest", attachments: [] }]);
    press("ArrowUp");
    assert.equal(input().value, "newest");
    // The host's echo of the prompt does not add it twice.
    ui.frame(patch([{ op: "push", index: 1, entry: prompt("newest") }]));
    press("ArrowUp");
    assert.equal(input().value, "older");
  });

  it("shows each mention as a chip, whose remove button takes it out of the text and the prompt", () => {
    ui.frame(snapshot([]));
    type("Look at @");
    ui.frame({ type: "mentions", query: "", items: [mainRs] });
    press("Enter");
    const chips = () => ui.queryAll(".composer-attachments .composer-mention");
    assert.deepEqual(chips().map((chip) => chip.textContent), ["src/main.rs"]);
    assert.equal(ui.query(".composer-attachments").hidden, false);
    const remove = chips()[0]!.querySelector<HTMLButtonElement>("button.composer-chip-remove")!;
    assert.equal(remove.getAttribute("aria-label"), "Remove @src/main.rs");
    remove.click();
    assert.equal(input().value, "Look at ");
    assert.deepEqual(chips(), []);
    assert.equal(ui.query(".composer-attachments").hidden, true);
    type("Look at it");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), { type: "prompt", text: "Look at it", attachments: [] });
  });

  it("drops a chip when its @label is deleted from the text", () => {
    ui.frame(snapshot([]));
    ui.frame({ type: "addMention", mention: mainRs });
    assert.equal(ui.queryAll(".composer-mention").length, 1);
    type("no mention any more");
    assert.equal(ui.queryAll(".composer-mention").length, 0);
  });

  it("keeps the text when Enter is pressed during a turn, says why, and forgets the note when it ends", () => {
    ui.frame(snapshot([], { turn: { type: "running" } }));
    type("and then this");
    press("Enter");
    assert.deepEqual(ui.posted, [], "nothing is sent while the agent works");
    assert.equal(input().value, "and then this");
    const note = ui.query(".composer-note");
    assert.equal(note.hidden, false);
    assert.match(note.textContent ?? "", /still working: your prompt is kept/);
    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]));
    assert.equal(note.hidden, true);
    press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "and then this", attachments: [] }]);
  });

  it("puts the caret in the composer when the view itself is focused, not when a control inside is", () => {
    ui.frame(snapshot([]));
    ui.window.document.body.focus();
    ui.window.dispatchEvent(new ui.window.FocusEvent("focus"));
    assert.equal(ui.window.document.activeElement, input());
    const history = ui.query<HTMLButtonElement>("button.session-history");
    history.focus();
    ui.window.dispatchEvent(new ui.window.FocusEvent("focus"));
    assert.equal(ui.window.document.activeElement, history);
  });

  it("names the agent the prompt goes to", () => {
    ui.frame(snapshot([]));
    assert.equal(input().placeholder, "Ask Demo…");
  });
});

// The virtualized thread: which entries are in the DOM as the person scrolls a long thread, what
// they read staying in place while heights are measured, a burst drawn in frame-sized slices,
// what they opened on an entry surviving its leaving the DOM, nothing left running when idle,
// and what spans the whole thread (find, the keys 1 to 9, links to change cards) reaching
// entries that are not drawn. jsdom lays nothing out: `layOutThread` gives every entry a height.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { Entry, ThreadPatch } from "../src/protocol";
import {
  agentMessage,
  commandToolCall,
  fileChange,
  patch,
  snapshot,
  terminalToolCall,
  terminalView,
  toolCall,
  userMessage,
} from "./fixtures";
import { type Harness, harness, layOutThread } from "./support";

function notice(index: number): Entry {
  return { type: "notice", level: "info", text: `Notice number ${index}`, detail: null };
}

/** A long thread: `count` notices, each saying its number. */
function notices(count: number, from = 0): Entry[] {
  return Array.from({ length: count }, (_, offset) => notice(from + offset));
}

/** Draws frames until the view asks for no more (at most `limit`); returns how many were drawn. */
function settle(ui: Harness, limit = 100): number {
  let frames = 1;
  while (ui.frame() && frames < limit) frames++;
  return frames;
}

const LIMIT = 200;

describe("a long thread", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("keeps only the entries near the view in the DOM, following the scroll position", () => {
    // Entries of several heights, none of them what the view guesses before measuring.
    const layout = layOutThread(ui.window, { viewport: 600, heightOf: (index) => 40 + (index % 5) * 30 });
    ui.frame(snapshot(notices(10_000)));
    settle(ui);
    assert.ok(layout.drawn().length < LIMIT, `${layout.drawn().length} entries drawn`);
    assert.ok(layout.inSight().includes(9_999), "a long thread opens at its end");
    assert.equal(layout.top(), layout.maxTop());

    layout.scrollTo(0);
    settle(ui);
    assert.equal(layout.inSight()[0], 0, "the top shows the first entries");
    assert.ok(layout.drawn().length < LIMIT);
    assert.ok(!layout.drawn().includes(9_999), "the end is no longer drawn");

    layout.scrollTo(layout.maxTop() / 2);
    settle(ui);
    const middle = layout.inSight();
    assert.ok(middle.length > 0 && middle[0]! > 3_000 && middle[0]! < 7_000, `in sight: ${middle.join(", ")}`);
    const drawn = layout.drawn();
    assert.deepEqual(drawn, Array.from({ length: drawn.length }, (_, offset) => drawn[0]! + offset), "in order, no gaps");
    assert.ok(drawn[0]! <= middle[0]! && drawn.at(-1)! >= middle.at(-1)!, "what is in sight is drawn");

    layout.scrollTo(layout.maxTop());
    settle(ui);
    assert.ok(layout.inSight().includes(9_999), "back at the end, the last entry");
    ui.frame(patch([{ op: "push", index: 10_000, entry: notice(10_000) }]));
    assert.ok(layout.inSight().includes(10_000), "and the end is followed again");
    assert.equal(layout.top(), layout.maxTop());
  });

  it("draws a short thread whole, but not thirty giant entries for it", () => {
    // Thirty ordinary entries are all drawn, whatever is in sight (a short thread, whole).
    const ordinary = layOutThread(ui.window, { viewport: 600, heightOf: () => 120 });
    ui.frame(snapshot(notices(30)));
    settle(ui);
    assert.equal(ordinary.drawn().length, 30, "a short thread is drawn whole");

    // Replies of one long line each, tens of thousands of pixels tall: only those near what is in
    // sight are drawn (every one drawn costs the browser its boxes on every frame).
    ui = harness();
    const giant = layOutThread(ui.window, { viewport: 600, heightOf: () => 50_000 });
    ui.frame(snapshot(notices(30)));
    settle(ui);
    assert.ok(giant.inSight().includes(29), "the end is in sight");
    assert.ok(giant.drawn().length <= 2, `${giant.drawn().join(", ")} drawn`);
  });

  it("opens a long thread at its end from a snapshot of its last entries, the rest arriving later", () => {
    const layout = layOutThread(ui.window, { viewport: 600, heightOf: (index) => 40 + (index % 5) * 30 });
    const all = notices(10_000);
    // As the host sends a long thread (host/chat_view.rs): its last 200 entries, then the earlier
    // ones a batch a frame, the most recent first.
    ui.frame(snapshot(all.slice(9_800), { earlier: 9_800 }));
    settle(ui);
    assert.ok(layout.inSight().includes(9_999), "the end is in sight before the rest arrives");
    assert.equal(layout.top(), layout.maxTop());
    const before = layout.inSight();
    for (let end = 9_800; end > 0; end -= 500) {
      const from = Math.max(0, end - 500);
      ui.frame({ type: "earlierEntries", from, entries: all.slice(from, end) });
    }
    settle(ui);
    assert.deepEqual(layout.inSight(), before, "what the person reads stays in place as the rest arrives");
    assert.ok(layout.drawn().length < LIMIT, `${layout.drawn().length} entries drawn`);

    layout.scrollTo(0);
    settle(ui);
    assert.equal(layout.inSight()[0], 0, "the top shows the first entry");
    const first = ui.window.document.querySelector('main.thread [data-index="0"]');
    assert.equal(first?.textContent?.trim(), "Notice number 0", "the first entry, not a place held for it");
    assert.equal(ui.window.document.querySelectorAll(".entry.not-loaded").length, 0);
  });

  it("keeps what the person reads in place while the entries above it are measured", () => {
    // The view learns its guesses at the end (short entries); the first half is much taller.
    const taller = new Set<number>();
    const layout = layOutThread(ui.window, {
      viewport: 500,
      heightOf: (index) => (taller.has(index) ? 400 : index < 1_000 ? 260 : 40),
    });
    ui.frame(snapshot(notices(2_000)));
    settle(ui);
    layout.scrollTo(layout.maxTop() / 3);
    settle(ui);
    // Step up through entries never measured: the content moves by exactly what was scrolled.
    for (let step = 0; step < 12; step++) {
      const reading = layout.inSight()[0]!;
      const before = entryTop(reading);
      layout.scrollTo(layout.top() - 250);
      settle(ui);
      assert.equal(entryTop(reading), before + 250, `step ${step}: entry ${reading} moved with the scroll alone`);
    }

    // Entries above the one read grow (replaced by the host): it stays where it is on screen.
    const reading = layout.inSight()[0]!;
    const before = entryTop(reading);
    for (const index of [reading - 3, reading - 2, reading - 1]) taller.add(index);
    ui.frame(patch([...taller].map((index): ThreadPatch => ({ op: "replace", index, entry: notice(index) }))));
    assert.equal(entryTop(reading), before, "the entry read did not move");
    assert.equal(layout.inSight()[0], reading);
  });

  it("draws a burst in frame-sized slices, what is in sight first", () => {
    // Laying an entry out takes 1 ms: a frame must stop building when its time is up.
    const layout = layOutThread(ui.window, {
      viewport: 600,
      heightOf: () => 50,
      onMeasure: () => {
        ui.time.now += 1;
      },
    });
    ui.frame(snapshot([userMessage("Go")], { turn: { type: "running" } }));
    const burst: ThreadPatch[] = notices(5_000, 1).map((entry, offset) => ({ op: "push", index: offset + 1, entry }));
    let more = ui.frame(patch(burst));
    assert.ok(more, "the window is not complete after one frame");
    const first = layout.drawn();
    assert.ok(first.length < 20, `a frame built ${first.length} entries`);
    assert.ok(layout.inSight().includes(5_000), "the last entry is drawn first");
    let frames = 1;
    let largest = first.length;
    while (more && frames < 200) {
      const before = layout.drawn().length;
      ui.time.now += 16;
      more = ui.frame();
      largest = Math.max(largest, layout.drawn().length - before);
      frames++;
    }
    assert.ok(!more, "the window gets complete");
    assert.ok(frames > 2, `${frames} frames`);
    assert.ok(largest < 20, `at most ${largest} entries built in a frame`);
    assert.ok(layout.drawn().length < LIMIT);
    assert.ok(layout.inSight().includes(5_000));
  });

  it("follows an end that outruns the window by drawing it anew every so often, not every frame", () => {
    const layout = layOutThread(ui.window, { viewport: 600, heightOf: () => 50 });
    ui.frame(snapshot([userMessage("Go")], { turn: { type: "running" } }));
    let redrawn = 0;
    let drawn = "";
    for (let frame = 0; frame < 30; frame++) {
      ui.time.now += 16;
      const from = 1 + frame * 500;
      ui.frame(patch(notices(500, from).map((entry, offset): ThreadPatch => ({ op: "push", index: from + offset, entry }))));
      if (layout.drawn().join() !== drawn) redrawn++;
      drawn = layout.drawn().join();
    }
    // 30 frames 16 ms apart, each leaving the whole window behind: a few redraws, not thirty.
    assert.ok(redrawn >= 3 && redrawn <= 6, `${redrawn} redraws`);
    ui.time.now += 200;
    settle(ui);
    assert.ok(layout.inSight().includes(15_000), "the end shows once the entries stop coming");
    assert.equal(layout.top(), layout.maxTop());
  });

  it("draws only what is in sight while a burst outruns the window, and the margin once it stops", () => {
    const layout = layOutThread(ui.window, { viewport: 600, heightOf: () => 50 });
    ui.frame(snapshot([userMessage("Go")], { turn: { type: "running" } }));
    let most = 0;
    for (let frame = 0; frame < 30; frame++) {
      ui.time.now += 16;
      const from = 1 + frame * 500;
      ui.frame(patch(notices(500, from).map((entry, offset): ThreadPatch => ({ op: "push", index: from + offset, entry }))));
      most = Math.max(most, layout.drawn().length);
    }
    // Twelve entries of 50 px fill the 600 px in sight; a few more by the estimated heights of
    // entries not measured yet. With the margin it is thirty.
    assert.ok(most < 20, `${most} entries drawn while the burst came`);
    // The entries stop: the margin above what is in sight follows, without another patch.
    let frames = 0;
    for (let more = true; more && frames < 100; frames++) {
      ui.time.now += 16;
      more = ui.frame();
    }
    assert.ok(frames > 10, `settled after ${frames} frames, before the burst could be over`);
    assert.ok(layout.drawn().length >= 28, `${layout.drawn().length} entries drawn once it stopped`);
    assert.ok(layout.inSight().includes(15_000), "the end is in sight");
    assert.equal(layout.top(), layout.maxTop());
  });

  it("gives an entry back as the person left it after it scrolled out of the DOM and back", () => {
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: () => 80 });
    const output = Array.from({ length: 30 }, (_, line) => `line ${line + 1}`).join("\n");
    ui.frame(
      snapshot([
        userMessage("Edit me"),
        { type: "agent", chunks: [{ kind: "thought", text: "Thinking hard." }, { kind: "text", text: "Done." }] },
        toolCall({ content: [{ type: "text", text: output }], rawInput: { path: "README.md" } }),
        { type: "notice", level: "warning", text: "Odd line", detail: "{\"oops\": 1}" },
        ...notices(400, 4),
      ]),
    );
    settle(ui);
    layout.scrollTo(0);
    settle(ui);
    // The person opens, expands and edits what the model does not hold.
    ui.query<HTMLDetailsElement>(".entry.agent details.thought").open = true;
    ui.query(".entry.agent details.thought").dispatchEvent(new ui.window.Event("toggle"));
    ui.query<HTMLButtonElement>(".tool-output-toggle").click();
    const raw = ui.query<HTMLDetailsElement>(".entry.tool-call details.raw");
    raw.open = true;
    raw.dispatchEvent(new ui.window.Event("toggle"));
    const detail = ui.query<HTMLDetailsElement>(".entry.notice details.raw");
    detail.open = true;
    detail.dispatchEvent(new ui.window.Event("toggle"));
    ui.query<HTMLButtonElement>('.entry.user button[data-action="edit"]').click();
    const editor = ui.query<HTMLTextAreaElement>(".user-edit-input");
    editor.value = "Edit me, but better";
    editor.dispatchEvent(new ui.window.Event("input"));

    layout.scrollTo(layout.maxTop());
    settle(ui);
    assert.ok(!layout.drawn().includes(0) && !layout.drawn().includes(3), "the first entries left the DOM");
    assert.equal(ui.queryAll(".user-edit-input").length, 0);

    layout.scrollTo(0);
    settle(ui);
    assert.equal(ui.query<HTMLDetailsElement>(".entry.agent details.thought").open, true, "the thought is open");
    assert.match(ui.query(".tool-output-toggle").textContent ?? "", /Show less/, "the output is shown whole");
    assert.match(ui.query(".entry.tool-call .tool-output").textContent ?? "", /line 30/);
    assert.equal(ui.query<HTMLDetailsElement>(".entry.tool-call details.raw").open, true, "Raw is open");
    assert.equal(ui.query<HTMLDetailsElement>(".entry.notice details.raw").open, true, "the detail is open");
    assert.equal(ui.query<HTMLTextAreaElement>(".user-edit-input").value, "Edit me, but better", "the edit goes on");
  });

  it("runs no timer for a running command out of the DOM, and none once idle", () => {
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: () => 80 });
    ui.frame(
      snapshot([terminalToolCall(0, "term-1"), ...notices(300, 1)], {
        terminals: [terminalView()],
        turn: { type: "running" },
      }),
    );
    settle(ui);
    assert.ok(!layout.drawn().includes(0));
    assert.equal(ui.timers(), 0, "the running command's card is not drawn: no clock ticks for it");

    layout.scrollTo(0);
    settle(ui);
    assert.equal(ui.timers(), 1, "drawn, its elapsed time counts on");
    ui.advance(3_000);
    assert.equal(ui.query(".terminal-elapsed").textContent, "4.2 s");
    layout.scrollTo(layout.maxTop());
    settle(ui);
    assert.equal(ui.timers(), 0);
    ui.advance(2_000);
    layout.scrollTo(0);
    settle(ui);
    assert.equal(ui.query(".terminal-elapsed").textContent, "6.2 s", "counted from when its view arrived");

    ui.frame(
      patch([
        { op: "terminal", view: terminalView({ state: { type: "exited", exitCode: 0, signal: null, killed: false } }) },
        { op: "turn", state: { type: "ended", stopReason: "end_turn" } },
      ]),
    );
    settle(ui);
    assert.equal(ui.timers(), 0, "idle: no timer");
    const asked = ui.framesAsked();
    ui.advance(10_000);
    assert.equal(ui.frame(), false, "idle: a frame asks for no other");
    assert.equal(ui.framesAsked(), asked, "idle: no frame asked for");
  });

  it("follows a streaming reply at the end, and leaves the place alone once the person scrolls up", () => {
    let lines = 1;
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: (index) => (index === 500 ? 20 * lines : 60) });
    ui.frame(snapshot([...notices(500), agentMessage("line 1\n")], { turn: { type: "running" } }));
    settle(ui);
    for (let line = 2; line <= 40; line++) {
      lines = line;
      ui.frame(patch([{ op: "appendChunk", index: 500, kind: "text", text: `line ${line}\n` }]));
      assert.equal(layout.top(), layout.maxTop(), `line ${line}: at the end`);
    }
    layout.scrollTo(layout.top() - 300);
    ui.frame();
    const reading = layout.inSight()[0]!;
    const before = entryTop(reading);
    for (let line = 41; line <= 60; line++) {
      lines = line;
      ui.frame(patch([{ op: "appendChunk", index: 500, kind: "text", text: `line ${line}\n` }]));
    }
    assert.equal(entryTop(reading), before, "the reply grows below what the person reads");
  });

  it("shows the end again when the person sends a prompt from further up", () => {
    // Scrolled up to read, the person types and sends: their message and the answer are below,
    // out of sight, unless the view goes back to the end (before, it stayed where it was).
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: () => 60 });
    ui.frame(snapshot(notices(500)));
    settle(ui);
    layout.scrollTo(layout.top() - 3_000);
    ui.frame();
    assert.notEqual(layout.top(), layout.maxTop(), "scrolled up");
    const input = ui.query<HTMLTextAreaElement>("textarea.composer-input");
    input.value = "And now?";
    input.dispatchEvent(new ui.window.Event("input"));
    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    assert.deepEqual(ui.posted.at(-1), { type: "prompt", text: "And now?", attachments: [] });
    ui.frame(patch([{ op: "push", index: 500, entry: userMessage("And now?") }, { op: "turn", state: { type: "running" } }]));
    settle(ui);
    assert.equal(layout.top(), layout.maxTop(), "at the end, the message sent in sight");
    assert.ok(layout.inSight().includes(500));
  });

  it("keeps following the end when the reply grows between its own scroll and the browser's report of it", () => {
    // A long line's pieces out of sight are not laid out and hold a guessed place; the ones the
    // view scrolls to are laid out in the next frame, taller than guessed. The browser's scroll
    // event for the view's own scroll then finds the end lower down: that is not the person
    // scrolling up, and the view must go on following (before, it stopped, and the end of the
    // reply stayed out of sight).
    let grown = 0;
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: (index) => (index === 500 ? 2_000 + grown : 60) });
    ui.frame(snapshot([...notices(500), agentMessage("word after word ")], { turn: { type: "running" } }));
    settle(ui);
    assert.equal(layout.top(), layout.maxTop(), "at the end");
    grown = 325;
    layout.thread.dispatchEvent(new ui.window.Event("scroll"));
    ui.frame(patch([{ op: "appendChunk", index: 500, kind: "text", text: "and the last words." }]));
    settle(ui);
    assert.equal(layout.top(), layout.maxTop(), "still at the end");
  });

  it("finds words in entries that are not in the DOM, brings them in and marks them", () => {
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: () => 80 });
    const entries = notices(1_000);
    entries[3] = agentMessage("Here is the **needle** in the haystack.");
    entries[600] = agentMessage("Another needle, and a second needle.");
    ui.frame(snapshot(entries));
    settle(ui);
    assert.ok(!layout.drawn().includes(3));
    ui.query<HTMLTextAreaElement>("textarea.composer-input").focus();

    ui.press("f", { ctrlKey: true });
    const input = ui.query<HTMLInputElement>(".find-bar .find-input");
    assert.equal(ui.query(".find-bar").hidden, false);
    assert.equal(ui.window.document.activeElement, input, "the bar takes the focus");
    input.value = "Needle";
    input.dispatchEvent(new ui.window.Event("input"));
    settle(ui);
    const count = () => ui.query(".find-count").textContent;
    // Searched from the end, where the view is: the first match after it is the first of all.
    assert.equal(count(), "1 of 3");
    assert.ok(layout.inSight().includes(3), "the first match's entry is brought into sight");
    assert.equal(ui.query(".entry[data-index='3'] mark.find-current-match").textContent, "needle");

    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    settle(ui);
    assert.equal(count(), "2 of 3");
    assert.ok(layout.inSight().includes(600));
    const marked = ui.query(".entry[data-index='600'] mark.find-current-match");
    assert.equal(marked.textContent, "needle");
    assert.match(marked.parentElement?.textContent ?? "", /^Another needle,/, "the entry's first needle");
    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    assert.equal(count(), "3 of 3");
    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    assert.equal(count(), "1 of 3", "after the last, the first");
    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true }));
    assert.equal(count(), "3 of 3", "Shift+Enter: before the first, the last");

    // The thread grows while the bar is open: the count follows.
    ui.frame(patch([{ op: "push", index: 1_000, entry: agentMessage("A last needle.") }]));
    assert.equal(count(), "3 of 4");

    input.value = "no such words";
    input.dispatchEvent(new ui.window.Event("input"));
    assert.equal(count(), "No results");
    assert.equal(ui.queryAll("mark.find-current-match").length, 0);

    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    assert.equal(ui.query(".find-bar").hidden, true);
    assert.equal(ui.window.document.activeElement, ui.query("textarea.composer-input"), "the focus goes back");
  });

  it("shows a folded prompt whole when the match is past its first lines", () => {
    layOutThread(ui.window, { viewport: 400, heightOf: () => 80 });
    const pasted = Array.from({ length: 400 }, (_, index) => `line ${index + 1} of the log`).join("\n");
    ui.frame(snapshot([{ type: "user", text: pasted, attachments: [] }, agentMessage("Seen.")]));
    settle(ui);
    ui.query<HTMLTextAreaElement>("textarea.composer-input").focus();
    ui.press("f", { ctrlKey: true });
    const input = ui.query<HTMLInputElement>(".find-bar .find-input");
    input.value = "line 300 of";
    input.dispatchEvent(new ui.window.Event("input"));
    settle(ui);
    // Before, "1 of 1" with nothing marked: the match was in the lines the fold left out.
    assert.equal(ui.query(".find-count").textContent, "1 of 1");
    assert.equal(ui.query(".entry[data-index='0'] mark.find-current-match").textContent, "line 300 of");
    assert.equal(ui.query("button.user-message-toggle").textContent, "Show less");
    assert.equal(ui.window.document.activeElement, input, "the bar keeps the focus");
  });

  it("answers the oldest waiting request with 1 to 9 when its card is out of the DOM", () => {
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: () => 80 });
    ui.frame(snapshot([commandToolCall(5, "npm test"), ...notices(300, 1)], { turn: { type: "running" } }));
    settle(ui);
    assert.ok(!layout.drawn().includes(0));
    ui.press("3");
    assert.deepEqual(ui.posted.at(-1), { type: "answerPermission", key: 5, optionId: "reject-once" });
    layout.scrollTo(0);
    settle(ui);
    const buttons = ui.queryAll<HTMLButtonElement>(".permission-card button.permission-option");
    assert.ok(buttons.length > 0 && buttons.every((button) => button.disabled), "drawn as answered");
    const posted = ui.posted.length;
    ui.press("1");
    assert.equal(ui.posted.length, posted, "answered once");
  });

  it("brings a change card out of the DOM in when a tool call's link asks for it", () => {
    const layout = layOutThread(ui.window, { viewport: 400, heightOf: () => 80 });
    const edit = toolCall({
      id: "edit-1",
      title: "Edit src/app.ts",
      kind: "edit",
      content: [
        { type: "diff", path: "/workspace/src/app.ts", label: "src/app.ts", change: 7, added: 2, removed: 2, lines: [], hiddenLines: 0 },
      ],
    });
    ui.frame(snapshot([edit, ...notices(300, 1), fileChange()]));
    settle(ui);
    layout.scrollTo(0);
    settle(ui);
    assert.ok(!layout.drawn().includes(301));
    ui.query<HTMLButtonElement>(".tool-diff-change").click();
    assert.ok(layout.inSight().includes(301), "the change card is in sight");
    const focused = ui.window.document.activeElement;
    assert.ok(focused !== null && ui.query(".entry.file-change").contains(focused), "and has the focus");
  });
});

/** Where entry `index`'s box starts on screen (the layout stub's). */
function entryTop(index: number): number {
  const entry = document.querySelector<HTMLElement>(`main.thread > .entry[data-index="${index}"]`);
  assert.ok(entry !== null, `entry ${index} is not drawn`);
  return entry.getBoundingClientRect().top;
}

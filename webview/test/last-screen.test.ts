// The thread's last screen, saved in the webview's state and drawn first after a reload: what is
// kept of a long thread, that the picture takes no answer, prompt or click, and that the host's
// snapshot replaces it.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FORMAT, MAX_CHARS, MAX_ENTRIES, lastScreenOf, restoredScreen } from "../src/last-screen";
import { ChangeSet, applyHostMessage, emptyModel } from "../src/model";
import type { Entry } from "../src/protocol";
import { commandToolCall, patch, session, snapshot, terminalToolCall, terminalView, userMessage } from "./fixtures";
import { harness } from "./support";

/** `count` short agent messages, "Reply 0" to "Reply <count - 1>". */
function replies(count: number): Entry[] {
  return Array.from({ length: count }, (_, index) => ({ type: "agent", chunks: [{ kind: "text", text: `Reply ${index}` }] }));
}

/** The texts of the entries drawn, in order. */
function drawnTexts(ui: ReturnType<typeof harness>): string[] {
  return ui.queryAll<HTMLElement>(".thread [data-index]").map((entry) => entry.textContent?.trim() ?? "");
}

describe("last screen", () => {
  it("is saved as the thread changes, and a reloaded webview draws it before the host answers", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout"] });
    const ui = harness();
    ui.frame(snapshot([userMessage("Summarize the repo"), ...replies(3)]));
    ui.frame(patch([{ op: "appendChunk", index: 3, kind: "text", text: ", and more" }]));
    context.mock.timers.tick(1_000);

    const reloaded = harness(ui.saved());
    assert.equal(reloaded.restore(), true, "there is a saved screen to draw");
    assert.deepEqual(drawnTexts(reloaded), ["Summarize the repo", "Reply 0", "Reply 1", "Reply 2, and more"]);
    assert.equal(reloaded.query(".session-status-text").textContent, "Connecting…", "the session is not live yet");
    assert.equal(reloaded.query<HTMLButtonElement>("button.composer-send").disabled, true, "no prompt until it is");
    assert.deepEqual(reloaded.posted, []);

    // The host's own snapshot replaces the picture, whatever it holds.
    reloaded.frame(snapshot([userMessage("Summarize the repo"), ...replies(3), userMessage("Go on")]));
    assert.equal(reloaded.model.restored, false);
    assert.equal(drawnTexts(reloaded).at(-1), "Go on");
    assert.equal(reloaded.query(".session-status-text").textContent, "Ready");
    assert.equal(reloaded.query(".thread-area").hasAttribute("inert"), false, "the thread takes clicks again");
  });

  it("takes no answer, click or patch until the host's snapshot comes", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout"] });
    const ui = harness();
    ui.frame(snapshot([commandToolCall(3, "npm test")], { turn: { type: "running" } }));
    context.mock.timers.tick(1_000);

    const reloaded = harness(ui.saved());
    reloaded.restore();
    assert.equal(reloaded.queryAll(".permission-card").length, 1, "the request is in the picture");
    for (const part of [".thread-area", "header.session"]) {
      assert.equal(reloaded.query(part).hasAttribute("inert"), true, `${part} is inert`);
    }
    reloaded.press("1");
    assert.deepEqual(reloaded.posted, [], "a digit answers no request on a restored screen");
    assert.equal(reloaded.query<HTMLButtonElement>("button.composer-cancel").hidden, true, "its turn is not this window's to stop");
    // The host's patches describe its state, which this picture is not: they wait for its snapshot.
    reloaded.frame(patch([{ op: "push", index: 1, entry: userMessage("Lost?") }]));
    assert.equal(reloaded.model.entries.length, 1);
    assert.equal(reloaded.model.loaded, false);
  });

  it("stays while the host reads the session again, under the host's header", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout"] });
    const ui = harness();
    ui.frame(snapshot(replies(3)));
    context.mock.timers.tick(1_000);

    const reloaded = harness(ui.saved());
    reloaded.restore();
    const reading = session({ status: { type: "starting", step: "Reading the session", elapsedMs: 0 } });
    reloaded.frame(snapshot([], { session: reading }));
    assert.deepEqual(drawnTexts(reloaded), ["Reply 0", "Reply 1", "Reply 2"], "an empty thread does not replace it");
    assert.equal(reloaded.query(".session-status-text").textContent, "Reading the session…");
    assert.equal(reloaded.model.restored, true);

    // A change to the host's thread before its next snapshot: the webview asks for one.
    const changes = new ChangeSet();
    applyHostMessage(reloaded.model, patch([{ op: "turn", state: { type: "running" } }]), changes);
    assert.ok(changes.outOfSync !== null);

    // The session read: its thread replaces the picture.
    reloaded.frame(snapshot(replies(4)));
    assert.deepEqual(drawnTexts(reloaded), ["Reply 0", "Reply 1", "Reply 2", "Reply 3"]);
    assert.equal(reloaded.model.restored, false);
  });

  it("counts a running command's time on from when it was saved, across the reload", (context) => {
    // Date is the wall clock the saved time is read against; the frame clock is the harness's.
    context.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_700_000_000_000 });
    const ui = harness();
    const running = (elapsedMs: number) => terminalView({ id: "term-1", elapsedMs });
    ui.frame(snapshot([terminalToolCall(1, "term-1"), ...replies(1)], { terminals: [running(5_000)] }));
    context.mock.timers.tick(2_000);
    // The command prints at 7 s, then nothing for 20 s; the window reloads then.
    ui.frame(patch([{ op: "terminal", view: running(7_000) }]));
    context.mock.timers.tick(1_000);
    context.mock.timers.tick(20_000);

    const reloaded = harness(ui.saved());
    reloaded.restore();
    // Before, the picture said 7.0 s, the time at the last save, until the host's snapshot.
    assert.equal(reloaded.query(".terminal-elapsed").textContent, "28 s");
    const finished = terminalView({ id: "term-1", elapsedMs: 9_000, state: { type: "exited", exitCode: 0, signal: null, killed: false } });
    ui.frame(patch([{ op: "terminal", view: finished }]));
    context.mock.timers.tick(1_000);
    context.mock.timers.tick(30_000);
    const afterEnd = harness(ui.saved());
    afterEnd.restore();
    assert.equal(afterEnd.query(".terminal-elapsed").textContent, "9.0 s", "a finished command's time stays");
  });

  it("keeps the end of a long thread, with the places of the entries before it", () => {
    const model = emptyModel();
    applyHostMessage(model, snapshot(replies(1_000)), new ChangeSet());
    const saved = lastScreenOf(model);
    assert.ok(saved !== null);
    assert.equal(saved.snapshot.entries.length, MAX_ENTRIES);
    assert.equal(saved.snapshot.earlier, 1_000 - MAX_ENTRIES);
    assert.deepEqual(saved.snapshot.entries.at(-1), replies(1_000).at(-1));

    const restored = emptyModel();
    applyHostMessage(restored, { type: "snapshot", snapshot: restoredScreen(saved) }, new ChangeSet());
    assert.equal(restored.entries.length, 1_000, "the thread is as long as it was");
  });

  it("keeps no more than its budget, and nothing when the last entry alone is over it", () => {
    const big = (index: number): Entry => ({ type: "agent", chunks: [{ kind: "text", text: `${index} ${"x".repeat(MAX_CHARS / 4)}` }] });
    const model = emptyModel();
    applyHostMessage(model, snapshot([big(0), big(1), big(2), big(3), big(4)]), new ChangeSet());
    const saved = lastScreenOf(model);
    assert.ok(saved !== null);
    assert.equal(saved.snapshot.entries.length, 3, "three quarters of the budget fit, four do not");
    assert.ok(JSON.stringify(saved).length <= MAX_CHARS + 1_000);

    applyHostMessage(model, snapshot([big(0), { type: "agent", chunks: [{ kind: "text", text: "y".repeat(MAX_CHARS) }] }]), new ChangeSet());
    assert.equal(lastScreenOf(model), null, "a screen without its last entry would not be the last screen");
  });

  it("keeps the terminals its tool calls show, and only those", () => {
    const model = emptyModel();
    const terminals = [terminalView({ id: "old" }), terminalView({ id: "term-1" })];
    applyHostMessage(model, snapshot([terminalToolCall(1, "old"), ...replies(MAX_ENTRIES), terminalToolCall(2, "term-1")], { terminals }), new ChangeSet());
    const saved = lastScreenOf(model);
    assert.deepEqual(saved?.snapshot.terminals.map((view) => view.id), ["term-1"]);
  });

  it("is not drawn when saved in another shape", () => {
    const model = emptyModel();
    applyHostMessage(model, snapshot(replies(2)), new ChangeSet());
    const saved = lastScreenOf(model);
    assert.ok(saved !== null);
    assert.ok(restoredScreen(saved) !== null);
    assert.equal(restoredScreen({ ...saved, format: FORMAT + 1 }), null);
    assert.equal(restoredScreen({ format: FORMAT, snapshot: { ...saved.snapshot, entries: "two" } }), null);
    assert.equal(restoredScreen({ format: FORMAT, snapshot: { ...saved.snapshot, earlier: -1 } }), null);
    assert.equal(restoredScreen("a draft from an older version"), null);
    assert.equal(harness({ composer: "Draft" }).restore(), false, "a state without a screen draws nothing");
  });

  it("is not saved before the host's state is drawn", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout"] });
    const ui = harness();
    ui.frame(snapshot(replies(2), { session: session({ shown: 1 }) }));
    context.mock.timers.tick(1_000);
    const reloaded = harness(ui.saved());
    reloaded.restore();
    // A reload while the picture is shown keeps the picture saved, not an empty thread.
    reloaded.query<HTMLTextAreaElement>("textarea.composer-input").value = "typed";
    reloaded.query<HTMLTextAreaElement>("textarea.composer-input").dispatchEvent(new reloaded.window.Event("input"));
    context.mock.timers.tick(1_000);
    const again = harness(reloaded.saved());
    assert.equal(again.restore(), true);
    assert.deepEqual(drawnTexts(again), ["Reply 0", "Reply 1"]);
  });
});

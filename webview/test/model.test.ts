// The patch reducer: a snapshot then patches yields the entries the host has, and the change
// set tells the view exactly what to redraw.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readHostMessage } from "../src/host-message";
import { ChangeSet, applyHostMessage, emptyModel } from "../src/model";
import { editToolCall, patch, session, snapshot } from "./fixtures";

describe("patch reducer", () => {
  it("applies a snapshot then patches into the host's entries", () => {
    const model = emptyModel();
    const changes = new ChangeSet();
    applyHostMessage(model, snapshot([{ type: "user", text: "Hi", attachments: [] }]), changes);
    applyHostMessage(
      model,
      patch([
        { op: "turn", state: { type: "running" } },
        { op: "push", index: 1, entry: { type: "agent", chunks: [] } },
        { op: "appendChunk", index: 1, kind: "thought", text: "Let me " },
        { op: "appendChunk", index: 1, kind: "thought", text: "think." },
        { op: "appendChunk", index: 1, kind: "text", text: "Hello" },
        { op: "appendChunk", index: 1, kind: "text", text: ", world" },
        { op: "appendChunk", index: 1, kind: "thought", text: "Again." },
        { op: "push", index: 2, entry: editToolCall(null) },
        { op: "replace", index: 2, entry: editToolCall({ type: "selected", optionId: "allow-once" }) },
        { op: "plan", entries: [{ content: "Edit notes", priority: "high", status: "in_progress" }] },
        { op: "turn", state: { type: "ended", stopReason: "end_turn" } },
      ]),
      changes,
    );
    assert.deepEqual(model.entries, [
      { type: "user", text: "Hi", attachments: [] },
      {
        type: "agent",
        chunks: [
          { kind: "thought", text: "Let me think." },
          { kind: "text", text: "Hello, world" },
          { kind: "thought", text: "Again." },
        ],
      },
      editToolCall({ type: "selected", optionId: "allow-once" }),
    ]);
    assert.deepEqual(model.plan, [{ content: "Edit notes", priority: "high", status: "in_progress" }]);
    assert.deepEqual(model.turn, { type: "ended", stopReason: "end_turn" });
  });

  it("reports new entries as rebuilt and streamed ones as grown", () => {
    const model = emptyModel();
    applyHostMessage(model, snapshot([{ type: "agent", chunks: [{ kind: "text", text: "a" }] }]), new ChangeSet());
    const changes = new ChangeSet();
    applyHostMessage(
      model,
      patch([
        { op: "appendChunk", index: 0, kind: "text", text: "b" },
        { op: "push", index: 1, entry: { type: "agent", chunks: [] } },
        { op: "appendChunk", index: 1, kind: "text", text: "c" },
      ]),
      changes,
    );
    assert.deepEqual([...changes.grown], [0]);
    assert.deepEqual([...changes.rebuilt], [1], "an entry pushed this frame is built, not extended");
    assert.equal(changes.reset, false);
    assert.equal(changes.turn, false);
  });

  it("takes a new session header from a patch", () => {
    const model = emptyModel();
    applyHostMessage(model, snapshot([]), new ChangeSet());
    const changes = new ChangeSet();
    const failed = session({ status: { type: "failed", message: "agent not found" } });
    applyHostMessage(model, patch([], failed), changes);
    assert.deepEqual(model.session, failed);
    assert.equal(changes.session, true);
  });

  it("holds the places of the entries a snapshot left out until they arrive, keeping newer ones", () => {
    const model = emptyModel();
    const changes = new ChangeSet();
    const user = (text: string) => ({ type: "user" as const, text, attachments: [] });
    applyHostMessage(model, snapshot([user("three"), user("four")], { earlier: 3 }), changes);
    assert.deepEqual(
      model.entries.map((entry) => (entry.type === "user" ? entry.text : entry.type)),
      ["notLoaded", "notLoaded", "notLoaded", "three", "four"],
    );
    // A patch may replace an entry still on its way; the copy that arrives later is older.
    applyHostMessage(model, patch([{ op: "replace", index: 2, entry: user("two, edited") }]), changes);
    const later = new ChangeSet();
    applyHostMessage(model, { type: "earlierEntries", from: 0, entries: [user("zero"), user("one"), user("two")] }, later);
    assert.deepEqual(
      model.entries.map((entry) => (entry.type === "user" ? entry.text : entry.type)),
      ["zero", "one", "two, edited", "three", "four"],
    );
    assert.deepEqual([...later.rebuilt], [0, 1], "only the places filled are redrawn");

    // Entries past the thread's end do not fit: the webview asks for a snapshot.
    const wrong = new ChangeSet();
    applyHostMessage(model, { type: "earlierEntries", from: 4, entries: [user("x"), user("y")] }, wrong);
    assert.notEqual(wrong.outOfSync, null);
    assert.equal(model.loaded, false);
  });

  it("ignores patches that arrive before the first snapshot", () => {
    const model = emptyModel();
    const changes = new ChangeSet();
    applyHostMessage(model, patch([{ op: "push", index: 0, entry: { type: "user", text: "early", attachments: [] } }]), changes);
    assert.deepEqual(model.entries, []);
    assert.equal(changes.isEmpty, true);
  });

  it("stops and asks for a snapshot when a patch does not fit, instead of guessing", () => {
    const model = emptyModel();
    applyHostMessage(model, snapshot([{ type: "user", text: "Hi", attachments: [] }]), new ChangeSet());
    const changes = new ChangeSet();
    applyHostMessage(
      model,
      patch([
        { op: "push", index: 3, entry: { type: "user", text: "skips ahead", attachments: [] } },
        { op: "turn", state: { type: "running" } },
      ]),
      changes,
    );
    assert.match(changes.outOfSync ?? "", /entry 3 pushed after 1 entries/);
    assert.equal(model.entries.length, 1);
    assert.deepEqual(model.turn, { type: "idle" }, "nothing after the bad patch is applied");

    applyHostMessage(model, patch([{ op: "appendChunk", index: 0, kind: "text", text: "x" }]), new ChangeSet());
    assert.deepEqual(model.entries, [{ type: "user", text: "Hi", attachments: [] }], "later patches wait for the snapshot");

    const resync = new ChangeSet();
    applyHostMessage(model, snapshot([{ type: "user", text: "fresh", attachments: [] }]), resync);
    assert.equal(resync.reset, true);
    assert.equal(resync.outOfSync, null);
    assert.deepEqual(model.entries, [{ type: "user", text: "fresh", attachments: [] }]);
  });

  it("rejects a chunk for an entry that is not an agent message", () => {
    const model = emptyModel();
    applyHostMessage(model, snapshot([{ type: "user", text: "Hi", attachments: [] }]), new ChangeSet());
    const changes = new ChangeSet();
    applyHostMessage(model, patch([{ op: "appendChunk", index: 0, kind: "text", text: "x" }]), changes);
    assert.match(changes.outOfSync ?? "", /not an agent message/);
    assert.deepEqual(model.entries, [{ type: "user", text: "Hi", attachments: [] }]);
  });

  it("ignores messages of unknown shape", () => {
    const model = emptyModel();
    const changes = new ChangeSet();
    for (const message of [null, 42, "snapshot", { type: "mystery" }, { type: "patch" }, { type: "snapshot" }]) {
      assert.equal(applyHostMessage(model, message, changes), false, JSON.stringify(message));
    }
    assert.equal(model.loaded, false);
    assert.equal(changes.isEmpty, true);
  });

  it("reads the host's message from the JSON bytes it posts, and nothing else", () => {
    const sent = snapshot([{ type: "user", text: "Grüße 👋", attachments: [] }]);
    const read = readHostMessage(new TextEncoder().encode(JSON.stringify(sent)));
    assert.deepEqual(read, { message: sent });
    // An object is what VS Code would have to encode and clone on the way; the host never
    // posts one, so one that arrives is not the host's.
    assert.deepEqual(readHostMessage(sent), { error: "not the JSON bytes the host posts" });
    const cut = readHostMessage(new TextEncoder().encode(JSON.stringify(sent).slice(0, 20)));
    assert.match("error" in cut ? cut.error : "", /^not JSON: SyntaxError/);
  });
});

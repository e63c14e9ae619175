// The thread and the keyboard: the thread is one tab stop however many entries it draws, the
// arrow keys, Home, End and the page keys move between its entries (drawing the ones out of the
// window), Tab from an entry reaches that entry's own controls and no other's, the buttons of
// questions waiting for the person stay reachable with Tab from anywhere, and a message focused
// is named by its first words. jsdom moves no focus on Tab and lays nothing out, so the tab
// order is read as a browser decides it (`tabStops`) and the long thread gets a layout from
// `layOutThread`.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { Entry } from "../src/protocol";
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

/** A reply with a link and a code block: a Copy, a link and a code toolbar's three buttons. */
const REPLY = "Here is the fix, as [the docs](https://example.com/docs) say:\n\n```ts\nconst answer = 42;\n```\n";

/** `turns` turns of a conversation: a prompt, a reply with code, a read with a path and Raw data. */
function conversation(turns: number): Entry[] {
  return Array.from({ length: turns }, (_, turn): Entry[] => [
    userMessage(`Prompt number ${turn}: make the tests pass`),
    agentMessage(REPLY),
    toolCall({
      id: `read-${turn}`,
      title: `Read file ${turn}`,
      locations: [{ path: "/workspace/README.md", line: 1, label: "README.md" }],
      rawInput: { path: "README.md" },
    }),
  ]).flat();
}

/**
 * What Tab stops at inside `root`, in document order, as a browser decides it: a control, or an
 * element with a tabindex of 0 or more, that is neither disabled nor hidden. A `<summary>` is a
 * control in a browser, though jsdom gives it tabIndex -1.
 */
function tabStops(root: Element): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>("a[href], button, input, select, textarea, summary, [tabindex]")].filter(
    (node) => {
      const index = node.localName === "summary" && !node.hasAttribute("tabindex") ? 0 : node.tabIndex;
      const disabled = "disabled" in node && node.disabled === true;
      return index >= 0 && !disabled && node.closest("[hidden]") === null;
    },
  );
}

/** A stop in words: an entry by its index, a control by its name. */
function describeStop(node: HTMLElement): string {
  if (node.classList.contains("entry")) return `entry ${node.dataset["index"]}`;
  return node.getAttribute("aria-label") ?? node.textContent?.trim() ?? node.localName;
}

describe("the thread and the keyboard", () => {
  let ui: Harness;
  const thread = () => ui.query("main.thread");
  const entry = (index: number) => ui.query(`main.thread > .entry[data-index="${index}"]`);
  const focused = () => ui.window.document.activeElement as HTMLElement | null;
  const composer = () => ui.query<HTMLTextAreaElement>("textarea.composer-input");
  beforeEach(() => {
    ui = harness();
  });

  it("is one tab stop, plus the buttons of the questions waiting for the person", () => {
    // Ten turns draw 80 buttons, 10 links and 10 Raw disclosures; a permission, a change to
    // review and a running command wait for the person.
    ui.frame(
      snapshot(
        [
          ...conversation(10),
          terminalToolCall(30, "term-1"),
          fileChange(),
          commandToolCall(5, "npm test"),
          userMessage("The last prompt"),
        ],
        { terminals: [terminalView()] },
      ),
    );
    // The request took the focus when it appeared; the person goes back to the composer.
    composer().focus();
    const stops = tabStops(thread()).map(describeStop);
    assert.deepEqual(
      stops,
      [
        "Stop",
        "Keep all",
        "Reject all",
        "Open diff",
        "Keep hunk 1",
        "Reject hunk 1",
        "Keep hunk 2",
        "Reject hunk 2",
        // The entry the focus was last in: the tool call whose request took it.
        "entry 32",
        "Allow once",
        "Always allow",
        "Reject",
        "Always reject",
      ],
      "Shift+Tab from the composer passes one entry and the questions, nothing else",
    );

    // With the focus on another entry, the questions are still a Tab away.
    entry(4).focus();
    const options = ui.queryAll<HTMLButtonElement>("button.permission-option");
    assert.ok(options.every((option) => tabStops(thread()).includes(option)), "the options stay in the tab order");
    // The keys 1 to 9 and the focus moving on once a request is answered still reach them.
    options[2]!.focus();
    options[2]!.click();
    assert.deepEqual(ui.posted, [{ type: "answerPermission", key: 5, optionId: "reject-once" }]);
    assert.equal(focused(), composer(), "no other question waits: the focus goes to the composer");
  });

  it("moves the focus between entries with the arrow keys, Home and End, and gives it back with Escape", () => {
    ui.frame(snapshot(conversation(2)));
    // At first the thread's tab stop is its last entry; Shift+Tab from the composer lands on it.
    const stops = tabStops(ui.window.document.body);
    assert.equal(stops[stops.indexOf(composer()) - 1], entry(5), "the stop before the composer is the last entry");
    assert.deepEqual(tabStops(thread()), [entry(5)]);

    entry(5).focus();
    ui.press("ArrowUp");
    assert.equal(focused(), entry(4));
    ui.press("ArrowUp");
    assert.equal(focused(), entry(3));
    ui.press("ArrowDown");
    assert.equal(focused(), entry(4));
    ui.press("Home");
    assert.equal(focused(), entry(0));
    ui.press("ArrowUp");
    assert.equal(focused(), entry(0), "the first entry is as far up as the keys go");
    ui.press("End");
    assert.equal(focused(), entry(5));
    ui.press("ArrowDown");
    assert.equal(focused(), entry(5), "the last is as far down");

    // The entry last focused is the thread's one tab stop, from wherever the focus goes next.
    ui.press("ArrowUp");
    ui.press("Escape");
    assert.equal(focused(), composer(), "Escape goes back to the composer");
    assert.deepEqual(tabStops(thread()), [entry(4)], "the thread keeps the entry the person was on");

    // A field inside an entry keeps its own keys.
    ui.query<HTMLButtonElement>(`.entry[data-index="0"] button[data-action="edit"]`).click();
    const editor = ui.query<HTMLTextAreaElement>(".user-edit-input");
    assert.equal(focused(), editor);
    ui.press("ArrowUp");
    ui.press("End");
    assert.equal(focused(), editor, "the arrows and End move the caret, not the focus");
  });

  it("reaches an entry's own controls with Tab from it, and no other entry's", () => {
    ui.frame(snapshot(conversation(2)));
    const after = (node: HTMLElement, count: number) => {
      const stops = tabStops(thread());
      return stops.slice(stops.indexOf(node), stops.indexOf(node) + 1 + count).map(describeStop);
    };

    entry(1).focus();
    assert.deepEqual(after(entry(1), 5), [
      "entry 1",
      "Copy message",
      "the docs",
      "Copy code",
      "Insert at cursor",
      "Open in new file",
    ]);
    assert.deepEqual(
      tabStops(thread()).map(describeStop),
      ["entry 1", "Copy message", "the docs", "Copy code", "Insert at cursor", "Open in new file"],
      "the other replies' buttons stay out of the tab order",
    );

    ui.press("ArrowUp");
    assert.deepEqual(after(entry(0), 4), [
      "entry 0",
      "Edit and send again",
      "Copy message",
      "Restore the files the agent changed to how they were before this prompt",
      "Go on from before this prompt in a new session (this one stays as it is)",
    ]);
    assert.equal(tabStops(entry(1)).length, 0, "the reply left is one entry among the others again");

    // Tab to the Edit button: the entry still holds the focus, so its buttons stay reachable.
    ui.query<HTMLButtonElement>(`.entry[data-index="0"] button[data-action="edit"]`).focus();
    assert.equal(tabStops(entry(0)).length, 4);
    composer().focus();
    assert.deepEqual(tabStops(thread()), [entry(0)], "from the composer, only the entry is a stop");
  });

  it("keeps what streams into a reply out of the tab order, unless the focus is in that reply", () => {
    ui.frame(snapshot([...conversation(1), agentMessage("Looking at it")]));
    composer().focus();
    const before = tabStops(thread());
    assert.equal(before.length, 1, "one entry is the thread's stop");

    // The reply streams a link and a code block in, each chunk into the nodes already drawn.
    const stream = (text: string) => ui.frame(patch([{ op: "appendChunk", index: 3, kind: "text", text }]));
    stream(" now, as [the guide](https://example.com/guide) says.\n\n");
    stream("```ts\nconst answer = 42;\n```\n\nAnd [a link](https://example.com/second)");
    assert.ok(entry(3).querySelector('a[href="https://example.com/guide"]') !== null, "the link was drawn");
    assert.deepEqual(tabStops(thread()), before, "nothing the reply streamed became a stop");

    // With the focus in the reply, what streams into it next is reachable with Tab.
    entry(3).focus();
    stream(" and [another](https://example.com/third).\n");
    assert.ok(
      tabStops(entry(3)).some((node) => node.getAttribute("href") === "https://example.com/third"),
      "the new link in the focused reply is a stop",
    );
    composer().focus();
    assert.deepEqual(tabStops(thread()).map(describeStop), ["entry 3"], "leaving the reply parks all of it");

    // A command's card drawn before its terminal: the output arrives later as a control itself
    // (a focusable <pre>), beside Open in terminal. Only Stop, which answers the person, stays.
    ui.frame(patch([{ op: "push", index: 4, entry: terminalToolCall(4, "term-9") }]));
    composer().focus();
    ui.frame(patch([{ op: "terminal", view: terminalView({ id: "term-9" }) }]));
    assert.ok(entry(4).querySelector("pre.terminal-output") !== null, "the output was drawn");
    assert.deepEqual(tabStops(thread()).map(describeStop), ["entry 3", "Stop"], "the output is no stop");
  });

  it("reaches the whole of a long thread, and keeps one tab stop when the entry it was on leaves the DOM", () => {
    const layout = layOutThread(ui.window, { viewport: 300, heightOf: () => 100 });
    const all = conversation(200);
    const last = all.length - 1;
    // As the host sends a long thread: its end first, the earlier entries in the next frames.
    ui.frame(snapshot(all.slice(400), { earlier: 400 }));
    for (let frame = 0; frame < 50 && ui.frame(); frame++);
    assert.ok(!layout.drawn().includes(0), "the first entries are not drawn");

    entry(last).focus();
    ui.press("Home");
    assert.equal(focused(), entry(0), "Home drew the thread's first entry and focused it");
    assert.ok(layout.inSight().includes(0));
    assert.ok(focused()?.classList.contains("not-loaded"), "a place held for an entry on its way");
    ui.frame({ type: "earlierEntries", from: 0, entries: all.slice(0, 400) });
    assert.equal(focused(), entry(0), "the entry arrived in its place, with the focus");
    assert.ok(focused()?.classList.contains("user"));
    assert.equal(tabStops(entry(0)).length, 4, "and Tab from it reaches its Edit, Copy, Restore and Go back");
    ui.press("End");
    assert.equal(focused()?.dataset["index"], String(last));
    ui.press("PageUp");
    assert.equal(focused()?.dataset["index"], String(last - 3), "a screenful up: three entries of 100 px in 300");
    ui.press("PageDown");
    assert.equal(focused()?.dataset["index"], String(last));

    // The person goes back to the composer and scrolls to the top: the entry they were on is gone.
    composer().focus();
    layout.scrollTo(0);
    for (let frame = 0; frame < 50 && ui.frame(); frame++);
    assert.ok(!layout.drawn().includes(last));
    const entryStops = () => tabStops(thread()).filter((node) => node.classList.contains("entry"));
    assert.equal(entryStops().length, 1, "the thread is still one tab stop");
    assert.ok(layout.inSight().includes(Number(entryStops()[0]!.dataset["index"])), "on an entry in sight");
    assert.deepEqual(tabStops(thread()), entryStops(), "and the entries drawn anew brought no other stop");

    // Back at the end, the entry the person was on is the stop again.
    layout.scrollTo(layout.maxTop());
    for (let frame = 0; frame < 50 && ui.frame(); frame++);
    assert.deepEqual(tabStops(thread()), [entry(last)]);
  });

  it("keeps the focus in the thread when the entry holding it is scrolled out of the window", () => {
    const layout = layOutThread(ui.window, { viewport: 300, heightOf: () => 100 });
    const all = conversation(200);
    const last = all.length - 1;
    ui.frame(snapshot(all));
    for (let frame = 0; frame < 50 && ui.frame(); frame++);
    // A control inside the last entry (the read's Raw disclosure) has the focus.
    entry(last).focus();
    const control = tabStops(entry(last)).find((node) => !node.classList.contains("entry"));
    assert.ok(control !== undefined, "the last entry has a control");
    control.focus();
    assert.equal(focused(), control);

    // The person scrolls to the top with the wheel: the entry leaves the DOM with the focus in it.
    layout.scrollTo(0);
    for (let frame = 0; frame < 50 && ui.frame(); frame++);
    assert.ok(!layout.drawn().includes(last));
    const now = focused();
    assert.ok(now !== null && now !== ui.window.document.body, "the focus did not fall to the page");
    assert.ok(now.classList.contains("entry") && layout.inSight().includes(Number(now.dataset["index"])), "it is on an entry in sight");
    assert.deepEqual(tabStops(thread()).filter((node) => node.classList.contains("entry")), [now], "the thread's one tab stop");
    // The keys go on from there.
    ui.press("ArrowDown");
    assert.equal(focused()?.dataset["index"], String(Number(now.dataset["index"]) + 1));
  });

  it("names a message focused by who wrote it and its first words, not by all of it", () => {
    const long = "Please rename every function in the parser so that its name says what it returns, ".repeat(20);
    ui.frame(snapshot([userMessage(long), agentMessage(`**Done.** ${long}`), agentMessage("Short answer.")]));
    const user = entry(0).getAttribute("aria-label") ?? "";
    const reply = entry(1).getAttribute("aria-label") ?? "";
    assert.match(user, /^You: Please rename every function in the parser so that its\b.*…$/);
    assert.match(reply, /^Agent: Done\. Please rename every function in the parser\b.*…$/, "without the markdown's marks");
    assert.ok(user.length < 80 && reply.length < 80, `${user} / ${reply}`);
    assert.equal(entry(2).getAttribute("aria-label"), "Agent: Short answer.");
    for (const index of [0, 1, 2]) assert.equal(entry(index).getAttribute("role"), "group");

    // The place of an entry still on its way, which Home can land on in a long thread.
    ui.frame(snapshot([userMessage("The end")], { earlier: 1 }));
    assert.equal(entry(0).getAttribute("aria-label"), "Loading…");
  });
});

// The session tabs as a person meets them: none for a single session, a strip for two or more
// with the shown one selected, each tab's state in a marker and in words for screen readers,
// the intents a click, the close button, a middle click and the keys send, and what follows the
// session shown: the composer's draft (with its mentions and images, and across a reload) and
// where its thread was scrolled.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { Entry, MentionSuggestion, SessionTabView, SessionView, ThreadPatch } from "../src/protocol";
import { patch, session, snapshot, tab } from "./fixtures";
import { type Harness, harness, layOutThread, until } from "./support";

/** Sessions 1 and 2 open, `shown` shown. */
function twoTabs(shown: number, overrides: Partial<SessionView> = {}): SessionView {
  return session({
    tabs: [tab(1, { label: "Fix the parser" }), tab(2, { label: "Write the docs", agent: "Claude Code" })],
    shown,
    ...overrides,
  });
}

/** The host showing session `shown` of `tabs`, as it does after a `showSession`. */
function showing(shown: number, tabs: SessionTabView[], entries: Entry[] = []) {
  return snapshot(entries, { session: session({ tabs, shown }) });
}

function prompt(text: string): Entry {
  return { type: "user", text, attachments: [] };
}

describe("session tabs", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const strip = () => ui.query(".session-tabs");
  const tabs = () => ui.queryAll(".session-tabs .session-tab");
  const tabOf = (key: number) => ui.query(`.session-tab[data-key="${key}"]`);
  const focused = () => ui.window.document.activeElement;
  /** A tab's accessible name: the aria-label, else the text, of what its aria-labelledby names. */
  const nameOf = (element: HTMLElement) =>
    (element.getAttribute("aria-labelledby") ?? "")
      .split(" ")
      .map((id) => {
        const named = ui.window.document.getElementById(id);
        return named?.getAttribute("aria-label") ?? named?.textContent ?? "";
      })
      .filter((text) => text !== "")
      .join(", ");

  it("tells apart labels that start alike by what differs, keeping the whole label to hover and hear", () => {
    const labels = ["Please fix the login bug", "Please fix the signup form", "Write the docs", "Write the docs", "Session 10", "Session 11"];
    ui.frame(snapshot([], { session: session({ tabs: labels.map((label, index) => tab(index + 1, { label })), shown: 1 }) }));
    const shownLabels = tabs().map((each) => each.querySelector(".session-tab-label")?.textContent);
    // Before, the first two read "Please fix the lo…" and "Please fix the si…" at best, and
    // "Please …" in a narrow sidebar: the same start, cut.
    // Labels alike in full stay (nothing tells them apart), and so does a shared single word.
    assert.deepEqual(shownLabels, ["…login bug", "…signup form", "Write the docs", "Write the docs", "Session 10", "Session 11"]);
    assert.equal(tabOf(1).title, "Please fix the login bug (Demo)");
    assert.equal(nameOf(tabOf(2)), "Please fix the signup form");
  });

  it("shows no strip for a single session, nor before any", () => {
    ui.frame();
    assert.equal(strip().hidden, true, "nothing while connecting");
    ui.frame(snapshot([]));
    assert.equal(strip().hidden, true, "one session keeps the compact header");
    assert.equal(tabs().length, 1);
    ui.frame(patch([], twoTabs(1)));
    assert.equal(strip().hidden, false);
    ui.frame(patch([], session({ tabs: [tab(1)] })));
    assert.equal(strip().hidden, true, "gone again once one session is left");
  });

  it("draws a tab per session between the header and the thread, the shown one selected", () => {
    ui.frame(snapshot([], { session: twoTabs(2) }));
    assert.equal(strip().getAttribute("role"), "tablist");
    assert.equal(strip().getAttribute("aria-label"), "Sessions");
    assert.equal(strip().previousElementSibling, ui.query("header.session"));
    assert.ok(
      strip().compareDocumentPosition(ui.query("main.thread")) & ui.window.Node.DOCUMENT_POSITION_FOLLOWING,
      "above the thread",
    );
    assert.deepEqual(tabs().map((each) => each.dataset["key"]), ["1", "2"], "in the host's order");
    assert.deepEqual(tabs().map((each) => each.getAttribute("role")), ["tab", "tab"]);
    assert.deepEqual(tabs().map((each) => each.getAttribute("aria-selected")), ["false", "true"]);
    assert.deepEqual(tabs().map((each) => each.tabIndex), [-1, 0], "Tab reaches the strip on the shown tab");
    assert.deepEqual(tabs().map((each) => each.querySelector(".session-tab-label")?.textContent), ["Fix the parser", "Write the docs"]);
    assert.equal(tabOf(2).title, "Write the docs (Claude Code)", "the tooltip gives the whole label and the agent");
    assert.equal(nameOf(tabOf(2)), "Write the docs", "the close button is not part of the tab's name");

    // The host shows the other one.
    ui.frame(snapshot([], { session: twoTabs(1) }));
    assert.deepEqual(tabs().map((each) => each.getAttribute("aria-selected")), ["true", "false"]);
    assert.deepEqual(ui.posted, [], "drawing the host's tabs sends nothing");
  });

  it("marks what each session is doing, in an icon and in words", () => {
    ui.frame(
      snapshot([], {
        session: session({
          tabs: [
            tab(1, { label: "Idle" }),
            tab(2, { label: "Busy", activity: "working" }),
            tab(3, { label: "Asking", activity: "waiting" }),
            tab(4, { label: "Gone", activity: "stopped" }),
            tab(5, { label: "Edited", activity: "review" }),
          ],
          shown: 1,
        }),
      }),
    );
    const marks = tabs().map((each) => {
      const marker = each.querySelector<HTMLElement>(".session-tab-activity");
      const glyph = marker?.querySelector(".codicon");
      return {
        activity: each.dataset["activity"],
        shown: marker !== null && !marker.hidden,
        icon: glyph === null || glyph === undefined ? null : [...glyph.classList].filter((name) => name !== "codicon").join(" "),
        name: nameOf(each),
      };
    });
    assert.deepEqual(marks, [
      { activity: "idle", shown: false, icon: null, name: "Idle" },
      { activity: "working", shown: true, icon: "codicon-loading codicon-modifier-spin", name: "Busy, working" },
      { activity: "waiting", shown: true, icon: "codicon-bell-dot", name: "Asking, waits for you" },
      { activity: "stopped", shown: true, icon: "codicon-debug-stop", name: "Gone, stopped" },
      { activity: "review", shown: true, icon: "codicon-diff", name: "Edited, has changes to review" },
    ]);

    // A background session's state changes: only its header comes.
    ui.frame(patch([], session({ tabs: [tab(1, { label: "Idle" }), tab(2, { label: "Busy", activity: "waiting" })], shown: 1 })));
    assert.equal(tabOf(2).dataset["activity"], "waiting");
    assert.equal(nameOf(tabOf(2)), "Busy, waits for you");
    assert.ok(tabOf(2).querySelector(".codicon-bell-dot") !== null);
    assert.equal(tabOf(2).querySelector(".codicon-loading"), null, "the spinner is gone");
  });

  it("asks the host to show a tab that is clicked, and nothing for the one shown", () => {
    ui.frame(snapshot([], { session: twoTabs(1) }));
    tabOf(1).click();
    assert.deepEqual(ui.posted, [], "already shown");
    tabOf(2).click();
    tabOf(2).click();
    assert.deepEqual(ui.posted, [{ type: "showSession", key: 2 }], "one ask until the host answers");
    ui.frame(snapshot([], { session: twoTabs(2) }));
    tabOf(1).click();
    assert.deepEqual(ui.posted.at(-1), { type: "showSession", key: 1 });
  });

  it("closes a tab with its close button or a middle click, without showing it", () => {
    ui.frame(snapshot([], { session: twoTabs(1) }));
    const close = tabOf(2).querySelector<HTMLButtonElement>("button.session-tab-close");
    assert.ok(close !== null);
    assert.equal(close.getAttribute("aria-label"), "Close Write the docs");
    assert.ok(close.querySelector(".codicon-close") !== null);
    close.click();
    assert.deepEqual(ui.posted, [{ type: "closeSession", key: 2, confirmed: false }]);
    tabOf(1).dispatchEvent(new ui.window.MouseEvent("auxclick", { button: 1, bubbles: true, cancelable: true }));
    assert.deepEqual(ui.posted.at(-1), { type: "closeSession", key: 1, confirmed: false }, "a middle click closes, even the shown tab");
    tabOf(2).dispatchEvent(new ui.window.MouseEvent("auxclick", { button: 2, bubbles: true, cancelable: true }));
    assert.equal(ui.posted.length, 2, "a right click does not");
  });

  it("moves along the tabs with the arrows, Home and End, showing each, and closes with Delete", () => {
    const three = (shown: number) =>
      session({ tabs: [tab(1), tab(2, { activity: "working" }), tab(3, { activity: "waiting" })], shown });
    ui.frame(snapshot([], { session: three(1) }));
    tabOf(1).focus();
    const walk: string[] = [];
    for (const key of ["ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft", "End", "Home"]) {
      ui.press(key);
      walk.push(`${key}→${(focused() as HTMLElement).dataset["key"]}`);
    }
    assert.deepEqual(walk, ["ArrowRight→2", "ArrowRight→3", "ArrowRight→1", "ArrowLeft→3", "End→3", "Home→1"], "wrapping at either end");
    assert.deepEqual(
      ui.posted.map((message) => (message.type === "showSession" ? message.key : message.type)),
      [2, 3, 1, 3, 1],
      "each tab reached is asked for (End on the tab just asked for asks nothing more)",
    );
    assert.deepEqual(tabs().map((each) => each.tabIndex), [0, -1, -1], "the tabindex follows the focus");

    // The host shows 3; a background tab changing state re-sends the header: the focus stays.
    ui.posted.length = 0;
    ui.press("End");
    ui.frame(snapshot([], { session: three(3) }));
    ui.frame(patch([], session({ tabs: [tab(1), tab(2), tab(3, { activity: "waiting" })], shown: 3 })));
    assert.equal(focused(), tabOf(3));
    ui.press("Delete");
    assert.deepEqual(ui.posted, [{ type: "showSession", key: 3 }, { type: "closeSession", key: 3, confirmed: false }]);
    // The host closed it and shows 2: the focus goes there, not to nothing.
    ui.frame(snapshot([], { session: session({ tabs: [tab(1), tab(2)], shown: 2 }) }));
    assert.equal(focused(), tabOf(2));
    // And when the last but one closes, the strip goes and the focus goes to the composer.
    ui.press("Delete");
    ui.frame(snapshot([], { session: session({ tabs: [tab(1)], shown: 1 }) }));
    assert.equal(strip().hidden, true);
    assert.equal(focused(), ui.query("textarea.composer-input"));
  });
});

describe("the composer and the thread per session", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const input = () => ui.query<HTMLTextAreaElement>("textarea.composer-input");
  const type = (text: string) => {
    input().value = text;
    input().setSelectionRange(text.length, text.length);
    input().dispatchEvent(new ui.window.Event("input"));
  };
  const press = (key: string) =>
    input().dispatchEvent(new ui.window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
  const both = [tab(1), tab(2)];

  it("keeps each session's unsent text and gives it back when its tab is shown again", () => {
    ui.frame(showing(1, both));
    type("Half a question for the parser");
    ui.frame(showing(2, both));
    assert.equal(input().value, "", "the other session has nothing typed");
    type("Docs: start with the install");
    ui.frame(showing(1, both));
    assert.equal(input().value, "Half a question for the parser");
    ui.frame(showing(2, both));
    assert.equal(input().value, "Docs: start with the install");
    press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "Docs: start with the install", attachments: [] }]);
    ui.frame(showing(1, both));
    assert.equal(input().value, "Half a question for the parser", "sending in one tab leaves the other's");
  });

  it("keeps the text typed before the first session for that session", () => {
    ui.frame();
    type("Typed while it connects");
    ui.frame(showing(1, [tab(1)]));
    assert.equal(input().value, "Typed while it connects");
  });

  it("carries the text over to a session that replaced the one it was typed for", () => {
    ui.frame(showing(1, [tab(1)]));
    type("Ask the other agent instead");
    // Another agent chosen: the host shows a new session in the old one's place.
    ui.frame(showing(3, [tab(3, { agent: "Claude Code" })]));
    assert.equal(input().value, "Ask the other agent instead");
  });

  it("takes the text to the session an agent picked opens beside the one shown, with what is typed meanwhile", () => {
    ui.frame(showing(1, [tab(1)]));
    type("Ask the other agent");
    ui.query<HTMLElement>('.session-picker [role="option"][data-value="Claude Code"]').click();
    // Typed after the pick, before the host shows the new session: meant for the agent picked.
    type("Ask the other agent about the parser");
    ui.frame(showing(2, [tab(1), tab(2, { agent: "Claude Code" })]));
    assert.equal(input().value, "Ask the other agent about the parser");
    press("Enter");
    assert.deepEqual(ui.posted, [
      { type: "selectAgent", name: "Claude Code" },
      { type: "prompt", text: "Ask the other agent about the parser", attachments: [] },
    ]);
    ui.frame(showing(1, [tab(1), tab(2, { agent: "Claude Code" })]));
    assert.equal(input().value, "", "the draft went with the pick; nothing is left behind twice");
  });

  it("keeps the text with its session when a pick opens nothing and a session is opened later", () => {
    ui.frame(showing(1, both));
    type("For the first session");
    ui.query<HTMLElement>('.session-picker [role="option"][data-value="Claude Code"]').click();
    // The host's answer shows the same session (the pick was refused): the pick is over.
    ui.frame(showing(1, both));
    assert.equal(input().value, "For the first session");
    // A session opened afterwards another way ("New session") starts with an empty composer.
    const three = [tab(1), tab(2), tab(3)];
    ui.frame(showing(3, three));
    assert.equal(input().value, "", "the draft stayed with its session");
    ui.frame(showing(1, three));
    assert.equal(input().value, "For the first session");
  });

  it("drops the text of a tab that was closed, rather than moving it to the tab shown next", () => {
    ui.frame(showing(2, both));
    type("Never mind this one");
    ui.frame(showing(1, [tab(1)]));
    assert.equal(input().value, "");
  });

  it("keeps the drafts per session across a reload of the webview", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout"] });
    ui.frame(showing(1, both));
    type("For the parser");
    ui.frame(showing(2, both));
    type("For the docs");
    context.mock.timers.tick(1_000);

    ui = harness(ui.saved());
    ui.frame(showing(2, both));
    assert.equal(input().value, "For the docs");
    ui.frame(showing(1, both));
    assert.equal(input().value, "For the parser");
  });

  it("keeps mentions and images with the session they were added in", async () => {
    const mainRs: MentionSuggestion = { label: "src/main.rs", detail: null, attachment: { type: "file", path: "/ws/src/main.rs" } };
    const withImages = (shown: number) =>
      snapshot([], {
        session: session({ tabs: both, shown, controls: { ...session().controls, prompt: { image: true, embeddedContext: true } } }),
      });
    ui.frame(withImages(1));
    ui.frame({ type: "addMention", mention: mainRs });
    const png = Uint8Array.from(atob("iVBORw0KGgo="), (c) => c.charCodeAt(0));
    const paste = new ui.window.Event("paste", { bubbles: true, cancelable: true });
    Object.defineProperty(paste, "clipboardData", {
      value: { files: [new ui.window.File([png], "shot.png", { type: "image/png" })] },
    });
    input().dispatchEvent(paste);
    await until(() => ui.queryAll(".composer-image").length === 1);

    ui.frame(withImages(2));
    assert.deepEqual(ui.queryAll(".composer-chip"), [], "no chips in the other session");
    type("Plain");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), { type: "prompt", text: "Plain", attachments: [] });

    ui.frame(withImages(1));
    assert.equal(input().value, "@src/main.rs ");
    assert.equal(ui.queryAll(".composer-chip").length, 2, "the mention and the image are back");
    press("Enter");
    const sent = ui.posted.at(-1);
    assert.equal(sent?.type, "prompt");
    assert.deepEqual(
      sent?.type === "prompt" ? sent.attachments.map((attachment) => attachment.type) : [],
      ["file", "image"],
    );
  });

  it("walks the shown session's prompts with ↑, even when another's were being walked", () => {
    ui.frame(showing(1, both, [prompt("first"), prompt("second"), prompt("third")]));
    press("ArrowUp");
    assert.equal(input().value, "third");
    ui.frame(showing(2, both, [prompt("docs question")]));
    assert.equal(input().value, "");
    press("ArrowUp");
    assert.equal(input().value, "docs question");
  });

  const prompts = (count: number) => Array.from({ length: count }, (_, index) => prompt(`prompt ${index}`));
  /** Patches pushing `count` more prompts from entry `from` on. */
  const pushed = (from: number, count: number): ThreadPatch[] =>
    Array.from({ length: count }, (_, offset) => ({ op: "push", index: from + offset, entry: prompt("more") }));

  /** Lays the thread out as a browser would: each entry 100 px, in a 300 px high view. */
  const layOut = () => layOutThread(ui.window);

  it("goes back to where each session's thread was scrolled", () => {
    const thread = layOut();
    ui.frame(showing(1, both, prompts(20)));
    assert.equal(thread.top(), 1700, "a thread starts at its end");
    thread.scrollTo(400);
    ui.frame();
    ui.frame(showing(2, both, prompts(10)));
    assert.equal(thread.top(), 700, "the other session's thread, at its end");
    ui.frame(showing(1, both, prompts(20)));
    assert.equal(thread.top(), 400, "back where the person was reading");
    ui.frame(patch(pushed(20, 1)));
    assert.equal(thread.top(), 400, "and left there as the thread grows");
    ui.frame(showing(2, both, prompts(12)));
    assert.equal(thread.top(), 900, "a thread left at its end follows it");
  });

  it("gets back to the place once the thread is drawn that far, unless the person scrolls first", () => {
    const thread = layOut();
    ui.frame(showing(1, both, prompts(20)));
    thread.scrollTo(1000);
    ui.frame();
    ui.frame(showing(2, both));
    // Session 1's thread comes back shorter than it will be (as a long reply is drawn in parts).
    ui.frame(showing(1, both, prompts(8)));
    assert.equal(thread.top(), 500, "as far as it goes for now");
    ui.frame(patch(pushed(8, 6)));
    assert.equal(thread.top(), 1000);

    ui.frame(showing(2, both));
    ui.frame(showing(1, both, prompts(8)));
    thread.scrollTo(100);
    ui.frame(patch(pushed(8, 2)));
    assert.equal(thread.top(), 100, "the person's own scroll wins");
  });
});

// The DOM side of streaming: committed blocks are inserted once, and re-rendering a costly tail
// is rationed by its cost without ever losing text.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MarkdownView } from "../src/markdown-view";
import { createRenderer, installDom } from "./support";

const renderer = createRenderer();

describe("markdown view", () => {
  it("keeps committed blocks as they are and replaces only the tail", () => {
    installDom();
    const view = new MarkdownView(renderer);
    const clock = () => 0;
    view.syncTo("First paragraph.\n\nSecond\n");
    view.flush(clock);
    const first = view.element.firstElementChild;
    assert.equal(first?.outerHTML, "<p>First paragraph.</p>");
    view.syncTo("First paragraph.\n\nSecond\nparagraph, longer.\n\nThird\n");
    view.flush(clock);
    assert.equal(view.element.firstElementChild, first, "the first block's node is the same node");
    assert.equal(
      view.element.innerHTML,
      '<p>First paragraph.</p>\n<p>Second\nparagraph, longer.</p>\n<div class="markdown-tail"><p>Third</p>\n</div>',
    );
  });

  it("refuses text that does not extend what it has shown", () => {
    installDom();
    const view = new MarkdownView(renderer);
    assert.equal(view.syncTo("Hello, world"), true);
    assert.equal(view.syncTo("Hello"), false);
  });

  it("waits after a costly render in proportion to its cost, then shows all the text", () => {
    installDom();
    const view = new MarkdownView(renderer);
    // The clock is read at the start and at the end of each render: this one "takes" 10 ms.
    const times = [1000, 1010];
    const clock = () => times.shift() ?? Number.NaN;
    view.syncTo("one");
    assert.equal(view.flush(clock), false);
    assert.equal(view.element.textContent?.trim(), "one");

    view.syncTo("one two");
    times.push(1020);
    assert.equal(view.flush(clock), true, "20 ms after a 10 ms render is too soon");
    assert.equal(view.element.textContent?.trim(), "one", "the DOM waits");

    view.syncTo("one two three");
    times.push(1060, 1061);
    assert.equal(view.flush(clock), false);
    assert.equal(view.element.textContent?.trim(), "one two three", "nothing was lost while waiting");
    assert.equal(view.flush(clock), false, "nothing left to show");
  });
});

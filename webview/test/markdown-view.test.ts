// The DOM side of streaming: committed blocks are inserted once, and re-rendering a costly tail
// is rationed by its cost without ever losing text.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PIECE_CHARS, PIECE_CLASS } from "../src/markdown-stream";
import { MarkdownView, PIECE_GROUP_CLASS, PIECES_PER_GROUP } from "../src/markdown-view";
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
    assert.equal(view.flush(clock), true, "20 ms after a 10 ms render is too soon: another frame is asked for");
    // The render waits, the text does not: it is shown plain, in the paragraph it continues.
    assert.equal(view.element.innerHTML, '<div class="markdown-tail"><p>one two</p>\n</div>');

    view.syncTo("one two **three**");
    times.push(1030);
    assert.equal(view.flush(clock), true);
    assert.equal(view.element.textContent?.trim(), "one two **three**", "each chunk is shown as it comes");

    times.push(1060, 1061);
    assert.equal(view.flush(clock), false);
    assert.equal(
      view.element.innerHTML,
      '<div class="markdown-tail"><p>one two <strong>three</strong></p>\n</div>',
      "the render replaces the plain text with the formatted one, once",
    );
    assert.equal(view.flush(clock), false, "nothing left to show");
  });

  it("shows text arriving while a render waits in the block it continues", () => {
    installDom();
    const cases = [
      // An open code block: its code, kept as written.
      { shown: "```js\nlet a = 1;\n", added: "let b = 2;\n", into: "CODE" },
      // A list: its last item, not a new paragraph after the list.
      { shown: "- first\n- second", added: " item", into: "LI" },
      // A paragraph ending in bold: the paragraph, so the new text is not bold.
      { shown: "Some **bold**", added: " and plain", into: "P" },
    ];
    for (const { shown, added, into } of cases) {
      const view = new MarkdownView(renderer);
      const times = [0, 10, 20];
      const clock = () => times.shift() ?? Number.NaN;
      view.syncTo(shown);
      view.flush(clock);
      view.syncTo(shown + added);
      assert.equal(view.flush(clock), true);
      const last = view.element.querySelector(".markdown-tail")?.lastElementChild;
      let block: Element | null | undefined = last;
      while (block?.lastElementChild && block.lastElementChild.tagName !== "STRONG") block = block.lastElementChild;
      assert.equal(block?.tagName, into, `${JSON.stringify(shown)}: ${view.element.innerHTML}`);
      assert.ok(block?.textContent?.endsWith(added), `${JSON.stringify(shown)}: ${view.element.innerHTML}`);
    }
  });

  it("puts the pieces of a long line in full groups, in order, however they arrive", () => {
    // The browser pays on every frame for each box it may skip laying out (markdown-view.ts), so
    // a long line's pieces share boxes: ten to a group, the last one filled up by later frames.
    installDom();
    const words = Array.from({ length: 12_000 }, (_, at) => `w${at}`);
    const text = `${words.join(" ")}\n\nAfter the long line.\n`;
    const view = new MarkdownView(renderer);
    const clock = () => 0;
    // Flushed every 3,000 characters: a few pieces per frame, so groups are filled across frames.
    for (let end = 3_000; end < text.length + 3_000; end += 3_000) {
      view.syncTo(text.slice(0, end));
      view.flush(clock);
    }
    const groups = [...view.element.children].filter((child) => child.classList.contains(PIECE_GROUP_CLASS));
    const pieces = groups.map((group) => group.querySelectorAll(`:scope > p.${PIECE_CLASS}`).length);
    // The line's last part, shorter than a piece, is a paragraph of its own once the line ends.
    const expected = Math.floor(words.join(" ").length / (PIECE_CHARS + 10)) - 1;
    assert.ok(pieces.reduce((a, b) => a + b, 0) >= expected, `${pieces} pieces, about ${expected} expected`);
    assert.ok(pieces.slice(0, -1).every((count) => count === PIECES_PER_GROUP), `groups of ${pieces}`);
    assert.ok(pieces.at(-1)! >= 1 && pieces.at(-1)! <= PIECES_PER_GROUP, `groups of ${pieces}`);
    // Nothing but the groups holds a piece, and every word is there once, in order.
    assert.equal(view.element.querySelectorAll(`p.${PIECE_CLASS}`).length, pieces.reduce((a, b) => a + b, 0));
    assert.deepEqual(view.element.textContent?.trim().split(/\s+/), [...words, "After", "the", "long", "line."]);
  });
});

// A `.markdown` element kept in step with a [`MarkdownStream`].
//
// Committed blocks are inserted once, before a tail element whose content is the only part
// replaced as the text grows. The tail element is `display: contents`, so the blocks inside it
// lay out exactly as if they were direct children, and nothing jumps when a block moves from the
// tail to the committed part.
//
// Re-rendering the tail costs time in proportion to its length, and a tail can be long (a reply
// that is one huge paragraph, a thousand-line code block still open). So the tail's renders are
// rationed by what they cost: after a render that took `t` ms the next waits until `t` times
// [`RENDER_COST_FACTOR`] has passed, which keeps rendering under a fifth of the main thread
// however long the tail grows, while small tails (well under a millisecond) render every frame.
// The text that arrives while a render waits is not held back: it is appended as plain text to
// the tail's last block (a paragraph, a list item, an open code block), so the person reads each
// chunk the frame after it arrives, and its formatting follows with the next render. Appending
// costs what was appended, not what the tail holds.
//
// The pieces of a long line (markdown-stream.ts) go into groups of ten, each a box the browser
// may skip laying out while it is out of sight ([`PIECES_PER_GROUP`] says why ten).
//
// Code blocks get their toolbar and their highlighting (see code-block-view.ts) only once final:
// a committed block at once, a block in the tail only when the view is told its text is complete
// ([`MarkdownView.complete`]) and that text is all in the DOM. So nothing of it runs per streamed
// chunk.

import type { CodeBlocks } from "./code-block-view";
import { element } from "./element";
import type { MarkdownRenderer } from "./markdown";
import { MarkdownStream } from "./markdown-stream";

/**
 * How many pieces of a long line (markdown-stream.ts) share one group, the box the browser may
 * skip laying out while it is out of sight (`content-visibility: auto`). The browser watches
 * every such box for coming into sight, at a cost on every frame that changes layout (about
 * 5 µs a box, measured in Chromium: 14 ms a frame with 2,800 of them), whether the box is in
 * sight or not: a box per piece made every streamed frame of a long session cost more the more
 * long replies were drawn. A group of ten is about 20,000 characters, laid out at once when it
 * comes into sight.
 */
export const PIECES_PER_GROUP = 10;

/** The class of a group of pieces (see [`PIECES_PER_GROUP`]). */
export const PIECE_GROUP_CLASS = "paragraph-pieces";

/** A tail render that took `t` ms is followed by at least `t` times this of not rendering. */
const RENDER_COST_FACTOR = 5;

/** The blocks that plain text appended at the end of a tail belongs in (see `lastBlock`). */
const TEXT_BLOCKS = new Set([
  "P", "LI", "UL", "OL", "BLOCKQUOTE", "PRE", "TABLE", "THEAD", "TBODY", "TR", "TD", "TH",
  "H1", "H2", "H3", "H4", "H5", "H6",
]);

/** Milliseconds, monotonic: `performance.now` in the webview, a fixed clock in tests. */
export type Clock = () => number;

export class MarkdownView {
  readonly element: HTMLDivElement;
  private readonly stream: MarkdownStream;
  private tail: HTMLDivElement;
  /** How many characters of the source text were handed to the stream. */
  private consumed = 0;
  /** The clock's time before which the next render waits (see the module comment). */
  private nextRenderAt = Number.NEGATIVE_INFINITY;
  /** The text will not grow any more: the tail's blocks are final once shown. */
  private completed = false;
  /** Text handed to the stream since its last render, shown plain while the render waits. */
  private unrendered = "";
  /** Where the unrendered text is shown, and how much of it is there. */
  private unrenderedNode: Text | null = null;
  private unrenderedShown = 0;
  /** The group the last pieces went into (see [`MarkdownView.appendPieces`]). */
  private lastGroup: HTMLElement | null = null;

  constructor(
    renderer: MarkdownRenderer,
    className = "markdown",
    private readonly codeBlocks?: CodeBlocks,
  ) {
    this.element = element("div", className);
    this.tail = element("div", "markdown-tail");
    this.element.append(this.tail);
    this.stream = new MarkdownStream(renderer);
  }

  /**
   * Brings the view up to `text`, which must extend the text seen so far (chunks only ever
   * grow). Returns false if it does not, so the caller can rebuild the view instead.
   */
  syncTo(text: string): boolean {
    if (text.length < this.consumed) return false;
    if (text.length > this.consumed) {
      const added = text.slice(this.consumed);
      this.stream.append(added);
      this.unrendered += added;
      this.consumed = text.length;
    }
    return true;
  }

  /**
   * Says that the text will not grow any more (the message ended, or something followed it):
   * the tail's code blocks are highlighted as soon as all the text is shown.
   */
  complete(): void {
    if (this.completed) return;
    this.completed = true;
    if (!this.stream.hasPendingChanges) this.codeBlocks?.decorate(this.tail, true);
  }

  /**
   * Writes what changed into the DOM, unless the last render was too recent for its cost.
   * Called at most once per frame; returns true while text is waiting to be shown, so the
   * caller asks for another frame.
   */
  flush(clock: Clock): boolean {
    if (!this.stream.hasPendingChanges) return false;
    const start = clock();
    if (start < this.nextRenderAt) {
      this.showUnrendered();
      return true;
    }
    const update = this.stream.flush();
    // The render shows all of the text; the plain copy of its newest part goes.
    this.unrenderedNode?.remove();
    this.unrenderedNode = null;
    this.unrendered = "";
    this.unrenderedShown = 0;
    if (update.reset) {
      this.element.replaceChildren();
      this.lastGroup = null;
      this.tail = element("div", "markdown-tail");
      this.element.append(this.tail);
    }
    // The nodes of this update's committed blocks are those between the old last one and the tail.
    const lastCommitted = this.tail.previousSibling;
    for (const html of update.committed) {
      this.tail.insertAdjacentHTML("beforebegin", html);
    }
    this.appendPieces(update.pieces);
    if (update.tail !== null) this.tail.innerHTML = update.tail;
    if (this.codeBlocks !== undefined) {
      // Committed blocks are final; the tail's are once the text is complete.
      const committed: Element[] = [];
      let node = lastCommitted === null ? this.element.firstChild : lastCommitted.nextSibling;
      for (; node !== null && node !== this.tail; node = node.nextSibling) {
        if (node.nodeType === node.ELEMENT_NODE) committed.push(node as Element);
      }
      // Collected first: decorating wraps a block, which takes it out of the sibling chain.
      for (const block of committed) this.codeBlocks.decorate(block, true);
      // The tail's blocks are left plain while they grow (no work per chunk), and get their
      // toolbar and colours once final: committed, or the text complete.
      if (update.tail !== null && this.completed) this.codeBlocks.decorate(this.tail, true);
    }
    this.nextRenderAt = start + (clock() - start) * RENDER_COST_FACTOR;
    return false;
  }

  /**
   * Appends pieces of a long line before the tail, in groups of [`PIECES_PER_GROUP`]: the last
   * group is filled up first when nothing came after it, so a line's pieces end up in as few
   * groups as can hold them, however the stream cut them into updates.
   */
  private appendPieces(pieces: string[]): void {
    let next = 0;
    while (next < pieces.length) {
      let group = this.lastGroup;
      if (group === null || group.nextElementSibling !== this.tail || group.childElementCount >= PIECES_PER_GROUP) {
        group = element("div", PIECE_GROUP_CLASS);
        this.tail.before(group);
        this.lastGroup = group;
      }
      const room = PIECES_PER_GROUP - group.childElementCount;
      group.insertAdjacentHTML("beforeend", pieces.slice(next, next + room).join(""));
      next += room;
    }
  }

  /** Appends the text that arrived since the last render, plain, to the tail's last block. */
  private showUnrendered(): void {
    if (this.unrendered.length === this.unrenderedShown) return;
    if (this.unrenderedNode === null) {
      this.unrenderedNode = document.createTextNode("");
      lastBlock(this.tail).append(this.unrenderedNode);
    }
    this.unrenderedNode.appendData(this.unrendered.slice(this.unrenderedShown));
    this.unrenderedShown = this.unrendered.length;
  }
}

/**
 * The innermost block at the end of `tail` that text continuing it belongs in: the last
 * paragraph, list item or table cell, the code of an open code block. Never an inline element
 * (text after `**bold**` is not bold), so it stops at the last block.
 */
function lastBlock(tail: HTMLElement): HTMLElement {
  let block = tail;
  for (let child = block.lastElementChild; child instanceof HTMLElement; child = block.lastElementChild) {
    if (TEXT_BLOCKS.has(child.tagName)) block = child;
    else if (child.tagName === "CODE" && block.tagName === "PRE") return child;
    else break;
  }
  return block;
}

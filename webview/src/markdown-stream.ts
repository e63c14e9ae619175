// Streaming markdown: render a growing text without re-rendering what is already final.
//
// An agent's reply arrives in thousands of small chunks. Re-rendering the whole reply on every
// frame is quadratic in the reply's length, so the text is cut into
// *committed* blocks, rendered once and never touched again, and a *tail*, the last block that
// may still grow, which is the only part rendered again.
//
// Where to cut is decided by markdown-it itself rather than by guessing at blank lines and code
// fences: the complete lines of the tail are parsed, and every top-level block before the last
// one is final, because markdown-it only ends a block once a later line cannot continue it, and
// a block that ended never changes (a fence with blank lines inside stays one open block until
// its closing fence). Only complete lines are looked at, so a half-received line ("-" that may
// become "---") never decides anything, and the cut points do not depend on how the text was
// chunked. The one construct that reaches across blocks is a link reference definition
// (`[label]: url` can define a link used earlier), so once one appears the stream falls back to
// rendering the whole text as one tail.
//
// One block can grow without end: a paragraph that is one long line (an agent that never breaks
// its text, a pasted log). Rendering it again per frame costs little, but the browser shapes and
// lays out the whole paragraph again every time it changes, 40-75 ms a frame at a few hundred
// thousand characters. So a long first line of a paragraph is cut into *pieces* of about
// [`PIECE_CHARS`], each committed as a paragraph of its own that the stylesheet joins to the
// next (`paragraph-piece`: no gap; a piece's last line can end short). A cut is made only where
// it cannot change what anything renders as: at the first space after [`PIECE_CHARS`]
// characters of the line, followed by a letter (so what follows starts a paragraph too), when
// the text before it holds nothing that could open an inline construct reaching past the cut
// (emphasis, code, links, escapes, entities) and markdown-it reads it as one plain paragraph.
// (The exception: a setext underline or a table's delimiter row after such a line would make
// the whole line a heading or a table header; not worth a paragraph's layout per frame.) Like
// the block cuts, it depends on the text alone, never on how it was chunked. A piece that
// markdown-it reads as text alone is written as its escaped text, without the sanitizer's round
// trip through a parsed document, and the view puts the pieces in groups that the browser may
// skip laying out while out of sight (markdown-view.ts): a burst's hundreds of pieces cost the
// frame only their parsing.

import type { MarkdownRenderer } from "./markdown";

/** The length from which a paragraph's first line is cut into pieces (see the module comment). */
export const PIECE_CHARS = 2_000;

/** The class of a paragraph that the next block continues (a piece of a long line). */
export const PIECE_CLASS = "paragraph-piece";

/** Characters that may open an inline construct, or end the line: a piece holds none of them. */
const NOT_IN_A_PIECE = /[\\`*_[\]<>!&~|\r\n]/;

/** What changed in the rendered HTML since the previous [`MarkdownStream.flush`]. */
export interface StreamUpdate {
  /** Everything rendered before is void: clear it, then apply `committed` and `tail`. */
  reset: boolean;
  /** Sanitized HTML of blocks that became final, in order, to append after earlier ones. */
  committed: string[];
  /**
   * Sanitized HTML of pieces of a long line that became final (see the module comment), in
   * order, to append after `committed`. Apart because the view groups them (markdown-view.ts).
   */
  pieces: string[];
  /** Sanitized HTML of the growing tail, replacing the previous tail; `null` if unchanged. */
  tail: string | null;
}

export class MarkdownStream {
  private text = "";
  /** Offset in `text` where the tail starts; everything before it is committed. */
  private committedEnd = 0;
  /** End of the complete lines the last cut analysis saw, so unchanged lines are not re-parsed. */
  private analysedEnd = 0;
  /** A link reference definition was seen: the text is rendered whole from now on. */
  private wholeDocument = false;
  private tailChanged = false;

  constructor(private readonly renderer: MarkdownRenderer) {}

  /** Everything appended so far. */
  get fullText(): string {
    return this.text;
  }

  /** True when text arrived since the last flush. */
  get hasPendingChanges(): boolean {
    return this.tailChanged;
  }

  append(text: string): void {
    if (text.length === 0) return;
    this.text += text;
    this.tailChanged = true;
  }

  /** Renders what changed since the last flush. Cheap when nothing did. */
  flush(): StreamUpdate {
    const update: StreamUpdate = { reset: false, committed: [], pieces: [], tail: null };
    if (!this.tailChanged) return update;
    this.tailChanged = false;

    const completeEnd = this.text.lastIndexOf("\n") + 1;
    if (!this.wholeDocument && completeEnd > this.analysedEnd && completeEnd > this.committedEnd) {
      this.analysedEnd = completeEnd;
      this.commitFinishedBlocks(completeEnd, update);
    }
    if (!this.wholeDocument) this.commitPieces(update);
    update.tail = this.renderer.render(this.text.slice(this.committedEnd));
    return update;
  }

  private commitFinishedBlocks(completeEnd: number, update: StreamUpdate): void {
    const source = this.text.slice(this.committedEnd, completeEnd);
    const { tokens, env } = this.renderer.parse(source);
    if (env.references !== undefined && Object.keys(env.references).length > 0) {
      this.wholeDocument = true;
      if (this.committedEnd > 0) {
        this.committedEnd = 0;
        update.reset = true;
      }
      return;
    }
    const lastBlock = lastTopLevelBlockStart(tokens);
    if (lastBlock <= 0) return;
    const startLine = tokens[lastBlock]?.map?.[0];
    if (startLine === undefined) return;
    update.committed.push(this.renderer.renderTokens(tokens.slice(0, lastBlock), env));
    this.committedEnd += offsetOfLine(source, startLine);
  }

  /** Commits the pieces of a long first line of a paragraph in the tail (see the module comment). */
  private commitPieces(update: StreamUpdate): void {
    for (;;) {
      const cut = pieceEnd(this.text, this.committedEnd);
      if (cut === null) return;
      const piece = this.text.slice(this.committedEnd, cut);
      const { tokens, env } = this.renderer.parse(piece);
      const plainParagraph =
        tokens.length === 3 && tokens[0]?.type === "paragraph_open" && tokens[2]?.type === "paragraph_close";
      if (!plainParagraph) return;
      // Text alone (the usual piece) is written as it renders; a linkified address goes through
      // the renderer and the sanitizer like any other markdown.
      const text = this.renderer.plainText(tokens[1]);
      update.pieces.push(
        text === null
          ? this.renderer.renderTokens(tokens, env).replace(/^<p>/, `<p class="${PIECE_CLASS}">`)
          : `<p class="${PIECE_CLASS}">${text}</p>\n`,
      );
      this.committedEnd = cut;
    }
  }
}

/**
 * Where a piece starting at `start` ends: after the first run of spaces at or past
 * [`PIECE_CHARS`] that a letter follows, if the text before it can be a piece; else `null`.
 */
function pieceEnd(text: string, start: number): number | null {
  if (text.length - start <= PIECE_CHARS) return null;
  for (let space = text.indexOf(" ", start + PIECE_CHARS); space !== -1; space = text.indexOf(" ", space + 1)) {
    let end = space;
    while (text.charCodeAt(end) === 32 /* space */) end++;
    if (end === text.length) return null;
    const next = text.charCodeAt(end);
    const letter = (next >= 65 && next <= 90) || (next >= 97 && next <= 122);
    if (!letter) continue;
    return NOT_IN_A_PIECE.test(text.slice(start, end)) ? null : end;
  }
  return null;
}

/** Index of the token that opens the last top-level block, or -1 when there is none. */
function lastTopLevelBlockStart(tokens: { level: number; nesting: number; map: [number, number] | null }[]): number {
  for (let index = tokens.length - 1; index >= 0; index--) {
    const token = tokens[index];
    if (token !== undefined && token.level === 0 && token.nesting >= 0 && token.map !== null) {
      return index;
    }
  }
  return -1;
}

/**
 * Offset of the start of line `line` (0-based) in `text`, counting line breaks the way
 * markdown-it does (`\r\n`, `\r` and `\n` each end a line).
 */
export function offsetOfLine(text: string, line: number): number {
  let seen = 0;
  for (let offset = 0; offset < text.length; offset++) {
    if (seen === line) return offset;
    const char = text.charCodeAt(offset);
    if (char === 13 /* \r */) {
      if (text.charCodeAt(offset + 1) === 10 /* \n */) offset++;
      seen++;
    } else if (char === 10 /* \n */) {
      seen++;
    }
  }
  return text.length;
}

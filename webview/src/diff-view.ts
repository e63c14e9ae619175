// Diff lines as the chat shows them, in a tool call's diff block and in a file change card.
//
// The engine computed every line (tether-diff does all diffing); this only draws what it sent.
// Each line is one `span.diff-line` with its sign first, so that copying a block gives the
// lines as a unified patch writes them (`+added`, `-removed`, ` context`), and the words the
// engine marked as changed inside a line are wrapped in `span.diff-word`. A gap (unchanged lines
// left out between two hunks) is drawn as "⋯".

import { element } from "./element";
import type { DiffLineView, DiffSign } from "./protocol";

const SIGN_TEXT: Record<DiffSign, string> = {
  context: " ",
  removed: "-",
  added: "+",
  gap: "⋯",
};

const SIGN_CLASSES: Record<DiffSign, string> = {
  context: "diff-context",
  removed: "diff-removed",
  added: "diff-added",
  gap: "diff-gap",
};

/** A `pre` holding `lines`, one `span.diff-line` each. */
export function diffBlock(className: string, lines: DiffLineView[]): HTMLElement {
  const block = element("pre", className);
  for (const line of lines) block.append(diffLine(line));
  return block;
}

export function diffLine(line: DiffLineView): HTMLElement {
  // A sign a newer host added is drawn like context rather than dropped.
  const row = element("span", `diff-line ${SIGN_CLASSES[line.sign] ?? "diff-context"}`);
  const sign = element("span", "diff-sign", SIGN_TEXT[line.sign] ?? " ");
  if (line.sign === "gap") {
    row.title = "Unchanged lines not shown";
    row.append(sign, "\n");
    return row;
  }
  row.append(sign, ...highlighted(line.text, line.highlights), "\n");
  return row;
}

/**
 * The text with its changed words wrapped in `span.diff-word`. The ranges are UTF-16 offsets,
 * which is how JavaScript strings count, so they slice the text directly; ranges that overlap
 * an earlier one or fall outside the text are clamped rather than trusted.
 */
function highlighted(text: string, highlights: Array<[number, number]>): Array<string | HTMLElement> {
  const parts: Array<string | HTMLElement> = [];
  let shownUpTo = 0;
  const ranges = [...highlights].sort((a, b) => a[0] - b[0]);
  for (const [rangeStart, rangeEnd] of ranges) {
    const start = Math.max(rangeStart, shownUpTo);
    const end = Math.min(rangeEnd, text.length);
    if (start >= end) continue;
    if (start > shownUpTo) parts.push(text.slice(shownUpTo, start));
    parts.push(element("span", "diff-word", text.slice(start, end)));
    shownUpTo = end;
  }
  if (shownUpTo < text.length) parts.push(text.slice(shownUpTo));
  return parts;
}

/** "+3 −1", with each count in its own span for its colour and a label for screen readers. */
export function diffStats(className: string, added: number, removed: number): HTMLElement {
  const stats = element("span", className);
  stats.append(element("span", "stat-added", `+${added}`), " ", element("span", "stat-removed", `−${removed}`));
  stats.setAttribute("aria-label", `${added} ${added === 1 ? "line" : "lines"} added, ${removed} removed`);
  return stats;
}

/** The note under a diff the engine cut short at the card's limit. */
export function hiddenLinesNote(count: number): HTMLElement {
  const text = count === 1 ? "1 more changed line not shown" : `${count} more changed lines not shown`;
  return element("div", "diff-hidden", text);
}

// The lines of a tool call's diff as the chat card shows them: a compact +/- block.
//
// This is presentation only: the lines common to the start and the end of both texts are
// trimmed to a little context, and what lies between is shown as removed then added. The real
// review (per-hunk keep/reject in VS Code's diff editor) uses tether-diff; the card only has to
// tell the person at a glance what the agent changed.

export type DiffSign = "+" | "-" | " " | "…";

export interface DiffLine {
  sign: DiffSign;
  text: string;
}

/** Lines of unchanged context kept around the changed region. */
const CONTEXT_LINES = 3;

/** A card shows at most this many lines; a summary line stands for the rest. */
export const MAX_DIFF_LINES = 400;

export function diffLines(oldText: string | null, newText: string): DiffLine[] {
  const newLines = splitLines(newText);
  if (oldText === null) {
    return capped(newLines.map((text) => ({ sign: "+", text })));
  }
  const oldLines = splitLines(oldText);
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) {
    prefix++;
  }
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  if (prefix === oldLines.length && prefix === newLines.length) {
    return [{ sign: "…", text: "no changes" }];
  }

  const lines: DiffLine[] = [];
  const contextStart = Math.max(0, prefix - CONTEXT_LINES);
  if (contextStart > 0) lines.push({ sign: "…", text: skipped(contextStart) });
  for (const text of newLines.slice(contextStart, prefix)) lines.push({ sign: " ", text });
  for (const text of oldLines.slice(prefix, oldLines.length - suffix)) lines.push({ sign: "-", text });
  for (const text of newLines.slice(prefix, newLines.length - suffix)) lines.push({ sign: "+", text });
  const contextEnd = Math.min(newLines.length, newLines.length - suffix + CONTEXT_LINES);
  for (const text of newLines.slice(newLines.length - suffix, contextEnd)) lines.push({ sign: " ", text });
  if (contextEnd < newLines.length) lines.push({ sign: "…", text: skipped(newLines.length - contextEnd) });
  return capped(lines);
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r\n|\r|\n/);
  // A final line break ends the last line rather than starting an empty one.
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function skipped(count: number): string {
  return count === 1 ? "1 unchanged line" : `${count} unchanged lines`;
}

function capped(lines: DiffLine[]): DiffLine[] {
  if (lines.length <= MAX_DIFF_LINES) return lines;
  const shown = lines.slice(0, MAX_DIFF_LINES);
  const rest = lines.length - MAX_DIFF_LINES;
  shown.push({ sign: "…", text: rest === 1 ? "1 more line" : `${rest} more lines` });
  return shown;
}

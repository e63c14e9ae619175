// The tool card's +/- block: what changed, with a little context, bounded in size.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_DIFF_LINES, diffLines } from "../src/diff-lines";

function show(oldText: string | null, newText: string): string[] {
  return diffLines(oldText, newText).map((line) => `${line.sign}${line.text}`);
}

describe("diff lines", () => {
  it("shows a new file as all added", () => {
    assert.deepEqual(show(null, "a\nb\n"), ["+a", "+b"]);
  });

  it("shows the changed region with three lines of context and counts the rest", () => {
    const before = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"].join("\n");
    const after = ["1", "2", "3", "4", "5", "six", "7", "8", "9", "10"].join("\n");
    assert.deepEqual(show(before, after), [
      "…2 unchanged lines",
      " 3",
      " 4",
      " 5",
      "-6",
      "+six",
      " 7",
      " 8",
      " 9",
      "…1 unchanged line",
    ]);
  });

  it("shows pure insertions and deletions", () => {
    assert.deepEqual(show("a\nc\n", "a\nb\nc\n"), [" a", "+b", " c"]);
    assert.deepEqual(show("a\nb\nc\n", "a\nc\n"), [" a", "-b", " c"]);
  });

  it("says so when nothing changed", () => {
    assert.deepEqual(show("same\n", "same\n"), ["…no changes"]);
  });

  it("caps a huge diff", () => {
    const lines = diffLines(null, "x\n".repeat(5_000));
    assert.equal(lines.length, MAX_DIFF_LINES + 1);
    assert.deepEqual(lines[lines.length - 1], { sign: "…", text: "4600 more lines" });
  });
});

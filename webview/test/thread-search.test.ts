// Find in thread over the model (thread-search.ts): the words each kind of entry is searched by,
// "n of m" as the person moves through the matches, and the count following a growing thread;
// and the heights the virtualized thread places entries by (entry-sizes.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EntrySizes, HeightEstimates } from "../src/entry-sizes";
import type { Entry } from "../src/protocol";
import { ThreadSearch, countOccurrences, searchableText } from "../src/thread-search";
import { agentMessage, commandToolCall, fileChange, restoreEntry, toolCall } from "./fixtures";


describe("find in thread", () => {
  it("searches each kind of entry by the words it shows", () => {
    const texts = [
      { type: "user", text: "Fix the parser", attachments: [{ type: "file", path: "src/parse.rs" }] },
      { type: "agent", chunks: [{ kind: "thought", text: "Where is it?" }, { kind: "text", text: "In `parse`." }] },
      commandToolCall(3, "cargo test"),
      toolCall({
        content: [
          { type: "text", text: "fn main() {}" },
          { type: "diff", path: "/w/a.rs", label: "a.rs", change: null, added: 1, removed: 0, lines: [{ sign: "added", text: "let x = 1;", highlights: [] }], hiddenLines: 0 },
        ],
        locations: [{ path: "/w/README.md", label: "README.md", line: null }],
      }),
      fileChange(),
      { type: "notice", level: "error", text: "The agent exited", detail: "fatal: simulated crash" },
      restoreEntry(),
    ].map((entry) => searchableText(entry as Entry).split("\n"));
    assert.deepEqual(texts, [
      ["Fix the parser", "src/parse.rs"],
      ["Where is it?", "In `parse`."],
      ["Run tests (3)", "cargo test"],
      ["Read README.md", "fn main() {}", "a.rs", "let x = 1;", "README.md"],
      ["src/app.ts", "old line 1", "new line 1", "old line 11", "new line 11", ""],
      ["The agent exited", "fatal: simulated crash"],
      ["Restore the code to before “Add a greeting”", "src/app.ts"],
    ]);
  });

  it("counts matches without overlap, whatever their case", () => {
    assert.equal(countOccurrences("aaaa", "aa"), 2);
    assert.equal(countOccurrences("needle in a haystack", "needle"), 1);
    const search = new ThreadSearch();
    search.setQuery("NEEDLE", [agentMessage("a needle, a Needle")], 0);
    assert.equal(search.total, 2);
  });

  it("moves through the matches in order, and around from the last to the first", () => {
    const entries = [
      agentMessage("needle one"),
      agentMessage("none"),
      agentMessage("needle two, needle three"),
      agentMessage("needle four"),
    ];
    const search = new ThreadSearch();
    // From entry 1 (the first in sight): the first match at or after it.
    search.setQuery("needle", entries, 1);
    const seen = [search.position];
    for (let step = 0; step < 4; step++) {
      search.next();
      seen.push(search.position);
    }
    assert.deepEqual(seen, [2, 3, 4, 1, 2]);
    search.previous();
    search.previous();
    assert.deepEqual([search.position, search.current], [4, { index: 3, occurrence: 0 }]);
    search.setQuery("nothing like it", entries, 0);
    assert.deepEqual([search.total, search.position, search.next()], [0, 0, null]);
  });

  it("counts again only what changed as the thread grows, keeping the current match", () => {
    const message = agentMessage("needle");
    const entries: Entry[] = [agentMessage("needle"), message];
    const search = new ThreadSearch();
    search.setQuery("needle", entries, 0);
    search.next();
    assert.equal(search.position, 2);
    if (message.type === "agent") message.chunks[0]!.text += " and another needle";
    entries.push(agentMessage("a third needle"));
    search.update(entries, [1, 2], false);
    assert.deepEqual([search.position, search.total], [2, 4]);
    entries[1] = agentMessage("gone");
    search.update(entries, [1], false);
    assert.deepEqual([search.current, search.total], [{ index: 2, occurrence: 0 }, 2], "to the next one left");
  });
});

describe("entry heights", () => {
  it("places entries by their heights and the gap between them", () => {
    const sizes = new EntrySizes();
    sizes.gap = 10;
    sizes.resize(4, () => 50);
    sizes.measure(1, 100);
    assert.deepEqual([0, 1, 2, 3, 4].map((index) => sizes.top(index)), [0, 60, 170, 230, 290]);
    assert.equal(sizes.total, 280);
    assert.deepEqual([0, 59, 60, 169, 170, 1_000, -5].map((y) => sizes.indexAt(y)), [0, 0, 1, 1, 2, 3, 0]);
    assert.equal(sizes.isMeasured(1), true);
    sizes.forget(1, 100);
    assert.equal(sizes.isMeasured(1), false);
  });

  it("keeps what it knows when the thread grows far past its first size", () => {
    const sizes = new EntrySizes();
    sizes.resize(10, () => 20);
    sizes.measure(9, 40);
    sizes.resize(10_000, () => 30);
    assert.equal(sizes.top(10), 9 * 20 + 40);
    assert.equal(sizes.total, 9 * 20 + 40 + 9_990 * 30);
    assert.equal(sizes.indexAt(sizes.top(5_000) + 1), 5_000);
  });

  it("guesses an entry's height from those of its kind already measured", () => {
    const estimates = new HeightEstimates();
    const first = estimates.estimate("toolCall");
    estimates.learn("toolCall", 200);
    estimates.learn("toolCall", 100);
    assert.deepEqual([first > 0, estimates.estimate("toolCall")], [true, 150]);
  });
});

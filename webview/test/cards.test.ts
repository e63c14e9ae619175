// Cards read as words a person uses: paths as the engine worded them (relative to the
// workspace) and as links that open the file at the line, one diff per change, statuses and
// kinds in words and icons rather than protocol ids, raw data behind a "Raw" disclosure as
// formatted JSON, and long outputs cut to their first lines until the person asks for more.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { Entry, NoticeView, ToolCallView, ToolStatus } from "../src/protocol";
import { COLLAPSED_LINES } from "../src/collapsed-lines";
import { commandToolCall, fileChange, hunk, patch, snapshot, toolCall } from "./fixtures";
import { type Harness, harness } from "./support";

function diffTo(change: number | null): ToolCallView["content"][number] {
  return {
    type: "diff",
    path: "/workspace/src/app.ts",
    label: "src/app.ts",
    change,
    added: 1,
    removed: 1,
    lines: [
      { sign: "removed", text: "old line 1", highlights: [] },
      { sign: "added", text: "new line 1", highlights: [] },
    ],
    hiddenLines: 0,
  };
}

function notice(detail: string | null): Entry {
  const view: NoticeView = { level: "warning", text: "The agent printed a line that is not JSON-RPC.", detail };
  return { type: "notice", ...view };
}

describe("card paths", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("shows the engine's labels: relative inside the workspace, absolute outside, with the line", () => {
    ui.frame(
      snapshot([
        toolCall({
          locations: [
            { path: "/workspace/docs/guide.md", line: 3, label: "docs/guide.md" },
            { path: "/etc/hosts", line: null, label: "/etc/hosts" },
          ],
        }),
      ]),
    );
    assert.deepEqual(
      ui.queryAll(".tool-location").map((link) => link.textContent),
      ["docs/guide.md:3", "/etc/hosts"],
    );
    assert.equal(ui.query(".tool-call").textContent?.includes("/workspace/"), false, "no absolute path inside the workspace");
  });

  it("opens the file at the line when a location or a diff's path is pressed", () => {
    ui.frame(
      snapshot([
        toolCall({
          kind: "edit",
          title: "Edit src/app.ts",
          content: [diffTo(null)],
          locations: [
            { path: "/workspace/src/app.ts", line: 12, label: "src/app.ts" },
            { path: "/workspace/src/util.ts", line: 4, label: "src/util.ts" },
          ],
        }),
      ]),
    );
    // The diff's file is named once, by the diff's header, which opens it at the location's line.
    assert.deepEqual(
      ui.queryAll(".tool-location").map((link) => link.textContent),
      ["src/util.ts:4"],
    );
    const location = ui.query<HTMLButtonElement>("button.tool-location");
    assert.equal(location.getAttribute("aria-label"), "Open src/util.ts at line 4");
    location.click();
    const diffPath = ui.query<HTMLButtonElement>("button.tool-diff-path");
    assert.equal(diffPath.textContent, "src/app.ts");
    diffPath.click();
    assert.deepEqual(ui.posted.slice(-2), [
      { type: "openLocation", path: "/workspace/src/util.ts", line: 4 },
      { type: "openLocation", path: "/workspace/src/app.ts", line: 12 },
    ]);
  });
});

describe("one diff per change", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("draws a diff no change card shows", () => {
    ui.frame(snapshot([toolCall({ kind: "edit", content: [diffTo(null)] })]));
    assert.equal(ui.queryAll(".tool-call .diff-line").length, 2);
    assert.equal(ui.queryAll(".tool-diff-change").length, 0);
  });

  it("links to the change card instead of drawing its diff again, and the link brings the focus there", () => {
    ui.frame(snapshot([toolCall({ kind: "edit", content: [diffTo(7)] }), fileChange()]));
    assert.equal(ui.queryAll(".tool-call .diff-line").length, 0, "the tool call does not repeat the diff");
    assert.equal(ui.queryAll(".file-change .diff-line").length, 4, "the change card shows it, with its review");
    assert.equal(ui.queryAll(".file-change button.hunk-keep").length, 2);
    assert.equal(ui.query(".tool-diff").dataset["change"], "7");
    assert.equal(ui.query(".tool-diff-path").textContent, "src/app.ts");

    const link = ui.query<HTMLButtonElement>("button.tool-diff-change");
    assert.equal(link.getAttribute("aria-label"), "Go to the change to src/app.ts");
    link.click();
    const focused = ui.window.document.activeElement;
    assert.ok(focused !== null && ui.query('.file-change[data-change-id="7"]').contains(focused));
  });
});

describe("tool call words", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("says each status in words, with no protocol id anywhere on the card", () => {
    const words: Record<ToolStatus, string> = {
      pending: "Starting",
      in_progress: "Running",
      waiting_for_confirmation: "Waiting for you",
      completed: "Finished",
      failed: "Failed",
      cancelled: "Stopped",
    };
    for (const [status, word] of Object.entries(words) as Array<[ToolStatus, string]>) {
      ui.frame(snapshot([toolCall({ status, kind: "switch_mode", title: "Plan first" })]));
      const card = ui.query(".entry.tool-call");
      assert.equal(ui.query(".tool-status").textContent, word);
      assert.equal(card.getAttribute("aria-label"), `Switch mode: Plan first, ${word}`);
      assert.doesNotMatch(card.textContent ?? "", /in_progress|waiting_for_confirmation|switch_mode|pending|completed/);
    }
  });

  it("draws a title's backtick-quoted command as code, without the backticks", () => {
    const titles: Array<[string, string, string[]]> = [
      // As Claude Code titles a command: the whole title is code.
      ["`npm test -- --watch`", "npm test -- --watch", ["npm test -- --watch"]],
      ["Edit `src/app.ts` and `src/b.ts`", "Edit src/app.ts and src/b.ts", ["src/app.ts", "src/b.ts"]],
      // A longer run quotes a backtick; one space on each side is padding.
      ["Run `` echo `date` ``", "Run echo `date`", ["echo `date`"]],
      // An unmatched backtick, and Markdown other than code spans, stay as the agent wrote them.
      ["grep it's `odd", "grep it's `odd", []],
      ["Run ls *_test_*", "Run ls *_test_*", []],
    ];
    for (const [title, shown, code] of titles) {
      ui.frame(snapshot([toolCall({ kind: "execute", title })]));
      assert.equal(ui.query(".tool-title").textContent, shown, title);
      assert.deepEqual(ui.queryAll(".tool-title code").map((span) => span.textContent), code, title);
      assert.equal(ui.query(".entry.tool-call").getAttribute("aria-label"), `Run a command: ${shown}, Finished`);
    }
  });

  it("shows the kind as its codicon, named in a tooltip and for screen readers", () => {
    const kinds: Array<[string, string, string]> = [
      ["read", "eye", "Read"],
      ["edit", "edit", "Edit"],
      ["delete", "trash", "Delete"],
      ["move", "arrow-right", "Move"],
      ["search", "search", "Search"],
      ["execute", "terminal", "Run a command"],
      ["think", "lightbulb", "Think"],
      ["fetch", "globe", "Fetch"],
      ["switch_mode", "arrow-swap", "Switch mode"],
      ["other", "tools", "Tool"],
      ["a_kind_from_a_newer_agent", "tools", "Tool"],
    ];
    for (const [kind, codicon, label] of kinds) {
      ui.frame(snapshot([toolCall({ kind })]));
      const shown = ui.query(".tool-kind");
      assert.ok(shown.querySelector(`.codicon-${codicon}`), `${kind} is drawn as ${codicon}`);
      assert.equal(shown.getAttribute("role"), "img");
      assert.equal(shown.getAttribute("aria-label"), label);
      assert.equal(shown.title, label);
      assert.equal(shown.textContent, "");
    }
  });
});

describe("raw data", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("keeps a tool call's input and output behind a closed Raw disclosure, as formatted JSON", () => {
    const rawInput = { path: "README.md", limit: 20 };
    const rawOutput = JSON.stringify({ lines: 20, truncated: false });
    ui.frame(snapshot([toolCall({ rawInput, rawOutput })]));
    const raw = ui.query<HTMLDetailsElement>("details.tool-raw");
    assert.equal(raw.open, false);
    assert.equal(raw.querySelector("summary")?.textContent, "Raw");
    assert.deepEqual(
      [...raw.querySelectorAll(".raw-label")].map((label) => label.textContent),
      ["Input", "Output"],
    );
    assert.deepEqual(
      [...raw.querySelectorAll("pre.raw-json")].map((block) => block.textContent),
      [JSON.stringify(rawInput, null, 2), '{\n  "lines": 20,\n  "truncated": false\n}'],
    );

    raw.open = true;
    raw.dispatchEvent(new ui.window.Event("toggle"));
    ui.frame(patch([{ op: "replace", index: 0, entry: toolCall({ rawInput, rawOutput, status: "failed" }) }]));
    assert.equal(ui.query<HTMLDetailsElement>("details.tool-raw").open, true, "stays open across updates");
  });

  it("shows a notice's JSON detail as Raw, formatted, and its words under More", () => {
    ui.frame(snapshot([notice('{"jsonrpc":"2.0","id":3}'), notice("stderr: out of memory")]));
    const [json, words] = ui.queryAll<HTMLDetailsElement>("details.notice-detail");
    assert.equal(json?.querySelector("summary")?.textContent, "Raw");
    assert.equal(json?.querySelector("pre")?.textContent, '{\n  "jsonrpc": "2.0",\n  "id": 3\n}');
    assert.equal(words?.querySelector("summary")?.textContent, "More");
    assert.equal(words?.querySelector("pre")?.textContent, "stderr: out of memory");
  });
});

describe("long output", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const lines = Array.from({ length: 240 }, (_, index) => `line ${index + 1}`);
  const long = toolCall({ content: [{ type: "text", text: lines.join("\n\n") }] });

  function shownParagraphs(): number {
    return ui.queryAll(".tool-output .markdown p").length;
  }

  it("shows a short output whole, with nothing to expand", () => {
    ui.frame(snapshot([toolCall({ content: [{ type: "text", text: "one\n\ntwo" }] })]));
    assert.equal(ui.queryAll(".tool-output-toggle").length, 0);
    assert.equal(shownParagraphs(), 2);
  });

  it("collapses a long output to its first lines with a count, and expands and collapses it again", () => {
    ui.frame(snapshot([long]));
    const toggle = ui.query<HTMLButtonElement>("button.tool-output-toggle");
    assert.equal(toggle.type, "button", "a button: Enter and Space press it");
    assert.equal(toggle.textContent, "Show all 479 lines");
    assert.equal(toggle.getAttribute("aria-expanded"), "false");
    assert.equal(ui.query(".tool-output").dataset["collapsed"], "true");
    assert.ok(shownParagraphs() <= COLLAPSED_LINES, "only the first lines are drawn");
    assert.equal(ui.query(`#${toggle.getAttribute("aria-controls")}`).className, "markdown");

    toggle.click();
    const expanded = ui.query<HTMLButtonElement>("button.tool-output-toggle");
    assert.equal(expanded.textContent, "Show less");
    assert.equal(expanded.getAttribute("aria-expanded"), "true");
    assert.equal(ui.window.document.activeElement, expanded, "the focus stays on the toggle");
    assert.equal(shownParagraphs(), 240);

    // A status update redraws the card: the output stays as the person left it.
    ui.frame(patch([{ op: "replace", index: 0, entry: { ...long, status: "failed" } as Entry }]));
    assert.equal(shownParagraphs(), 240);

    ui.query<HTMLButtonElement>("button.tool-output-toggle").click();
    assert.ok(shownParagraphs() <= COLLAPSED_LINES);
    assert.equal(ui.query("button.tool-output-toggle").getAttribute("aria-expanded"), "false");
  });

  it("keeps an output's line breaks, as it printed them", () => {
    const run = "running 3 tests\ntest module_4::adds ... ok\ntest module_4::reads ... ok";
    ui.frame(snapshot([toolCall({ content: [{ type: "text", text: `${run}\n\n**2 passed**` }] })]));
    // Before, markdown joined the lines: "running 3 tests test module_4::adds ... ok test …".
    const first = ui.query(".tool-output .markdown p");
    assert.equal(first.innerHTML, "running 3 tests<br>\ntest module_4::adds ... ok<br>\ntest module_4::reads ... ok");
    assert.equal(ui.queryAll(".tool-output .markdown strong").length, 1, "and markdown is still markdown");
  });

  it("closes a code fence cut by the collapse, so the first lines still read as code", () => {
    const code = ["```sh", ...Array.from({ length: 30 }, (_, index) => `echo ${index}`), "```"].join("\n");
    ui.frame(snapshot([toolCall({ content: [{ type: "text", text: code }] })]));
    const block = ui.query(".tool-output .markdown pre code");
    assert.equal(block.textContent?.trim().split("\n").length, COLLAPSED_LINES - 1);
  });
});

describe("plan", () => {
  it("names each step's status and priority in words", () => {
    const ui = harness();
    ui.frame(
      snapshot([], {
        plan: [
          { content: "Read the code", priority: "high", status: "completed" },
          { content: "Write the fix", priority: "medium", status: "in_progress" },
          { content: "Run the tests", priority: "low", status: "pending" },
        ],
      }),
    );
    assert.deepEqual(
      ui.queryAll(".plan-entry").map((entry) => entry.title),
      ["Done, high priority", "In progress, medium priority", "To do, low priority"],
    );
  });
});

describe("plan panel", () => {
  const plan = [
    { content: "Read the code", priority: "high", status: "completed" },
    { content: "Write the fix", priority: "medium", status: "in_progress" },
  ] as const;

  it("is open while the turn runs and folds to its count when the turn ends", () => {
    // Left open after the turn, a finished or cancelled plan kept a quarter of a narrow sidebar.
    const ui = harness();
    ui.frame(snapshot([], { plan: [...plan], turn: { type: "running" } }));
    const details = ui.query<HTMLDetailsElement>("aside.plan details");
    assert.equal(details.open, true);
    assert.equal(ui.query(".plan-count").textContent, "1/2");
    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "cancelled" } }]));
    assert.equal(details.open, false, "folded once the turn ended");
    assert.equal(ui.query("aside.plan").hidden, false, "its title and count stay");

    // The person opens it: it stays open, with the plan as it changes, until a turn starts.
    details.open = true;
    ui.frame(patch([{ op: "plan", entries: [{ ...plan[0] }, { ...plan[1], status: "completed" }] }]));
    assert.equal(details.open, true);
    assert.equal(ui.query(".plan-count").textContent, "2/2");
  });
});

describe("change and permission cards in words", () => {
  it("says where each hunk is in lines, keeping the unified header in its tooltip", () => {
    const ui = harness();
    ui.frame(
      snapshot([
        fileChange({
          hunks: [
            hunk(0, { oldLine: 4, oldCount: 1, newLine: 4, newCount: 1 }),
            hunk(1, { oldLine: 10, oldCount: 2, newLine: 10, newCount: 3 }),
            hunk(2, { oldLine: 20, oldCount: 2, newLine: 21, newCount: 0 }),
          ],
        }),
      ]),
    );
    assert.deepEqual(
      ui.queryAll(".hunk-header").map((header) => [header.textContent, header.title]),
      [
        ["Line 4", "@@ -4,1 +4,1 @@"],
        ["Lines 10–12", "@@ -10,2 +10,3 @@"],
        ["Lines 20–21 removed", "@@ -20,2 +21,0 @@"],
      ],
    );
  });

  it("shows the command while asking, and once answered leaves it to the terminal card that runs it", () => {
    const ui = harness();
    ui.frame(snapshot([commandToolCall(4, "npm test")]));
    assert.equal(ui.query(".permission-command").textContent, "$ npm test");
    assert.ok(ui.query(".permission-prompt .codicon-question"), "the agent's question has its icon");
    const allowed = commandToolCall(4, "npm test", { type: "selected", optionId: "allow-once" });
    ui.frame(patch([{ op: "replace", index: 0, entry: allowed }]));
    assert.equal(ui.query(".permission-command").textContent, "$ npm test", "nothing else says it yet");
    // The terminal comes after the answer, as it does from an agent.
    const running = commandToolCall(4, "npm test", { type: "selected", optionId: "allow-once" }, {
      content: [{ type: "terminal", terminalId: "term-1" }],
    });
    ui.frame(patch([{ op: "replace", index: 0, entry: running }]));
    assert.equal(ui.queryAll(".permission-command").length, 0);
    assert.equal(ui.query(".terminal-card").dataset["terminalId"], "term-1");
    assert.equal(ui.query(".permission-outcome").textContent, "Allowed once");
    assert.ok(ui.query(".permission-outcome .codicon-check"));
  });
});

// The terminal card as the person meets it in a tool call: the command line, where and by whom
// it runs, how it ended, the elapsed time counting on while it runs, the output tail with its
// colours, Stop and "Open in terminal" with the exact intents they send, the "Starting…"
// placeholder, and a terminal patch that redraws that one card and nothing else.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { ChangeSet, applyHostMessage, emptyModel } from "../src/model";
import type { TerminalSpan, TerminalState, TerminalView } from "../src/protocol";
import { formatElapsed } from "../src/terminal-view";
import { patch, plainLines, plainStyle, snapshot, terminalToolCall, terminalView } from "./fixtures";
import { type Harness, harness } from "./support";

function terminalPatch(view: TerminalView): ReturnType<typeof patch> {
  return patch([{ op: "terminal", view }]);
}

function card(ui: Harness, id = "term-1"): HTMLElement {
  return ui.query(`.terminal-card[data-terminal-id="${id}"]`);
}

/** What a person reads on the card: its header line, its second line, then the output. */
function cardText(node: HTMLElement): string {
  const shown = (selector: string): string | null => {
    const found = node.querySelector<HTMLElement>(selector);
    return found === null || found.hidden ? null : found.textContent;
  };
  const status = node.querySelector<HTMLElement>(".terminal-status");
  const header = [
    shown(".terminal-command"),
    `${status?.textContent} [${status?.dataset["outcome"]}]`,
    shown(".terminal-elapsed"),
  ];
  const meta = [
    shown(".terminal-cwd"),
    shown(".terminal-origin"),
    ...[...node.querySelectorAll<HTMLButtonElement>(".terminal-actions button")]
      .filter((button) => !button.hidden)
      .map((button) => `<${button.textContent}${button.disabled ? " (disabled)" : ""}>`),
  ];
  const failure = shown(".terminal-failure");
  const output = shown(".terminal-output");
  return [
    header.filter((part) => part !== null).join(" | "),
    meta.filter((part) => part !== null).join(" | "),
    ...(failure === null ? [] : [`failed: ${failure}`]),
    ...(output === null ? [] : output.split("\n").map((line) => `> ${line}`)),
  ].join("\n");
}

describe("terminal card", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("shows the command, where it runs, the output tail and how long it took", () => {
    ui.frame(
      snapshot([terminalToolCall(0, "term-1")], {
        terminals: [
          terminalView({
            cwd: "packages/core",
            state: { type: "exited", exitCode: 0, signal: null, killed: false },
            elapsedMs: 63_400,
          }),
        ],
      }),
    );
    assert.equal(
      cardText(card(ui)),
      [
        "$ npm test | Finished [success] | 1 min 3 s",
        "in packages/core | <Open in terminal>",
        "> > tether@0.1.0 test",
        "> ok 1 - adds",
      ].join("\n"),
    );
    assert.equal(card(ui).closest(".entry.tool-call")?.getAttribute("data-index"), "0");
  });

  it("words each way a command can end", () => {
    const cases: [TerminalState, string][] = [
      [{ type: "running" }, "Running [running]"],
      [{ type: "exited", exitCode: 0, signal: null, killed: false }, "Finished [success]"],
      [{ type: "exited", exitCode: 3, signal: null, killed: false }, "Failed (exit code 3) [error]"],
      [{ type: "exited", exitCode: null, signal: "SIGTERM", killed: true }, "Killed (SIGTERM) [stopped]"],
      [{ type: "exited", exitCode: null, signal: null, killed: true }, "Stopped [stopped]"],
      [{ type: "exited", exitCode: null, signal: "SIGSEGV", killed: false }, "Killed (SIGSEGV) [error]"],
      [{ type: "failed", message: "spawn npm ENOENT" }, "Failed [error] / spawn npm ENOENT"],
    ];
    ui.frame(snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView()] }));
    const shown = cases.map(([state]) => {
      ui.frame(terminalPatch(terminalView({ state })));
      const node = card(ui);
      const status = node.querySelector<HTMLElement>(".terminal-status");
      const failure = node.querySelector<HTMLElement>(".terminal-failure");
      const words = `${status?.textContent} [${status?.dataset["outcome"]}]`;
      return failure === null || failure.hidden ? words : `${words} / ${failure.textContent}`;
    });
    assert.deepEqual(
      shown,
      cases.map(([, expected]) => expected),
    );
  });

  it("draws each style of the output as classes, exact colours from a constructed stylesheet", () => {
    const spans: TerminalSpan[] = [
      { text: "red", style: { ...plainStyle, fg: { type: "palette", index: 1 } } },
      {
        text: "loud",
        style: { ...plainStyle, fg: { type: "palette", index: 15 }, bg: { type: "palette", index: 4 }, bold: true },
      },
      { text: "orange", style: { ...plainStyle, fg: { type: "rgb", hex: "#FF8800" }, italic: true } },
      { text: "orange bg", style: { ...plainStyle, bg: { type: "rgb", hex: "#ff8800" } } },
      { text: "again", style: { ...plainStyle, fg: { type: "rgb", hex: "#ff8800" } } },
      { text: "faint", style: { ...plainStyle, dim: true, underline: true, strikethrough: true } },
      { text: "bad index", style: { ...plainStyle, fg: { type: "palette", index: 99 } } },
      { text: "bad hex", style: { ...plainStyle, fg: { type: "rgb", hex: "#000;} body { display: none" } } },
      { text: "plain", style: plainStyle },
    ];
    ui.frame(
      snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView({ lines: [{ spans }] })] }),
    );
    const drawn = [...card(ui).querySelectorAll(".terminal-line > span")].map(
      (span) => `${span.className}|${span.textContent}`,
    );
    assert.deepEqual(drawn, [
      "term-fg-red|red",
      "term-fg-bright-white term-bg-blue term-bold|loud",
      "term-fg-rgb-ff8800 term-italic|orange",
      "term-bg-rgb-ff8800|orange bg",
      "term-fg-rgb-ff8800|again",
      "term-dim term-underline term-strike|faint",
      "|bad index",
      "|bad hex",
      "|plain",
    ]);
    // Each exact colour is defined once, as text or background colour, in the adopted sheet.
    const sheets = (ui.window.document as unknown as { adoptedStyleSheets: CSSStyleSheet[] }).adoptedStyleSheets;
    const rules = sheets.flatMap((sheet) => [...sheet.cssRules]).map((rule) => rule.cssText);
    assert.deepEqual(rules, [
      ".term-fg-rgb-ff8800 { color: rgb(255, 136, 0); }",
      ".term-bg-rgb-ff8800 { background-color: rgb(255, 136, 0); }",
    ]);
  });

  it("draws each state's codicon beside its words, and icons on its buttons", () => {
    const icons = (): string[] =>
      ui.queryAll(".terminal-card .codicon").map((glyph) => [...glyph.classList].filter((name) => name !== "codicon").join(" "));
    ui.frame(snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView()] }));
    assert.deepEqual(icons(), ["codicon-loading codicon-modifier-spin", "codicon-debug-stop", "codicon-terminal"]);
    ui.frame(terminalPatch(terminalView({ state: { type: "exited", exitCode: 0, signal: null, killed: false } })));
    assert.deepEqual(icons(), ["codicon-check", "codicon-debug-stop", "codicon-terminal"]);
    ui.frame(terminalPatch(terminalView({ state: { type: "exited", exitCode: 2, signal: null, killed: false } })));
    assert.equal(ui.query(".terminal-status").textContent, "Failed (exit code 2)");
    assert.equal(ui.query(".terminal-status .codicon-error").getAttribute("aria-hidden"), "true");
  });

  it("sends stop and open for the terminal, and waits for the command to end after Stop", () => {
    ui.frame(snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView()] }));
    assert.equal(cardText(card(ui)).split("\n")[1], "<Stop> | <Open in terminal>");
    ui.query<HTMLButtonElement>(".terminal-stop").click();
    ui.query<HTMLButtonElement>(".terminal-stop").click();
    ui.query<HTMLButtonElement>(".terminal-open").click();
    assert.deepEqual(ui.posted, [
      { type: "terminal", intent: { type: "stop", terminal: "term-1" } },
      { type: "terminal", intent: { type: "open", terminal: "term-1" } },
    ]);
    // More output while the kill takes effect does not offer Stop again.
    ui.frame(terminalPatch(terminalView({ lines: plainLines("still going") })));
    assert.equal(cardText(card(ui)).split("\n")[1], "<Stopping… (disabled)> | <Open in terminal>");
    ui.frame(
      terminalPatch(terminalView({ state: { type: "exited", exitCode: null, signal: "SIGTERM", killed: true } })),
    );
    assert.equal(cardText(card(ui)).split("\n")[1], "<Open in terminal>");
  });

  it("moves the focus from Stop to Open in terminal once Stop is pressed", () => {
    // A focused button that is disabled drops the focus to the page (before, a keyboard user
    // started over from the top of the view).
    ui.frame(snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView()] }));
    const stop = ui.query<HTMLButtonElement>(".terminal-stop");
    stop.focus();
    stop.click();
    assert.equal(ui.window.document.activeElement, ui.query(".terminal-open"));
  });

  it("offers no Stop for the agent's own commands, and says who runs them", () => {
    ui.frame(snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView({ origin: "agent" })] }));
    assert.equal(cardText(card(ui)).split("\n")[1], "run by the agent | <Open in terminal>");
  });

  it("redraws only the card of the terminal a patch changes", () => {
    ui.frame(
      snapshot([terminalToolCall(0, "term-1"), terminalToolCall(1, "term-2")], {
        terminals: [terminalView(), terminalView({ id: "term-2", command: "cargo build" })],
      }),
    );
    const first = card(ui, "term-1");
    const secondOutput = card(ui, "term-2").querySelector(".terminal-output");
    const headers = ui.queryAll(".tool-header");
    const observer = new ui.window.MutationObserver(() => {});
    observer.observe(ui.query(".thread"), { subtree: true, childList: true, characterData: true, attributes: true });

    ui.frame(terminalPatch(terminalView({ lines: plainLines("ok 1 - adds", "ok 2 - subtracts"), elapsedMs: 2500 })));

    const touched = new Set(
      observer.takeRecords().map((record) => {
        const target = record.target instanceof ui.window.Element ? record.target : record.target.parentElement;
        return target?.closest<HTMLElement>(".terminal-card")?.dataset["terminalId"] ?? "outside a card";
      }),
    );
    observer.disconnect();
    assert.deepEqual([...touched], ["term-1"]);
    assert.equal(card(ui, "term-1"), first);
    assert.equal(card(ui, "term-2").querySelector(".terminal-output"), secondOutput);
    assert.deepEqual(ui.queryAll(".tool-header"), headers);
    assert.match(cardText(first), /ok 2 - subtracts/);
  });

  it("says Starting… until the terminal's view arrives, then becomes the card", () => {
    ui.frame(snapshot([terminalToolCall(0, "term-9")]));
    const placeholder = card(ui, "term-9");
    assert.equal(placeholder.dataset["state"], "starting");
    assert.equal(placeholder.textContent, "Starting…");
    // The tool call changing meanwhile keeps the same placeholder.
    ui.frame(patch([{ op: "replace", index: 0, entry: terminalToolCall(0, "term-9", { title: "Run npm test" }) }]));
    assert.equal(card(ui, "term-9"), placeholder);

    ui.frame(terminalPatch(terminalView({ id: "term-9" })));
    assert.equal(card(ui, "term-9"), placeholder);
    assert.equal(placeholder.dataset["state"], "running");
    // The title "Run npm test" says the command: the card does not say "$ npm test" again.
    assert.equal(
      cardText(placeholder),
      [
        "Running [running] | 1.2 s",
        "<Stop> | <Open in terminal>",
        "> > tether@0.1.0 test",
        "> ok 1 - adds",
      ].join("\n"),
    );
  });

  it("says the command once: not again under a title that quotes it", () => {
    const finished: TerminalState = { type: "exited", exitCode: 0, signal: null, killed: false };
    ui.frame(
      snapshot([terminalToolCall(0, "term-1", { title: "`npm test`" })], { terminals: [terminalView({ state: finished })] }),
    );
    // Claude Code titles a command with the command itself: before, the card read it twice.
    assert.equal(cardText(card(ui)).split("\n")[0], "Finished [success] | 1.2 s");
    // A title that only paraphrases it ("Run the tests") leaves the card its command line.
    ui.frame(patch([{ op: "replace", index: 0, entry: terminalToolCall(0, "term-1", { title: "Run the tests" }) }]));
    assert.equal(cardText(card(ui)).split("\n")[0], "$ npm test | Finished [success] | 1.2 s");
    // So does one that holds the command's letters only inside a word of its own: "tools" is not `ls`.
    ui.frame(terminalPatch(terminalView({ command: "ls", state: finished })));
    ui.frame(patch([{ op: "replace", index: 0, entry: terminalToolCall(0, "term-1", { title: "Check tools" }) }]));
    assert.equal(cardText(card(ui)).split("\n")[0], "$ ls | Finished [success] | 1.2 s");
    ui.frame(patch([{ op: "replace", index: 0, entry: terminalToolCall(0, "term-1", { title: "Run ls" }) }]));
    assert.equal(cardText(card(ui)).split("\n")[0], "Finished [success] | 1.2 s");
  });

  it("keeps the agent's and the program's text as text, never HTML", () => {
    const hostile = '<img src=x onerror="alert(1)">';
    ui.frame(
      snapshot([terminalToolCall(0, "term-1")], {
        terminals: [
          terminalView({
            command: `echo '<b>bold</b>'`,
            cwd: "<script>alert(2)</script>",
            lines: plainLines(hostile),
            state: { type: "failed", message: "<i>lost</i>" },
          }),
        ],
      }),
    );
    const node = card(ui);
    assert.equal(node.querySelectorAll("img, b, i, script").length, 0);
    assert.equal(
      cardText(node),
      [
        "$ echo '<b>bold</b>' | Failed [error] | 1.2 s",
        "in <script>alert(2)</script> | <Open in terminal>",
        "failed: <i>lost</i>",
        `> ${hostile}`,
      ].join("\n"),
    );
  });

  it("says how many earlier lines the tail leaves out, and when there was no output", () => {
    ui.frame(
      snapshot([terminalToolCall(0, "term-1"), terminalToolCall(1, "term-2"), terminalToolCall(2, "term-3")], {
        terminals: [
          terminalView({ hiddenLines: 250 }),
          terminalView({ id: "term-2", hiddenLines: 1, lines: [] }),
          terminalView({
            id: "term-3",
            lines: [],
            state: { type: "exited", exitCode: 0, signal: null, killed: false },
          }),
        ],
      }),
    );
    const output = (id: string): string | null =>
      card(ui, id).querySelector(".terminal-output")?.textContent ?? null;
    assert.equal(output("term-1"), "… 250 earlier lines (Open in terminal to see all)\n> tether@0.1.0 test\nok 1 - adds");
    assert.equal(output("term-2"), "… 1 earlier line (Open in terminal to see all)");
    assert.equal(output("term-3"), "No output");
  });

  it("counts the elapsed time on while commands run, on one timer that stops when none does", () => {
    ui.frame(
      snapshot([terminalToolCall(0, "term-1"), terminalToolCall(1, "term-2")], {
        terminals: [terminalView(), terminalView({ id: "term-2", elapsedMs: 9_000 })],
      }),
    );
    const elapsed = (): string[] => ui.queryAll(".terminal-elapsed").map((node) => node.textContent ?? "");
    assert.deepEqual(elapsed(), ["1.2 s", "9.0 s"]);
    assert.equal(ui.timers(), 1);

    ui.advance(2_000);
    assert.deepEqual(elapsed(), ["3.2 s", "11 s"]);

    ui.frame(
      terminalPatch(
        terminalView({ state: { type: "exited", exitCode: 1, signal: null, killed: false }, elapsedMs: 4_000 }),
      ),
    );
    ui.advance(1_000);
    assert.deepEqual(elapsed(), ["4.0 s", "12 s"]);
    assert.equal(ui.timers(), 1);

    ui.frame(
      terminalPatch(
        terminalView({
          id: "term-2",
          state: { type: "exited", exitCode: 0, signal: null, killed: false },
          elapsedMs: 12_500,
        }),
      ),
    );
    assert.equal(ui.timers(), 0);
    assert.deepEqual(elapsed(), ["4.0 s", "12 s"]);
  });

  it("shows the terminals of the latest snapshot only", () => {
    ui.frame(snapshot([terminalToolCall(0, "term-1")], { terminals: [terminalView()] }));
    assert.equal(ui.timers(), 1);
    ui.frame(snapshot([terminalToolCall(0, "term-1")]));
    assert.equal(card(ui).textContent, "Starting…");
    assert.equal(ui.timers(), 0);
  });
});

describe("terminals in the model", () => {
  it("keeps terminals by id: a snapshot replaces them, a patch adds or replaces one", () => {
    const model = emptyModel();
    const changes = new ChangeSet();
    applyHostMessage(model, snapshot([], { terminals: [terminalView(), terminalView({ id: "term-2" })] }), changes);
    applyHostMessage(
      model,
      patch([
        { op: "terminal", view: terminalView({ elapsedMs: 5_000 }) },
        { op: "terminal", view: terminalView({ id: "term-3", command: "ls" }) },
      ]),
      changes,
    );
    assert.deepEqual(
      [...model.terminals].map(([id, view]) => `${id}: ${view.command} ${view.elapsedMs}`),
      ["term-1: npm test 5000", "term-2: npm test 1200", "term-3: ls 1200"],
    );
    assert.deepEqual([...changes.terminals], ["term-1", "term-3"]);

    const next = new ChangeSet();
    applyHostMessage(model, snapshot([], { terminals: [terminalView({ id: "term-4" })] }), next);
    assert.deepEqual([...model.terminals.keys()], ["term-4"]);
    assert.equal(next.terminals.size, 0);
    assert.ok(next.reset);
  });
});

describe("elapsed time", () => {
  it("reads as precisely as is worth reading", () => {
    const cases: [number, string][] = [
      [0, "0.0 s"],
      [999, "0.9 s"],
      [1_250, "1.2 s"],
      [9_999, "9.9 s"],
      [10_000, "10 s"],
      [59_999, "59 s"],
      [60_000, "1 min 0 s"],
      [63_400, "1 min 3 s"],
      [3_599_999, "59 min 59 s"],
      [3_600_000, "1 h 0 min"],
      [7_500_000, "2 h 5 min"],
    ];
    assert.deepEqual(
      cases.map(([ms]) => formatElapsed(ms)),
      cases.map(([, text]) => text),
    );
  });
});

// Messages in the thread: code blocks highlighted only once final (never per streamed chunk),
// their toolbar's intents, a message's Copy, tables, how long a thought took, and a prompt
// edited and sent again.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { COLLAPSED_LINES } from "../src/collapsed-lines";
import { type CodeHighlighter, LazyHighlighter, MAX_HIGHLIGHTED_CHARS, themeFor } from "../src/highlighter";
import { ChangeSet, applyHostMessage, emptyModel } from "../src/model";
import type { HostToWebview, WebviewToHost } from "../src/protocol";
import { TerminalCards } from "../src/terminal-view";
import { ThreadView } from "../src/thread-view";
import { patch, snapshot } from "./fixtures";
import { type Harness, ManualTime, createRenderer, harness, installDom } from "./support";

const renderer = createRenderer();

/** A highlighter that records what it is handed, then colours it with the real one (shiki). */
class RecordingHighlighter implements CodeHighlighter {
  readonly handed: { code: HTMLElement; language: string | null }[] = [];
  // The browser's idle time is "now" here: the work still runs after the frame, asynchronously.
  readonly real = new LazyHighlighter((work) => work());

  highlight(code: HTMLElement, language: string | null): void {
    this.handed.push({ code, language });
    this.real.highlight(code, language);
  }
}

/** A thread view alone, drawn frame by frame from the host's messages, with its highlighter. */
function threadHarness() {
  const window = installDom();
  const posted: WebviewToHost[] = [];
  const post = (message: WebviewToHost) => posted.push(message);
  const time = new ManualTime();
  const highlighter = new RecordingHighlighter();
  const open = new Set<string>();
  const thoughts = { isOpen: (key: string) => open.has(key), setOpen: () => {} };
  const context = { renderer, post, answered: new Set<number>(), permissionShown: () => {}, permissionAnswered: () => {}, terminals: new TerminalCards(post, time.clock, time.repeat) };
  const thread = new ThreadView(renderer, thoughts, context, time.clock, highlighter);
  window.document.body.append(thread.element);
  const model = emptyModel();
  const frame = (...messages: HostToWebview[]) => {
    const changes = new ChangeSet();
    for (const message of messages) applyHostMessage(model, message, changes);
    thread.render(model, changes);
  };
  return { window, posted, highlighter, frame, thread };
}

/** The coloured spans of a `<code>`. */
function colouredSpans(code: Element): HTMLElement[] {
  return [...code.querySelectorAll<HTMLElement>("span")].filter((span) => span.style.color !== "");
}

const CODE = 'fn main() {\n    println!("hi");\n}\n';

describe("code blocks", () => {
  it("are not highlighted while they stream, only once their message is complete", async () => {
    const ui = threadHarness();
    ui.frame(
      snapshot([{ type: "user", text: "Show me", attachments: [] }, { type: "agent", chunks: [] }], { turn: { type: "running" } }),
    );
    const pieces = ["Here it is:\n\n```ru", "st\nfn main() {\n", '    println!("hi");\n', "}\n", "```\n"];
    for (const text of pieces) {
      ui.frame(patch([{ op: "appendChunk", index: 1, kind: "text", text }]));
      assert.equal(ui.highlighter.handed.length, 0, `nothing is handed over while the block streams (after ${JSON.stringify(text)})`);
    }
    const code = ui.thread.element.querySelector<HTMLElement>("pre > code");
    assert.ok(code !== null);
    assert.equal(code.textContent, CODE, "the plain block is shown meanwhile");
    assert.equal(code.querySelector("span"), null);
    assert.equal(code.dataset["highlight"], undefined);

    // The turn ends: the block is final, and handed over once.
    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]));
    assert.equal(ui.highlighter.handed.length, 1);
    assert.equal(ui.highlighter.handed[0]?.language, "rust");
    await ui.highlighter.real.settled();
    const current = ui.thread.element.querySelector<HTMLElement>("pre > code");
    assert.equal(current, code, "the block is coloured in place");
    assert.ok(colouredSpans(code).length >= 3, `coloured tokens: ${code.innerHTML}`);
    assert.equal(code.textContent, CODE, "the text is unchanged by colouring");
    assert.equal(code.dataset["highlight"], "dark-plus");

    // Another frame of the finished thread hands nothing over again.
    ui.frame(patch([{ op: "turn", state: { type: "idle" } }]));
    assert.equal(ui.highlighter.handed.length, 1);
  });

  it("highlights a block as soon as a later block follows it, while the reply goes on", async () => {
    const ui = threadHarness();
    ui.frame(snapshot([{ type: "agent", chunks: [] }], { turn: { type: "running" } }));
    ui.frame(patch([{ op: "appendChunk", index: 0, kind: "text", text: "```ts\nconst answer: number = 42;\n```\n" }]));
    assert.equal(ui.highlighter.handed.length, 0, "the closed block is still the last one: it may be followed by nothing");
    ui.frame(patch([{ op: "appendChunk", index: 0, kind: "text", text: "\nAnd then,\n" }]));
    assert.deepEqual(
      ui.highlighter.handed.map((handed) => handed.language),
      ["ts"],
    );
    await ui.highlighter.real.settled();
    assert.ok(colouredSpans(ui.highlighter.handed[0]!.code).length > 0);
    ui.frame(patch([{ op: "appendChunk", index: 0, kind: "text", text: " more words" }]));
    assert.equal(ui.highlighter.handed.length, 1, "more text after it hands nothing over again");
  });

  it("colours in the theme VS Code shows, and again when the person switches themes", async () => {
    const ui = threadHarness();
    const body = ui.window.document.body;
    body.className = "vscode-light";
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "text", text: "```rust\n" + CODE + "```\n" }] }]));
    await ui.highlighter.real.settled();
    const code = ui.thread.element.querySelector<HTMLElement>("pre > code")!;
    assert.equal(code.dataset["highlight"], "light-plus");
    const light = colouredSpans(code).map((span) => span.style.color);

    body.className = "vscode-dark";
    // The theme watcher runs after the attribute change; then the block is coloured again.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await ui.highlighter.real.settled();
    assert.equal(code.dataset["highlight"], "dark-plus");
    assert.notDeepEqual(colouredSpans(code).map((span) => span.style.color), light);
    assert.equal(code.textContent, CODE);
  });

  it("leaves a block too long to colour in one go plain", async () => {
    const ui = threadHarness();
    const long = "let x = 1;\n".repeat(Math.ceil(MAX_HIGHLIGHTED_CHARS / 11) + 1);
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "text", text: "```rust\n" + long + "```\n" }] }]));
    await ui.highlighter.real.settled();
    const code = ui.thread.element.querySelector<HTMLElement>("pre > code")!;
    assert.equal(code.dataset["highlight"], "too-long");
    assert.equal(code.querySelector("span"), null);
  });

  it("picks the theme by VS Code's theme id, else by its kind", () => {
    installDom();
    const body = document.body;
    body.className = "vscode-dark";
    body.dataset["vscodeThemeId"] = "Solarized Dark";
    assert.equal(themeFor(body), "solarized-dark");
    body.dataset["vscodeThemeId"] = "Someone's Theme";
    assert.equal(themeFor(body), "dark-plus");
    body.className = "vscode-high-contrast vscode-high-contrast-light";
    assert.equal(themeFor(body), "github-light-high-contrast");
    body.className = "vscode-high-contrast";
    assert.equal(themeFor(body), "github-dark-high-contrast");
    body.className = "vscode-light";
    assert.equal(themeFor(body), "light-plus");
  });
});

describe("message actions", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("copies a code block, inserts it at the cursor, opens it in a new file in its language", () => {
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "text", text: "Run:\n\n```ts\nconst a = 1;\n```\n\nDone." }] }]));
    const toolbar = ui.query(".code-block .code-actions");
    assert.equal(toolbar.getAttribute("role"), "toolbar");
    const buttons = [...toolbar.querySelectorAll<HTMLButtonElement>("button")];
    assert.deepEqual(
      buttons.map((button) => [button.getAttribute("aria-label"), button.querySelector(".codicon")?.className]),
      [
        ["Copy code", "codicon codicon-copy"],
        ["Insert at cursor", "codicon codicon-insert"],
        ["Open in new file", "codicon codicon-new-file"],
      ],
    );
    for (const button of buttons) button.click();
    assert.deepEqual(ui.posted, [
      { type: "copyText", text: "const a = 1;\n" },
      { type: "insertAtCursor", text: "const a = 1;\n" },
      { type: "openInNewFile", text: "const a = 1;\n", language: "typescript" },
    ]);
    assert.equal(buttons[0]?.getAttribute("aria-label"), "Copied", "a pressed Copy says it worked");
  });

  it("opens a block in a language it does not know as plain text", () => {
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "text", text: "```\nplain words\n```\n\n```brainfuck\n+++\n```\n" }] }]));
    for (const button of ui.queryAll<HTMLButtonElement>('.code-actions button[data-action="new-file"]')) button.click();
    assert.deepEqual(ui.posted, [
      { type: "openInNewFile", text: "plain words\n", language: null },
      { type: "openInNewFile", text: "+++\n", language: null },
    ]);
  });

  it("copies a whole message as its markdown, without its thoughts", () => {
    ui.frame(
      snapshot([
        {
          type: "agent",
          chunks: [
            { kind: "thought", text: "Let me think.", durationMs: 2000 },
            { kind: "text", text: "First **part**.\n" },
            { kind: "thought", text: "More." },
            { kind: "text", text: "```sh\nls\n```\n" },
          ],
        },
      ]),
    );
    const copy = ui.query<HTMLButtonElement>(".entry.agent > .message-actions button");
    assert.equal(copy.getAttribute("aria-label"), "Copy message");
    assert.equal(copy.hidden, false);
    copy.click();
    assert.deepEqual(ui.posted, [{ type: "copyText", text: "First **part**.\n\n```sh\nls\n```" }]);
  });

  it("offers no Copy on a message that is only a thought so far", () => {
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "thought", text: "Hmm" }] }], { turn: { type: "running" } }));
    const copy = ui.query<HTMLButtonElement>(".entry.agent > .message-actions button");
    assert.equal(copy.hidden, true);
    ui.frame(patch([{ op: "appendChunk", index: 0, kind: "text", text: "Yes." }]));
    assert.equal(copy.hidden, false);
  });
});

describe("tables", () => {
  it("renders a GFM table with its header and alignment", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "text", text: "| Name | Size |\n|:-----|-----:|\n| a.rs | 10 |\n| b.rs | 200 |\n" }] }]));
    const table = ui.query(".entry.agent .markdown table");
    assert.deepEqual(
      [...table.querySelectorAll("th")].map((cell) => [cell.textContent, cell.className]),
      [["Name", "align-left"], ["Size", "align-right"]],
    );
    assert.deepEqual(
      [...table.querySelectorAll("tbody tr")].map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent)),
      [["a.rs", "10"], ["b.rs", "200"]],
    );
  });
});

describe("thoughts", () => {
  it("say Thinking while they go on and how long they took once they end", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "agent", chunks: [] }], { turn: { type: "running" } }));
    ui.frame(patch([{ op: "appendChunk", index: 0, kind: "thought", text: "Hmm" }]));
    const thought = ui.query<HTMLDetailsElement>("details.thought");
    assert.equal(thought.open, false, "collapsed");
    assert.equal(thought.querySelector("summary")?.textContent, "Thinking…");
    ui.frame(
      patch([
        { op: "thoughtEnded", index: 0, chunk: 0, durationMs: 12_400 },
        { op: "appendChunk", index: 0, kind: "text", text: "Answer" },
      ]),
    );
    assert.equal(ui.query("details.thought"), thought, "the same node, still collapsed");
    assert.equal(thought.querySelector("summary")?.textContent, "Thought for 12 s");
  });

  it("ask the host for a snapshot when a thought's end names no chunk the webview has", () => {
    const model = emptyModel();
    const changes = new ChangeSet();
    applyHostMessage(model, snapshot([{ type: "agent", chunks: [{ kind: "thought", text: "a" }] }]), changes);
    const later = new ChangeSet();
    applyHostMessage(model, patch([{ op: "thoughtEnded", index: 0, chunk: 3, durationMs: 10 }]), later);
    assert.match(later.outOfSync ?? "", /thought 3 of entry 0/);
  });

  it("show the duration the snapshot carries, in minutes when long", () => {
    const ui = harness();
    ui.frame(
      snapshot([
        { type: "agent", chunks: [{ kind: "thought", text: "a", durationMs: 95_000 }, { kind: "text", text: "b" }] },
        { type: "agent", chunks: [{ kind: "thought", text: "c", durationMs: 300 }, { kind: "text", text: "d" }] },
      ]),
    );
    assert.deepEqual(
      ui.queryAll("details.thought > summary").map((summary) => summary.textContent),
      ["Thought for 1 min 35 s", "Thought for less than a second"],
    );
  });
});

describe("a prompt in the thread", () => {
  it("keeps the line breaks the person typed", () => {
    // Markdown joins a paragraph's lines: "first line" and "second line" read as one line before.
    const ui = harness();
    ui.frame(snapshot([{ type: "user", text: "first line\nsecond line\n\n- a list", attachments: [] }]));
    const body = ui.query(".entry.user .markdown");
    assert.equal(body.querySelectorAll("p > br").length, 1);
    assert.equal(body.querySelector("p")?.textContent, "first line\nsecond line");
    assert.equal(body.querySelector("li")?.textContent, "a list", "still markdown");
  });
});

describe("a prompt's own actions", () => {
  it("copies the prompt's text as the person wrote it", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "user", text: "Fix the *test*\nin src/", attachments: [] }]));
    const copy = ui.query<HTMLButtonElement>('.entry.user .message-actions button[aria-label="Copy message"]');
    copy.click();
    // Before, only the agent's messages could be copied.
    assert.deepEqual(ui.posted, [{ type: "copyText", text: "Fix the *test*\nin src/" }]);
  });

  it("shows a long paste's first lines until the person asks for all of them, and keeps that choice", () => {
    const ui = harness();
    const pasted = Array.from({ length: 400 }, (_, index) => `log line ${index + 1}`).join("\n");
    ui.frame(snapshot([{ type: "user", text: `What went wrong here?\n${pasted}`, attachments: [] }]));
    const lines = () => ui.query(".entry.user .markdown").textContent?.trim().split("\n").length;
    // Before, all 401 lines were drawn: one prompt thousands of pixels tall.
    assert.equal(lines(), COLLAPSED_LINES);
    const toggle = ui.query<HTMLButtonElement>("button.user-message-toggle");
    assert.equal(toggle.textContent, "Show all 401 lines");
    assert.equal(toggle.getAttribute("aria-expanded"), "false");
    toggle.click();
    assert.equal(lines(), 401);
    const less = ui.query<HTMLButtonElement>("button.user-message-toggle");
    assert.equal(less.textContent, "Show less");
    assert.equal(ui.window.document.activeElement, less, "the focus stays on the button");
    // Drawn again (a snapshot of the same thread), it is still shown whole.
    ui.frame(patch([{ op: "push", index: 1, entry: { type: "agent", chunks: [{ kind: "text", text: "A typo." }] } }]));
    assert.equal(lines(), 401);
  });
});

describe("editing a prompt", () => {
  it("turns the prompt into an editor with its text and sends the edited text as a new prompt", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "user", text: "Fix the *test*", attachments: [] }, { type: "agent", chunks: [{ kind: "text", text: "Done." }] }]));
    const edit = ui.query<HTMLButtonElement>(".entry.user .message-actions button");
    assert.equal(edit.getAttribute("aria-label"), "Edit and send again");
    assert.equal(edit.querySelector(".codicon")?.className, "codicon codicon-edit");
    edit.click();
    const input = ui.query<HTMLTextAreaElement>(".entry.user textarea.user-edit-input");
    assert.equal(input.value, "Fix the *test*");
    assert.equal(ui.window.document.activeElement, input, "the editor has the focus");
    assert.equal(ui.query(".entry.user .user-message-body").hidden, true);

    input.value = "Fix the *other* test";
    ui.press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "Fix the *other* test", attachments: [] }]);
    assert.equal(ui.queryAll(".entry.user textarea").length, 0, "the editor closes");
    assert.equal(ui.query(".entry.user .markdown").textContent?.trim(), "Fix the test", "the old prompt stays as it was");
  });

  it("leaves the prompt as it was on Escape, and sends nothing", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "user", text: "Hello", attachments: [] }]));
    ui.query<HTMLButtonElement>(".entry.user .message-actions button").click();
    const input = ui.query<HTMLTextAreaElement>(".entry.user textarea");
    input.value = "Changed";
    ui.press("Escape");
    assert.deepEqual(ui.posted, []);
    assert.equal(ui.queryAll(".entry.user textarea").length, 0);
    assert.equal(ui.query(".entry.user .user-message-body").hidden, false);
    assert.equal(ui.window.document.activeElement, ui.query(".entry.user .message-actions button"), "focus goes back to Edit");
  });

  it("keeps the edited text while a turn runs, and sends it once the turn ended", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "user", text: "Hello", attachments: [] }], { turn: { type: "running" } }));
    ui.query<HTMLButtonElement>(".entry.user .message-actions button").click();
    const input = ui.query<HTMLTextAreaElement>(".entry.user textarea");
    input.value = "Hello again";
    ui.press("Enter");
    assert.deepEqual(ui.posted, [], "the agent takes one prompt at a time");
    assert.equal(ui.query(".user-edit-busy").hidden, false, "and the person is told why");
    assert.equal(input.isConnected, true, "the edited text stays");
    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]));
    ui.press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "Hello again", attachments: [] }]);
  });

  it("sends with the Send button too, and not an empty prompt", () => {
    const ui = harness();
    ui.frame(snapshot([{ type: "user", text: "Hello", attachments: [] }]));
    ui.query<HTMLButtonElement>(".entry.user .message-actions button").click();
    const input = ui.query<HTMLTextAreaElement>(".entry.user textarea");
    input.value = "   ";
    ui.query<HTMLButtonElement>(".user-edit-send").click();
    assert.deepEqual(ui.posted, []);
    input.value = "Again";
    ui.query<HTMLButtonElement>(".user-edit-send").click();
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "Again", attachments: [] }]);
  });
});

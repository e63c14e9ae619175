// The chat DOM as the end-to-end tests and the person see it: the selectors of the UI contract,
// the permission flow, the composer's keys, and streaming that extends rather than rebuilds.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { editToolCall, patch, session, snapshot, tab } from "./fixtures";
import { type Harness, createRenderer, harness, seededRandom } from "./support";

const renderer = createRenderer();

/** The HTML a `.markdown` element shows, with the tail wrapper (display: contents) unwrapped. */
function shownMarkdown(element: Element): string {
  const clone = element.cloneNode(true) as Element;
  for (const tail of clone.querySelectorAll(".markdown-tail")) tail.replaceWith(...tail.childNodes);
  // A code block's toolbar is the view's, not the markdown's.
  for (const block of clone.querySelectorAll(".code-block")) block.replaceWith(...block.querySelectorAll("pre"));
  return clone.innerHTML;
}

describe("chat view", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("draws a snapshot with the contract's selectors", () => {
    ui.frame(
      snapshot(
        [
          { type: "user", text: "Please **edit** notes.md", attachments: [] },
          {
            type: "agent",
            chunks: [
              { kind: "thought", text: "The user wants an edit." },
              { kind: "text", text: "Hello! I'm the Tether demo agent." },
            ],
          },
          editToolCall(null),
          { type: "notice", level: "warning", text: "Agent printed a malformed line", detail: "{oops" },
        ],
        {
          plan: [
            { content: "Read README.md", priority: "high", status: "completed" },
            { content: "Edit notes.md", priority: "medium", status: "in_progress" },
          ],
          turn: { type: "running" },
        },
      ),
    );
    assert.equal(ui.query(".session-agent").textContent, "Demo");
    assert.equal(ui.query(".session-status").dataset["status"], "ready");
    assert.deepEqual(
      ui.queryAll("main.thread > .entry").map((entry) => `${entry.dataset["index"]}:${entry.className}`),
      ["0:entry user", "1:entry agent", "2:entry tool-call", "3:entry notice"],
    );
    assert.equal(ui.query(".entry.user .markdown").innerHTML, "<p>Please <strong>edit</strong> notes.md</p>\n");

    const thought = ui.query<HTMLDetailsElement>(".entry.agent details.thought");
    assert.equal(thought.open, false, "thoughts start collapsed");
    assert.equal(thought.querySelector("summary")?.textContent, "Thought", "text followed it: it ended");
    assert.equal(ui.query(".entry.agent > .markdown").textContent?.trim(), "Hello! I'm the Tether demo agent.");

    const tool = ui.query(".entry.tool-call");
    assert.equal(tool.dataset["status"], "waiting_for_confirmation");
    assert.equal(tool.dataset["kind"], "edit");
    assert.equal(ui.query(".tool-title").textContent, "Edit notes.md");
    assert.equal(ui.query(".tool-status").textContent, "Waiting for you");
    assert.equal(ui.query(".tool-content .tool-diff-path").textContent, "notes.md");
    assert.equal(ui.query(".tool-content .tool-diff-lines").textContent, " one\n-two\n+2\n");
    assert.equal(ui.query(".tool-diff-path").getAttribute("aria-label"), "Open notes.md at line 2");
    assert.equal(ui.query(".permission-card").dataset["state"], "waiting");
    assert.deepEqual(
      ui.queryAll("button.permission-option").map((b) => [b.dataset["optionId"], b.dataset["kind"], b.textContent]),
      [
        ["allow-once", "allow_once", "Allow once"],
        ["allow-always", "allow_always", "Always allow"],
        ["reject-once", "reject_once", "Reject"],
        ["reject-always", "reject_always", "Always reject"],
      ],
    );

    const notice = ui.query(".entry.notice");
    assert.equal(notice.dataset["level"], "warning");
    assert.equal(ui.query(".notice-text").textContent, "Agent printed a malformed line");
    assert.equal(ui.query("details.notice-detail pre").textContent, "{oops");

    assert.deepEqual(
      ui.queryAll("aside.plan li").map((item) => [item.dataset["status"], item.textContent]),
      [
        ["completed", "Read README.md"],
        ["in_progress", "Edit notes.md"],
      ],
    );
    assert.equal(ui.query(".turn-state").dataset["state"], "running");
    assert.equal(ui.query<HTMLButtonElement>("button.composer-send").disabled, true);
    assert.equal(ui.query<HTMLButtonElement>("button.composer-cancel").hidden, false);
  });

  it("focuses the first allow option when a permission request appears", () => {
    ui.frame(snapshot([]), patch([{ op: "push", index: 0, entry: editToolCall(null) }]));
    assert.equal(ui.window.document.activeElement?.getAttribute("data-option-id"), "allow-once");
  });

  it("leaves the focus in the composer, empty or not, when a permission request appears", () => {
    // Someone who just sent a prompt goes on typing the next one: before, an empty composer
    // lost the focus to the card, and the next space pressed "Run".
    for (const draft of ["", "So next"]) {
      ui = harness();
      ui.frame(snapshot([]));
      const input = ui.query<HTMLTextAreaElement>("textarea.composer-input");
      input.focus();
      input.value = draft;
      ui.frame(patch([{ op: "push", index: 0, entry: editToolCall(null) }]));
      assert.equal(ui.window.document.activeElement, input, `composer holding ${JSON.stringify(draft)}`);
      ui.press(" ");
      assert.deepEqual(ui.posted, [], "the key is the prompt's, not an answer");
      assert.ok(ui.query(".permission-card").textContent !== "", "the question is there");
    }
  });

  it("sends the chosen option, disables the card, then shows the host's outcome", () => {
    ui.frame(snapshot([editToolCall(null)]));
    ui.query<HTMLButtonElement>('button.permission-option[data-option-id="allow-once"]').click();
    assert.deepEqual(ui.posted, [{ type: "answerPermission", key: 7, optionId: "allow-once" }]);
    assert.ok(ui.queryAll("button.permission-option").every((b) => (b as HTMLButtonElement).disabled));

    ui.query<HTMLButtonElement>('button.permission-option[data-option-id="reject-once"]').click();
    assert.equal(ui.posted.length, 1, "a second click sends nothing");

    ui.frame(patch([{ op: "replace", index: 0, entry: editToolCall({ type: "selected", optionId: "allow-once" }) }]));
    assert.equal(ui.query(".permission-card").dataset["state"], "answered");
    assert.equal(ui.query(".permission-outcome").textContent, "Allowed once");
    assert.equal(ui.query(".entry.tool-call").dataset["status"], "completed");
  });


  it("streams chunks into the same nodes and ends with the whole reply's markdown", () => {
    ui.frame(snapshot([{ type: "user", text: "Go", attachments: [] }]), patch([{ op: "push", index: 1, entry: { type: "agent", chunks: [] } }]));
    const entry = ui.query(".entry.agent");
    const random = seededRandom(3);
    let text = "";
    let firstBlock: Element | null = null;
    for (let frame = 0; frame < 200; frame++) {
      const chunks = [];
      for (let count = 0; count < 10; count++) {
        const piece = random() < 0.1 ? "\n\n" : random() < 0.05 ? "\n```\ncode\n\nmore\n```\n" : "word ";
        text += piece;
        chunks.push({ op: "appendChunk" as const, index: 1, kind: "text" as const, text: piece });
      }
      ui.frame(patch(chunks));
      firstBlock ??= entry.querySelector(".markdown > :first-child:not(.markdown-tail)");
    }
    assert.equal(ui.query(".entry.agent"), entry, "the entry's node is kept while it streams");
    assert.ok(firstBlock !== null && firstBlock.isConnected, "a committed block is never re-rendered");
    assert.equal(ui.queryAll(".entry.agent > .markdown").length, 1);
    assert.equal(shownMarkdown(ui.query(".entry.agent > .markdown")), renderer.render(text));
  });

  it("opens a new chunk when the kind changes and keeps thoughts apart", () => {
    ui.frame(
      snapshot([{ type: "agent", chunks: [] }]),
      patch([
        { op: "appendChunk", index: 0, kind: "thought", text: "hmm" },
        { op: "appendChunk", index: 0, kind: "text", text: "Answer" },
      ]),
    );
    ui.frame(patch([{ op: "appendChunk", index: 0, kind: "thought", text: "more thinking" }]));
    assert.deepEqual(
      [...ui.query(".entry.agent").children].map((child) => `${child.tagName.toLowerCase()}.${child.className}`),
      ["div.message-actions", "details.thought", "div.markdown", "details.thought"],
    );
    assert.equal(ui.queryAll("details.thought")[1]?.textContent?.trim(), "Thoughtmore thinking");
  });

  it("sends on Enter, keeps Shift+Enter for new lines, and only while the session is ready", () => {
    ui.frame(snapshot([], { session: session({ status: { type: "starting", step: "initialize", elapsedMs: 0 } }) }));
    const input = ui.query<HTMLTextAreaElement>("textarea.composer-input");
    const press = (init: Partial<KeyboardEventInit>) =>
      input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true, ...init }));

    input.value = "hello";
    press({});
    assert.deepEqual(ui.posted, [], "nothing is sent while the session starts");
    assert.equal(ui.query<HTMLButtonElement>("button.composer-send").disabled, true);
    assert.equal(ui.query(".session-status").textContent, "initialize…");

    ui.frame(patch([], session()));
    assert.equal(press({ shiftKey: true }), true, "Shift+Enter is left to the text area");
    assert.deepEqual(ui.posted, []);
    press({});
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "hello", attachments: [] }]);
    assert.equal(input.value, "", "the composer empties once sent");

    input.value = "   ";
    press({});
    assert.equal(ui.posted.length, 1, "blank prompts are not sent");
  });

  it("sends a prompt to an agent that exited and can be restarted, which starts it again", () => {
    const exited = { type: "exited", message: "The agent was ended by signal 9" } as const;
    ui.frame(snapshot([], { session: session({ status: exited, canRestart: false }) }));
    assert.equal(ui.query<HTMLButtonElement>("button.composer-send").disabled, true, "not while it stops");
    ui.frame(patch([], session({ status: exited, canRestart: true })));
    assert.equal(ui.query<HTMLButtonElement>("button.composer-send").disabled, false);
    const input = ui.query<HTMLTextAreaElement>("textarea.composer-input");
    input.value = "Are you back?";
    input.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "Are you back?", attachments: [] }]);
  });

  it("turns Send into Stop while a turn runs, and says how the turn ended in words", () => {
    ui.frame(snapshot([], { turn: { type: "running" } }));
    const cancel = ui.query<HTMLButtonElement>("button.composer-cancel");
    const send = ui.query<HTMLButtonElement>("button.composer-send");
    assert.deepEqual([send.hidden, cancel.hidden], [true, false], "Stop in Send's place");
    assert.equal(cancel.getAttribute("aria-label"), "Stop");
    cancel.click();
    assert.deepEqual(ui.posted, [{ type: "cancel" }]);
    ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason: "end_turn" } }]));
    assert.deepEqual([send.hidden, cancel.hidden], [false, true]);
    assert.equal(ui.query(".turn-state").textContent, "Finished");
    assert.equal(send.disabled, false);
    const words: string[] = [];
    for (const stopReason of ["cancelled", "max_tokens", "refusal", "something_new"]) {
      ui.frame(patch([{ op: "turn", state: { type: "running" } }]));
      ui.frame(patch([{ op: "turn", state: { type: "ended", stopReason } }]));
      words.push(ui.query(".turn-state").textContent ?? "");
    }
    assert.deepEqual(words, [
      "Cancelled",
      "Stopped: the answer reached its length limit (max tokens)",
      "Stopped: the agent refused",
      "Stopped: something new",
    ]);
    assert.match(ui.query(".permission-announcement").textContent ?? "", /The agent's turn ended: Stopped: something new/);
  });

  it("in an untrusted workspace says why, offers Manage Workspace Trust, and hides it once trusted", () => {
    const message = "This workspace is not trusted, so Tether starts nothing in it.";
    ui.frame(snapshot([], { session: session({ status: { type: "untrusted", message } }) }));
    const notice = ui.query(".session-trust-notice");
    assert.equal(notice.hidden, false);
    assert.equal(ui.query(".session-trust-text").textContent, message);
    assert.equal(ui.query(".session-status").textContent, "Workspace not trusted");
    assert.equal(ui.query(".session-status").dataset["status"], "untrusted");
    assert.equal(ui.query<HTMLButtonElement>("button.composer-send").disabled, true, "no prompt goes anywhere");
    ui.query<HTMLButtonElement>("button.session-manage-trust").click();
    assert.deepEqual(ui.posted, [{ type: "manageTrust" }]);
    ui.frame(patch([], session({ status: { type: "starting", step: "Starting tetherd", elapsedMs: 0 } })));
    assert.equal(notice.hidden, true);
  });

  it("sends the agent picker's choice and a new-session request as intents", () => {
    ui.frame(snapshot([]));
    const picker = ui.query(".session-picker");
    const options = [...picker.querySelectorAll<HTMLElement>('[role="option"]')];
    assert.deepEqual(options.map((option) => option.dataset["value"]), ["Demo", "Claude Code"]);
    assert.equal(picker.dataset["value"], "Demo");
    assert.equal(ui.query(".session-agent").textContent, "Demo");
    options[1]!.click();
    ui.query<HTMLButtonElement>("button.session-new").click();
    assert.deepEqual(ui.posted, [{ type: "selectAgent", name: "Claude Code" }, { type: "newSession" }]);
  });

  it("restores the unsent prompt and opened thoughts after a reload", () => {
    ui = harness({ composer: "half-written", openThoughts: ["0:0"] });
    ui.frame(snapshot([{ type: "agent", chunks: [{ kind: "thought", text: "t" }] }]));
    assert.equal(ui.query<HTMLTextAreaElement>("textarea.composer-input").value, "half-written");
    assert.equal(ui.query<HTMLDetailsElement>("details.thought").open, true);
  });

  it("keeps the thoughts opened in each tab to that tab", () => {
    const thoughtAt0 = [{ type: "agent" as const, chunks: [{ kind: "thought" as const, text: "t" }] }];
    const inTab = (key: number) => snapshot(thoughtAt0, { session: session({ tabs: [tab(1), tab(2)], shown: key }) });
    ui.frame(inTab(1));
    const thought = () => ui.query<HTMLDetailsElement>("details.thought");
    thought().open = true;
    thought().dispatchEvent(new ui.window.Event("toggle"));
    ui.frame(inTab(2));
    assert.equal(thought().open, false, "the other tab's thought at the same place stays closed");
    ui.frame(inTab(1));
    assert.equal(thought().open, true, "the first tab's thought is still open");
  });

  it("redraws everything from a new snapshot", () => {
    ui.frame(snapshot([{ type: "user", text: "old", attachments: [] }, editToolCall(null)]));
    ui.frame(snapshot([{ type: "user", text: "new", attachments: [] }]));
    assert.deepEqual(ui.queryAll(".entry").map((entry) => entry.textContent?.trim()), ["new"]);
  });
});

// The chat before the first prompt: which agent answers and what it can do here (from its
// session), its sign-in, example prompts that fill the composer without sending, and the way to
// the agent settings; gone once the thread has an entry.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { patch, permissions, session, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

describe("empty state", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  const empty = () => ui.query("section.empty-state");
  const abilities = () => ui.queryAll(".empty-ability").map((item) => item.textContent);

  it("says which agent answers and what it can do, until the first entry", () => {
    const controls = {
      ...session().controls,
      commands: [
        { name: "review", description: "", inputHint: null },
        { name: "memory", description: "", inputHint: null },
        { name: "init", description: "", inputHint: null },
        { name: "cost", description: "", inputHint: null },
      ],
      prompt: { image: true, embeddedContext: true },
      mcpServers: [{ name: "tether", transport: "stdio", builtIn: true, leftOut: null, state: null, remote: null }],
    };
    ui.frame(snapshot([], { session: session({ controls, permissions: permissions({ mode: "acceptEdits" }) }) }));
    assert.equal(empty().hidden, false);
    assert.equal(ui.query("main.thread").hidden, true);
    assert.equal(ui.query(".empty-title").textContent, "Demo");
    assert.equal(ui.query(".empty-info").textContent, "tether-test-agent 0.1.0");
    assert.deepEqual(abilities(), [
      "Reads and edits this workspace's files; edits are written at once, for you to keep or revert (mode: Accept edits)",
      "Runs commands in terminals you can watch, when you allow it",
      "Takes @ to mention files or the selection, images pasted or dropped",
      "Slash commands: /review, /memory, /init and 1 more",
      "Uses the editor's knowledge: search, Problems, the language servers",
    ]);
    assert.equal(ui.query(".empty-sign-in").hidden, true, "no sign-in asked");

    ui.frame(patch([{ op: "push", index: 0, entry: { type: "user", text: "hello", attachments: [] } }]));
    assert.equal(empty().hidden, true);
    assert.equal(ui.query("main.thread").hidden, false);
  });

  it("says what the agent may do with files and commands in each mode", () => {
    // Before, every mode read "every change is yours to review", which Plan (no edits at all) and
    // Bypass (nothing asked) are not.
    const said = (["ask", "acceptEdits", "plan", "bypass"] as const).map((mode) => {
      ui = harness();
      ui.frame(snapshot([], { session: session({ permissions: permissions({ mode }) }) }));
      return abilities().slice(0, 2);
    });
    assert.deepEqual(said, [
      [
        "Reads and edits this workspace's files; each edit waits for your review (mode: Ask)",
        "Runs commands in terminals you can watch, when you allow it",
      ],
      [
        "Reads and edits this workspace's files; edits are written at once, for you to keep or revert (mode: Accept edits)",
        "Runs commands in terminals you can watch, when you allow it",
      ],
      ["Reads this workspace's files, and changes none (mode: Plan)", "Runs no commands while planning"],
      [
        "Reads and edits this workspace's files without asking; you can keep or revert each edit (mode: Bypass)",
        "Runs commands in terminals you can watch, without asking",
      ],
    ]);
  });

  it("says only what this agent takes: no images, no commands, no editor tools", () => {
    ui.frame(snapshot([]));
    assert.deepEqual(abilities().slice(2), ["Takes @ to mention files or the selection"]);
  });

  it("offers Sign in while the agent waits for it", () => {
    ui.frame(snapshot([], { session: session({ canSignIn: true, status: { type: "starting", step: "Sign in needed", elapsedMs: 0 } }) }));
    assert.equal(ui.query(".empty-sign-in").hidden, false);
    ui.query<HTMLButtonElement>("button.empty-sign-in-button").click();
    assert.deepEqual(ui.posted, [{ type: "signIn" }]);
  });

  it("fills the composer with an example prompt without sending it, and opens the agent settings", () => {
    ui.frame(snapshot([]));
    const examples = ui.queryAll<HTMLButtonElement>("button.empty-example");
    assert.equal(examples.length, 3);
    examples[0]!.click();
    const input = ui.query<HTMLTextAreaElement>("textarea.composer-input");
    assert.equal(input.value, examples[0]!.textContent);
    assert.equal(ui.window.document.activeElement, input);
    assert.deepEqual(ui.posted, [], "an example is the person's to send");
    ui.query<HTMLButtonElement>("button.empty-settings").click();
    assert.deepEqual(ui.posted, [{ type: "openAgentSettings" }]);
  });

  it("promises nothing in a workspace VS Code does not trust, where nothing starts", () => {
    const message = "This workspace is not trusted, so Tether starts nothing in it.";
    ui.frame(snapshot([], { session: session({ status: { type: "untrusted", message } }) }));
    assert.equal(empty().hidden, false, "the agent is still named");
    assert.equal(ui.query(".empty-abilities").hidden, true);
    assert.equal(ui.query(".empty-examples").hidden, true);
    ui.frame(patch([], session()));
    assert.equal(ui.query(".empty-abilities").hidden, false, "trusted: it says what it can do again");
    assert.equal(ui.query(".empty-examples").hidden, false);
  });
});

// The composer's attachments: "@" lists the workspace's files and the selection (the host ranks
// them; the list shows what it answered), picking one writes "@label " and the prompt carries
// what each label still in the text stands for; "Tether: Mention Selection" adds one at the
// caret; images pasted or dropped show as thumbnails and go with the prompt, unless the agent
// does not take images. The thread shows each prompt's attachments.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { MentionSuggestion, SessionControlsView } from "../src/protocol";
import { patch, session, snapshot } from "./fixtures";
import { type Harness, harness, until } from "./support";

function controls(image: boolean): SessionControlsView {
  return { title: null, commands: [], configOptions: [], usage: null, prompt: { image, embeddedContext: true }, mcpServers: [] };
}

const mainRs: MentionSuggestion = {
  label: "src/main.rs",
  detail: null,
  attachment: { type: "file", path: "/ws/src/main.rs" },
};
const selection: MentionSuggestion = {
  label: "src/lib.rs#L3-4",
  detail: "Selection, lines 3-4",
  attachment: { type: "selection", path: "/ws/src/lib.rs", startLine: 3, endLine: 4, text: "fn a() {}\nfn b() {}" },
};

const srcFolder: MentionSuggestion = {
  label: "src/",
  detail: null,
  attachment: { type: "folder", path: "/ws/src" },
};

// A one-pixel PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("@-mentions and images in the composer", () => {
  let ui: Harness;
  const input = () => ui.query<HTMLTextAreaElement>("footer.composer textarea");
  const shown = () => ui.queryAll(".composer-command-name").map((name) => name.textContent);
  const type = (text: string) => {
    input().value = text;
    input().setSelectionRange(text.length, text.length);
    input().dispatchEvent(new ui.window.Event("input"));
  };
  const press = (key: string) =>
    input().dispatchEvent(new ui.window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
  const findsPosted = () => ui.posted.filter((message) => message.type === "findMentions");

  function start(image: boolean) {
    ui = harness();
    ui.frame(snapshot([], { session: session({ controls: controls(image) }) }));
  }

  beforeEach(() => start(true));

  it("asks the host as an @ is typed, shows its answer, and writes the picked label", () => {
    type("Why does @");
    assert.deepEqual(findsPosted(), [{ type: "findMentions", query: "", fresh: true }], "a new @ lists afresh");
    ui.frame({ type: "mentions", query: "", items: [selection, mainRs] });
    assert.deepEqual(shown(), ["@src/lib.rs#L3-4", "@src/main.rs"]);
    assert.ok(ui.query(".composer-command").textContent?.includes("Selection, lines 3-4"));
    type("Why does @ma");
    assert.deepEqual(findsPosted().at(-1), { type: "findMentions", query: "ma", fresh: false });
    ui.frame({ type: "mentions", query: "ma", items: [mainRs] });
    press("Enter");
    assert.equal(input().value, "Why does @src/main.rs ");
    assert.equal(ui.query("footer.composer .composer-commands").hidden, true);
    assert.equal(ui.posted.filter((message) => message.type === "prompt").length, 0, "Enter picked; it did not send");
  });

  it("does not offer, while the host ranks a query, what the query rules out of the last list", () => {
    type("Why does @");
    ui.frame({ type: "mentions", query: "", items: [selection, mainRs] });
    // "ma" typed and Enter at once, before the host's answer for "ma": the selection listed
    // first for "@" cannot match "ma", so Enter picks main.rs rather than the selection.
    type("Why does @ma");
    assert.deepEqual(shown(), ["@src/main.rs"]);
    press("Enter");
    assert.equal(input().value, "Why does @src/main.rs ");
  });

  it("sends the mentions still in the text, in the order they appear", () => {
    type("@");
    ui.frame({ type: "mentions", query: "", items: [mainRs, selection] });
    press("Enter");
    type(`${input().value}and @`);
    ui.frame({ type: "mentions", query: "", items: [mainRs, selection] });
    press("ArrowDown");
    press("Enter");
    assert.equal(input().value, "@src/main.rs and @src/lib.rs#L3-4 ");
    // The person swaps them around by hand: the order of the text wins.
    type("compare @src/lib.rs#L3-4 with @src/main.rs");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), {
      type: "prompt",
      text: "compare @src/lib.rs#L3-4 with @src/main.rs",
      attachments: [selection.attachment, mainRs.attachment],
    });
  });

  it("mentions a folder as it does a file, its chip marked as a folder", () => {
    type("What is in @");
    ui.frame({ type: "mentions", query: "", items: [srcFolder, mainRs] });
    assert.deepEqual(shown(), ["@src/", "@src/main.rs"]);
    assert.equal(ui.query(".composer-commands").getAttribute("aria-label"), "Files, folders and selection");
    press("Enter");
    type(`${input().value}and @`);
    ui.frame({ type: "mentions", query: "", items: [srcFolder, mainRs] });
    press("ArrowDown");
    press("Enter");
    const chipIcons = ui
      .queryAll(".composer-mention")
      .map((chip) => [chip.title, chip.querySelector(".codicon")?.className.match(/codicon-([\w-]+)$/)?.[1]]);
    assert.deepEqual(chipIcons, [
      ["src/", "folder"],
      ["src/main.rs", "file"],
    ]);
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), {
      type: "prompt",
      text: "What is in @src/ and @src/main.rs ",
      attachments: [srcFolder.attachment, mainRs.attachment],
    });
  });

  it("does not take a folder's mention for the start of a file's in it", () => {
    type("@");
    ui.frame({ type: "mentions", query: "", items: [mainRs, srcFolder] });
    press("Enter");
    type(`${input().value}is in @`);
    ui.frame({ type: "mentions", query: "", items: [mainRs, srcFolder] });
    press("ArrowDown");
    press("Enter");
    assert.equal(input().value, "@src/main.rs is in @src/ ");
    // The folder is where "@src/" stands alone, after the file.
    type("@src/main.rs is in @src/.");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), {
      type: "prompt",
      text: "@src/main.rs is in @src/.",
      attachments: [mainRs.attachment, srcFolder.attachment],
    });
    // With the folder's mention deleted, the file's does not keep it.
    type("@");
    ui.frame({ type: "mentions", query: "", items: [mainRs, srcFolder] });
    press("ArrowDown");
    press("Enter");
    type("@src/main.rs ");
    ui.frame({ type: "mentions", query: "", items: [mainRs, srcFolder] });
    assert.deepEqual(
      ui.queryAll(".composer-mention").map((chip) => chip.title),
      [],
      "no chip: main.rs was not picked since the last prompt, and src/ is gone from the text",
    );
  });

  it("drops a mention whose label was deleted from the text", () => {
    type("@");
    ui.frame({ type: "mentions", query: "", items: [mainRs] });
    press("Enter");
    type("never mind");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), { type: "prompt", text: "never mind", attachments: [] });
  });

  it("keeps the picked mentions with the unsent text across a reload of the webview", (context) => {
    // The UI state is saved a moment after typing (setTimeout): the test moves that clock.
    context.mock.timers.enable({ apis: ["setTimeout"] });
    // Again, so that the first save's timer is a mocked one too.
    start(true);
    type("@");
    ui.frame({ type: "mentions", query: "", items: [selection] });
    press("Enter");
    context.mock.timers.tick(1_000);
    const saved = ui.saved();
    ui = harness(saved);
    ui.frame(snapshot([], { session: session({ controls: controls(true) }) }));
    assert.equal(input().value, "@src/lib.rs#L3-4 ");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), { type: "prompt", text: "@src/lib.rs#L3-4 ", attachments: [selection.attachment] });
  });

  it("an @ inside a word is not a mention", () => {
    type("mail me@example.com");
    assert.deepEqual(findsPosted(), []);
  });

  it("adds the selection at the caret when the host says so", () => {
    type("look");
    ui.frame({ type: "addMention", mention: selection });
    assert.equal(input().value, "look @src/lib.rs#L3-4 ");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), {
      type: "prompt",
      text: "look @src/lib.rs#L3-4 ",
      attachments: [selection.attachment],
    });
  });

  it("shows a pasted image, removes it on request, and sends one with the prompt", async () => {
    paste(image());
    await until(() => ui.queryAll(".composer-image").length === 1);
    assert.match(ui.query<HTMLImageElement>(".composer-image-thumbnail").src, /^data:image\/png;base64,iVBOR/);
    ui.query<HTMLButtonElement>(".composer-image-remove").click();
    assert.equal(ui.queryAll(".composer-image").length, 0);
    paste(image());
    await until(() => ui.queryAll(".composer-image").length === 1);
    // An image alone is a prompt.
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), {
      type: "prompt",
      text: "",
      attachments: [{ type: "image", mimeType: "image/png", data: PNG }],
    });
    assert.equal(ui.queryAll(".composer-image").length, 0, "sent images leave the composer");
  });

  it("refuses images for an agent that does not take them, and says why", async () => {
    start(false);
    paste(image());
    await until(() => !ui.query(".composer-note").hidden);
    assert.equal(ui.query(".composer-note").textContent, "This agent does not accept images.");
    assert.equal(ui.queryAll(".composer-image").length, 0);
  });

  it("puts a prompt the host could not send back, with its mentions and image, before what was typed since", async () => {
    type("@");
    ui.frame({ type: "mentions", query: "", items: [mainRs] });
    press("Enter");
    type(`${input().value}explain`);
    paste(image());
    await until(() => ui.queryAll(".composer-image").length === 1);
    press("Enter");
    const sent = ui.posted.at(-1);
    assert.equal(input().value, "", "sending empties the composer");
    type("and then");
    ui.frame({ type: "promptReturned", text: "@src/main.rs explain", reason: "The agent exited with code 1" });
    assert.equal(input().value, "@src/main.rs explain\n\nand then");
    assert.equal(ui.query(".composer-note").textContent, "Not sent: The agent exited with code 1. Your prompt is back here to send again.");
    assert.equal(ui.queryAll(".composer-image").length, 1, "its image is back");
    // Sent again as it was (the text typed since is the person's to keep or delete).
    type("@src/main.rs explain");
    press("Enter");
    assert.deepEqual(ui.posted.at(-1), sent);
    assert.equal(ui.query(".composer-note").hidden, true, "the note goes once the prompt is sent");
  });

  it("lets the note of a prompt given back go once a session is ready again, keeping the prompt", () => {
    const starting = session({ status: { type: "starting", step: "Starting the agent", elapsedMs: 0 } });
    ui.frame(patch([], starting));
    ui.frame({ type: "promptReturned", text: "explain", reason: "The agent could not be started" });
    ui.frame(patch([], starting));
    assert.equal(ui.query(".composer-note").hidden, false, "said while the cause lasts");
    ui.frame(patch([], session()));
    // Before, "Not sent: The agent could not be started" stayed beside the ready session.
    assert.equal(ui.query(".composer-note").hidden, true);
    assert.equal(input().value, "explain");
  });

  it("keeps the note of a prompt given back while its agent has failed, though a prompt could start it again", () => {
    ui.frame(patch([], session({ status: { type: "starting", step: "Starting the agent", elapsedMs: 0 } })));
    const failed = session({ status: { type: "failed", message: "Could not start the agent" }, canRestart: true });
    ui.frame({ type: "promptReturned", text: "explain", reason: "The agent could not be started" }, patch([], failed));
    // A failed agent a prompt would start again is no ready one: the note went at once before.
    assert.equal(ui.query(".composer-note").hidden, false);
  });

  it("says why Enter sends nothing while the agent starts, and lets that go once it is ready", () => {
    ui.frame(patch([], session({ status: { type: "starting", step: "Initializing the agent", elapsedMs: 79_000 } })));
    type("explain");
    press("Enter");
    // Before, Enter did nothing and said nothing.
    assert.equal(ui.query(".composer-note").textContent, "The agent is not ready yet: your prompt is kept. Send it once the session is ready.");
    assert.equal(input().value, "explain");
    ui.frame(patch([], session()));
    assert.equal(ui.query(".composer-note").hidden, true);
  });

  it("shows each prompt's attachments in the thread", () => {
    ui.frame(
      snapshot([
        {
          type: "user",
          text: "Why?",
          attachments: [
            { type: "file", path: "src/main.rs" },
            { type: "selection", path: "src/lib.rs", startLine: 3, endLine: 4 },
            { type: "image", mimeType: "image/png", bytes: 2048 },
            { type: "folder", path: "src/acp" },
          ],
        },
      ]),
    );
    assert.deepEqual(
      ui.queryAll(".entry.user .user-attachment").map((item) => item.textContent),
      ["src/main.rs", "src/lib.rs, lines 3-4", "Image (PNG, 2 KB)", "src/acp/"],
    );
  });

  function image(): File {
    const bytes = Uint8Array.from(atob(PNG), (c) => c.charCodeAt(0));
    return new ui.window.File([bytes], "shot.png", { type: "image/png" });
  }

  function paste(file: File) {
    const event = new ui.window.Event("paste", { bubbles: true, cancelable: true });
    Object.defineProperty(event, "clipboardData", { value: { files: [file] } });
    input().dispatchEvent(event);
  }
});

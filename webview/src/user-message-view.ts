// The person's prompt in the thread, with an Edit button that turns it into an editor holding its
// text (sending the edited text starts a new turn from it), a Restore button that asks the engine
// to put the files the agent changed back to how they were before this prompt, and a Go back
// button that goes on with the conversation from before this prompt in a new session (a tab of
// its own; the engine forks the agent's session where it can, and says so in the thread).
//
// The edited turn is a new prompt at the end of the thread, as the peers do. Only the text
// is sent again: the prompt's attachments are shown by their labels, and the `@` mentions in the
// text are resolved again by the engine. Every prompt is a checkpoint: the engine proposes the
// restore as a card of its own (restore-view.ts) with a change per file to review, so the button
// only names the prompt by its entry index.
//
// A prompt being edited keeps its edited text in the entry's state (`PromptDraft`), outside the
// view: the thread may let the view go when it scrolls out of sight, and the view it builds when
// the prompt comes back opens the editor again with the text as the person left it.

import { actionButton } from "./code-block-view";
import { COLLAPSED_LINES, countLines, firstLines, showAllButton } from "./collapsed-lines";
import { element } from "./element";
import type { MarkdownRenderer } from "./markdown";
import type { AttachmentView, PostIntent, UserMessage } from "./protocol";
import { messageLabel } from "./thread-keys";

/** The Restore button's words, which say what it does and to which files. */
const RESTORE_LABEL = "Restore the files the agent changed to how they were before this prompt";

/** The Go back button's words. */
const BRANCH_LABEL = "Go on from before this prompt in a new session (this one stays as it is)";

/** Why Go back waits: the agent is in the middle of a turn. */
const BRANCH_BUSY = "The agent is still working: stop it or wait for it, then go on from before this prompt";

/** Why Restore waits: the agent may still be changing the files. */
const RESTORE_BUSY = "The agent is still working: stop it or wait for it, then restore the files to how they were before this prompt";

/** The edited text of a prompt, or null while it is not being edited; whether it is shown whole. */
export interface PromptDraft {
  draft: string | null;
  /** Holds 0 when a long prompt is shown whole (the tool call's set, of which a prompt has one text). */
  expanded: Set<number>;
}

export class UserMessageView {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private editor: HTMLElement | null = null;
  private busy: HTMLElement | null = null;
  private readonly restore: HTMLButtonElement;
  private readonly branch: HTMLButtonElement;

  constructor(
    index: number,
    private readonly message: UserMessage,
    renderer: MarkdownRenderer,
    private readonly post: PostIntent,
    /** False while a turn runs: the agent takes one prompt at a time. */
    private readonly canSend: () => boolean,
    private readonly state: PromptDraft = { draft: null, expanded: new Set() },
  ) {
    this.element = element("div", "entry user");
    this.element.dataset["index"] = String(index);
    // Focused from the keyboard, it is read by its first words, not whole.
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", messageLabel("You", message.text));
    this.body = element("div", "user-message-body");
    this.body.append(...this.promptText(index, renderer));
    if (message.attachments.length > 0) {
      const list = element("ul", "user-attachments");
      list.setAttribute("aria-label", "Attached");
      list.append(
        ...message.attachments.map((attachment) =>
          element("li", `user-attachment ${attachment.type}`, attachmentLabel(attachment)),
        ),
      );
      this.body.append(list);
    }
    const actions = element("div", "message-actions");
    this.restore = actionButton("discard", RESTORE_LABEL, () => {
      // The agent may still be changing the files while its turn runs: the tooltip says so.
      if (this.canSend()) this.post({ type: "restoreCode", entry: index });
    });
    this.restore.classList.add("restore-code");
    this.branch = actionButton("repo-forked", BRANCH_LABEL, () => {
      if (this.canSend()) this.post({ type: "restoreConversation", entry: index });
    });
    this.branch.classList.add("restore-conversation");
    const copy = actionButton("copy", "Copy message", () => this.post({ type: "copyText", text: message.text }));
    actions.append(actionButton("edit", "Edit and send again", () => this.edit()), copy, this.restore, this.branch);
    this.element.append(actions, this.body);
    this.setTurnRunning(!canSend());
    // Built again while it was being edited: the editor comes back, without taking the focus.
    if (state.draft !== null) this.edit(state.draft, false);
  }

  /**
   * The prompt's text, and past [`COLLAPSED_LINES`] lines a "Show all N lines" button: a long
   * paste shows its first lines until the person asks for the rest, which stays so while the
   * view comes and goes.
   */
  private promptText(index: number, renderer: MarkdownRenderer): HTMLElement[] {
    const markdown = element("div", "markdown");
    const text = this.message.text;
    const lineCount = countLines(text);
    const collapsible = lineCount > COLLAPSED_LINES;
    const expanded = !collapsible || this.state.expanded.has(0);
    markdown.innerHTML = renderer.renderPrompt(expanded ? text : firstLines(text, COLLAPSED_LINES));
    if (!collapsible) return [markdown];
    this.body.dataset["collapsed"] = String(!expanded);
    markdown.id = `user-message-${index}`;
    const toggle = showAllButton("user-message-toggle", markdown, expanded, lineCount);
    toggle.addEventListener("click", () => {
      if (expanded) this.state.expanded.delete(0);
      else this.state.expanded.add(0);
      const parts = this.promptText(index, renderer);
      markdown.replaceWith(parts[0] as HTMLElement);
      toggle.replaceWith(parts[1] as HTMLElement);
      (parts[1] as HTMLElement).focus({ preventScroll: true });
    });
    return [markdown, toggle];
  }

  /**
   * Marks Restore and Go back unavailable while a turn runs. It stays focusable (aria-disabled rather than
   * disabled) so that its tooltip, which says why, can still be read; its name stays what it does.
   */
  setTurnRunning(running: boolean): void {
    this.restore.setAttribute("aria-disabled", String(running));
    this.restore.title = running ? RESTORE_BUSY : RESTORE_LABEL;
    this.branch.setAttribute("aria-disabled", String(running));
    this.branch.title = running ? BRANCH_BUSY : BRANCH_LABEL;
  }

  /** Shows the editor in place of the message, with `text` (the prompt's own at first). */
  private edit(text = this.message.text, focus = true): void {
    if (this.editor !== null) return;
    this.state.draft = text;
    const form = element("form", "user-edit");
    form.setAttribute("aria-label", "Edit the prompt");
    const input = element("textarea", "user-edit-input");
    input.value = text;
    input.rows = Math.min(12, Math.max(2, text.split("\n").length));
    input.setAttribute("aria-label", "Prompt");
    const send = element("button", "user-edit-send", "Send");
    send.type = "submit";
    const cancel = element("button", "user-edit-cancel secondary", "Cancel");
    cancel.type = "button";
    const buttons = element("div", "user-edit-buttons");
    buttons.append(cancel, send);
    const busy = element("div", "user-edit-busy", "The agent is still working: stop it or wait for it, then send.");
    busy.setAttribute("role", "status");
    busy.hidden = true;
    form.append(input, busy, buttons);
    this.busy = busy;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(input.value);
    });
    cancel.addEventListener("click", () => this.close());
    input.addEventListener("input", () => {
      this.state.draft = input.value;
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        this.close();
      } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        // As in the composer: Enter sends, Shift+Enter starts a new line.
        event.preventDefault();
        this.send(input.value);
      }
    });
    this.editor = form;
    this.element.classList.add("editing");
    this.body.hidden = true;
    this.element.append(form);
    if (!focus) return;
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  private send(text: string): void {
    if (text.trim() === "") return;
    if (!this.canSend()) {
      // The engine would refuse it: the edited text stays, and the person is told why.
      if (this.busy !== null) this.busy.hidden = false;
      return;
    }
    this.post({ type: "prompt", text, attachments: [] });
    this.close();
  }

  private close(): void {
    if (this.editor === null) return;
    this.state.draft = null;
    const hadFocus = this.editor.contains(document.activeElement);
    this.editor.remove();
    this.editor = null;
    this.element.classList.remove("editing");
    this.body.hidden = false;
    if (hadFocus) this.element.querySelector<HTMLButtonElement>('.message-actions button[data-action="edit"]')?.focus();
  }
}

/** How an attachment of a prompt reads in the thread. */
export function attachmentLabel(attachment: AttachmentView): string {
  switch (attachment.type) {
    case "file":
      return attachment.path;
    case "folder":
      return `${attachment.path}/`;
    case "selection":
      return attachment.startLine === attachment.endLine
        ? `${attachment.path}, line ${attachment.startLine}`
        : `${attachment.path}, lines ${attachment.startLine}-${attachment.endLine}`;
    case "image": {
      const kind = attachment.mimeType.replace(/^image\//, "").toUpperCase();
      return `Image (${kind}, ${Math.max(1, Math.round(attachment.bytes / 1024))} KB)`;
    }
    case "other":
      return attachment.label;
  }
}

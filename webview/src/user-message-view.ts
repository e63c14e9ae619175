// The person's prompt in the thread, with an Edit button that turns it into an editor holding its
// text: sending the edited text starts a new turn from it.
//
// The new turn is a new prompt at the end of the thread, as the peers do without checkpoints;
// going back to the prompt's point in the conversation (a checkpoint, a fork of the session)
// comes with issue 21. Only the text is sent again: the prompt's attachments are shown by their
// labels, and the `@` mentions in the text are resolved again by the engine.

import { actionButton } from "./code-block-view";
import { element } from "./element";
import type { MarkdownRenderer } from "./markdown";
import type { AttachmentView, PostIntent, UserMessage } from "./protocol";

export class UserMessageView {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private editor: HTMLElement | null = null;
  private busy: HTMLElement | null = null;

  constructor(
    index: number,
    private readonly message: UserMessage,
    renderer: MarkdownRenderer,
    private readonly post: PostIntent,
    /** False while a turn runs: the agent takes one prompt at a time. */
    private readonly canSend: () => boolean,
  ) {
    this.element = element("div", "entry user");
    this.element.dataset["index"] = String(index);
    this.body = element("div", "user-message-body");
    const markdown = element("div", "markdown");
    markdown.innerHTML = renderer.render(message.text);
    this.body.append(markdown);
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
    actions.append(actionButton("edit", "Edit and send again", () => this.edit()));
    this.element.append(actions, this.body);
  }

  /** Shows the editor in place of the message, with the prompt's text, focused. */
  private edit(): void {
    if (this.editor !== null) return;
    const form = element("form", "user-edit");
    form.setAttribute("aria-label", "Edit the prompt");
    const input = element("textarea", "user-edit-input");
    input.value = this.message.text;
    input.rows = Math.min(12, Math.max(2, this.message.text.split("\n").length));
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
    const hadFocus = this.editor.contains(document.activeElement);
    this.editor.remove();
    this.editor = null;
    this.element.classList.remove("editing");
    this.body.hidden = false;
    if (hadFocus) this.element.querySelector<HTMLButtonElement>(".message-actions button")?.focus();
  }
}

/** How an attachment of a prompt reads in the thread. */
export function attachmentLabel(attachment: AttachmentView): string {
  switch (attachment.type) {
    case "file":
      return attachment.path;
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

// The scrolling list of entries (`main.thread`): one DOM node per entry, kept across frames.
//
// A frame touches only the entries the [`ChangeSet`] names: new and replaced entries are built
// (or, for tool calls and file changes, refilled), and agent messages that grew are extended in
// place. A snapshot rebuilds the list from nothing. Agent messages whose new text could not be
// shown this frame (see MarkdownView's rationing) are remembered and flushed again on the next
// one.

import { AgentMessageView, type ThoughtOpenState } from "./agent-message-view";
import { element } from "./element";
import { FileChangeCard } from "./file-change-view";
import type { MarkdownRenderer } from "./markdown";
import type { Clock } from "./markdown-view";
import type { ChangeSet, ChatModel } from "./model";
import type { AttachmentView, Entry, NoticeView, UserMessage } from "./protocol";
import { ToolCallCard, type ToolCallContext } from "./tool-call-view";

type EntryView =
  | { type: "agent"; view: AgentMessageView; element: HTMLElement }
  | { type: "toolCall"; view: ToolCallCard; element: HTMLElement }
  | { type: "fileChange"; view: FileChangeCard; element: HTMLElement }
  | { type: "user" | "notice"; element: HTMLElement };

export class ThreadView {
  readonly element: HTMLElement;
  private readonly views: EntryView[] = [];
  /** Agent messages with text not yet in the DOM. */
  private readonly waiting = new Set<number>();

  constructor(
    private readonly renderer: MarkdownRenderer,
    private readonly thoughts: ThoughtOpenState,
    private readonly toolCalls: ToolCallContext,
    private readonly clock: Clock,
  ) {
    this.element = element("main", "thread");
  }

  /** Returns true when some text is still waiting to be shown: render again next frame. */
  render(model: ChatModel, changes: ChangeSet): boolean {
    if (changes.reset) {
      this.views.length = 0;
      this.waiting.clear();
      this.element.replaceChildren();
      model.entries.forEach((entry, index) => this.build(index, entry));
    } else {
      const touched = [...new Set([...changes.rebuilt, ...changes.grown])].sort((a, b) => a - b);
      for (const index of touched) {
        const entry = model.entries[index];
        if (entry === undefined) continue;
        if (changes.rebuilt.has(index)) this.build(index, entry);
        else this.extend(index, entry);
      }
    }
    for (const index of [...this.waiting]) {
      const view = this.views[index];
      if (view?.type !== "agent" || !view.view.flush(this.clock)) this.waiting.delete(index);
    }
    return this.waiting.size > 0;
  }

  private extend(index: number, entry: Entry): void {
    const current = this.views[index];
    if (current?.type === "agent" && entry.type === "agent" && current.view.update(entry)) {
      this.waiting.add(index);
      return;
    }
    this.build(index, entry);
  }

  /**
   * Builds (or, for a tool call or a file change, refills) the node of `entry` and puts it at
   * `index`. Refilling keeps the card's node, so its place and the focus inside it survive.
   */
  private build(index: number, entry: Entry): void {
    const current = this.views[index];
    if (current?.type === "toolCall" && entry.type === "toolCall") {
      current.view.update(entry);
      return;
    }
    if (current?.type === "fileChange" && entry.type === "fileChange") {
      current.view.update(entry);
      return;
    }
    const next = this.create(index, entry);
    if (current !== undefined) {
      current.element.replaceWith(next.element);
    } else {
      // Entries only ever arrive in order, so a new one always goes last; the gap check lives
      // in the reducer, which asks for a snapshot instead of letting the list get holes.
      this.element.append(next.element);
    }
    this.views[index] = next;
  }

  private create(index: number, entry: Entry): EntryView {
    switch (entry.type) {
      case "agent": {
        const view = new AgentMessageView(index, this.renderer, this.thoughts);
        view.update(entry);
        this.waiting.add(index);
        return { type: "agent", view, element: view.element };
      }
      case "toolCall": {
        const view = new ToolCallCard(index, this.toolCalls);
        view.update(entry);
        return { type: "toolCall", view, element: view.element };
      }
      case "fileChange": {
        const view = new FileChangeCard(index, this.toolCalls.post);
        view.update(entry);
        return { type: "fileChange", view, element: view.element };
      }
      case "user":
        return { type: "user", element: this.userMessage(index, entry) };
      case "notice":
        return { type: "notice", element: noticeElement(index, entry) };
    }
    // A newer host may send an entry kind this webview does not know: keep the index, say so.
    const unknown = entry as { type?: unknown };
    const placeholder = noticeElement(index, {
      level: "info",
      text: `This view cannot show an entry of type "${String(unknown.type)}".`,
      detail: null,
    });
    return { type: "notice", element: placeholder };
  }

  private userMessage(index: number, message: UserMessage): HTMLElement {
    const node = entryElement(index, "entry user");
    const markdown = element("div", "markdown");
    markdown.innerHTML = this.renderer.render(message.text);
    node.append(markdown);
    if (message.attachments.length > 0) {
      const list = element("ul", "user-attachments");
      list.setAttribute("aria-label", "Attached");
      list.append(...message.attachments.map((attachment) => element("li", `user-attachment ${attachment.type}`, attachmentLabel(attachment))));
      node.append(list);
    }
    return node;
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

function noticeElement(index: number, notice: NoticeView): HTMLElement {
  const node = entryElement(index, "entry notice");
  node.dataset["level"] = notice.level;
  node.setAttribute("role", notice.level === "error" ? "alert" : "status");
  node.append(element("div", "notice-text", notice.text));
  if (notice.detail !== null && notice.detail !== "") {
    const detail = element("details", "notice-detail");
    detail.append(element("summary", undefined, "Details"), element("pre", undefined, notice.detail));
    node.append(detail);
  }
  return node;
}

function entryElement(index: number, className: string): HTMLElement {
  const node = element("div", className);
  node.dataset["index"] = String(index);
  return node;
}

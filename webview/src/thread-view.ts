// The scrolling list of entries (`main.thread`): one DOM node per entry, kept across frames.
//
// A frame touches only the entries the [`ChangeSet`] names: new and replaced entries are built
// (or, for tool calls and file changes, refilled), and agent messages that grew are extended in
// place. A snapshot rebuilds the list from nothing. Agent messages whose new text could not be
// shown this frame (see MarkdownView's rationing) are remembered and flushed again on the next
// one.

import { type AgentMessageContext, AgentMessageView, type ThoughtOpenState } from "./agent-message-view";
import { CodeBlocks } from "./code-block-view";
import { element, icon } from "./element";
import { FileChangeCard } from "./file-change-view";
import type { MarkdownRenderer } from "./markdown";
import type { Clock } from "./markdown-view";
import { type CodeHighlighter, LazyHighlighter } from "./highlighter";
import type { ChangeSet, ChatModel } from "./model";
import type { Entry, NoticeView } from "./protocol";
import { isJsonText, rawDisclosure } from "./raw-json";
import { RestoreCard } from "./restore-view";
import { ToolCallCard, type ToolCallContext } from "./tool-call-view";
import { UserMessageView } from "./user-message-view";

export { attachmentLabel } from "./user-message-view";

type EntryView =
  | { type: "agent"; view: AgentMessageView; element: HTMLElement }
  | { type: "toolCall"; view: ToolCallCard; element: HTMLElement }
  | { type: "fileChange"; view: FileChangeCard; element: HTMLElement }
  | { type: "restore"; view: RestoreCard; element: HTMLElement }
  | { type: "user"; view: UserMessageView; element: HTMLElement }
  | { type: "notice"; element: HTMLElement };

export class ThreadView {
  readonly element: HTMLElement;
  private readonly views: EntryView[] = [];
  /** Agent messages with text not yet in the DOM. */
  private readonly waiting = new Set<number>();
  /** Agent messages that may still grow: not followed by anything, in a running turn. */
  private readonly growing = new Set<number>();
  private readonly messages: AgentMessageContext;
  /** Whether the last frame's turn was running: an edited prompt waits for it to end. */
  private turnRunning = false;

  constructor(
    private readonly renderer: MarkdownRenderer,
    private readonly thoughts: ThoughtOpenState,
    private readonly toolCalls: ToolCallContext,
    private readonly clock: Clock,
    highlighter: CodeHighlighter = new LazyHighlighter(),
  ) {
    this.element = element("main", "thread");
    const codeBlocks = new CodeBlocks({ post: toolCalls.post, highlighter });
    this.messages = { renderer, thoughts, codeBlocks, post: toolCalls.post };
  }

  /** Returns true when some text is still waiting to be shown: render again next frame. */
  render(model: ChatModel, changes: ChangeSet): boolean {
    // Known before building, so that a prompt built this frame offers Restore as the turn allows.
    const wasRunning = this.turnRunning;
    this.turnRunning = model.turn.type === "running";
    if (changes.reset) {
      this.views.length = 0;
      this.waiting.clear();
      this.growing.clear();
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
    if (this.turnRunning !== wasRunning) {
      for (const view of this.views) if (view?.type === "user") view.view.setTurnRunning(this.turnRunning);
    }
    this.completeMessages(model);
    for (const index of [...this.waiting]) {
      const view = this.views[index];
      if (view?.type !== "agent" || !view.view.flush(this.clock)) this.waiting.delete(index);
    }
    return this.waiting.size > 0;
  }

  /**
   * Tells the agent messages that cannot grow any more (something follows them, or the turn is
   * over) that they are complete: their last code blocks are highlighted then, never while they
   * stream.
   */
  private completeMessages(model: ChatModel): void {
    const running = model.turn.type === "running";
    for (const index of this.growing) {
      const view = this.views[index];
      if (view?.type !== "agent") {
        this.growing.delete(index);
      } else if (!running || index < model.entries.length - 1) {
        view.view.complete();
        this.growing.delete(index);
      }
    }
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
   * Builds (or, for a tool call, a file change or a restore, refills) the node of `entry` and puts
   * it at `index`. Refilling keeps the card's node, so its place and the focus inside it survive.
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
    if (current?.type === "restore" && entry.type === "restore") {
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
        const view = new AgentMessageView(index, this.messages);
        view.update(entry);
        this.waiting.add(index);
        this.growing.add(index);
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
      case "restore": {
        const view = new RestoreCard(index, this.toolCalls.post);
        view.update(entry);
        return { type: "restore", view, element: view.element };
      }
      case "user": {
        const view = new UserMessageView(index, entry, this.renderer, this.toolCalls.post, () => !this.turnRunning);
        return { type: "user", view, element: view.element };
      }
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
}

/** The codicon before a notice's words, by its level. */
const NOTICE_ICONS: Record<string, string> = { info: "info", warning: "warning", error: "error" };

function noticeElement(index: number, notice: NoticeView): HTMLElement {
  const node = entryElement(index, "entry notice");
  node.dataset["level"] = notice.level;
  node.setAttribute("role", notice.level === "error" ? "alert" : "status");
  const text = element("div", "notice-text");
  text.append(icon(NOTICE_ICONS[notice.level] ?? "info"), element("span", undefined, notice.text));
  node.append(text);
  if (notice.detail !== null && notice.detail !== "") {
    // A detail that is data (a malformed line, a request) is raw, formatted; words stay words.
    const raw = isJsonText(notice.detail);
    const detail = rawDisclosure("notice-detail", [{ label: null, value: notice.detail }], false, () => {}, raw ? "Raw" : "More");
    node.append(detail);
  }
  return node;
}

function entryElement(index: number, className: string): HTMLElement {
  const node = element("div", className);
  node.dataset["index"] = String(index);
  return node;
}

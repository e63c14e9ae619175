// An agent message: its chunks in order, text as markdown, thoughts in a collapsed <details>
// whose summary says how long the agent thought; a Copy button for the message's markdown.
//
// Each chunk keeps its own DOM node and [`MarkdownView`]; a frame in which chunks arrived only
// feeds the new characters to the last chunk's view (or opens a view for a new chunk), so a
// long reply is never rebuilt while it streams. A chunk is complete once a later one follows it,
// and the whole message once the thread says so ([`AgentMessageView.complete`]): only then are
// the code blocks of its last part highlighted.

import { type CodeBlocks, actionButton } from "./code-block-view";
import { element } from "./element";
import type { MarkdownRenderer } from "./markdown";
import { type Clock, MarkdownView } from "./markdown-view";
import type { AgentMessage, ChunkKind, MessageChunk, PostIntent } from "./protocol";
import { messageLabel } from "./thread-keys";

/** Remembers which thoughts the person opened, across webview reloads. */
export interface ThoughtOpenState {
  isOpen(key: string): boolean;
  setOpen(key: string, open: boolean): void;
}

/** What an agent message needs beyond its text: code blocks' toolbars, and where Copy goes. */
export interface AgentMessageContext {
  renderer: MarkdownRenderer;
  thoughts: ThoughtOpenState;
  codeBlocks: CodeBlocks;
  post: PostIntent;
}

interface ChunkView {
  kind: ChunkKind;
  markdown: MarkdownView;
  /** A thought's summary, which says whether it goes on or how long it took. */
  summary: HTMLElement | null;
}

export class AgentMessageView {
  readonly element: HTMLElement;
  private readonly chunks: ChunkView[] = [];
  private message: AgentMessage = { chunks: [] };
  private completed = false;
  /** The message's Copy: hidden while the message has no text (only a thought so far). */
  private readonly copy: HTMLButtonElement;

  constructor(
    private readonly index: number,
    private readonly context: AgentMessageContext,
  ) {
    this.element = element("div", "entry agent");
    this.element.dataset["index"] = String(index);
    // Focused from the keyboard, it is read by its first words, not whole (see `update`).
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", "Agent");
    const actions = element("div", "message-actions");
    this.copy = actionButton("copy", "Copy message", () => this.context.post({ type: "copyText", text: this.markdownSource() }));
    this.copy.hidden = true;
    actions.append(this.copy);
    this.element.append(actions);
  }

  /**
   * Takes in `message`'s new text (the DOM follows on [`flush`]). Returns false when the message
   * is not an extension of what is shown (a chunk shrank or changed kind), in which case the
   * caller rebuilds the entry.
   */
  update(message: AgentMessage): boolean {
    this.message = message;
    for (let position = 0; position < message.chunks.length; position++) {
      const chunk = message.chunks[position];
      if (chunk === undefined) continue;
      let view = this.chunks[position];
      if (view === undefined) {
        // A new chunk ends the one before it.
        this.chunks[position - 1]?.markdown.complete();
        view = this.openChunk(position, chunk.kind);
      } else if (view.kind !== chunk.kind) {
        return false;
      }
      if (!view.markdown.syncTo(chunk.text)) return false;
    }
    this.showThoughtStates();
    const firstText = message.chunks.find((chunk) => chunk.kind === "text" && chunk.text.trim() !== "");
    this.copy.hidden = firstText === undefined;
    const label = messageLabel("Agent", firstText?.text ?? "");
    if (this.element.getAttribute("aria-label") !== label) this.element.setAttribute("aria-label", label);
    return message.chunks.length >= this.chunks.length;
  }

  /** The message will not grow any more: its last chunk's code blocks can be highlighted. */
  complete(): void {
    if (this.completed) return;
    this.completed = true;
    for (const view of this.chunks) view.markdown.complete();
    this.showThoughtStates();
  }

  /** Writes new text into the DOM; returns true while some is still waiting (see MarkdownView). */
  flush(clock: Clock): boolean {
    let waiting = false;
    // Only the chunks that changed have anything to flush; the others return at once.
    for (const view of this.chunks) waiting = view.markdown.flush(clock) || waiting;
    return waiting;
  }

  /** The message as the agent wrote it: its text chunks' markdown, without the thoughts. */
  private markdownSource(): string {
    return this.message.chunks
      .filter((chunk) => chunk.kind === "text")
      .map((chunk) => chunk.text.trim())
      .filter((text) => text !== "")
      .join("\n\n");
  }

  private showThoughtStates(): void {
    this.chunks.forEach((view, position) => {
      if (view.summary === null) return;
      const ended = this.completed || position < this.chunks.length - 1;
      const label = thoughtLabel(this.message.chunks[position], ended);
      if (view.summary.textContent !== label) view.summary.textContent = label;
    });
  }

  private openChunk(position: number, kind: ChunkKind): ChunkView {
    const markdown = new MarkdownView(this.context.renderer, "markdown", this.context.codeBlocks);
    let summary: HTMLElement | null = null;
    if (kind === "thought") {
      const details = element("details", "thought");
      const key = `${this.index}:${position}`;
      details.open = this.context.thoughts.isOpen(key);
      summary = element("summary", undefined, "Thinking…");
      details.append(summary, markdown.element);
      details.addEventListener("toggle", () => this.context.thoughts.setOpen(key, details.open));
      this.element.append(details);
    } else {
      this.element.append(markdown.element);
    }
    const view = { kind, markdown, summary };
    this.chunks.push(view);
    return view;
  }
}

/**
 * A thought's summary: "Thinking…" while it goes on, "Thought for 12 s" once it ended (the
 * engine measures it), "Thought" when it ended but its duration is not known.
 */
export function thoughtLabel(chunk: MessageChunk | undefined, ended: boolean): string {
  const duration = chunk?.durationMs;
  if (duration === undefined || duration === null) return ended ? "Thought" : "Thinking…";
  const seconds = Math.round(duration / 1000);
  if (seconds < 1) return "Thought for less than a second";
  if (seconds < 60) return `Thought for ${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `Thought for ${minutes} min` : `Thought for ${minutes} min ${rest} s`;
}

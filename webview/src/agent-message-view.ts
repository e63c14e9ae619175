// An agent message: its chunks in order, text as markdown, thoughts in a collapsed <details>.
//
// Each chunk keeps its own DOM node and [`MarkdownView`]; a frame in which chunks arrived only
// feeds the new characters to the last chunk's view (or opens a view for a new chunk), so a
// long reply is never rebuilt while it streams.

import { element } from "./element";
import type { MarkdownRenderer } from "./markdown";
import { type Clock, MarkdownView } from "./markdown-view";
import type { AgentMessage, ChunkKind } from "./protocol";

/** Remembers which thoughts the person opened, across webview reloads. */
export interface ThoughtOpenState {
  isOpen(key: string): boolean;
  setOpen(key: string, open: boolean): void;
}

interface ChunkView {
  kind: ChunkKind;
  markdown: MarkdownView;
}

export class AgentMessageView {
  readonly element: HTMLElement;
  private readonly chunks: ChunkView[] = [];

  constructor(
    private readonly index: number,
    private readonly renderer: MarkdownRenderer,
    private readonly thoughts: ThoughtOpenState,
  ) {
    this.element = element("div", "entry agent");
    this.element.dataset["index"] = String(index);
  }

  /**
   * Takes in `message`'s new text (the DOM follows on [`flush`]). Returns false when the message
   * is not an extension of what is shown (a chunk shrank or changed kind), in which case the
   * caller rebuilds the entry.
   */
  update(message: AgentMessage): boolean {
    for (let position = 0; position < message.chunks.length; position++) {
      const chunk = message.chunks[position];
      if (chunk === undefined) continue;
      let view = this.chunks[position];
      if (view === undefined) {
        view = this.openChunk(position, chunk.kind);
      } else if (view.kind !== chunk.kind) {
        return false;
      }
      if (!view.markdown.syncTo(chunk.text)) return false;
    }
    return message.chunks.length >= this.chunks.length;
  }

  /** Writes new text into the DOM; returns true while some is still waiting (see MarkdownView). */
  flush(clock: Clock): boolean {
    let waiting = false;
    // Only the chunks that changed have anything to flush; the others return at once.
    for (const view of this.chunks) waiting = view.markdown.flush(clock) || waiting;
    return waiting;
  }

  private openChunk(position: number, kind: ChunkKind): ChunkView {
    const markdown = new MarkdownView(this.renderer);
    if (kind === "thought") {
      const details = element("details", "thought");
      const key = `${this.index}:${position}`;
      details.open = this.thoughts.isOpen(key);
      details.append(element("summary", undefined, "Thinking"), markdown.element);
      details.addEventListener("toggle", () => this.thoughts.setOpen(key, details.open));
      this.element.append(details);
    } else {
      this.element.append(markdown.element);
    }
    const view = { kind, markdown };
    this.chunks.push(view);
    return view;
  }
}

// The view of one thread entry, whatever its kind: built from the model's entry, refilled in place
// when the host replaces it, and disposed of when the virtualized thread (thread-view.ts) lets
// it go.
//
// What the person did to an entry that the model does not hold (a Raw disclosure opened, a long
// output shown whole, a prompt being edited) lives in its `EntryState`, which the thread keeps
// by entry index, outside the view: a view rebuilt after scrolling out and back shows the entry
// as the person left it. Opened thoughts are kept the same way, in the webview's saved UI state.

import { type AgentMessageContext, AgentMessageView } from "./agent-message-view";
import { element, icon } from "./element";
import { FileChangeCard } from "./file-change-view";
import type { MarkdownRenderer } from "./markdown";
import type { ThreadEntry } from "./model";
import type { NoticeView, PostIntent } from "./protocol";
import { isJsonText, rawDisclosure } from "./raw-json";
import { RestoreCard } from "./restore-view";
import { ToolCallCard, type ToolCallContext } from "./tool-call-view";
import { UserMessageView } from "./user-message-view";

/** What the person changed on an entry's view, kept while the view itself comes and goes. */
export interface EntryState {
  /** A tool call's Raw disclosure, or a notice's detail, is open. */
  rawOpen: boolean;
  /** A tool call's text outputs shown whole, by their place in its content. */
  expanded: Set<number>;
  /** The text of a prompt being edited, or null when it is not. */
  draft: string | null;
}

export function emptyEntryState(): EntryState {
  return { rawOpen: false, expanded: new Set(), draft: null };
}

/** What every entry view needs. */
export interface EntryContext {
  renderer: MarkdownRenderer;
  post: PostIntent;
  messages: AgentMessageContext;
  toolCalls: ToolCallContext;
  /** False while a turn runs: an edited prompt waits for it to end. */
  canSend: () => boolean;
}

export type EntryView =
  | { type: "agent"; view: AgentMessageView; element: HTMLElement }
  | { type: "toolCall"; view: ToolCallCard; element: HTMLElement }
  | { type: "fileChange"; view: FileChangeCard; element: HTMLElement }
  | { type: "restore"; view: RestoreCard; element: HTMLElement }
  | { type: "user"; view: UserMessageView; element: HTMLElement }
  | { type: "notice"; element: HTMLElement }
  | { type: "notLoaded"; element: HTMLElement };

/** Builds the view of `entry` at `index`. An agent message still has to be flushed into the DOM. */
export function createEntryView(index: number, entry: ThreadEntry, context: EntryContext, state: EntryState): EntryView {
  switch (entry.type) {
    case "notLoaded": {
      // The place of an entry still on its way (a long thread's snapshot carries its end first):
      // an empty block of a typical height, replaced when the entry arrives.
      const node = element("div", "entry not-loaded");
      node.dataset["index"] = String(index);
      node.setAttribute("aria-busy", "true");
      node.setAttribute("role", "group");
      // What the keys land on at a long thread's start before it arrives.
      node.setAttribute("aria-label", "Loading…");
      return { type: "notLoaded", element: node };
    }
    case "agent": {
      const view = new AgentMessageView(index, context.messages);
      view.update(entry);
      return { type: "agent", view, element: view.element };
    }
    case "toolCall": {
      const view = new ToolCallCard(index, context.toolCalls, state);
      view.update(entry);
      return { type: "toolCall", view, element: view.element };
    }
    case "fileChange": {
      const view = new FileChangeCard(index, context.post);
      view.update(entry);
      return { type: "fileChange", view, element: view.element };
    }
    case "restore": {
      const view = new RestoreCard(index, context.post);
      view.update(entry);
      return { type: "restore", view, element: view.element };
    }
    case "user": {
      const view = new UserMessageView(index, entry, context.renderer, context.post, context.canSend, state);
      return { type: "user", view, element: view.element };
    }
    case "notice":
      return { type: "notice", element: noticeElement(index, entry, state) };
  }
  // A newer host may send an entry kind this webview does not know: keep the index, say so.
  const unknown = entry as { type?: unknown };
  const placeholder = noticeElement(
    index,
    { level: "info", text: `This view cannot show an entry of type "${String(unknown.type)}".`, detail: null },
    state,
  );
  return { type: "notice", element: placeholder };
}

/**
 * Refills `view` from `entry` in place when it is a card of the same kind (its node, and the
 * focus inside it, survive); returns false when the entry must be built anew.
 */
export function refillEntryView(view: EntryView, entry: ThreadEntry): boolean {
  if (view.type === "toolCall" && entry.type === "toolCall") {
    view.view.update(entry);
    return true;
  }
  if (view.type === "fileChange" && entry.type === "fileChange") {
    view.view.update(entry);
    return true;
  }
  if (view.type === "restore" && entry.type === "restore") {
    view.view.update(entry);
    return true;
  }
  return false;
}

/** Lets go of what a view holds outside its own nodes (a tool call's terminal cards). */
export function disposeEntryView(view: EntryView): void {
  if (view.type === "toolCall") view.view.dispose();
}

/** The codicon before a notice's words, by its level. */
const NOTICE_ICONS: Record<string, string> = { info: "info", warning: "warning", error: "error" };

function noticeElement(index: number, notice: NoticeView, state: EntryState): HTMLElement {
  const node = element("div", "entry notice");
  node.dataset["index"] = String(index);
  node.dataset["level"] = notice.level;
  node.setAttribute("role", notice.level === "error" ? "alert" : "status");
  const text = element("div", "notice-text");
  text.append(icon(NOTICE_ICONS[notice.level] ?? "info"), element("span", undefined, notice.text));
  node.append(text);
  if (notice.detail !== null && notice.detail !== "") {
    // A detail that is data (a malformed line, a request) is raw, formatted; words stay words.
    const raw = isJsonText(notice.detail);
    const detail = rawDisclosure(
      "notice-detail",
      [{ label: null, value: notice.detail }],
      state.rawOpen,
      (open) => {
        state.rawOpen = open;
      },
      raw ? "Raw" : "More",
    );
    node.append(detail);
  }
  return node;
}

// The session tabs (`.session-tabs`, a WAI-ARIA tablist under the header): one tab per session
// open in the window, drawn only while there are two or more, so a single session keeps the
// compact one-row header. Each tab says its session's label, whether its agent is working, waits
// for the person (a permission question, a write to review), has left changes in the files that
// are not reviewed yet, or has stopped, and has a close button. A session waiting in the
// background stands out in the theme's warning colour: it is the one the person must not miss.
//
// Clicking a tab asks the host to show it (`showSession`); the host answers with a snapshot of
// that session, and the next header says which tab is shown. The arrow keys, Home and End move
// along the tabs and show the one reached (automatic activation, as VS Code's editor tabs);
// Delete, the close button and a middle click close one (`closeSession`; the host asks the person
// first when that session is at work). Drawing the host's tabs never sends an intent.
//
// The tabs' nodes are kept across headers (the host re-sends the header whenever a background
// tab's activity changes), so the focus stays on the tab the person is on.

import { element, icon, iconButton } from "./element";
import { indexForKey } from "./list-keys";
import type { PostIntent, SessionKey, SessionTabView, SessionView, TabActivity } from "./protocol";

/** How each activity is marked: a codicon and the words screen readers read instead. */
const ACTIVITY_MARKS: Record<TabActivity, { icon: string; words: string } | null> = {
  idle: null,
  working: { icon: "loading", words: "working" },
  waiting: { icon: "bell-dot", words: "waits for you" },
  review: { icon: "diff", words: "has changes to review" },
  stopped: { icon: "debug-stop", words: "stopped" },
};

/**
 * A shared start shorter than this, or of one word, stays: cutting "Fix " saves little, and
 * "Session 1" and "Session 2" are not "…1" and "…2".
 */
const MIN_SHARED_CHARS = 8;
const MIN_SHARED_WORDS = 2;

/**
 * What each tab shows of its label. Labels that start alike (prompts that all begin "Please fix
 * the") were all cut to that same start in a strip of narrow tabs, so the whole words a label
 * shares with the start of another give way to "…", as VS Code's editor tabs tell files of the
 * same name apart by what differs. The whole label stays the tab's tooltip and accessible name.
 */
export function distinctLabels(labels: readonly string[]): string[] {
  return labels.map((label, index) => {
    let shared = 0;
    labels.forEach((other, otherIndex) => {
      if (otherIndex !== index && other !== label) shared = Math.max(shared, sharedWordsLength(label, other));
    });
    const words = label.slice(0, shared).split(" ").length - 1;
    const cut = shared >= MIN_SHARED_CHARS && words >= MIN_SHARED_WORDS && shared < label.length;
    return cut ? `…${label.slice(shared)}` : label;
  });
}

/** How much of `label` is whole words (each with the space after it) that `other` starts with too. */
function sharedWordsLength(label: string, other: string): number {
  let end = 0;
  for (let index = 0; index < label.length && index < other.length && label[index] === other[index]; index++) {
    if (label[index] === " ") end = index + 1;
  }
  return end;
}

/** One tab's nodes. */
interface TabParts {
  tab: HTMLElement;
  marker: HTMLElement;
  words: HTMLElement;
  label: HTMLElement;
  close: HTMLButtonElement;
}

export class SessionTabsView {
  readonly element = element("div", "session-tabs");
  private readonly tabs = new Map<SessionKey, TabParts>();
  /** The keys in the host's order. */
  private order: SessionKey[] = [];
  /** The session the host shows. */
  private shown: SessionKey = 0;
  /** The session asked for since the last header: pressed again before the host answers, it asks nothing more. */
  private asked: SessionKey | null = null;

  /** `focusElsewhere` takes the focus when the strip goes away under it (its last tab but one closed). */
  constructor(
    private readonly post: PostIntent,
    private readonly focusElsewhere: () => void,
  ) {
    this.element.setAttribute("role", "tablist");
    this.element.setAttribute("aria-label", "Sessions");
    this.element.hidden = true;
    this.element.addEventListener("keydown", (event) => this.onKey(event));
  }

  render(session: SessionView | null): void {
    const tabs = session?.tabs ?? [];
    const hadFocus = this.element.contains(this.element.ownerDocument.activeElement);
    const shownBefore = this.shown;
    this.shown = session?.shown ?? 0;
    this.asked = null;
    this.order = tabs.map((tab) => tab.key);
    for (const [key, parts] of this.tabs) {
      if (this.order.includes(key)) continue;
      parts.tab.remove();
      this.tabs.delete(key);
    }
    const shown = distinctLabels(tabs.map((tab) => tab.label));
    tabs.forEach((view, index) => {
      const parts = this.tabs.get(view.key) ?? this.create(view.key);
      this.update(parts, view, shown[index] ?? view.label);
      // Tabs keep their order, so a kept tab is never moved (moving a node drops its focus).
      const there = this.element.children[index] ?? null;
      if (there !== parts.tab) this.element.insertBefore(parts.tab, there);
    });
    const focused = this.element.ownerDocument.activeElement;
    this.element.hidden = tabs.length < 2;
    if (hadFocus && this.element.hidden) {
      this.focusElsewhere();
    } else if (hadFocus && !this.element.contains(focused)) {
      // The tab the person was on closed: the focus goes to the one now shown.
      this.tabs.get(this.shown)?.tab.focus();
    }
    // Roving tabindex: Tab reaches the strip once, on the tab shown (or the one the person is on).
    const current = this.focusedKey() ?? this.shown;
    for (const [key, parts] of this.tabs) parts.tab.tabIndex = key === current ? 0 : -1;
    // A crowded strip scrolls: the tab of a session just shown comes into view.
    if (this.shown !== shownBefore) {
      this.tabs.get(this.shown)?.tab.scrollIntoView?.({ block: "nearest", inline: "nearest" });
    }
  }

  private create(key: SessionKey): TabParts {
    const tab = element("div", "session-tab");
    tab.setAttribute("role", "tab");
    tab.dataset["key"] = String(key);
    // Delete closes the tab; its close button is for the pointer.
    tab.setAttribute("aria-keyshortcuts", "Delete");
    const marker = element("span", "session-tab-activity");
    const words = element("span", "session-tab-activity-words");
    words.id = `tether-session-tab-${key}-activity`;
    const label = element("span", "session-tab-label");
    label.id = `tether-session-tab-${key}-label`;
    // The tab's name is its label and its state, not its close button's "Close …".
    tab.setAttribute("aria-labelledby", `${label.id} ${words.id}`);
    const close = iconButton("session-tab-close", "Close", "close");
    close.tabIndex = -1;
    tab.append(marker, label, close);
    tab.addEventListener("click", () => this.show(key));
    close.addEventListener("click", (event) => {
      event.stopPropagation();
      this.post({ type: "closeSession", key, confirmed: false });
    });
    // A middle click closes, as on VS Code's editor tabs; its mousedown must not start the
    // browser's autoscroll.
    tab.addEventListener("mousedown", (event) => {
      if (event.button === 1) event.preventDefault();
    });
    tab.addEventListener("auxclick", (event) => {
      if (event.button !== 1) return;
      event.preventDefault();
      this.post({ type: "closeSession", key, confirmed: false });
    });
    const parts = { tab, marker, words, label, close };
    this.tabs.set(key, parts);
    return parts;
  }

  /** Draws `view`, its label shown as `shownLabel` (see `distinctLabels`). */
  private update(parts: TabParts, view: SessionTabView, shownLabel: string): void {
    const selected = view.key === this.shown;
    parts.tab.dataset["activity"] = view.activity;
    parts.tab.setAttribute("aria-selected", String(selected));
    parts.tab.title = `${view.label} (${view.agent})`;
    parts.label.textContent = shownLabel;
    parts.label.setAttribute("aria-label", view.label);
    parts.close.title = `Close ${view.label}`;
    parts.close.setAttribute("aria-label", `Close ${view.label}`);
    const mark = ACTIVITY_MARKS[view.activity];
    if (parts.marker.dataset["activity"] === view.activity) return;
    parts.marker.dataset["activity"] = view.activity;
    parts.marker.hidden = mark === null;
    parts.words.textContent = mark?.words ?? "";
    if (mark === null) {
      parts.marker.replaceChildren(parts.words);
      return;
    }
    const glyph = icon(mark.icon);
    if (view.activity === "working") glyph.classList.add("codicon-modifier-spin");
    parts.marker.replaceChildren(glyph, parts.words);
  }

  /** Asks the host to show `key`, unless it is shown (or already asked for). */
  private show(key: SessionKey): void {
    if (key === (this.asked ?? this.shown)) return;
    this.asked = key;
    this.post({ type: "showSession", key });
  }

  private focusedKey(): SessionKey | null {
    const focused = this.element.ownerDocument.activeElement;
    for (const [key, parts] of this.tabs) if (parts.tab === focused) return key;
    return null;
  }

  private onKey(event: KeyboardEvent): void {
    const key = this.focusedKey();
    if (key === null || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (event.key === "Delete") {
      event.preventDefault();
      this.post({ type: "closeSession", key, confirmed: false });
      return;
    }
    const next = indexForKey(event.key, this.order.indexOf(key), this.order.length, "horizontal");
    const reached = next === null ? undefined : this.order[next];
    if (reached === undefined) return;
    event.preventDefault();
    for (const [each, parts] of this.tabs) parts.tab.tabIndex = each === reached ? 0 : -1;
    this.tabs.get(reached)?.tab.focus();
    this.show(reached);
  }
}

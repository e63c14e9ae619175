// The find bar: Ctrl+F (Cmd+F) in the chat opens it at the thread's top right, as VS Code's own
// find widget sits at an editor's (in a row of its own, so that it covers no match). Typing
// searches the whole thread, Enter and Shift+Enter go to the next and previous match ("3 of 17"),
// Escape closes it and gives the focus back.
//
// The search runs over the model (thread-search.ts), not the DOM: the thread is virtualized, and
// a match out of sight is brought into the window (`FindTarget.reveal`) before it is highlighted
// (find-highlight.ts). A thought holding the match is opened; the thread scrolls so the match is
// in sight. While the bar is open the count follows the thread as it grows, counting only the
// entries that changed.

import { SHOW_ALL_CLASS } from "./collapsed-lines";
import { element, iconButton } from "./element";
import { FindHighlights, textRanges } from "./find-highlight";
import type { ChangeSet, ThreadEntry } from "./model";
import { type Match, ThreadSearch } from "./thread-search";

/** What the find bar needs of the thread. */
export interface FindTarget {
  /** The scrolling list. */
  readonly element: HTMLElement;
  /** Brings an entry into sight and returns its node. */
  reveal(index: number): HTMLElement | null;
  /** The first entry in sight. */
  topIndex(): number;
  /** The entries drawn, by index. */
  drawnEntries(): IterableIterator<[number, { element: HTMLElement }]>;
  /** Changes whenever entry nodes are added, replaced or removed. */
  readonly drawn: number;
}

export class FindBarView {
  readonly element: HTMLElement;
  readonly input: HTMLInputElement;
  private readonly count: HTMLElement;
  private readonly previousButton: HTMLButtonElement;
  private readonly nextButton: HTMLButtonElement;
  private readonly search = new ThreadSearch();
  private readonly highlights: FindHighlights;
  private entries: readonly ThreadEntry[] = [];
  /** Where the focus was before the bar took it, to give it back on close. */
  private returnFocus: Element | null = null;
  /** The thread's drawn entries when the highlights were last placed. */
  private highlightedAt = Number.NaN;
  /** The entry outlined because its match could not be found in its drawn text. */
  private outlined: HTMLElement | null = null;

  constructor(
    private readonly thread: FindTarget,
    /** Where the focus goes on close when the element that had it is gone. */
    private readonly focusFallback: () => void,
  ) {
    this.element = element("div", "find-bar");
    this.highlights = new FindHighlights(this.element.ownerDocument);
    this.element.setAttribute("role", "search");
    this.element.setAttribute("aria-label", "Find in thread");
    this.element.hidden = true;
    this.input = element("input", "find-input");
    this.input.type = "text";
    this.input.placeholder = "Find";
    this.input.setAttribute("aria-label", "Find in thread");
    this.count = element("span", "find-count");
    this.count.setAttribute("role", "status");
    this.previousButton = iconButton("find-previous", "Previous match (Shift+Enter)", "arrow-up");
    this.nextButton = iconButton("find-next", "Next match (Enter)", "arrow-down");
    const close = iconButton("find-close", "Close (Escape)", "close");
    this.element.append(this.input, this.count, this.previousButton, this.nextButton, close);

    this.input.addEventListener("input", () => this.find());
    this.previousButton.addEventListener("click", () => this.go(this.search.previous()));
    this.nextButton.addEventListener("click", () => this.go(this.search.next()));
    close.addEventListener("click", () => this.close());
    this.element.addEventListener("keydown", (event) => {
      if (event.isComposing) return;
      if (event.key === "Escape") {
        event.preventDefault();
        // VS Code would take Escape for its own (the workbench hears the webview's keys).
        event.stopPropagation();
        this.close();
      } else if (event.key === "Enter" && event.target === this.input) {
        event.preventDefault();
        this.go(event.shiftKey ? this.search.previous() : this.search.next());
      }
    });
    this.showCount();
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  /** Shows the bar (or, open already, takes the focus back to it) with its text selected. */
  open(): void {
    if (!this.isOpen) {
      const active = this.element.ownerDocument.activeElement;
      this.returnFocus = active !== null && !this.element.contains(active) ? active : null;
      this.element.hidden = false;
      if (this.input.value !== "") this.find();
    }
    this.input.focus();
    this.input.select();
  }

  close(): void {
    if (!this.isOpen) return;
    this.element.hidden = true;
    this.search.clear();
    this.highlights.clear();
    this.unoutline();
    this.highlightedAt = Number.NaN;
    const back = this.returnFocus;
    this.returnFocus = null;
    if (back instanceof HTMLElement && back.isConnected && back !== this.element.ownerDocument.body) {
      back.focus({ preventScroll: true });
    } else {
      this.focusFallback();
    }
  }

  /** Call once per frame, after the thread drew it: counts what changed, highlights what is drawn. */
  update(entries: readonly ThreadEntry[], changes: ChangeSet): void {
    this.entries = entries;
    if (!this.isOpen || this.search.query === "") return;
    const changedEntries = changes.reset ? [] : [...changes.rebuilt, ...changes.grown];
    if (changes.reset || changedEntries.length > 0) {
      this.search.update(entries, changedEntries, changes.reset);
      this.showCount();
    }
    // Nodes drawn anew (or text streamed into them) hold matches the highlights do not know yet.
    if (this.thread.drawn !== this.highlightedAt || changedEntries.length > 0 || changes.reset) this.highlight();
  }

  private find(): void {
    const current = this.search.current;
    const from = current !== null ? current.index : this.thread.topIndex();
    this.search.setQuery(this.input.value, this.entries, from);
    this.go(this.search.current);
  }

  /** Shows `match`: brought into sight, highlighted, and the count updated. */
  private go(match: Match | null): void {
    this.showCount();
    if (match === null) {
      this.highlight();
      return;
    }
    const entry = this.thread.reveal(match.index);
    let range = this.highlight();
    if (entry === null) return;
    // A match past the first lines of a folded prompt or tool output is not drawn: the text is
    // shown whole (as its "Show all N lines" would), and the bar keeps the focus.
    const folded = entry.querySelector<HTMLButtonElement>(`button.${SHOW_ALL_CLASS}[aria-expanded="false"]`);
    if (range === null && folded !== null) {
      folded.click();
      this.input.focus({ preventScroll: true });
      range = this.highlight();
    }
    // A thought holding the match is opened; a match far down a long entry is scrolled to.
    const details = range?.startContainer.parentElement?.closest("details");
    if (details !== null && details !== undefined && !details.open && entry.contains(details)) details.open = true;
    if (range !== null && typeof range.getBoundingClientRect === "function") {
      const shown = this.thread.element.getBoundingClientRect();
      const at = range.getBoundingClientRect();
      if (at.top < shown.top || at.bottom > shown.bottom) {
        this.thread.element.scrollTop += at.top - shown.top - shown.height / 3;
      }
    }
  }

  /** Places the highlights on the drawn entries; returns the current match's range, if drawn. */
  private highlight(): Range | null {
    this.highlightedAt = this.thread.drawn;
    this.unoutline();
    // A `<mark>` left from the last time would split the text the matches are looked for in.
    this.highlights.unmark();
    const needle = this.search.query;
    const current = this.search.current;
    if (needle === "") {
      this.highlights.clear();
      return null;
    }
    const all: Range[] = [];
    let currentRange: Range | null = null;
    for (const [index, view] of this.thread.drawnEntries()) {
      const ranges = textRanges(view.element, needle);
      all.push(...ranges);
      if (current === null || index !== current.index) continue;
      // The same occurrence as in the model's text, or the last one drawn if the entry shows fewer.
      currentRange = ranges[Math.min(current.occurrence, ranges.length - 1)] ?? null;
      if (currentRange === null) this.outline(view.element);
    }
    this.highlights.show(all, currentRange);
    return currentRange;
  }

  private showCount(): void {
    const total = this.search.total;
    const none = this.search.query !== "" && total === 0;
    this.count.textContent = this.search.query === "" ? "" : none ? "No results" : `${this.search.position} of ${total}`;
    this.element.dataset["result"] = none ? "none" : "some";
    this.previousButton.disabled = total === 0;
    this.nextButton.disabled = total === 0;
  }

  private outline(entry: HTMLElement): void {
    entry.classList.add("find-current");
    this.outlined = entry;
  }

  private unoutline(): void {
    this.outlined?.classList.remove("find-current");
    this.outlined = null;
  }
}

// The thread's keyboard model, as VS Code's own lists and chat have it: the thread is one tab
// stop, the arrow keys move between its entries, and Tab from an entry reaches its own controls.
//
// The entries have a roving tabindex (the WAI-ARIA list pattern): the entry last focused (at
// first, and whenever another thread is shown, the last one) has tabIndex 0 and every other
// entry -1. ↑ and ↓ move the focus to the entry before or after, Home and End to the first and
// last entry of the whole thread, Page Up and Page Down about a screenful; Escape gives the
// focus back to the composer. The thread is virtualized (thread-view.ts), so an entry out of the
// window is drawn and brought into sight first, as find in thread does. Only keys pressed on an
// entry itself are taken: a field or a control inside it keeps its own.
//
// The controls inside an entry (a message's hover toolbar, a code block's, links, Raw
// disclosures, a command's output) are out of the tab order unless the focus is in that entry:
// otherwise Shift+Tab from the composer would walk every control of every entry drawn, hundreds
// of stops. Controls that answer a question waiting for the person (`keepInTabOrder`: a
// permission's options, a change's review, a running command's Stop) stay in it wherever the
// focus is, so the composer is a Shift+Tab away from them. Controls come and go with the entries
// drawn, with what streams into them and with the cards' own updates, so the thread's DOM is
// watched, and what is added outside the entry holding the focus leaves the tab order as it
// arrives (within the frame that drew it). When the entry last focused leaves the window, the
// tab stop goes to the entry in sight nearest to it: the thread always has exactly one. When it
// leaves with the focus in it (scrolled away from with the wheel), the focus goes along to that
// tab stop rather than falling to the page.

import { indexForKey } from "./list-keys";

/** Marks a control as one that stays in the tab order wherever the focus is (see above). */
const KEEP_IN_TAB_ORDER = "data-keep-in-tab-order";

/** What can be in the tab order inside an entry. */
const CONTROLS = "a[href], button, input, select, textarea, summary, [tabindex]";

/** A message's name stops after about this many characters, at a word's end. */
const LABEL_CHARS = 60;

/**
 * Keeps `control` in the tab order even while the focus is elsewhere than its entry: it answers
 * a question waiting for the person.
 */
export function keepInTabOrder(control: HTMLElement): void {
  control.setAttribute(KEEP_IN_TAB_ORDER, "");
}

/**
 * A message's accessible name: who wrote it and its first words ("You: Fix the failing test…").
 * A screen reader reads a focused entry's name; without one it would read a long reply whole.
 * Markdown's marks are dropped, as they would be read out as symbols.
 */
export function messageLabel(author: string, text: string): string {
  const words = text.slice(0, 4 * LABEL_CHARS).replace(/[`*_#>~|]+/g, "").replace(/\s+/g, " ").trim();
  if (words === "") return author;
  if (words.length <= LABEL_CHARS) return `${author}: ${words}`;
  const cut = words.lastIndexOf(" ", LABEL_CHARS);
  return `${author}: ${words.slice(0, cut > 0 ? cut : LABEL_CHARS)}…`;
}

/** What the keys need of the thread. */
export interface KeyedThread {
  /** The scrolling list, whose children are the entries drawn (`data-index` their place). */
  readonly element: HTMLElement;
  /** How many entries the thread has, drawn or not. */
  readonly length: number;
  /** The node of an entry, or null when it is not drawn. */
  drawnEntry(index: number): HTMLElement | null;
  /** Draws an entry if it is not, brings it into sight and returns its node. */
  reveal(index: number): HTMLElement | null;
  /** The node of an entry when drawn, else of the entry in sight nearest to it. */
  nearestInSight(index: number): HTMLElement | null;
  /** The entry about a screenful above (-1) or below (1) another. */
  pageFrom(index: number, direction: -1 | 1): number;
}

export class ThreadKeys {
  /** The entry last focused, by index; null for the thread's last entry. */
  private current: number | null = null;
  /** The entry node with tabIndex 0. */
  private tabStop: HTMLElement | null = null;
  /** The entry the focus is in: its controls are in the tab order. */
  private focused: HTMLElement | null = null;
  /**
   * The entry that held the focus when the focus went nowhere (a focusout to nothing, or no
   * focusout at all for a removed node): if it left the window, the tab stop takes the focus.
   */
  private lostFrom: HTMLElement | null = null;
  /** The tabindex attribute each control taken out of the tab order had (null: none). */
  private readonly parked = new WeakMap<Element, string | null>();
  private readonly observer: MutationObserver;

  constructor(
    private readonly thread: KeyedThread,
    /** Takes the focus out of the thread, to the composer (Escape). */
    private readonly leave: () => void,
  ) {
    const list = thread.element;
    // Outside frames: a card's own update, a command's output, an entry a find revealed.
    this.observer = new MutationObserver((records) => this.onMutations(records));
    this.observer.observe(list, { childList: true, subtree: true });
    list.addEventListener("focusin", (event) => this.onFocusIn(event));
    list.addEventListener("focusout", (event) => this.onFocusOut(event));
    list.addEventListener("keydown", (event) => this.onKey(event));
    // The person going to an editor also sends a focusout to nothing, just before this: that
    // focus was not lost, and nothing must take it back while the person is elsewhere.
    list.ownerDocument.defaultView?.addEventListener("blur", () => {
      this.lostFrom = null;
    });
  }

  /**
   * Call after each frame the thread drew (`reset`: it is another thread now, or the same one
   * sent again): the entries and controls it added leave the tab order, and one entry holds it.
   */
  frameDrawn(reset: boolean): void {
    if (reset) this.current = null;
    this.takeAdded(this.observer.takeRecords());
    this.placeTabStop();
    this.catchDroppedFocus();
  }

  /** Outside frames: settled once the task that made the changes is over, before a key can move the focus. */
  private onMutations(records: MutationRecord[]): void {
    // Finding the entry in sight reads the layout, which a card's own update must not force:
    // the tab stop moves only when entries were drawn (a find or a link revealing one).
    if (this.takeAdded(records) || this.lostFrom !== null) this.placeTabStop();
    this.catchDroppedFocus();
  }

  /**
   * Takes what `records` added out of the tab order (new entries, and controls outside the
   * entry holding the focus); returns whether entries were added.
   */
  private takeAdded(records: MutationRecord[]): boolean {
    const list = this.thread.element;
    let entriesAdded = false;
    for (const record of records) {
      if (record.addedNodes.length === 0) continue;
      if (record.target === list) {
        for (const entry of record.addedNodes) {
          if (!(entry instanceof HTMLElement) || !entry.classList.contains("entry")) continue;
          entriesAdded = true;
          // An entry built anew with the focus on it (thread-view.ts) already has it.
          if (this.focused?.contains(entry) !== true) this.park(entry);
        }
      } else if (this.focused?.contains(record.target) !== true) {
        // Only what was added is looked at, not the whole node that got it: while a reply
        // streams, that node is the reply, and its earlier controls were parked as they came.
        for (const added of record.addedNodes) {
          if (!(added instanceof HTMLElement)) continue;
          if (added.matches(CONTROLS)) this.parkControl(added);
          this.park(added);
        }
      }
    }
    // The entry holding the focus was rebuilt or dropped with it, and no focusout said so (jsdom
    // sends none for a removed node; Chromium does, see onFocusOut).
    const focused = this.focused;
    const active = list.ownerDocument.activeElement;
    if (focused !== null && !focused.contains(active)) {
      this.focused = null;
      this.park(focused);
      if (active === null || active === list.ownerDocument.body) this.lostFrom = focused;
    }
    return entriesAdded;
  }

  /**
   * Gives a focus that fell to the page with its entry to the thread's tab stop, the entry in
   * sight nearest to it, so that the keys (arrows, Tab, Escape) go on working from where the
   * person scrolled to instead of starting over from the top of the page.
   */
  private catchDroppedFocus(): void {
    const lost = this.lostFrom;
    this.lostFrom = null;
    // Only an entry dropped from the window (not one still there whose control went away), and
    // only while nothing has taken the focus since.
    if (lost === null || lost.isConnected) return;
    const document = this.thread.element.ownerDocument;
    if (document.activeElement !== null && document.activeElement !== document.body) return;
    this.tabStop?.focus({ preventScroll: true });
  }

  /** Gives the tab stop to the entry last focused, or to the entry in sight nearest to it. */
  private placeTabStop(): void {
    const count = this.thread.length;
    const stop = count === 0 ? null : this.thread.nearestInSight(Math.min(this.current ?? count - 1, count - 1));
    this.moveTabStop(stop);
  }

  private moveTabStop(stop: HTMLElement | null): void {
    if (stop !== this.tabStop && this.tabStop !== null) this.tabStop.tabIndex = -1;
    this.tabStop = stop;
    if (stop !== null && stop.tabIndex !== 0) stop.tabIndex = 0;
  }

  /** Takes the controls inside `root` out of the tab order, but those kept in it. */
  private park(root: HTMLElement): void {
    for (const control of root.querySelectorAll<HTMLElement>(CONTROLS)) this.parkControl(control);
  }

  private parkControl(control: HTMLElement): void {
    const original = control.getAttribute("tabindex");
    // Out of the tab order already (parked before, or never in it), or to stay in it.
    if (original === "-1" || control.hasAttribute(KEEP_IN_TAB_ORDER)) return;
    this.parked.set(control, original);
    control.tabIndex = -1;
  }

  /** Puts the controls of `entry` back in the tab order as they were. */
  private unpark(entry: HTMLElement): void {
    for (const control of entry.querySelectorAll<HTMLElement>('[tabindex="-1"]')) {
      if (!this.parked.has(control)) continue;
      const original = this.parked.get(control) ?? null;
      this.parked.delete(control);
      if (original === null) control.removeAttribute("tabindex");
      else control.setAttribute("tabindex", original);
    }
  }

  /** The entry `target` is or is in, if it is one of the thread's. */
  private entryOf(target: EventTarget | null): HTMLElement | null {
    const entry = target instanceof HTMLElement ? target.closest<HTMLElement>(".entry") : null;
    return entry?.parentElement === this.thread.element ? entry : null;
  }

  private onFocusIn(event: FocusEvent): void {
    const entry = this.entryOf(event.target);
    if (entry === null) return;
    this.current = Number(entry.dataset["index"]);
    this.moveTabStop(entry);
    if (this.focused === entry) return;
    if (this.focused !== null) this.park(this.focused);
    this.focused = entry;
    this.unpark(entry);
  }

  private onFocusOut(event: FocusEvent): void {
    const entry = this.focused;
    const to = event.relatedTarget;
    if (entry === null || (to instanceof HTMLElement && entry.contains(to))) return;
    // A browser sends this to a node being removed with the focus in it (see catchDroppedFocus).
    if (to === null) this.lostFrom = entry;
    this.focused = null;
    this.park(entry);
  }

  private onKey(event: KeyboardEvent): void {
    const entry = this.entryOf(event.target);
    if (entry === null || entry !== event.target) return;
    if (event.defaultPrevented || event.isComposing || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (event.key === "Escape") {
      event.preventDefault();
      // VS Code would take Escape for its own (the workbench hears the webview's keys).
      event.stopPropagation();
      this.leave();
      return;
    }
    const index = Number(entry.dataset["index"]);
    const next =
      event.key === "PageUp"
        ? this.thread.pageFrom(index, -1)
        : event.key === "PageDown"
          ? this.thread.pageFrom(index, 1)
          : indexForKey(event.key, index, this.thread.length, "vertical", "stop");
    if (next === null) return;
    event.preventDefault();
    this.focusEntry(next);
  }

  /** Focuses entry `index`, drawing it first when it is out of the window. */
  private focusEntry(index: number): void {
    const drawn = this.thread.drawnEntry(index);
    const entry = drawn ?? this.thread.reveal(index);
    if (entry === null) return;
    // What was drawn to reach it leaves the tab order before the focus lands.
    this.takeAdded(this.observer.takeRecords());
    entry.focus({ preventScroll: true });
    // The entry the focus was on may have left the window to make room: the focus is placed.
    this.lostFrom = null;
    // One drawn just now was brought into sight with what led to it. One drawn already is
    // scrolled to as little as it takes, as a list does, but an entry taller than the view is
    // shown from its start, where the person reads it from.
    if (drawn !== null && typeof entry.scrollIntoView === "function") {
      const tall = entry.getBoundingClientRect().height > this.thread.element.clientHeight;
      entry.scrollIntoView({ block: tall ? "start" : "nearest" });
    }
  }
}

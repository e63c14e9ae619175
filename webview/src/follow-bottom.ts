// Keeps the thread scrolled to its end while the person is at the end, and leaves it alone once
// they scroll up to read.
//
// Each session in the tabs keeps its own place: showing another tab remembers where its thread
// was (at the end, or scrolled up to read) and goes back there when the tab is shown again.
//
// Layout is read only in the scroll handler (when the person scrolls) and once per frame after
// the frame's writes, never per chunk: reading `scrollHeight` after a write forces a layout, and
// doing that per chunk once made a 100 KB reply take minutes to show.

import type { SessionKey } from "./protocol";

/** How close to the end (in CSS pixels) still counts as "at the end". */
const END_SLACK_PX = 24;

export class FollowBottom {
  private following = true;
  /** The session whose thread is shown (0: none yet). */
  private session: SessionKey = 0;
  /** Where each session not shown was left: null at its end, else its scroll offset. */
  private readonly places = new Map<SessionKey, number | null>();
  /** The offset to go back to, until the thread shown is tall enough to reach it. */
  private restore: number | null = null;
  /** Where the last restoring step got to: a scroll to anywhere else is the person's. */
  private restoredTo: number | null = null;

  constructor(private readonly scroller: HTMLElement) {
    scroller.addEventListener(
      "scroll",
      () => {
        if (this.restore !== null && scroller.scrollTop !== this.restoredTo) this.restore = null;
        this.following =
          scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - END_SLACK_PX;
      },
      { passive: true },
    );
    // The sidebar resizing (or the plan appearing) changes the visible height without a scroll.
    new ResizeObserver(() => this.pin()).observe(scroller);
  }

  /**
   * Call when the header says which session is shown (`open`: the sessions in the tabs), before
   * the frame draws that session's thread.
   */
  showSession(key: SessionKey, open: readonly SessionKey[]): void {
    if (key === 0 || key === this.session) return;
    if (open.includes(this.session)) {
      this.places.set(this.session, this.following ? null : this.scroller.scrollTop);
    }
    for (const session of this.places.keys()) {
      if (!open.includes(session)) this.places.delete(session);
    }
    this.session = key;
    const place = this.places.get(key) ?? null;
    this.places.delete(key);
    this.following = place === null;
    this.restore = place;
  }

  /** Call once per frame, after the frame's DOM writes. */
  pin(): void {
    if (this.restore !== null) {
      // A long thread may take a few frames to be drawn as tall as it was; until then each frame
      // goes as far as it can.
      this.scroller.scrollTop = this.restore;
      this.restoredTo = this.scroller.scrollTop;
      if (this.restoredTo >= this.restore - 1) this.restore = null;
      return;
    }
    if (this.following) this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

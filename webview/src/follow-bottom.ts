// Keeps a scrolling box (a terminal card's output) scrolled to its end while the person is at the
// end, and leaves it alone once they scroll up to read.
//
// Layout is read only in the scroll handler (when the person scrolls) and once per frame after
// the frame's writes, never per chunk: reading `scrollHeight` after a write forces a layout, and
// doing that per chunk once made a 100 KB reply take minutes to show.
//
// The thread itself follows its end the same way, but it is virtualized and keeps its place by
// entry rather than by pixel: that is thread-view.ts's own (`ThreadView`), with each tab's place.

/** How close to the end (in CSS pixels) still counts as "at the end". */
export const END_SLACK_PX = 24;

export class FollowBottom {
  private following = true;

  constructor(private readonly scroller: HTMLElement) {
    scroller.addEventListener(
      "scroll",
      () => {
        this.following = isAtEnd(scroller);
      },
      { passive: true },
    );
    // The box resizing changes the visible height without a scroll.
    new ResizeObserver(() => this.pin()).observe(scroller);
  }

  /** Call once per frame, after the frame's DOM writes. */
  pin(): void {
    if (this.following) this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

/** Whether `scroller` shows its end (within [`END_SLACK_PX`]). */
export function isAtEnd(scroller: HTMLElement): boolean {
  return scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - END_SLACK_PX;
}

// Keeps the thread scrolled to its end while the person is at the end, and leaves it alone once
// they scroll up to read.
//
// Layout is read only in the scroll handler (when the person scrolls) and once per frame after
// the frame's writes, never per chunk: reading `scrollHeight` after a write forces a layout, and
// doing that per chunk once made a 100 KB reply take minutes to show.

/** How close to the end (in CSS pixels) still counts as "at the end". */
const END_SLACK_PX = 24;

export class FollowBottom {
  private following = true;

  constructor(private readonly scroller: HTMLElement) {
    scroller.addEventListener(
      "scroll",
      () => {
        this.following =
          scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - END_SLACK_PX;
      },
      { passive: true },
    );
    // The sidebar resizing (or the plan appearing) changes the visible height without a scroll.
    new ResizeObserver(() => this.pin()).observe(scroller);
  }

  /** Call once per frame, after the frame's DOM writes. */
  pin(): void {
    if (this.following) this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

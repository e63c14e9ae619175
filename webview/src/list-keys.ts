// Where the arrow keys, Home and End move the focus in a list of items: the one rule the
// pickers, the menus, the session tabs (the WAI-ARIA listbox, menu and tabs patterns) and the
// thread's entries follow. The short lists wrap at either end; the thread stops there, as VS
// Code's own lists do, since wrapping from a long thread's last entry to its first is a jump
// nobody means. Lists run down the view; the tabs run across it, so for them it is the left and
// right arrows that move.

/** Which arrows move through the list: ↑/↓ for a list that runs down, ←/→ for a row. */
export type ListOrientation = "vertical" | "horizontal";

/** What an arrow does at either end of the list: go round to the other end, or stay. */
export type ListEnds = "wrap" | "stop";

/** The index `key` moves to from `current` in a list of `count` items, or null for another key. */
export function indexForKey(
  key: string,
  current: number,
  count: number,
  orientation: ListOrientation = "vertical",
  ends: ListEnds = "wrap",
): number | null {
  const last = count - 1;
  const [next, previous] = orientation === "vertical" ? ["ArrowDown", "ArrowUp"] : ["ArrowRight", "ArrowLeft"];
  switch (key) {
    case next:
      if (current < last) return current + 1;
      return ends === "wrap" ? 0 : last;
    case previous:
      if (current > 0) return current - 1;
      return ends === "wrap" ? last : 0;
    case "Home":
      return 0;
    case "End":
      return last;
    default:
      return null;
  }
}

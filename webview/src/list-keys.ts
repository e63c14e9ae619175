// Where the arrow keys, Home and End move the focus in a list of items: the one rule the
// pickers, the menus and the session tabs follow (the WAI-ARIA listbox, menu and tabs patterns),
// wrapping at either end. Lists run down the view; the tabs run across it, so for them it is the
// left and right arrows that move.

/** Which arrows move through the list: ↑/↓ for a list that runs down, ←/→ for a row. */
export type ListOrientation = "vertical" | "horizontal";

/** The index `key` moves to from `current` in a list of `count` items, or null for another key. */
export function indexForKey(
  key: string,
  current: number,
  count: number,
  orientation: ListOrientation = "vertical",
): number | null {
  const last = count - 1;
  const [next, previous] = orientation === "vertical" ? ["ArrowDown", "ArrowUp"] : ["ArrowRight", "ArrowLeft"];
  switch (key) {
    case next:
      return current >= last ? 0 : current + 1;
    case previous:
      return current <= 0 ? last : current - 1;
    case "Home":
      return 0;
    case "End":
      return last;
    default:
      return null;
  }
}

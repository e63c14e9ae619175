// Where the arrow keys, Home and End move the focus in a list of items: the one rule the
// pickers and the menus follow (the WAI-ARIA listbox and menu patterns), wrapping at either end.

/** The index `key` moves to from `current` in a list of `count` items, or null for another key. */
export function indexForKey(key: string, current: number, count: number): number | null {
  const last = count - 1;
  switch (key) {
    case "ArrowDown":
      return current >= last ? 0 : current + 1;
    case "ArrowUp":
      return current <= 0 ? last : current - 1;
    case "Home":
      return 0;
    case "End":
      return last;
    default:
      return null;
  }
}

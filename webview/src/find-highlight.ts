// The find bar's matches in the drawn DOM: where a text occurs in an entry's nodes, and showing
// those places.
//
// Matches are shown with the CSS Custom Highlight API where the browser has it (VS Code's
// Chromium does): ranges painted by the stylesheet's `::highlight(tether-find)` and
// `::highlight(tether-find-current)`, with no change to the DOM, so markdown streaming into an
// entry and the entries the thread builds and drops are not disturbed. Elsewhere the current
// match alone is wrapped in a `<mark>`, taken out again when it moves.

/** The highlight names the stylesheet paints. */
const ALL_MATCHES = "tether-find";
const CURRENT_MATCH = "tether-find-current";

interface HighlightRegistry {
  set(name: string, highlight: unknown): void;
  delete(name: string): void;
}
type HighlightConstructor = new (...ranges: Range[]) => unknown;

/** Every occurrence of `needle` (lowercased, not empty) in the text of `root`, as ranges, in order. */
export function textRanges(root: Element, needle: string): Range[] {
  const document = root.ownerDocument;
  const nodes: Text[] = [];
  const starts: number[] = [];
  let text = "";
  const walker = document.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const value = (node as Text).data;
    if (value === "") continue;
    nodes.push(node as Text);
    starts.push(text.length);
    text += value;
  }
  const lower = text.toLowerCase();
  // A letter whose lowercase is longer (rare) would shift every offset after it: give up on it.
  if (lower.length !== text.length || needle === "") return [];
  const ranges: Range[] = [];
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length)) {
    const range = document.createRange();
    const [startNode, startOffset] = position(nodes, starts, at);
    const [endNode, endOffset] = position(nodes, starts, at + needle.length, true);
    range.setStart(startNode, startOffset);
    range.setEnd(endNode, endOffset);
    ranges.push(range);
  }
  return ranges;
}

/** The text node and offset of character `at`; at a boundary, the end of the node before when `end`. */
function position(nodes: Text[], starts: number[], at: number, end = false): [Text, number] {
  let low = 0;
  let high = nodes.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    const start = starts[middle] ?? 0;
    if (start < at || (!end && start === at)) low = middle;
    else high = middle - 1;
  }
  const node = nodes[low] as Text;
  return [node, at - (starts[low] ?? 0)];
}

/** Shows the matches in the drawn entries, and the current one apart. */
export class FindHighlights {
  private mark: HTMLElement | null = null;

  constructor(private readonly document: Document) {}

  show(all: Range[], current: Range | null): void {
    const registry = this.registry();
    const Highlight = (this.document.defaultView as unknown as { Highlight?: HighlightConstructor } | null)?.Highlight;
    if (registry !== null && Highlight !== undefined) {
      registry.set(ALL_MATCHES, new Highlight(...all));
      if (current === null) registry.delete(CURRENT_MATCH);
      else registry.set(CURRENT_MATCH, new Highlight(current));
      return;
    }
    this.unmark();
    // Without highlights, a `<mark>` around the current match, when it lies in one text node.
    if (current !== null && current.startContainer === current.endContainer) {
      const mark = this.document.createElement("mark");
      mark.className = "find-current-match";
      current.surroundContents(mark);
      this.mark = mark;
    }
  }

  clear(): void {
    const registry = this.registry();
    registry?.delete(ALL_MATCHES);
    registry?.delete(CURRENT_MATCH);
    this.unmark();
  }

  private registry(): HighlightRegistry | null {
    const css = (this.document.defaultView as unknown as { CSS?: { highlights?: HighlightRegistry } } | null)?.CSS;
    return css?.highlights ?? null;
  }

  /** Takes the `<mark>` around the current match out again, if there is one. */
  unmark(): void {
    const mark = this.mark;
    this.mark = null;
    if (mark === null || mark.parentNode === null) return;
    const parent = mark.parentNode;
    mark.replaceWith(...mark.childNodes);
    parent.normalize();
  }
}

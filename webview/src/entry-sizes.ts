// The heights of a thread's entries, for the virtualized thread (thread-view.ts): measured for
// the entries that have been drawn, estimated for the others, and where each entry starts.
//
// Positions are in content coordinates: 0 is the top of entry 0, and every entry is followed by
// the list's gap (the CSS `gap` of the flex column), so entry `i` starts at the sum of the
// heights and gaps before it. That sum is kept as a prefix array recomputed from the first
// height that changed, on demand: a streaming frame changes the last entry's height only, and a
// 10,000-entry thread costs one pass over a typed array when an early height changes.
//
// An estimate is the average measured height of the entries of the same kind (a tool call, an
// agent message...), or a fixed guess before any was measured. Estimates only decide how tall the
// spacers standing in for the entries not drawn are, and so where the scrollbar's thumb sits;
// the thread's anchoring keeps what the person reads in place when an estimate is replaced by a
// measurement.

import type { ThreadEntry } from "./model";

/** A first guess per kind of entry, in CSS pixels, before any of its kind was measured. */
const FIRST_GUESSES: Record<string, number> = {
  user: 56,
  agent: 120,
  toolCall: 90,
  fileChange: 160,
  notice: 32,
  restore: 90,
};
const FIRST_GUESS_OTHER = 60;

/** Keeps the average measured height per kind of entry. */
export class HeightEstimates {
  private readonly sums = new Map<string, { total: number; count: number }>();

  /** The height to assume for an entry of this kind that has not been drawn. */
  estimate(kind: string): number {
    // An entry not loaded yet could be of any kind: the average of all those drawn.
    if (kind === "notLoaded") return this.averageOfAll();
    const seen = this.sums.get(kind);
    if (seen === undefined || seen.count === 0) return FIRST_GUESSES[kind] ?? FIRST_GUESS_OTHER;
    return seen.total / seen.count;
  }

  private averageOfAll(): number {
    let total = 0;
    let count = 0;
    for (const seen of this.sums.values()) {
      total += seen.total;
      count += seen.count;
    }
    return count === 0 ? FIRST_GUESSES["agent"] ?? FIRST_GUESS_OTHER : total / count;
  }

  /** Learns from an entry of this kind drawn at this height. */
  learn(kind: string, height: number): void {
    const seen = this.sums.get(kind) ?? { total: 0, count: 0 };
    seen.total += height;
    seen.count += 1;
    this.sums.set(kind, seen);
  }

  /** Forgets what was learned (the width changed, so every height did). */
  clear(): void {
    this.sums.clear();
  }
}

/** The kind an entry's height is estimated by. */
export function entryKind(entry: ThreadEntry | undefined): string {
  return typeof entry?.type === "string" ? entry.type : "other";
}

export class EntrySizes {
  /** The list's gap between two entries, in CSS pixels. */
  private gapPx = 0;
  private heights = new Float64Array(64);
  /** 1 where the height was measured in the current width, 0 where it is an estimate. */
  private measuredFlags = new Uint8Array(64);
  private entryCount = 0;
  /** `starts[i]`: where entry `i` starts; valid up to `validStarts` (exclusive). */
  private starts = new Float64Array(65);
  private validStarts = 1;

  get count(): number {
    return this.entryCount;
  }

  get gap(): number {
    return this.gapPx;
  }

  set gap(value: number) {
    if (value === this.gapPx) return;
    this.gapPx = value;
    this.validStarts = 1;
  }

  /** Makes the list `count` entries long; entries added get `estimate(index)`. */
  resize(count: number, estimate: (index: number) => number): void {
    if (count > this.heights.length) {
      let capacity = this.heights.length;
      while (capacity < count) capacity *= 2;
      const heights = new Float64Array(capacity);
      heights.set(this.heights.subarray(0, this.entryCount));
      const flags = new Uint8Array(capacity);
      flags.set(this.measuredFlags.subarray(0, this.entryCount));
      this.heights = heights;
      this.measuredFlags = flags;
      const starts = new Float64Array(capacity + 1);
      starts.set(this.starts.subarray(0, this.validStarts));
      this.starts = starts;
    }
    for (let index = this.entryCount; index < count; index++) {
      this.heights[index] = estimate(index);
      this.measuredFlags[index] = 0;
    }
    this.validStarts = Math.min(this.validStarts, Math.min(this.entryCount, count) + 1);
    this.entryCount = count;
  }

  height(index: number): number {
    return this.heights[index] ?? 0;
  }

  isMeasured(index: number): boolean {
    return this.measuredFlags[index] === 1;
  }

  /** Records a measured height; returns how much it differs from what was assumed. */
  measure(index: number, height: number): number {
    if (index < 0 || index >= this.entryCount) return 0;
    this.measuredFlags[index] = 1;
    const change = height - (this.heights[index] ?? 0);
    if (change !== 0) this.set(index, height);
    return change;
  }

  /** Marks an entry's height as unknown again (it changed while not drawn), assuming `height`. */
  forget(index: number, height: number): void {
    if (index < 0 || index >= this.entryCount) return;
    this.measuredFlags[index] = 0;
    if (height !== this.heights[index]) this.set(index, height);
  }

  /** Every height becomes an estimate again (the width changed); the values stay as guesses. */
  forgetAll(): void {
    this.measuredFlags.fill(0);
  }

  /** Where entry `index` starts (`count` gives the end of the last entry plus one gap). */
  top(index: number): number {
    const clamped = Math.max(0, Math.min(index, this.entryCount));
    this.computeStarts(clamped);
    return this.starts[clamped] ?? 0;
  }

  /** The height of all the entries with the gaps between them. */
  get total(): number {
    return this.entryCount === 0 ? 0 : this.top(this.entryCount) - this.gapPx;
  }

  /** The entry drawn at `y` (an entry owns the gap after it); clamped to the first and last. */
  indexAt(y: number): number {
    if (this.entryCount === 0) return 0;
    this.computeStarts(this.entryCount);
    let low = 0;
    let high = this.entryCount - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.starts[middle] ?? 0) <= y) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private set(index: number, height: number): void {
    this.heights[index] = height;
    this.validStarts = Math.min(this.validStarts, index + 1);
  }

  private computeStarts(upTo: number): void {
    for (let index = this.validStarts; index <= upTo; index++) {
      this.starts[index] = (this.starts[index - 1] ?? 0) + (this.heights[index - 1] ?? 0) + this.gapPx;
    }
    this.validStarts = Math.max(this.validStarts, upTo + 1);
  }
}

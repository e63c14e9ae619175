// Find in thread, over the model: which entries hold the text looked for, and how often.
//
// The thread is virtualized, so most entries are not in the DOM and the browser's own find could
// not see them (VS Code's webview views have no find widget anyway). The search reads the
// entries' own words instead: a prompt's and an agent message's markdown source, a tool call's
// title, command, outputs and diff lines, a file change's lines, a notice, a restore's files. A
// match is counted in that text, so "3 of 17" counts what the person wrote or the agent sent;
// the find bar then finds the same occurrence in the entry's drawn text to highlight it (the
// markdown's own syntax, such as a link's address, can make the two differ a little, and the
// bar then highlights the entry's first occurrence, or the entry itself).
//
// Each entry's lowercased text is computed once and kept with the entry object (an agent
// message, which grows in place, is computed again when its length changed), so typing in the
// find bar or a thread streaming while it is open counts only what changed.

import type { ThreadEntry } from "./model";
import { restoreTitle } from "./restore-view";
import { attachmentLabel } from "./user-message-view";

/** The words an entry shows, as one text to search. */
export function searchableText(entry: ThreadEntry): string {
  switch (entry.type) {
    case "notLoaded":
      // Found once it arrives (a long thread's earlier entries follow its snapshot).
      return "";
    case "user":
      return [entry.text, ...entry.attachments.map(attachmentLabel)].join("\n");
    case "agent":
      return entry.chunks.map((chunk) => chunk.text).join("\n");
    case "toolCall": {
      const parts = [entry.title];
      if (entry.command !== null) parts.push(entry.command);
      for (const content of entry.content) {
        if (content.type === "text") parts.push(content.text);
        else if (content.type === "diff") parts.push(content.label, ...content.lines.map((line) => line.text));
      }
      for (const location of entry.locations) parts.push(location.label);
      return parts.join("\n");
    }
    case "fileChange":
      return [entry.label, ...entry.hunks.flatMap((hunk) => hunk.lines.map((line) => line.text)), entry.outcome ?? ""].join("\n");
    case "notice":
      return [entry.text, entry.detail ?? ""].join("\n");
    case "restore":
      return [restoreTitle(entry), ...entry.files.map((file) => file.label)].join("\n");
  }
  return "";
}

/** How many times `needle` (lowercased, not empty) occurs in `haystack` (lowercased), not overlapping. */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** One match: the entry, and which of the entry's occurrences (from 0). */
export interface Match {
  index: number;
  occurrence: number;
}

export class ThreadSearch {
  private needle = "";
  /** Matches per entry. */
  private counts: number[] = [];
  private totalCount = 0;
  private currentMatch: Match | null = null;
  private readonly texts = new WeakMap<ThreadEntry, { length: number; text: string }>();

  /** The text looked for, lowercased ("" when nothing is). */
  get query(): string {
    return this.needle;
  }

  get total(): number {
    return this.totalCount;
  }

  get current(): Match | null {
    return this.currentMatch;
  }

  /** The current match's number among all, from 1 (0 when there is none). */
  get position(): number {
    const current = this.currentMatch;
    if (current === null) return 0;
    let before = 0;
    for (let index = 0; index < current.index; index++) before += this.counts[index] ?? 0;
    return before + current.occurrence + 1;
  }

  /**
   * Looks for `query` (case-insensitively) in `entries`; the current match becomes the first one
   * at or after entry `from` (the first in sight), or the first of all.
   */
  setQuery(query: string, entries: readonly ThreadEntry[], from: number): void {
    this.needle = query.toLowerCase();
    this.counts = [];
    this.totalCount = 0;
    this.countFrom(entries, 0);
    this.currentMatch = null;
    if (this.totalCount > 0) this.currentMatch = this.nextFrom(from) ?? this.nextFrom(0);
  }

  /**
   * Counts again the entries that changed (and those added) since the last count, keeping the
   * current match where it is when it still exists.
   */
  update(entries: readonly ThreadEntry[], changed: Iterable<number>, reset: boolean): void {
    if (this.needle === "") return;
    if (reset) {
      this.counts = [];
      this.totalCount = 0;
      this.countFrom(entries, 0);
    } else {
      const known = Math.min(this.counts.length, entries.length);
      for (const index of changed) {
        if (index >= known) continue;
        const entry = entries[index];
        const count = entry === undefined ? 0 : this.countIn(entry);
        this.totalCount += count - (this.counts[index] ?? 0);
        this.counts[index] = count;
      }
      this.countFrom(entries, known);
    }
    const current = this.currentMatch;
    if (current !== null && current.occurrence >= (this.counts[current.index] ?? 0)) {
      this.currentMatch = this.nextFrom(current.index) ?? this.nextFrom(0);
    } else if (current === null && this.totalCount > 0) {
      this.currentMatch = this.nextFrom(0);
    }
  }

  /** Moves to the next match (Enter), after the last one back to the first. */
  next(): Match | null {
    const current = this.currentMatch;
    if (this.totalCount === 0) return null;
    if (current !== null && current.occurrence + 1 < (this.counts[current.index] ?? 0)) {
      this.currentMatch = { index: current.index, occurrence: current.occurrence + 1 };
    } else {
      this.currentMatch = this.nextFrom((current?.index ?? -1) + 1) ?? this.nextFrom(0);
    }
    return this.currentMatch;
  }

  /** Moves to the previous match (Shift+Enter), before the first one to the last. */
  previous(): Match | null {
    const current = this.currentMatch;
    if (this.totalCount === 0) return null;
    if (current !== null && current.occurrence > 0) {
      this.currentMatch = { index: current.index, occurrence: current.occurrence - 1 };
      return this.currentMatch;
    }
    const before = (current?.index ?? this.counts.length) - 1;
    this.currentMatch = this.previousFrom(before) ?? this.previousFrom(this.counts.length - 1);
    return this.currentMatch;
  }

  /** Forgets the query (the bar closed). */
  clear(): void {
    this.needle = "";
    this.counts = [];
    this.totalCount = 0;
    this.currentMatch = null;
  }

  private countFrom(entries: readonly ThreadEntry[], from: number): void {
    if (this.needle === "") return;
    for (let index = from; index < entries.length; index++) {
      const entry = entries[index];
      const count = entry === undefined ? 0 : this.countIn(entry);
      this.counts[index] = count;
      this.totalCount += count;
    }
    this.counts.length = entries.length;
  }

  private countIn(entry: ThreadEntry): number {
    return countOccurrences(this.textOf(entry), this.needle);
  }

  private textOf(entry: ThreadEntry): string {
    // Only an agent message grows in place (chunks appended); the others are replaced whole.
    const length = entry.type === "agent" ? entry.chunks.reduce((sum, chunk) => sum + chunk.text.length + 1, 0) : 0;
    const known = this.texts.get(entry);
    if (known !== undefined && known.length === length) return known.text;
    const text = searchableText(entry).toLowerCase();
    this.texts.set(entry, { length, text });
    return text;
  }

  /** The first match in an entry at or after `from`. */
  private nextFrom(from: number): Match | null {
    for (let index = Math.max(0, from); index < this.counts.length; index++) {
      if ((this.counts[index] ?? 0) > 0) return { index, occurrence: 0 };
    }
    return null;
  }

  /** The last match in an entry at or before `from`. */
  private previousFrom(from: number): Match | null {
    for (let index = Math.min(from, this.counts.length - 1); index >= 0; index--) {
      const count = this.counts[index] ?? 0;
      if (count > 0) return { index, occurrence: count - 1 };
    }
    return null;
  }
}

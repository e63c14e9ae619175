// Local UI state that survives a webview reload: the unsent composer text, which thoughts the
// person opened, whether the rules panel is open, and whether the changes bar shows its files.
// It is the webview's own state (kept with `vscode.setState`), never sent to the host: the
// host's state arrives in the snapshot.

import type { ThoughtOpenState } from "./agent-message-view";
import type { PromptAttachment, VsCodeApi } from "./protocol";

interface SavedState {
  composer: string;
  /** What each "@label" in the unsent text stands for. */
  mentions: [string, PromptAttachment][];
  openThoughts: string[];
  rulesOpen: boolean;
  changesOpen: boolean;
}

/** Typing saves at most this often; `setState` crosses into the host. */
const SAVE_DELAY_MS = 300;

/** Whether the rules panel is open: the panel's part of the UI state. */
export interface RulesPanelState {
  rulesOpen: boolean;
}

/** Whether the changes bar lists its files or only its summary line. */
export interface ChangesBarState {
  changesOpen: boolean;
}

export class UiState implements ThoughtOpenState, RulesPanelState, ChangesBarState {
  private composerText: string;
  private composerMentions: [string, PromptAttachment][];
  private readonly openThoughts: Set<string>;
  private rulesPanelOpen: boolean;
  private changesBarOpen: boolean;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly api: VsCodeApi) {
    const saved = readSaved(api.getState());
    this.composerText = saved.composer;
    this.composerMentions = saved.mentions;
    this.openThoughts = new Set(saved.openThoughts);
    this.rulesPanelOpen = saved.rulesOpen;
    this.changesBarOpen = saved.changesOpen;
  }

  get composer(): string {
    return this.composerText;
  }

  set composer(text: string) {
    this.composerText = text;
    this.saveSoon();
  }

  /** The mentions picked for the unsent text, by label. */
  get mentions(): [string, PromptAttachment][] {
    return this.composerMentions;
  }

  set mentions(mentions: [string, PromptAttachment][]) {
    this.composerMentions = mentions;
    this.saveSoon();
  }

  get rulesOpen(): boolean {
    return this.rulesPanelOpen;
  }

  set rulesOpen(open: boolean) {
    this.rulesPanelOpen = open;
    this.saveSoon();
  }

  get changesOpen(): boolean {
    return this.changesBarOpen;
  }

  set changesOpen(open: boolean) {
    this.changesBarOpen = open;
    this.saveSoon();
  }

  isOpen(key: string): boolean {
    return this.openThoughts.has(key);
  }

  setOpen(key: string, open: boolean): void {
    if (open) this.openThoughts.add(key);
    else this.openThoughts.delete(key);
    this.saveSoon();
  }

  /** Forgets what belonged to entries of an earlier session once a new snapshot arrives. */
  forgetEntriesFrom(entryCount: number): void {
    for (const key of this.openThoughts) {
      if (Number(key.split(":")[0]) >= entryCount) this.openThoughts.delete(key);
    }
    this.saveSoon();
  }

  private saveSoon(): void {
    if (this.saveTimer !== null) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      const state: SavedState = {
        composer: this.composerText,
        mentions: this.composerMentions,
        openThoughts: [...this.openThoughts],
        rulesOpen: this.rulesPanelOpen,
        changesOpen: this.changesBarOpen,
      };
      this.api.setState(state);
    }, SAVE_DELAY_MS);
  }
}

function readSaved(value: unknown): SavedState {
  // The changes bar starts open: the files an agent changed are what a person must not miss.
  const saved: SavedState = { composer: "", mentions: [], openThoughts: [], rulesOpen: false, changesOpen: true };
  if (typeof value !== "object" || value === null) return saved;
  const candidate = value as Partial<Record<keyof SavedState, unknown>>;
  if (typeof candidate.composer === "string") saved.composer = candidate.composer;
  if (Array.isArray(candidate.mentions)) {
    // Saved by this webview; an entry of another shape (an older version's) is dropped.
    saved.mentions = candidate.mentions.filter(
      (entry): entry is [string, PromptAttachment] =>
        Array.isArray(entry) && typeof entry[0] === "string" && typeof entry[1] === "object" && entry[1] !== null,
    );
  }
  if (Array.isArray(candidate.openThoughts)) {
    saved.openThoughts = candidate.openThoughts.filter((key): key is string => typeof key === "string");
  }
  if (typeof candidate.rulesOpen === "boolean") saved.rulesOpen = candidate.rulesOpen;
  if (typeof candidate.changesOpen === "boolean") saved.changesOpen = candidate.changesOpen;
  return saved;
}

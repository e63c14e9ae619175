// The history picker: the engine's `showHistory` list as a quick pick. Picking a session asks the
// engine to open it; the buttons of Tether's own sessions rename (after asking for the title),
// export, and delete (after a modal confirmation) it. What each of those does is the engine's
// business: this file only turns the person's choices into commands.
//
// One picker at a time: a list that arrives while the picker is open refreshes it in place, so
// the engine can answer a rename or a delete with the new list.

import * as vscode from "vscode";

import type { ExportFormat, HistoryItem, HostCommand } from "./generated/protocol";

/** Carries out the engine's `showHistory` action: the `HistoryPicker`, or a test's fake. */
export interface HistoryActions {
  show(items: HistoryItem[]): void;
}

type ButtonAction = { kind: "rename" } | { kind: "export"; format: ExportFormat } | { kind: "delete" };

/** An item button; VS Code hands back this very object when it is pressed. */
interface SessionButton extends vscode.QuickInputButton {
  action: ButtonAction;
}

interface SessionPickItem extends vscode.QuickPickItem {
  session: HistoryItem;
}

const SESSION_BUTTONS: SessionButton[] = [
  { iconPath: new vscode.ThemeIcon("edit"), tooltip: "Rename", action: { kind: "rename" } },
  {
    iconPath: new vscode.ThemeIcon("markdown"),
    tooltip: "Export as Markdown",
    action: { kind: "export", format: "markdown" },
  },
  { iconPath: new vscode.ThemeIcon("json"), tooltip: "Export log (JSONL)", action: { kind: "export", format: "jsonl" } },
  { iconPath: new vscode.ThemeIcon("trash"), tooltip: "Delete", action: { kind: "delete" } },
];

const DELETE_BUTTON = "Delete";

export class HistoryPicker implements HistoryActions, vscode.Disposable {
  private picker: vscode.QuickPick<SessionPickItem> | undefined;

  /** `clock` tells "3 min ago" from "2 hours ago" (ms since the epoch); tests fix it. */
  constructor(
    private readonly send: (command: HostCommand) => void,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Shows the sessions, or refreshes the open picker with them (keeping the highlighted one). */
  show(sessions: HistoryItem[]): void {
    const picker = this.picker ?? this.createPicker();
    const highlighted = picker.activeItems[0]?.session.id;
    const now = this.clock();
    const items = sessions.map((session) => pickItem(session, now));
    picker.items = items;
    const stillThere = items.find((item) => item.session.id === highlighted);
    if (stillThere !== undefined) {
      picker.activeItems = [stillThere];
    }
    picker.placeholder = sessions.length === 0 ? "No sessions yet" : "Pick a session to open it";
    picker.show();
  }

  dispose(): void {
    this.picker?.dispose();
    this.picker = undefined;
  }

  private createPicker(): vscode.QuickPick<SessionPickItem> {
    const picker = vscode.window.createQuickPick<SessionPickItem>();
    picker.title = "Tether: History";
    picker.matchOnDescription = true;
    picker.onDidAccept(() => {
      const picked = picker.selectedItems[0];
      if (picked !== undefined) {
        picker.hide();
        this.send({ type: "openSession", id: picked.session.id });
      }
    });
    picker.onDidTriggerItemButton(({ item, button }) => {
      this.pressed(item.session, (button as SessionButton).action);
    });
    // A hidden picker is done with (Escape, a pick, or another quick input taking its place);
    // the next list opens a new one.
    picker.onDidHide(() => {
      if (this.picker === picker) {
        this.picker = undefined;
      }
      picker.dispose();
    });
    this.picker = picker;
    return picker;
  }

  private pressed(session: HistoryItem, action: ButtonAction): void {
    switch (action.kind) {
      case "rename":
        void this.rename(session);
        return;
      case "export":
        // The save dialog comes next; the list behind it would only be in the way.
        this.picker?.hide();
        this.send({ type: "exportSession", id: session.id, format: action.format });
        return;
      case "delete":
        void this.confirmDelete(session);
        return;
    }
  }

  private async rename(session: HistoryItem): Promise<void> {
    const title = await vscode.window.showInputBox({
      title: "Tether: Rename Session",
      prompt: "The session's new title",
      value: session.title,
      validateInput: (value) => (value.trim() === "" ? "A title cannot be empty." : undefined),
    });
    // `undefined`: the person pressed Escape.
    if (title !== undefined && title.trim() !== session.title) {
      this.send({ type: "renameSession", id: session.id, title: title.trim() });
    }
  }

  private async confirmDelete(session: HistoryItem): Promise<void> {
    const answer = await vscode.window.showWarningMessage(
      `Delete session “${session.title}”? Its transcript and logs are removed.`,
      { modal: true },
      DELETE_BUTTON,
    );
    if (answer === DELETE_BUTTON) {
      this.send({ type: "deleteSession", id: session.id });
    }
  }
}

function pickItem(session: HistoryItem, now: number): SessionPickItem {
  const when = session.lastActivity === null ? undefined : relativeTime(session.lastActivity, now);
  const turns = session.turns === null ? undefined : `${session.turns} ${session.turns === 1 ? "turn" : "turns"}`;
  const notes = [
    session.current ? "shown now" : undefined,
    session.live ? "agent running" : undefined,
    session.source === "agent" ? "from the agent's own list" : undefined,
    session.fromCheckpoint ? "went on from a checkpoint of another session" : undefined,
    session.restores > 0
      ? `code restored to a checkpoint ${session.restores === 1 ? "once" : `${session.restores} times`}`
      : undefined,
  ];
  const item: SessionPickItem = {
    label: session.title === "" ? "Untitled session" : session.title,
    description: joinPresent([session.agent, when, turns]),
    session,
    // Only Tether's own sessions can be renamed, exported and deleted.
    buttons: session.source === "tether" ? SESSION_BUTTONS : [],
  };
  const detail = joinPresent(notes);
  if (detail !== "") {
    item.detail = detail;
  }
  return item;
}

function joinPresent(parts: Array<string | undefined>): string {
  return parts.filter((part) => part !== undefined && part !== "").join(" · ");
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * How long ago `timestamp` (RFC 3339) was, seen at `now` (ms since the epoch): "just now",
 * "3 min ago", "2 hours ago", "5 days ago", and past a month the day itself ("2024-03-01"). A
 * time in the future (another machine's clock) is "just now"; one that does not parse is
 * `undefined`.
 */
export function relativeTime(timestamp: string, now: number): string | undefined {
  const then = Date.parse(timestamp);
  if (Number.isNaN(then)) {
    return undefined;
  }
  const elapsed = now - then;
  if (elapsed < MINUTE_MS) {
    return "just now";
  }
  if (elapsed < HOUR_MS) {
    return `${Math.floor(elapsed / MINUTE_MS)} min ago`;
  }
  if (elapsed < DAY_MS) {
    const hours = Math.floor(elapsed / HOUR_MS);
    return `${hours} ${hours === 1 ? "hour" : "hours"} ago`;
  }
  if (elapsed < 31 * DAY_MS) {
    const days = Math.floor(elapsed / DAY_MS);
    return `${days} ${days === 1 ? "day" : "days"} ago`;
  }
  return new Date(then).toISOString().slice(0, 10);
}

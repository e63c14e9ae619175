// Stands in for the `vscode` module in the unit tests (the build aliases `vscode` to this file).
// Only what the modules under test call at run time is here; each call is recorded so a test
// can assert what the person would have seen, and the settings are a map a test can fill.
// Documents and workspace edits behave as VS Code's do where the code under test depends on it:
// a document has one kind of line ending, an edit's inserted text takes it, saving writes the
// text to the real disk (tests use temporary folders).

import * as nodeFs from "node:fs";

export interface ShownMessage {
  level: "error" | "warning" | "information";
  text: string;
}

export const shownMessages: ShownMessage[] = [];

/** A message that offered buttons: the buttons, and whether it was modal. */
export interface OfferedChoice {
  text: string;
  modal: boolean;
  items: string[];
}

export const offeredChoices: OfferedChoice[] = [];

/**
 * The buttons the person presses on the next messages that offer any, in order; `undefined`
 * (or nothing left) dismisses the message.
 */
export const choiceAnswers: Array<string | undefined> = [];

/**
 * Records a message, and answers it with the next of `choiceAnswers` when it offers buttons.
 * `rest` is what VS Code takes after the text: optional options, then the buttons.
 */
function showMessage(level: ShownMessage["level"], text: string, rest: unknown[]): Promise<string | undefined> {
  shownMessages.push({ level, text });
  const [first, ...others] = rest;
  const options = typeof first === "object" && first !== null ? (first as { modal?: boolean }) : undefined;
  const items = (options === undefined ? rest : others).filter((item): item is string => typeof item === "string");
  if (items.length === 0) {
    return Promise.resolve(undefined);
  }
  offeredChoices.push({ text, modal: options?.modal ?? false, items });
  return Promise.resolve(choiceAnswers.shift());
}

/** Paths of the documents `showTextDocument` opened. */
export const openedDocuments: string[] = [];

/** The 0-based line of the selection each `showTextDocument` was given (`null` without one). */
export const openedLines: Array<number | null> = [];

/** When set, `showTextDocument` fails with this message (as it does for a missing file). */
export const failures: { showTextDocument?: string; update?: string; executeCommand?: string } = {};

export class Disposable {
  constructor(private readonly callOnDispose: () => void) {}

  static from(...disposables: Array<{ dispose(): unknown }>): Disposable {
    return new Disposable(() => disposables.forEach((disposable) => disposable.dispose()));
  }

  dispose(): void {
    this.callOnDispose();
  }
}

export class EventEmitter<T> {
  private listeners: Array<(value: T) => unknown> = [];

  readonly event = (listener: (value: T) => unknown): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((other) => other !== listener);
    });
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }

  dispose(): void {
    this.listeners = [];
  }
}

const activeEditorChanged = new EventEmitter<{ document: TextDocument } | undefined>();
const documentOpened = new EventEmitter<TextDocument>();
const documentClosed = new EventEmitter<TextDocument>();
const documentChanged = new EventEmitter<{ document: TextDocument; contentChanges: unknown[] }>();
const documentSaved = new EventEmitter<TextDocument>();
const terminalClosed = new EventEmitter<ProcessTerminal>();
const workspaceFoldersChanged = new EventEmitter<{ added: unknown[]; removed: unknown[] }>();

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;

  constructor(start: Position | number, end: Position | number, endLine?: number, endCharacter?: number) {
    if (typeof start === "number" && typeof end === "number") {
      this.start = new Position(start, end);
      this.end = new Position(endLine ?? start, endCharacter ?? end);
    } else {
      this.start = start as Position;
      this.end = end as Position;
    }
  }
}

export interface Command {
  title: string;
  command: string;
  arguments?: unknown[];
}

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: Command,
  ) {}
}

export class RelativePattern {
  constructor(
    readonly base: Uri,
    readonly pattern: string,
  ) {}
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

/** A progress notification: its title and every message it was given. */
export interface ShownProgress {
  title: string | undefined;
  messages: string[];
}

export const shownProgress: ShownProgress[] = [];

export const window = {
  withProgress<T>(
    options: { title?: string },
    task: (progress: { report(value: { message?: string }): void }) => Promise<T>,
  ): Promise<T> {
    const shown: ShownProgress = { title: options.title, messages: [] };
    shownProgress.push(shown);
    return task({ report: ({ message }) => message !== undefined && shown.messages.push(message) });
  },
  showErrorMessage(text: string, ...rest: unknown[]): Promise<string | undefined> {
    return showMessage("error", text, rest);
  },
  showWarningMessage(text: string, ...rest: unknown[]): Promise<string | undefined> {
    return showMessage("warning", text, rest);
  },
  showInformationMessage(text: string, ...rest: unknown[]): Promise<string | undefined> {
    return showMessage("information", text, rest);
  },
  showTextDocument(uri: Uri, options?: { selection?: Range }): Promise<unknown> {
    if (failures.showTextDocument !== undefined) {
      return Promise.reject(new Error(failures.showTextDocument));
    }
    openedDocuments.push(uri.fsPath);
    openedLines.push(options?.selection?.start.line ?? null);
    return Promise.resolve({});
  },
  showInputBox(options: InputBoxOptions): Promise<string | undefined> {
    shownInputBoxes.push(options);
    return Promise.resolve(inputAnswers.shift());
  },
  showQuickPick<T extends QuickPickItem>(items: readonly T[]): Promise<T | undefined> {
    shownQuickPicks.push(items.map((item) => item.label));
    const label = quickPickAnswers.shift();
    return Promise.resolve(items.find((item) => item.label === label));
  },
  showSaveDialog(options: SaveDialogOptions): Promise<Uri | undefined> {
    shownSaveDialogs.push(options);
    return Promise.resolve(saveDialogAnswers.shift());
  },
  createQuickPick<T extends QuickPickItem>(): QuickPick<T> {
    const picker = new QuickPick<T>();
    createdQuickPicks.push(picker as unknown as QuickPick<QuickPickItem>);
    return picker;
  },
  activeTextEditor: undefined as { document: TextDocument } | undefined,
  onDidChangeActiveTextEditor: activeEditorChanged.event,
  /** One group holding `openTabs`; closing moves tabs to `closedTabs`. */
  tabGroups: {
    get all(): Array<{ tabs: Tab[]; isActive: boolean }> {
      return [{ tabs: [...openTabs], isActive: true }];
    },
    close(tabs: Tab | Tab[]): Promise<boolean> {
      for (const tab of Array.isArray(tabs) ? tabs : [tabs]) {
        openTabs.splice(openTabs.indexOf(tab), 1);
        closedTabs.push(tab);
      }
      return Promise.resolve(true);
    },
  },
  createTerminal(options: ExtensionTerminalOptions | ProcessTerminalOptions): Terminal | ProcessTerminal {
    if (!("pty" in options)) {
      // A terminal running a program (the sign-in's login).
      const terminal = new ProcessTerminal(options);
      createdProcessTerminals.push(terminal);
      return terminal;
    }
    const terminal = new Terminal(options);
    createdTerminals.push(terminal);
    return terminal;
  },
  onDidCloseTerminal: terminalClosed.event,
};

export class ThemeIcon {
  constructor(readonly id: string) {}
}

/** The labels offered by each `showQuickPick`, in order. */
export const shownQuickPicks: string[][] = [];
/** The label the person picks in the next `showQuickPick`s; `undefined` (or nothing left) is Escape. */
export const quickPickAnswers: Array<string | undefined> = [];

export interface InputBoxOptions {
  title?: string;
  prompt?: string;
  password?: boolean;
  value?: string;
  validateInput?(value: string): string | undefined | null;
}

/** The options of each input box shown, in order. */
export const shownInputBoxes: InputBoxOptions[] = [];
/** What the person types into the next input boxes; `undefined` (or nothing left) is Escape. */
export const inputAnswers: Array<string | undefined> = [];

export interface SaveDialogOptions {
  title?: string;
  saveLabel?: string;
  defaultUri?: Uri;
  filters?: Record<string, string[]>;
}

/** The options of each save dialog shown, in order. */
export const shownSaveDialogs: SaveDialogOptions[] = [];
/** Where the person saves in the next save dialogs; `undefined` (or nothing left) cancels. */
export const saveDialogAnswers: Array<Uri | undefined> = [];

export interface QuickInputButton {
  iconPath: ThemeIcon;
  tooltip?: string;
}

export interface QuickPickItem {
  label: string;
  description?: string;
  detail?: string;
  buttons?: QuickInputButton[];
}

/**
 * A quick pick `createQuickPick` made. As in VS Code, new items highlight the first one, and
 * hiding (or disposing a visible one) fires `onDidHide`. The person is played by the test:
 * `pick`, `pressButton` and `escape`.
 */
export class QuickPick<T extends QuickPickItem> {
  title: string | undefined;
  placeholder: string | undefined;
  matchOnDescription = false;
  activeItems: readonly T[] = [];
  selectedItems: readonly T[] = [];
  visible = false;
  disposed = false;
  private currentItems: readonly T[] = [];
  private readonly accepted = new EventEmitter<void>();
  private readonly hidden = new EventEmitter<void>();
  private readonly buttonPressed = new EventEmitter<{ item: T; button: QuickInputButton }>();
  readonly onDidAccept = this.accepted.event;
  readonly onDidHide = this.hidden.event;
  readonly onDidTriggerItemButton = this.buttonPressed.event;

  get items(): readonly T[] {
    return this.currentItems;
  }

  set items(items: readonly T[]) {
    this.currentItems = items;
    this.activeItems = items.slice(0, 1);
  }

  show(): void {
    this.visible = true;
  }

  hide(): void {
    if (this.visible) {
      this.visible = false;
      this.hidden.fire();
    }
  }

  dispose(): void {
    this.hide();
    this.disposed = true;
  }

  /** The person highlights `label` (arrow keys). */
  highlight(label: string): void {
    this.activeItems = [this.item(label)];
  }

  /** The person picks `label` (Enter or a click). */
  pick(label: string): void {
    this.selectedItems = [this.item(label)];
    this.accepted.fire();
  }

  /** The person presses the button with `tooltip` on `label`'s item. */
  pressButton(label: string, tooltip: string): void {
    const item = this.item(label);
    const button = item.buttons?.find((candidate) => candidate.tooltip === tooltip);
    if (button === undefined) {
      throw new Error(`${label} has no ${tooltip} button`);
    }
    this.buttonPressed.fire({ item, button });
  }

  private item(label: string): T {
    const item = this.currentItems.find((candidate) => candidate.label === label);
    if (item === undefined) {
      throw new Error(`the picker shows no ${label}`);
    }
    return item;
  }
}

export const createdQuickPicks: Array<QuickPick<QuickPickItem>> = [];

export interface TerminalDimensions {
  columns: number;
  rows: number;
}

export interface Pseudoterminal {
  onDidWrite: (listener: (data: string) => unknown) => Disposable;
  open(initialDimensions: TerminalDimensions | undefined): void;
  close(): void;
  handleInput?(data: string): void;
  setDimensions?(dimensions: TerminalDimensions): void;
}

export interface ExtensionTerminalOptions {
  name: string;
  pty: Pseudoterminal;
  iconPath?: ThemeIcon;
  isTransient?: boolean;
}

/**
 * A terminal `createTerminal` made, with what it shows. VS Code's side of the Pseudoterminal is
 * played by the test: `open` (VS Code does it some time after `createTerminal`), `resize`, and
 * the person's `type` and `closeByPerson`.
 */
export class Terminal {
  /** What the terminal shows: the writes since it was opened (VS Code ignores earlier ones). */
  text = "";
  /** The `preserveFocus` of each `show` call. */
  readonly shows: boolean[] = [];
  disposed = false;
  private opened = false;
  private closed = false;

  constructor(readonly options: ExtensionTerminalOptions) {
    options.pty.onDidWrite((data) => {
      if (this.opened && !this.closed) {
        this.text += data;
      }
    });
  }

  get name(): string {
    return this.options.name;
  }

  show(preserveFocus?: boolean): void {
    this.shows.push(preserveFocus ?? false);
  }

  open(dimensions?: TerminalDimensions): void {
    this.opened = true;
    this.options.pty.open(dimensions);
  }

  resize(dimensions: TerminalDimensions): void {
    this.options.pty.setDimensions?.(dimensions);
  }

  type(data: string): void {
    this.options.pty.handleInput?.(data);
  }

  /** The person closes the terminal (the trash can in the terminal panel). */
  closeByPerson(): void {
    this.closed = true;
    this.options.pty.close();
  }

  /** As in VS Code, the Pseudoterminal's `close` follows, a little later. */
  dispose(): void {
    this.disposed = true;
    setImmediate(() => {
      if (!this.closed) {
        this.closed = true;
        this.options.pty.close();
      }
    });
  }
}

export const createdTerminals: Terminal[] = [];

export interface ProcessTerminalOptions {
  name: string;
  shellPath: string;
  shellArgs: string[];
  env: Record<string, string>;
}

/** A terminal running a program; the test ends it with `exit`. */
export class ProcessTerminal {
  exitStatus: { code: number | undefined } | undefined;
  shown = false;
  constructor(readonly options: ProcessTerminalOptions) {}

  get name(): string {
    return this.options.name;
  }

  show(): void {
    this.shown = true;
  }

  /** The program ends with `code` (`undefined`: the person closed the terminal) and VS Code closes it. */
  exit(code: number | undefined): void {
    this.exitStatus = { code };
    terminalClosed.fire(this);
  }
}

export const createdProcessTerminals: ProcessTerminal[] = [];

/** A diff editor tab's input. */
export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

/** An editor tab, as far as the code under test looks at one. */
export interface Tab {
  label: string;
  input: unknown;
  isDirty: boolean;
  isActive: boolean;
}

/** The open editor tabs; tests put tabs here, and see which the code closed in `closedTabs`. */
export const openTabs: Tab[] = [];
export const closedTabs: Tab[] = [];

/** Makes `document` the active editor's (none when undefined), as focusing an editor does. */
export function focusEditor(document: TextDocument | undefined): void {
  window.activeTextEditor = document === undefined ? undefined : { document };
  activeEditorChanged.fire(window.activeTextEditor);
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query: string,
  ) {}

  static file(path: string): Uri {
    return new Uri("file", path, "");
  }

  static from(components: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(components.scheme, components.path ?? "", components.query ?? "");
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...segments].join("/").replace(/\/{2,}/g, "/"), "");
  }

  get fsPath(): string {
    return this.path;
  }

  toString(): string {
    return `${this.scheme}:${this.path}${this.query === "" ? "" : `?${this.query}`}`;
  }
}

/** The offsets where each line of `text` starts, after `\r\n`, `\r` or `\n`. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (const match of text.matchAll(/\r\n|\r|\n/g)) {
    starts.push(match.index + match[0].length);
  }
  return starts;
}

/** VS Code gives a document one kind of line ending: a file with any CRLF becomes all CRLF. */
function documentText(fileText: string): string {
  return fileText.includes("\r\n") ? fileText.replace(/\r\n|\r|\n/g, "\r\n") : fileText;
}

export class TextDocument {
  version = 1;
  isDirty = false;

  constructor(
    readonly uri: Uri,
    private text: string,
  ) {}

  getText(): string {
    return this.text;
  }

  get lineCount(): number {
    return lineStarts(this.text).length;
  }

  get eol(): string {
    return this.text.includes("\r\n") ? "\r\n" : "\n";
  }

  positionAt(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    const starts = lineStarts(this.text);
    let line = 0;
    while (line + 1 < starts.length && (starts[line + 1] ?? Infinity) <= clamped) {
      line += 1;
    }
    return new Position(line, clamped - (starts[line] ?? 0));
  }

  offsetAt(position: Position): number {
    const starts = lineStarts(this.text);
    const line = Math.min(position.line, starts.length - 1);
    return Math.min((starts[line] ?? 0) + position.character, this.text.length);
  }

  save(): Promise<boolean> {
    nodeFs.writeFileSync(this.uri.fsPath, this.text);
    this.isDirty = false;
    documentSaved.fire(this);
    return Promise.resolve(true);
  }

  /** Replaces the whole text, as typing or an edit does (`dirty`) or a reload from disk does. */
  setText(text: string, dirty: boolean): void {
    this.text = text;
    this.version += 1;
    this.isDirty = dirty;
    documentChanged.fire({ document: this, contentChanges: [] });
  }
}

/** Opens a document on `path` with `text` (not the disk's): an editor the person has open. */
export function openDocument(path: string, text: string, options: { dirty?: boolean } = {}): TextDocument {
  const document = new TextDocument(Uri.file(path), text);
  document.isDirty = options.dirty ?? false;
  workspace.textDocuments.push(document);
  documentOpened.fire(document);
  return document;
}

/** Makes `paths` the workspace's folders, as adding or removing one in VS Code does. */
export function changeWorkspaceFolders(paths: string[]): void {
  const before = workspace.workspaceFolders ?? [];
  workspace.workspaceFolders = paths.map((folder) => ({ uri: Uri.file(folder) }));
  const has = (list: Array<{ uri: Uri }>, folder: { uri: Uri }) => list.some((other) => other.uri.fsPath === folder.uri.fsPath);
  workspaceFoldersChanged.fire({
    added: workspace.workspaceFolders.filter((folder) => !has(before, folder)),
    removed: before.filter((folder) => !has(workspace.workspaceFolders ?? [], folder)),
  });
}

export function closeDocument(document: TextDocument): void {
  workspace.textDocuments.splice(workspace.textDocuments.indexOf(document), 1);
  documentClosed.fire(document);
}

/** Closes every document and forgets the watchers, content providers and commands. */
export function resetWorkspace(): void {
  workspace.isTrusted = true;
  workspace.textDocuments.length = 0;
  fileWatchers.length = 0;
  contentProviders.clear();
  codeLensProviders.length = 0;
  registeredCommands.clear();
  executedCommands.length = 0;
  createdTerminals.length = 0;
  createdProcessTerminals.length = 0;
  createdQuickPicks.length = 0;
  shownInputBoxes.length = 0;
  inputAnswers.length = 0;
  shownQuickPicks.length = 0;
  quickPickAnswers.length = 0;
  shownSaveDialogs.length = 0;
  saveDialogAnswers.length = 0;
  openTabs.length = 0;
  closedTabs.length = 0;
  window.activeTextEditor = undefined;
}

type WorkspaceEditEntry =
  | { kind: "create"; uri: Uri; contents: Uint8Array | undefined; overwrite: boolean }
  | { kind: "delete"; uri: Uri; ignoreIfNotExists: boolean }
  | { kind: "replace"; uri: Uri; range: Range; text: string };

export class WorkspaceEdit {
  readonly entries: WorkspaceEditEntry[] = [];

  createFile(uri: Uri, options: { overwrite?: boolean; contents?: Uint8Array } = {}): void {
    this.entries.push({ kind: "create", uri, contents: options.contents, overwrite: options.overwrite ?? false });
  }

  deleteFile(uri: Uri, options: { ignoreIfNotExists?: boolean } = {}): void {
    this.entries.push({ kind: "delete", uri, ignoreIfNotExists: options.ignoreIfNotExists ?? false });
  }

  replace(uri: Uri, range: Range, text: string): void {
    this.entries.push({ kind: "replace", uri, range, text });
  }
}

/** The workspace edits applied, in order. */
export const appliedEdits: WorkspaceEdit[] = [];

function applyWorkspaceEdit(edit: WorkspaceEdit): boolean {
  for (const entry of edit.entries) {
    const path = entry.uri.fsPath;
    if (entry.kind === "create") {
      if (nodeFs.existsSync(path) && !entry.overwrite) {
        return false;
      }
      nodeFs.writeFileSync(path, entry.contents ?? new Uint8Array());
    } else if (entry.kind === "delete") {
      if (nodeFs.existsSync(path)) {
        nodeFs.rmSync(path);
      } else if (!entry.ignoreIfNotExists) {
        return false;
      }
    }
  }
  const replaced = new Map<TextDocument, Array<{ start: number; end: number; text: string }>>();
  for (const entry of edit.entries) {
    if (entry.kind !== "replace") {
      continue;
    }
    const document = workspace.textDocuments.find((open) => open.uri.toString() === entry.uri.toString());
    if (document === undefined) {
      return false;
    }
    const start = document.offsetAt(entry.range.start);
    const end = document.offsetAt(entry.range.end);
    // Inserted text takes the document's line endings, as in VS Code.
    const text = entry.text.replace(/\r\n|\n/g, document.eol);
    replaced.set(document, [...(replaced.get(document) ?? []), { start, end, text }]);
  }
  for (const [document, replacements] of replaced) {
    let text = document.getText();
    for (const { start, end, text: inserted } of replacements.sort((a, b) => b.start - a.start)) {
      text = text.slice(0, start) + inserted + text.slice(end);
    }
    document.setText(text, true);
  }
  appliedEdits.push(edit);
  return true;
}

export class FileSystemWatcher {
  disposed = false;
  private readonly created = new EventEmitter<Uri>();
  private readonly changed = new EventEmitter<Uri>();
  private readonly deleted = new EventEmitter<Uri>();
  readonly onDidCreate = this.created.event;
  readonly onDidChange = this.changed.event;
  readonly onDidDelete = this.deleted.event;

  constructor(readonly pattern: RelativePattern) {}

  /** The watched file changed on disk. */
  fireChange(): void {
    this.changed.fire(Uri.file(`${this.pattern.base.fsPath}/${this.pattern.pattern}`));
  }

  dispose(): void {
    this.disposed = true;
  }
}

export const fileWatchers: FileSystemWatcher[] = [];

export interface TextDocumentContentProvider {
  onDidChange?: (listener: (uri: Uri) => unknown) => Disposable;
  provideTextDocumentContent(uri: Uri): string;
}

export const contentProviders = new Map<string, TextDocumentContentProvider>();

export interface CodeLensProvider {
  onDidChangeCodeLenses?: (listener: () => unknown) => Disposable;
  provideCodeLenses(document: TextDocument): CodeLens[];
}

export const codeLensProviders: Array<{ selector: unknown; provider: CodeLensProvider }> = [];

/** The languages `getLanguages` says VS Code knows. */
export const knownLanguages = ["plaintext", "rust", "typescript"];

/** What `env.clipboard.writeText` was given, in order. */
export const clipboardWrites: string[] = [];

export const env = {
  clipboard: {
    writeText(text: string): Promise<void> {
      clipboardWrites.push(text);
      return Promise.resolve();
    },
  },
};

/** The untitled documents `openTextDocument({ language, content })` opened, as asked. */
export const untitledDocuments: Array<{ language?: string; content?: string }> = [];

export const languages = {
  getLanguages(): Promise<string[]> {
    return Promise.resolve([...knownLanguages]);
  },
  registerCodeLensProvider(selector: unknown, provider: CodeLensProvider): Disposable {
    const entry = { selector, provider };
    codeLensProviders.push(entry);
    return new Disposable(() => codeLensProviders.splice(codeLensProviders.indexOf(entry), 1));
  },
};

/** One `executeCommand` call. */
export interface ExecutedCommand {
  command: string;
  args: unknown[];
}

export const executedCommands: ExecutedCommand[] = [];
const registeredCommands = new Map<string, (...args: unknown[]) => unknown>();

export const commands = {
  registerCommand(command: string, handler: (...args: unknown[]) => unknown): Disposable {
    registeredCommands.set(command, handler);
    return new Disposable(() => registeredCommands.delete(command));
  },
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    executedCommands.push({ command, args });
    if (failures.executeCommand !== undefined) {
      return Promise.reject(new Error(failures.executeCommand));
    }
    return Promise.resolve(registeredCommands.get(command)?.(...args));
  },
};

export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

/** One `update` call on a configuration. */
export interface SettingUpdate {
  key: string;
  value: unknown;
  target: ConfigurationTarget | undefined;
}

/** The workspace settings `getConfiguration` reads, by full key (`tether.permissions.rules`). */
export const settings = new Map<string, unknown>();
/** The user settings, under the workspace ones (`get` falls back to them, `inspect` shows both). */
export const userSettings = new Map<string, unknown>();
export const settingUpdates: SettingUpdate[] = [];

type ConfigurationListener = (event: { affectsConfiguration(section: string): boolean }) => void;
const configurationListeners: ConfigurationListener[] = [];

export const workspace = {
  workspaceFolders: undefined as Array<{ uri: Uri }> | undefined,
  /** VS Code's workspace trust; `resetWorkspace` trusts the workspace again. */
  isTrusted: true,
  textDocuments: [] as TextDocument[],
  onDidOpenTextDocument: documentOpened.event,
  onDidCloseTextDocument: documentClosed.event,
  onDidChangeTextDocument: documentChanged.event,
  onDidSaveTextDocument: documentSaved.event,
  onDidChangeWorkspaceFolders: workspaceFoldersChanged.event,

  /** Opens the file's document from disk (one kind of line ending), or returns the open one. */
  openTextDocument(target: Uri | { language?: string; content?: string }): Promise<TextDocument> {
    if (!(target instanceof Uri)) {
      untitledDocuments.push(target);
      return Promise.resolve(new TextDocument(Uri.file(`/untitled-${untitledDocuments.length}`), target.content ?? ""));
    }
    const uri = target;
    const open = workspace.textDocuments.find((document) => document.uri.toString() === uri.toString());
    if (open !== undefined) {
      return Promise.resolve(open);
    }
    let text: string;
    try {
      text = nodeFs.readFileSync(uri.fsPath, "utf8");
    } catch (error) {
      return Promise.reject(error);
    }
    const document = new TextDocument(uri, documentText(text));
    workspace.textDocuments.push(document);
    documentOpened.fire(document);
    return Promise.resolve(document);
  },

  applyEdit(edit: WorkspaceEdit): Promise<boolean> {
    return Promise.resolve(applyWorkspaceEdit(edit));
  },

  fs: {
    /** Copies the file; refuses to replace one without `overwrite`, as VS Code does. */
    copy(source: Uri, target: Uri, options: { overwrite?: boolean } = {}): Promise<void> {
      try {
        nodeFs.copyFileSync(source.fsPath, target.fsPath, options.overwrite === true ? 0 : nodeFs.constants.COPYFILE_EXCL);
      } catch (error) {
        return Promise.reject(error);
      }
      return Promise.resolve();
    },
    /** Writes the file; an open document without unsaved edits reloads, as in VS Code. */
    writeFile(uri: Uri, content: Uint8Array): Promise<void> {
      try {
        nodeFs.writeFileSync(uri.fsPath, content);
      } catch (error) {
        return Promise.reject(error);
      }
      const open = workspace.textDocuments.find((document) => document.uri.toString() === uri.toString());
      if (open !== undefined && !open.isDirty) {
        open.setText(documentText(Buffer.from(content).toString("utf8")), false);
      }
      return Promise.resolve();
    },
  },

  createFileSystemWatcher(pattern: RelativePattern): FileSystemWatcher {
    const watcher = new FileSystemWatcher(pattern);
    fileWatchers.push(watcher);
    return watcher;
  },

  registerTextDocumentContentProvider(scheme: string, provider: TextDocumentContentProvider): Disposable {
    contentProviders.set(scheme, provider);
    return new Disposable(() => contentProviders.delete(scheme));
  },

  getConfiguration(section: string) {
    return {
      get(key: string): unknown {
        return settings.get(`${section}.${key}`) ?? userSettings.get(`${section}.${key}`);
      },
      inspect(key: string) {
        return {
          key: `${section}.${key}`,
          globalValue: userSettings.get(`${section}.${key}`),
          workspaceValue: settings.get(`${section}.${key}`),
        };
      },
      update(key: string, value: unknown, target?: ConfigurationTarget): Promise<void> {
        if (failures.update !== undefined) {
          return Promise.reject(new Error(failures.update));
        }
        settingUpdates.push({ key: `${section}.${key}`, value, target });
        return Promise.resolve();
      },
    };
  },

  onDidChangeConfiguration(listener: ConfigurationListener) {
    configurationListeners.push(listener);
    return {
      dispose() {
        configurationListeners.splice(configurationListeners.indexOf(listener), 1);
      },
    };
  },
};

/** Fires `onDidChangeConfiguration` as VS Code does after these settings changed. */
export function changeSettings(changed: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(changed)) {
    settings.set(key, value);
  }
  const keys = Object.keys(changed);
  const event = {
    affectsConfiguration: (section: string) =>
      keys.some((key) => key === section || key.startsWith(`${section}.`)),
  };
  for (const listener of [...configurationListeners]) {
    listener(event);
  }
}

/** VS Code's symbol kinds, numbered as VS Code numbers them. */
export enum SymbolKind {
  File = 0,
  Module = 1,
  Namespace = 2,
  Package = 3,
  Class = 4,
  Method = 5,
  Property = 6,
  Field = 7,
  Constructor = 8,
  Enum = 9,
  Interface = 10,
  Function = 11,
  Variable = 12,
  Constant = 13,
}

// The composer (`footer.composer`): where the person writes a prompt. A box drawn like VS Code's
// own inputs holds the attachments (as chips), the text area, which grows with its text, and a
// footer: the session's pickers (`SessionControlsPanel`, placed there by the chat) and one
// button that is Send while the agent waits and Stop while it works.
//
// Enter sends and Shift+Enter starts a new line (Enter while an input method is composing
// belongs to the input method). Send is disabled while the session is not ready (an agent that
// exited and can be restarted counts as ready: the prompt starts it again). While a turn runs,
// Stop (or Escape in the text area) cancels it, and Enter keeps the text and says why it was
// not sent. ↑ on the first line and ↓ on the last walk through the prompts already sent in this
// session (the thread's, so they survive reloads), the text being written kept as the newest.
//
// Two completions share one list above the text area (a listbox the text area points at with
// `aria-activedescendant`): the arrow keys move through it, Enter or Tab picks, Escape closes it,
// and a click picks too. While the list is open, Enter picks rather than sends.
// - When the text starts with "/", the agent's slash commands that match what follows; picking
//   one makes the text "/name ".
// - After an "@" (at the start or after a space, up to the caret), the workspace's files and the
//   editor's selection: the host ranks them for what follows the "@" and answers with `mentions`.
//   Picking one writes "@label " in place of what was typed and remembers what it stands for;
//   a prompt carries the mentions whose "@label" is still in its text when it is sent. Each is
//   shown as a chip above the text, whose remove button takes its "@label" out of the text.
//   "Tether: Mention Selection" adds one the same way (`addMention`).
//
// Images pasted or dropped into the composer are shown as chips with a thumbnail, each with a
// remove button, and sent with the prompt; an agent that does not accept images (its
// `promptCapabilities`) gets none, and the composer says so.
//
// Each session open in the tabs has its own draft: showing another tab keeps the text, its
// mentions and its images with the session they were written for (`UiState`), and gives back
// the draft of the session shown.

import { element, icon } from "./element";
import type {
  MentionSuggestion,
  PostIntent,
  PromptAttachment,
  PromptCapabilitiesView,
  SessionKey,
  SlashCommandView,
} from "./protocol";
import type { UiState } from "./ui-state";

/** The largest image the composer takes, as the engine does (MAX_IMAGE_BYTES). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** The text area grows with its text up to this share of the view's height, then scrolls. */
const MAX_INPUT_SHARE = 0.4;

/** One entry of the completion list. */
interface Suggestion {
  name: string;
  hint: string | null;
  description: string;
  pick(): void;
}

/** An "@" being typed: where it starts in the text and what follows it up to the caret. */
interface MentionTyping {
  start: number;
  query: string;
}

interface PendingImage {
  mimeType: string;
  data: string;
}

export class ComposerView {
  readonly element: HTMLElement;
  readonly input = element("textarea", "composer-input");
  /** Where the chat puts the session's pickers, left of Send. */
  readonly controlsSlot = element("div", "composer-controls");
  private readonly send = element("button", "composer-send");
  private readonly cancel = element("button", "composer-cancel");
  private readonly suggestions = element("ul", "composer-commands");
  private readonly attachmentsRow = element("div", "composer-attachments");
  private readonly note = element("div", "composer-note");
  private canSend = false;
  private running = false;
  /** Whether the agent was ready at the last `render`. */
  private ready = false;
  private commands: SlashCommandView[] = [];
  private capabilities: PromptCapabilitiesView = { image: false, embeddedContext: false };
  private matches: Suggestion[] = [];
  private active = 0;
  /** Escape closed the list for this text; typing opens it again. */
  private dismissed = false;
  /** The "@" being typed, if the caret is in one. */
  private mention: MentionTyping | null = null;
  /** The host's list for the mention being typed, once it answered. */
  private mentionItems: { query: string; items: MentionSuggestion[] } | null = null;
  /** What each "@label" picked so far stands for (kept in the UI state with the text). */
  private readonly mentioned: Map<string, PromptAttachment>;
  private images: PendingImage[] = [];
  /** The images of the drafts of the sessions not shown (not saved: setState is no place for them). */
  private readonly imagesOf = new Map<SessionKey, PendingImage[]>();
  /** The prompts sent in this session, oldest first, for ↑ and ↓. */
  private history: string[] = [];
  /** The last prompt sent, with what it attached, for the host to give back if it could not go. */
  private lastSent: { text: string; mentioned: [string, PromptAttachment][]; images: PendingImage[] } | null = null;
  /** Where ↑/↓ are in `history` (its length: the text being written), and that text. */
  private historyAt = 0;
  private draft = "";

  constructor(
    private readonly post: PostIntent,
    private readonly uiState: UiState,
  ) {
    this.element = element("footer", "composer");
    this.input.rows = 1;
    this.input.placeholder = "Ask the agent…";
    this.input.setAttribute("aria-label", "Prompt (@ to mention files, / for commands, Enter to send, Shift+Enter for a new line, ↑ for earlier prompts)");
    this.input.value = uiState.composer;
    this.mentioned = new Map(uiState.mentions);
    this.send.type = "button";
    this.send.setAttribute("aria-label", "Send");
    this.send.append(icon("send"));
    this.cancel.type = "button";
    this.cancel.title = "Stop the agent's turn (Escape)";
    this.cancel.setAttribute("aria-label", "Stop");
    this.cancel.append(icon("debug-stop"));
    const footer = element("div", "composer-footer");
    footer.append(this.controlsSlot, this.cancel, this.send);
    const box = element("div", "composer-box");
    box.append(this.attachmentsRow, this.input, footer);
    this.suggestions.id = "tether-composer-commands";
    this.suggestions.setAttribute("role", "listbox");
    this.suggestions.hidden = true;
    this.attachmentsRow.hidden = true;
    this.note.hidden = true;
    this.note.setAttribute("role", "status");
    this.element.append(this.suggestions, this.note, box);

    this.input.addEventListener("input", () => {
      this.uiState.composer = this.input.value;
      this.dismissed = false;
      this.historyAt = this.history.length;
      this.showSuggestions();
      this.showMentionChips();
      this.fitHeight();
    });
    // Moving the caret into or out of an "@" opens or closes its list.
    this.input.addEventListener("click", () => this.showSuggestions());
    this.input.addEventListener("keydown", (event) => {
      if (this.pickByKey(event)) return;
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (this.running && this.input.value.trim() !== "") {
          this.say("The agent is still working: your prompt is kept. Send it when the turn ends, or Stop (Escape).");
        } else if (!this.canSend && this.input.value.trim() !== "") {
          // Enter did nothing at all while the agent started (or hung starting).
          this.say("The agent is not ready yet: your prompt is kept. Send it once the session is ready.", "notReady");
        }
        this.submit();
      } else if (event.key === "Escape" && this.running) {
        event.preventDefault();
        this.post({ type: "cancel" });
      } else if ((event.key === "ArrowUp" || event.key === "ArrowDown") && this.walkHistory(event)) {
        event.preventDefault();
      }
    });
    this.input.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files ?? [])].filter((file) => file.type.startsWith("image/"));
      if (files.length === 0) return;
      event.preventDefault();
      void this.addImages(files);
    });
    this.element.addEventListener("dragover", (event) => {
      if ([...(event.dataTransfer?.items ?? [])].some((item) => item.kind === "file")) event.preventDefault();
    });
    this.element.addEventListener("drop", (event) => {
      const files = [...(event.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      void this.addImages(files);
    });
    this.send.addEventListener("click", () => this.submit());
    this.cancel.addEventListener("click", () => this.post({ type: "cancel" }));
    this.render(false, false);
    this.showMentionChips();
  }

  /** The agent's slash commands, offered when the text starts with "/". */
  setCommands(commands: SlashCommandView[]): void {
    this.commands = commands;
    this.showSuggestions();
  }

  /** The prompts already sent in this session, oldest first (↑ and ↓ walk them). */
  setHistory(prompts: string[]): void {
    if (prompts.length === this.history.length && prompts.every((prompt, index) => prompt === this.history[index])) return;
    const walking = this.historyAt < this.history.length;
    this.history = prompts;
    if (!walking) this.historyAt = prompts.length;
  }

  /** Says which agent the prompt goes to, in the empty text area. */
  setAgentName(name: string | null): void {
    // Short, so that it fits one line of a narrow side bar: "@" and "/" are in the empty state
    // and the text area's accessible name.
    this.input.placeholder = `Ask ${name ?? "the agent"}…`;
  }

  /** Puts `text` in the composer (an example prompt, an earlier prompt to edit) and focuses it. */
  fill(text: string): void {
    this.input.value = text;
    this.uiState.composer = text;
    this.historyAt = this.history.length;
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
    this.showSuggestions();
    this.showMentionChips();
    this.fitHeight();
  }

  /**
   * A prompt the host could not send comes back (`reason` says why): its text goes before
   * whatever was typed since, with its mentions and images when it is the last prompt sent here.
   */
  giveBack(text: string, reason: string): void {
    const typed = this.input.value;
    const sent = this.lastSent?.text === text ? this.lastSent : null;
    if (sent !== null) {
      for (const [label, attachment] of sent.mentioned) this.mentioned.set(label, attachment);
      this.uiState.mentions = [...this.mentioned];
      this.images = [...sent.images, ...this.images];
      this.lastSent = null;
    }
    this.fill(typed.trim() === "" ? text : `${text}\n\n${typed}`);
    this.say(`Not sent: ${reason}. Your prompt is back here to send again.`, "returned");
  }

  /**
   * Shows session `key`'s draft (`open`: the sessions in the tabs). A list that was open closes
   * until the person types, and ↑/↓ walk the prompts of the session shown once the thread gives
   * them.
   */
  showSession(key: SessionKey, open: readonly SessionKey[]): void {
    if (key === 0) return;
    for (const session of this.imagesOf.keys()) {
      if (!open.includes(session)) this.imagesOf.delete(session);
    }
    const left = this.uiState.showSession(key, open);
    if (left === null) return;
    if (open.includes(left) && this.images.length > 0) this.imagesOf.set(left, this.images);
    this.images = this.imagesOf.get(key) ?? [];
    this.imagesOf.delete(key);
    this.input.value = this.uiState.composer;
    this.mentioned.clear();
    for (const [label, attachment] of this.uiState.mentions) this.mentioned.set(label, attachment);
    this.history = [];
    this.historyAt = 0;
    this.draft = "";
    this.mention = null;
    this.mentionItems = null;
    this.dismissed = true;
    this.say(null);
    this.showSuggestions();
    this.showMentionChips();
    this.fitHeight();
  }

  /** What the agent accepts in a prompt besides text. */
  setCapabilities(capabilities: PromptCapabilitiesView): void {
    this.capabilities = capabilities;
  }

  /** The host's `@` list for `query`; ignored when the person has typed on since. */
  setMentions(query: string, items: MentionSuggestion[]): void {
    this.mentionItems = { query, items };
    this.showSuggestions();
  }

  /** Adds a mention at the caret ("Tether: Mention Selection") and focuses the text. */
  addMention(mention: MentionSuggestion): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    const before = this.input.value.slice(0, caret);
    const spacer = before === "" || /\s$/.test(before) ? "" : " ";
    this.remember(mention);
    this.insert(caret, caret, `${spacer}@${mention.label} `);
  }

  private remember(mention: MentionSuggestion): void {
    this.mentioned.set(mention.label, mention.attachment);
    this.uiState.mentions = [...this.mentioned];
  }

  /**
   * `sessionReady`: a prompt can go (the session is ready, or its agent is started again for
   * it); `agentReady`: the agent is ready now, which ends what a note of a prompt given back
   * said.
   */
  render(sessionReady: boolean, turnRunning: boolean, agentReady = sessionReady): void {
    this.running = turnRunning;
    this.canSend = sessionReady && !turnRunning;
    this.send.disabled = !this.canSend;
    this.send.title = sessionReady ? "Send (Enter)" : "The session is not ready";
    // One place, two faces: Send while the agent waits, Stop while it works.
    this.send.hidden = turnRunning;
    this.cancel.hidden = !turnRunning;
    this.cancel.disabled = !turnRunning;
    if (!turnRunning && this.note.dataset["reason"] === "running") this.say(null);
    // Why a prompt came back (the agent could not start, was not ready, went away) is over once
    // a session is ready again: the note would say so beside a ready session.
    const becameReady = agentReady && !this.ready;
    this.ready = agentReady;
    const reason = this.note.dataset["reason"];
    if (becameReady && (reason === "returned" || reason === "notReady")) this.say(null);
  }

  /**
   * ↑ on the first line shows the prompt before the one shown, ↓ on the last line the one after
   * (the text being written comes back after the newest). Returns whether the key was used.
   */
  private walkHistory(event: KeyboardEvent): boolean {
    if (event.shiftKey || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return false;
    const caret = this.input.selectionStart ?? 0;
    const value = this.input.value;
    const up = event.key === "ArrowUp";
    if (up ? value.slice(0, caret).includes("\n") : value.slice(this.input.selectionEnd ?? caret).includes("\n")) {
      return false;
    }
    const next = this.historyAt + (up ? -1 : 1);
    if (next < 0 || next > this.history.length) return false;
    if (this.historyAt === this.history.length) this.draft = value;
    this.historyAt = next;
    const text = next === this.history.length ? this.draft : (this.history[next] ?? "");
    this.input.value = text;
    this.uiState.composer = text;
    this.input.setSelectionRange(text.length, text.length);
    this.showMentionChips();
    this.fitHeight();
    return true;
  }

  /** The text area as tall as its text, up to MAX_INPUT_SHARE of the view, then it scrolls. */
  private fitHeight(): void {
    const view = this.input.ownerDocument.defaultView;
    const limit = Math.max(80, Math.round((view?.innerHeight ?? 600) * MAX_INPUT_SHARE));
    this.input.style.height = "auto";
    const wanted = this.input.scrollHeight;
    if (wanted === 0) {
      this.input.style.removeProperty("height");
      return;
    }
    this.input.style.height = `${Math.min(wanted + 2, limit)}px`;
    this.input.style.overflowY = wanted + 2 > limit ? "auto" : "hidden";
  }

  /** Opens the list for what is being typed: slash commands, or the `@` list. */
  private showSuggestions(): void {
    const previous = this.matches[this.active]?.name;
    const commands = this.slashMatches();
    // Text that starts a slash command is not a mention, whatever "@" it holds.
    if (commands !== null) this.mention = null;
    this.matches = this.dismissed ? [] : commands ?? this.mentionMatches();
    const kept = this.matches.findIndex((match) => match.name === previous);
    this.active = kept >= 0 ? kept : 0;
    this.suggestions.setAttribute("aria-label", this.mention === null ? "Slash commands" : "Files, folders and selection");
    this.suggestions.replaceChildren(
      ...this.matches.map((match, index) => {
        const item = element("li", "composer-command");
        item.id = `tether-composer-command-${index}`;
        item.setAttribute("role", "option");
        item.append(element("span", "composer-command-name", match.name));
        if (match.hint !== null) item.append(element("span", "composer-command-hint", match.hint));
        item.append(element("span", "composer-command-description", match.description));
        // Picking with the mouse must not take the focus from the text area first.
        item.addEventListener("mousedown", (event) => event.preventDefault());
        item.addEventListener("click", () => match.pick());
        return item;
      }),
    );
    const open = this.matches.length > 0;
    this.suggestions.hidden = !open;
    if (open) {
      this.input.setAttribute("aria-controls", this.suggestions.id);
      this.input.setAttribute("aria-autocomplete", "list");
    }
    this.input.setAttribute("aria-expanded", String(open));
    this.highlight();
  }

  /** The slash commands the text names, or null when it does not start with one. */
  private slashMatches(): Suggestion[] | null {
    const typed = /^\/(\S*)$/.exec(this.input.value)?.[1];
    if (typed === undefined) return null;
    return this.commands
      .filter((command) => command.name.toLowerCase().startsWith(typed.toLowerCase()))
      .map((command) => ({
        name: `/${command.name}`,
        hint: command.inputHint,
        description: command.description,
        pick: () => this.pickCommand(command),
      }));
  }

  /** The `@` list for the mention at the caret; asks the host when the query changed. */
  private mentionMatches(): Suggestion[] {
    const caret = this.input.selectionStart ?? this.input.value.length;
    const found = /(^|\s)@([^\s@]*)$/.exec(this.input.value.slice(0, caret));
    const typing = found === null ? null : { start: caret - found[2]!.length - 1, query: found[2]! };
    const before = this.mention;
    this.mention = typing;
    if (typing === null) return [];
    if (before === null || before.start !== typing.start || before.query !== typing.query) {
      // A new "@" lists the files again (some may be new); later keystrokes are ranked by the
      // engine against that list.
      const fresh = before === null || before.start !== typing.start;
      this.post({ type: "findMentions", query: typing.query, fresh });
    }
    // Until the host answers, the last list stays up rather than flickering away, less what the
    // query now rules out: Enter picks the first item shown, and a person who types "@no" and
    // Enter at once must not get the selection the bare "@" listed first.
    const listed = this.mentionItems;
    const items = listed === null || listed.query === typing.query
      ? listed?.items ?? []
      : listed.items.filter((item) => inOrder(typing.query, item.label));
    return items.map((item) => ({
      name: `@${item.label}`,
      hint: null,
      description: item.detail ?? "",
      pick: () => this.pickMention(typing, item),
    }));
  }

  private highlight(): void {
    [...this.suggestions.children].forEach((item, index) => {
      item.setAttribute("aria-selected", String(index === this.active));
    });
    const active = this.suggestions.children[this.active];
    if (active !== undefined && !this.suggestions.hidden) {
      this.input.setAttribute("aria-activedescendant", active.id);
    } else {
      this.input.removeAttribute("aria-activedescendant");
    }
  }

  /** Handles a key meant for the open list; returns whether it was one. */
  private pickByKey(event: KeyboardEvent): boolean {
    if (this.suggestions.hidden || event.isComposing) return false;
    const count = this.matches.length;
    switch (event.key) {
      case "ArrowDown":
        this.active = (this.active + 1) % count;
        break;
      case "ArrowUp":
        this.active = (this.active - 1 + count) % count;
        break;
      case "Enter":
      case "Tab": {
        if (event.shiftKey) return false;
        const match = this.matches[this.active];
        if (match === undefined) return false;
        event.preventDefault();
        match.pick();
        return true;
      }
      case "Escape":
        this.dismissed = true;
        event.preventDefault();
        // The list closes; a running turn is not cancelled by the same key.
        event.stopPropagation();
        this.showSuggestions();
        return true;
      default:
        return false;
    }
    event.preventDefault();
    this.highlight();
    return true;
  }

  private pickCommand(command: SlashCommandView): void {
    this.input.value = "";
    this.insert(0, 0, `/${command.name} `);
    this.dismissed = true;
    this.showSuggestions();
  }

  private pickMention(typing: MentionTyping, item: MentionSuggestion): void {
    this.remember(item);
    this.mention = null;
    this.mentionItems = null;
    this.insert(typing.start, typing.start + 1 + typing.query.length, `@${item.label} `);
  }

  /** Replaces the text from `from` to `to` with `text`, leaving the caret after it. */
  private insert(from: number, to: number, text: string): void {
    const value = this.input.value;
    this.input.value = value.slice(0, from) + text + value.slice(to);
    this.uiState.composer = this.input.value;
    const caret = from + text.length;
    this.input.focus();
    this.input.setSelectionRange(caret, caret);
    this.showSuggestions();
    this.showMentionChips();
    this.fitHeight();
  }

  private async addImages(files: File[]): Promise<void> {
    for (const file of files) {
      if (!file.type.startsWith("image/")) {
        this.say(`${file.name} is not an image: mention files with @ instead.`);
        continue;
      }
      if (!this.capabilities.image) {
        this.say("This agent does not accept images.");
        return;
      }
      if (file.size > MAX_IMAGE_BYTES) {
        this.say(`${file.name} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MiB.`);
        continue;
      }
      const data = await readBase64(file);
      this.images.push({ mimeType: file.type, data });
      this.say(null);
    }
    this.showAttachments();
  }

  private showAttachments(): void {
    this.showMentionChips();
  }

  /** The chips above the text: each mention still in the text, then each image. */
  private showMentionChips(): void {
    const text = this.input.value;
    const mentions = [...this.mentioned.keys()].filter((label) => mentionPattern(label).test(text));
    const chips = mentions.map((label) => {
      const chip = element("div", "composer-chip composer-mention");
      chip.title = label;
      const remove = chipRemove(`Remove @${label}`, () => {
        this.input.value = this.input.value.replace(mentionPattern(label, " ?"), "");
        this.uiState.composer = this.input.value;
        this.mentioned.delete(label);
        this.uiState.mentions = [...this.mentioned];
        this.showMentionChips();
        this.input.focus();
      });
      const kind = this.mentioned.get(label)?.type;
      const chipIcon = kind === "selection" ? "selection" : kind === "folder" ? "folder" : "file";
      chip.append(icon(chipIcon), element("span", "composer-chip-label", label), remove);
      return chip;
    });
    const images = this.images.map((image, index) => {
      const chip = element("div", "composer-chip composer-image");
      const thumbnail = element("img", "composer-image-thumbnail");
      thumbnail.src = `data:${image.mimeType};base64,${image.data}`;
      thumbnail.alt = `Image ${index + 1}`;
      const remove = chipRemove(`Remove image ${index + 1}`, () => {
        this.images.splice(index, 1);
        this.showMentionChips();
        this.input.focus();
      });
      remove.classList.add("composer-image-remove");
      chip.append(thumbnail, element("span", "composer-chip-label", `Image ${index + 1}`), remove);
      return chip;
    });
    this.attachmentsRow.replaceChildren(...chips, ...images);
    this.attachmentsRow.hidden = chips.length + images.length === 0;
  }

  /**
   * Shows (or, with null, hides) a line about what the composer could not take. `reason` says
   * what ends it (`render` lets "running" go when the turn ends, "returned" and "notReady" when
   * the agent is ready); by default the running turn, else the attachment it was about.
   */
  private say(text: string | null, reason = this.running ? "running" : "attachment"): void {
    this.note.textContent = text ?? "";
    this.note.hidden = text === null;
    if (text === null) delete this.note.dataset["reason"];
    else this.note.dataset["reason"] = reason;
  }

  /** The mentions the text still holds, in the order they appear, then the images. */
  private attachments(text: string): PromptAttachment[] {
    const found: { at: number; attachment: PromptAttachment }[] = [];
    for (const [label, attachment] of this.mentioned) {
      const at = text.search(mentionPattern(label));
      if (at >= 0) found.push({ at, attachment });
    }
    found.sort((a, b) => a.at - b.at);
    const images: PromptAttachment[] = this.images.map((image) => ({ type: "image", ...image }));
    return [...found.map(({ attachment }) => attachment), ...images];
  }

  private submit(): void {
    const text = this.input.value;
    if (!this.canSend || (text.trim() === "" && this.images.length === 0)) return;
    this.post({ type: "prompt", text, attachments: this.attachments(text) });
    this.lastSent = { text, mentioned: [...this.mentioned], images: this.images };
    this.history = [...this.history, text];
    this.historyAt = this.history.length;
    this.draft = "";
    this.input.value = "";
    this.uiState.composer = "";
    this.mentioned.clear();
    this.uiState.mentions = [];
    this.images = [];
    this.showAttachments();
    this.say(null);
    this.showSuggestions();
    this.fitHeight();
  }
}

/** A chip's remove button: a small ×, named for screen readers. */
function chipRemove(label: string, remove: () => void): HTMLButtonElement {
  const button = element("button", "composer-chip-remove");
  button.type = "button";
  button.title = label;
  button.setAttribute("aria-label", label);
  button.append(icon("close"));
  button.addEventListener("click", remove);
  return button;
}

/**
 * `@label` where the text holds it as a mention of its own: followed by the end, a blank or a
 * sentence's closing punctuation (what the engine's typed mentions allow), and then `after`.
 * Not inside a longer mention: a folder's `@src/` is not in `@src/main.rs`.
 */
function mentionPattern(label: string, after = ""): RegExp {
  return new RegExp(`@${escapeRegExp(label)}(?=$|[\\s.,;:!?)])${after}`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The file's bytes in base64, as a data URL carries them. */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error(`cannot read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/**
 * Whether `query`'s characters appear in `label` in order, ignoring case: how the engine matches
 * an `@` query to a path (its ranking aside).
 */
function inOrder(query: string, label: string): boolean {
  const lower = label.toLowerCase();
  let at = 0;
  for (const char of query.toLowerCase()) {
    at = lower.indexOf(char, at);
    if (at === -1) return false;
    at += 1;
  }
  return true;
}

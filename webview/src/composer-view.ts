// The composer (`footer.composer`): where the person writes a prompt.
//
// Enter sends and Shift+Enter starts a new line (Enter while an input method is composing
// belongs to the input method). Send is disabled while a turn runs or the session is not ready
// (an agent that exited and can be restarted counts as ready: the prompt starts it again);
// Cancel is offered only while a turn runs, and Escape does the same from the text area.
//
// Two completions share one list above the text area (a listbox the text area points at with
// `aria-activedescendant`): the arrow keys move through it, Enter or Tab picks, Escape closes it,
// and a click picks too. While the list is open, Enter picks rather than sends.
// - When the text starts with "/", the agent's slash commands that match what follows; picking
//   one makes the text "/name ".
// - After an "@" (at the start or after a space, up to the caret), the workspace's files and the
//   editor's selection: the host ranks them for what follows the "@" and answers with `mentions`.
//   Picking one writes "@label " in place of what was typed and remembers what it stands for;
//   a prompt carries the mentions whose "@label" is still in its text when it is sent.
//   "Tether: Mention Selection" adds one the same way (`addMention`).
//
// Images pasted or dropped into the composer are shown as thumbnails above the text, each with
// a remove button, and sent with the prompt; an agent that does not accept images (its
// `promptCapabilities`) gets none, and the composer says so.

import { element } from "./element";
import type {
  MentionSuggestion,
  PostIntent,
  PromptAttachment,
  PromptCapabilitiesView,
  SlashCommandView,
} from "./protocol";
import type { UiState } from "./ui-state";

/** The largest image the composer takes, as the engine does (MAX_IMAGE_BYTES). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

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
  private readonly send = element("button", "composer-send", "Send");
  private readonly cancel = element("button", "composer-cancel", "Cancel");
  private readonly suggestions = element("ul", "composer-commands");
  private readonly attachmentsRow = element("div", "composer-attachments");
  private readonly note = element("div", "composer-note");
  private canSend = false;
  private running = false;
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

  constructor(
    private readonly post: PostIntent,
    private readonly uiState: UiState,
  ) {
    this.element = element("footer", "composer");
    this.input.rows = 3;
    this.input.placeholder = "Ask the agent… (@ to mention a file, Enter to send, Shift+Enter for a new line)";
    this.input.setAttribute("aria-label", "Prompt");
    this.input.value = uiState.composer;
    this.mentioned = new Map(uiState.mentions);
    this.send.type = "button";
    this.cancel.type = "button";
    this.cancel.title = "Cancel the running turn (Escape)";
    const buttons = element("div", "composer-buttons");
    buttons.append(this.cancel, this.send);
    this.suggestions.id = "tether-composer-commands";
    this.suggestions.setAttribute("role", "listbox");
    this.suggestions.hidden = true;
    this.attachmentsRow.hidden = true;
    this.note.hidden = true;
    this.note.setAttribute("role", "status");
    this.element.append(this.suggestions, this.attachmentsRow, this.note, this.input, buttons);

    this.input.addEventListener("input", () => {
      this.uiState.composer = this.input.value;
      this.dismissed = false;
      this.showSuggestions();
    });
    // Moving the caret into or out of an "@" opens or closes its list.
    this.input.addEventListener("click", () => this.showSuggestions());
    this.input.addEventListener("keydown", (event) => {
      if (this.pickByKey(event)) return;
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      } else if (event.key === "Escape" && this.running) {
        event.preventDefault();
        this.post({ type: "cancel" });
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
  }

  /** The agent's slash commands, offered when the text starts with "/". */
  setCommands(commands: SlashCommandView[]): void {
    this.commands = commands;
    this.showSuggestions();
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

  render(sessionReady: boolean, turnRunning: boolean): void {
    this.running = turnRunning;
    this.canSend = sessionReady && !turnRunning;
    this.send.disabled = !this.canSend;
    this.send.title = turnRunning
      ? "The agent is working"
      : sessionReady
        ? "Send (Enter)"
        : "The session is not ready";
    this.cancel.hidden = !turnRunning;
    this.cancel.disabled = !turnRunning;
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
    this.suggestions.setAttribute("aria-label", this.mention === null ? "Slash commands" : "Files and selection");
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
    // Until the host answers, the last list stays up rather than flickering away.
    return (this.mentionItems?.items ?? []).map((item) => ({
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
    this.attachmentsRow.replaceChildren(
      ...this.images.map((image, index) => {
        const chip = element("div", "composer-image");
        const thumbnail = element("img", "composer-image-thumbnail");
        thumbnail.src = `data:${image.mimeType};base64,${image.data}`;
        thumbnail.alt = `Image ${index + 1}`;
        const remove = element("button", "composer-image-remove", "×");
        remove.type = "button";
        remove.title = "Remove the image";
        remove.setAttribute("aria-label", `Remove image ${index + 1}`);
        remove.addEventListener("click", () => {
          this.images.splice(index, 1);
          this.showAttachments();
          this.input.focus();
        });
        chip.append(thumbnail, remove);
        return chip;
      }),
    );
    this.attachmentsRow.hidden = this.images.length === 0;
  }

  /** Shows (or, with null, hides) a line about what the composer could not take. */
  private say(text: string | null): void {
    this.note.textContent = text ?? "";
    this.note.hidden = text === null;
  }

  /** The mentions the text still holds, in the order they appear, then the images. */
  private attachments(text: string): PromptAttachment[] {
    const found: { at: number; attachment: PromptAttachment }[] = [];
    for (const [label, attachment] of this.mentioned) {
      const at = text.indexOf(`@${label}`);
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
    this.input.value = "";
    this.uiState.composer = "";
    this.mentioned.clear();
    this.uiState.mentions = [];
    this.images = [];
    this.showAttachments();
    this.say(null);
    this.showSuggestions();
  }
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

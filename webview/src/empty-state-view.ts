// What the chat shows before the first prompt (`.empty-state`): which agent will answer, what it
// can do here (as its session says: the permission mode, images, slash commands, Tether's
// editor tools), whether it waits for the person to sign in, a few example prompts that fill the
// composer (never send), and the way to the agent settings.
//
// Everything it says comes from the host's session view, so it is as true as the header; it
// holds no state of its own and is redrawn with the header.

import { element, icon } from "./element";
import { modeLabel } from "./permission-labels";
import type { Mode, PostIntent, SessionView } from "./protocol";

/** Prompts that show what an agent is for, in any repository. */
export const EXAMPLE_PROMPTS: readonly string[] = [
  "Explain how this project is organised",
  "Find a bug in the open file and propose a fix",
  "Write tests for the code I have selected",
];

export class EmptyStateView {
  readonly element = element("section", "empty-state");
  private readonly heading = element("h2", "empty-title");
  private readonly info = element("p", "empty-info");
  private readonly signIn = element("div", "empty-sign-in");
  private readonly abilities = element("ul", "empty-abilities");
  private readonly examples = element("div", "empty-examples");

  constructor(post: PostIntent, fill: (text: string) => void) {
    this.element.setAttribute("aria-label", "New session");
    const signInButton = element("button", "empty-sign-in-button", "Sign in");
    signInButton.type = "button";
    signInButton.addEventListener("click", () => post({ type: "signIn" }));
    this.signIn.append(icon("account"), element("span", undefined, "This agent needs you to sign in first."), signInButton);
    const examples = this.examples;
    examples.setAttribute("role", "group");
    examples.setAttribute("aria-label", "Example prompts");
    for (const prompt of EXAMPLE_PROMPTS) {
      const example = element("button", "empty-example");
      example.type = "button";
      example.title = "Put this prompt in the composer";
      example.append(icon("comment"), element("span", undefined, prompt));
      example.addEventListener("click", () => fill(prompt));
      examples.append(example);
    }
    const settings = element("button", "empty-settings link-button");
    settings.type = "button";
    settings.append(icon("settings-gear"), element("span", undefined, "Agent settings"));
    settings.title = "Add agents or change how they start";
    settings.addEventListener("click", () => post({ type: "openAgentSettings" }));
    const logo = icon("comment-discussion");
    logo.classList.add("empty-logo");
    this.element.append(logo, this.heading, this.info, this.signIn, this.abilities, examples, settings);
    this.render(null);
  }

  render(session: SessionView | null): void {
    this.heading.textContent = session === null ? "Tether" : session.agent;
    this.info.textContent = session?.agentInfo ?? "";
    this.info.hidden = (session?.agentInfo ?? null) === null;
    this.signIn.hidden = session?.canSignIn !== true;
    // In a workspace VS Code does not trust nothing starts (the header says why): promising what
    // the agent would do, or offering prompts, would mislead.
    const untrusted = session?.status.type === "untrusted";
    this.examples.hidden = untrusted;
    this.abilities.hidden = untrusted;
    this.abilities.replaceChildren(
      ...(session === null ? [] : abilitiesOf(session)).map(([iconName, text]) => {
        const item = element("li", "empty-ability");
        item.append(icon(iconName), element("span", undefined, text));
        return item;
      }),
    );
  }
}

/** What the agent may do with the workspace's files, by Tether's permission mode. */
const FILES_BY_MODE: Record<Mode, string> = {
  ask: "Reads and edits this workspace's files; each edit waits for your review",
  acceptEdits: "Reads and edits this workspace's files; edits are written at once, for you to keep or revert",
  plan: "Reads this workspace's files, and changes none",
  bypass: "Reads and edits this workspace's files without asking; you can keep or revert each edit",
};

/** What the agent may run, by Tether's permission mode. */
const COMMANDS_BY_MODE: Record<Mode, string> = {
  ask: "Runs commands in terminals you can watch, when you allow it",
  acceptEdits: "Runs commands in terminals you can watch, when you allow it",
  plan: "Runs no commands while planning",
  bypass: "Runs commands in terminals you can watch, without asking",
};

/** What the agent can do in this session, in the person's words, each with its icon. */
function abilitiesOf(session: SessionView): Array<[string, string]> {
  const mode = session.permissions.mode;
  const lines: Array<[string, string]> = [
    ["edit", `${FILES_BY_MODE[mode]} (mode: ${modeLabel(mode)})`],
    ["terminal", COMMANDS_BY_MODE[mode]],
  ];
  const { prompt, commands, mcpServers } = session.controls;
  const context = ["@ to mention files or the selection"];
  if (prompt.image) context.push("images pasted or dropped");
  lines.push(["mention", `Takes ${context.join(", ")}`]);
  if (commands.length > 0) {
    const names = commands.slice(0, 3).map((command) => `/${command.name}`).join(", ");
    const more = commands.length > 3 ? ` and ${commands.length - 3} more` : "";
    lines.push(["symbol-keyword", `Slash commands: ${names}${more}`]);
  }
  if (mcpServers.some((server) => server.builtIn && server.leftOut === null)) {
    lines.push(["plug", "Uses the editor's knowledge: search, Problems, the language servers"]);
  }
  return lines;
}

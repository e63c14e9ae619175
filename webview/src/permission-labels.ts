// The words the chat uses for Tether's permission modes and rule scopes, in one place so that
// the header's mode picker, the rules panel and the permission cards all say the same thing.

import type { Mode, RuleScope } from "./protocol";

export interface ModeChoice {
  mode: Mode;
  label: string;
  /** What the mode does, shown as the picker's tooltip. */
  description: string;
}

/** Tether's modes in the picker's order: from the most careful to the least. */
export const MODES: readonly ModeChoice[] = [
  {
    mode: "ask",
    label: "Ask",
    description: "Ask before anything the agent wants to do, unless one of your rules answers.",
  },
  {
    mode: "acceptEdits",
    label: "Accept edits",
    description: "Approve file edits inside the workspace; commands and everything else still ask.",
  },
  {
    mode: "plan",
    label: "Plan",
    description: "Read only: reject anything that writes or runs, and tell the agent why.",
  },
  {
    mode: "bypass",
    label: "Bypass",
    description: "Approve every request without asking, except what a deny rule rejects.",
  },
];

/** The label of a mode; a mode a newer host added is shown by its id rather than hidden. */
export function modeLabel(mode: Mode): string {
  return MODES.find((choice) => choice.mode === mode)?.label ?? mode;
}

/** How a rule's scope reads after "rule …" or in the rules panel. */
export const SCOPE_LABELS: Record<RuleScope, string> = {
  session: "this session",
  workspace: "workspace",
};

// The words the chat uses for Tether's permission modes and rule scopes, in one place so that
// the header's mode picker, the rules panel and the permission cards all say the same thing. The
// modes' words come from tether-core, generated with the wire types.

import { MODES } from "./protocol";
import type { Mode, RuleScope } from "./protocol";

/** Tether's modes in the picker's order, with their labels and descriptions, as tether-core
 * defines them (generated; the setting's enum in package.json is checked against the same list). */
export { MODES };

/** The label of a mode; a mode a newer host added is shown by its id rather than hidden. */
export function modeLabel(mode: Mode): string {
  return MODES.find((choice) => choice.mode === mode)?.label ?? mode;
}

/** How a rule's scope reads after "rule …" or in the rules panel. */
export const SCOPE_LABELS: Record<RuleScope, string> = {
  session: "this session",
  workspace: "workspace",
};

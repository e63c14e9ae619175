// What arrives from the host, read: the host posts each `HostToWebview` as UTF-8 JSON bytes,
// which VS Code moves into this frame as they are (an object would be encoded as JSON in the
// extension host, decoded in the workbench and cloned again into this frame, megabytes at every
// step for a burst of entries or a long thread's snapshot).

const utf8 = new TextDecoder();

/**
 * The host's message in `data` (a `Uint8Array` of JSON), parsed; whether it has the shape of a
 * `HostToWebview` is for `applyHostMessage` and the views to check. Anything else gives why it
 * cannot be read.
 */
export function readHostMessage(data: unknown): { message: unknown } | { error: string } {
  if (!(data instanceof Uint8Array)) return { error: "not the JSON bytes the host posts" };
  try {
    return { message: JSON.parse(utf8.decode(data)) };
  } catch (error) {
    return { error: `not JSON: ${String(error)}` };
  }
}

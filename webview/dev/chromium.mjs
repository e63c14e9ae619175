// What the dev page and the benchmark page share to open the webview in a browser: playwright-core
// (from this package or from tests/, where the end-to-end suite installs it), a static server for
// a folder on a free port, and Debian's Chromium launched headless with a throwaway profile.

import { createReadStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const webviewRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

function loadPlaywright() {
  for (const base of [webviewRoot, join(webviewRoot, "..", "tests")]) {
    try {
      return createRequire(join(base, "package.json"))("playwright-core");
    } catch {
      // Not installed there; try the next place.
    }
  }
  throw new Error("playwright-core is not installed in webview/ or tests/");
}

const TYPES = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".ttf": "font/ttf",
  ".png": "image/png",
};

/**
 * Serves the files under `folder` on a free port of 127.0.0.1, `/` being `index` (a path
 * relative to it); nothing outside it. Returns its base URL and a `close()`.
 */
export async function serveFolder(folder, index) {
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname));
    const file = join(folder, path === "/" ? index : path);
    if (!file.startsWith(folder) || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(response);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

/**
 * Launches Debian's Chromium headless with a throwaway profile (its HOME too, where Chromium
 * writes caches and crash reports), and `args` besides the ones every launch needs here.
 * Returns the browser and a `close()` that also removes the profile.
 */
export async function launchChromium(args = []) {
  const home = mkdtempSync(join(tmpdir(), "tether-webview-chromium-"));
  const { chromium } = loadPlaywright();
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", ...args],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "config") },
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

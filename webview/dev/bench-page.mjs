// The webview in a page of its own for benchmarks and profiles: bundles it (as scripts/build.mjs
// does, into a folder of the caller's, so that a benchmark never rewrites the dist/ a concurrent
// build is packaging) with dev/bench-host.ts as its host, serves that folder, and opens pages in
// headless Debian Chromium. Used by tests/bench/thread.bench.mjs and dev/profile-stream.mjs.

import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { launchChromium, serveFolder } from "./chromium.mjs";

const webviewRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** VS Code's webviews run in its Electron's Chromium (the same target as scripts/build.mjs). */
const BROWSER_TARGET = ["chrome110"];

/** The page: the webview's bundle under the host's CSP, with the bench host loaded first. */
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; style-src 'self'; script-src 'nonce-bench'; img-src 'self' data:; font-src 'self'" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="stylesheet" href="/theme.css" />
    <link rel="stylesheet" href="/main.css" />
    <link rel="icon" href="data:," />
    <title>Tether chat (bench)</title>
  </head>
  <body>
    <div id="app"></div>
    <script nonce="bench" src="/bench-host.js"></script>
    <script type="module" nonce="bench" src="/main.js"></script>
  </body>
</html>
`;

/**
 * Bundles the webview and the bench host into `outDir`. `minify` as shipped; without it the
 * functions keep their names, for a profile to be read.
 */
export async function buildBenchPage(outDir, { minify = true } = {}) {
  const esbuild = createRequire(join(webviewRoot, "package.json"))("esbuild");
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const common = { absWorkingDir: webviewRoot, bundle: true, target: BROWSER_TARGET, logLevel: "warning" };
  await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: ["src/main.ts"],
      outdir: outDir,
      entryNames: "[name]",
      chunkNames: "chunk-[hash]",
      format: "esm",
      splitting: true,
      platform: "browser",
      minify,
      legalComments: "none",
    }),
    esbuild.build({
      ...common,
      entryPoints: ["src/style.css"],
      outfile: join(outDir, "main.css"),
      loader: { ".ttf": "file" },
      assetNames: "[name]",
      minify,
    }),
    esbuild.build({
      ...common,
      entryPoints: ["dev/bench-host.ts"],
      outfile: join(outDir, "bench-host.js"),
      format: "iife",
      platform: "browser",
    }),
  ]);
  copyFileSync(join(webviewRoot, "dev", "theme.css"), join(outDir, "theme.css"));
  writeFileSync(join(outDir, "index.html"), PAGE);
}

/** Serves `outDir` (a page [`buildBenchPage`] made) on a free port; returns its base URL and a `close()`. */
export function serveBenchPage(outDir) {
  return serveFolder(outDir, "index.html");
}

/**
 * Launches Debian's Chromium headless, with a throwaway profile and precise memory figures
 * (`performance.memory`). The webview's sidebar size: pages open at [`VIEWPORT`].
 */
export function launchBrowser() {
  return launchChromium(["--enable-precise-memory-info"]);
}

export const VIEWPORT = { width: 380, height: 820 };

// Bundles the webview with esbuild.
//
//   node scripts/build.mjs           dist/main.js (browser, ES module, minified), the chunks it
//                                    loads on demand (dist/chunk-*.js) and dist/main.css
//   node scripts/build.mjs --tests   also the unit tests, to dist/test/*.test.mjs (node, esm)
//   node scripts/build.mjs --dev     also the dev page's fake host, to dist/dev/fake-host.js
//
// The extension's packaging copies every top-level file of dist/ into extension/dist/webview/.
// main.js is an ES module split into chunks so that what is rarely needed is fetched only when it
// is: the syntax highlighter, its grammars and themes (see src/highlighter.ts). The chunks sit
// beside main.js, which imports them relative to its own URL.

import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wanted = new Set(process.argv.slice(2));

/** VS Code's webviews run in its Electron's Chromium; older code-server builds too. */
const BROWSER_TARGET = ["chrome110"];

// Chunks are named by their content's hash: those of an earlier build must not be packaged.
for (const name of safeReaddir(join(root, "dist"))) {
  if (name.startsWith("chunk-") && name.endsWith(".js")) rmSync(join(root, "dist", name));
}

const builds = [
  esbuild.build({
    absWorkingDir: root,
    entryPoints: ["src/main.ts"],
    outdir: "dist",
    entryNames: "[name]",
    chunkNames: "chunk-[hash]",
    bundle: true,
    format: "esm",
    splitting: true,
    platform: "browser",
    target: BROWSER_TARGET,
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
  }),
  esbuild.build({
    absWorkingDir: root,
    entryPoints: ["src/style.css"],
    outfile: "dist/main.css",
    bundle: true,
    // The codicon font is shipped beside main.css under its own name (CSP: font-src).
    loader: { ".ttf": "file" },
    assetNames: "[name]",
    minify: true,
    target: BROWSER_TARGET,
    logLevel: "warning",
  }),
];

if (wanted.has("--tests")) {
  const tests = readdirSync(join(root, "test"))
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => join("test", name));
  builds.push(
    esbuild.build({
      absWorkingDir: root,
      entryPoints: tests,
      outdir: "dist/test",
      outExtension: { ".js": ".mjs" },
      bundle: true,
      format: "esm",
      platform: "node",
      target: ["node20"],
      // Dependencies load from node_modules at run time, as they are (jsdom cannot be bundled).
      packages: "external",
      sourcemap: "inline",
      logLevel: "warning",
    }),
  );
}

if (wanted.has("--dev")) {
  builds.push(
    esbuild.build({
      absWorkingDir: root,
      entryPoints: ["dev/fake-host.ts"],
      outfile: "dist/dev/fake-host.js",
      bundle: true,
      format: "iife",
      platform: "browser",
      target: BROWSER_TARGET,
      logLevel: "warning",
    }),
  );
}

await Promise.all(builds);

function safeReaddir(directory) {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

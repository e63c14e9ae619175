// Bundles the webview with esbuild.
//
//   node scripts/build.mjs           dist/main.js (browser, iife, minified) and dist/main.css
//   node scripts/build.mjs --tests   also the unit tests, to dist/test/*.test.mjs (node, esm)
//   node scripts/build.mjs --dev     also the dev page's fake host, to dist/dev/fake-host.js
//
// The extension's packaging copies dist/main.js and dist/main.css into extension/dist/webview/.

import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wanted = new Set(process.argv.slice(2));

/** VS Code's webviews run in its Electron's Chromium; older code-server builds too. */
const BROWSER_TARGET = ["chrome110"];

const builds = [
  esbuild.build({
    absWorkingDir: root,
    entryPoints: ["src/main.ts"],
    outfile: "dist/main.js",
    bundle: true,
    format: "iife",
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

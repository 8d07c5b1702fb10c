// Builds toolkit/_apps/vendor/ from the npm packages pinned in package.json (run ./build.sh, which installs them first):
//   ext-apps.js    `@modelcontextprotocol/ext-apps` as the global `McpApps`: an IIFE, so that `toolkit.UI` can put it
//                  inline in a page (a host serves a page as one HTML document). The App SDK (`McpApps.App`) and
//                  the host side (`McpApps.AppBridge`, which `toolkit preview` runs) share their dependencies, so
//                  one bundle holds both: 30 KB more in a page than the App alone (438 KB), one copy of zod and the client.
//   LICENSES.txt   the licence of every package with code in the bundle
//   VERSIONS.json  the versions bundled
// zod's error messages in every language but English are left out (its `locales` namespace is re-exported whole,
// 260 KB of the 650): the SDKs never pick another locale.
import { build } from "esbuild";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(here, "../../toolkit/_apps/vendor");
const englishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: "js",
    }));
  },
};

const bundles = [
  [
    "ext-apps.js",
    "McpApps",
    'export * from "@modelcontextprotocol/ext-apps";\n' +
      'export { AppBridge, buildAllowAttribute } from "@modelcontextprotocol/ext-apps/app-bridge";',
  ],
];
const packages = new Map();
for (const [file, globalName, contents] of bundles) {
  const result = await build({
    stdin: { contents, resolveDir: here, loader: "js" },
    bundle: true,
    minify: true,
    format: "iife",
    globalName,
    platform: "browser",
    target: "es2020",
    legalComments: "none",
    metafile: true,
    plugins: [englishOnly],
    outfile: join(out, file),
  });
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = input.match(/^(.*node_modules[\\/](@[^\\/]+[\\/])?[^\\/]+)/);
    if (match) packages.set(match[1], true);
  }
}

const licences = [];
const versions = {};
for (const dir of [...packages.keys()].sort()) {
  const meta = JSON.parse(readFileSync(join(here, dir, "package.json"), "utf8"));
  versions[meta.name] = meta.version;
  const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "license"].map((f) => join(here, dir, f)).find(existsSync);
  const text = file ? readFileSync(file, "utf8").trim() : `(no licence file in the package; package.json: ${meta.license})`;
  licences.push(`${"=".repeat(78)}\n${meta.name} ${meta.version} (${meta.license})\n${"=".repeat(78)}\n\n${text}\n`);
}
writeFileSync(join(out, "LICENSES.txt"), licences.join("\n"));
writeFileSync(join(out, "VERSIONS.json"), JSON.stringify(versions, null, 2) + "\n");
console.log(versions);

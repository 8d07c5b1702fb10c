#!/usr/bin/env bash
# Rebuild toolkit/_apps/vendor/ (the vendored MCP Apps SDK bundles) from npm: Node 20 or later, the registry reachable.
# The bundles are committed, so nothing else (CI included) needs Node; run this to move to a newer SDK (edit the
# versions in package.json first), then commit toolkit/_apps/vendor/.
set -euo pipefail
cd "$(dirname "$0")"
npm install --no-audit --no-fund --no-save --ignore-scripts >/dev/null
node build.mjs

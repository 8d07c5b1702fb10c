"""`toolkit install CLIENT FILE` against a temporary home folder: for every client, the entry written where the
client reads it, merged into a file that holds other things, `--dry-run` writing nothing; and then the server
started exactly as the written entry says (command, args, env) from another folder, and a tool called through it.

The command runs in this process (`Place.install`: `main` with the temporary home as HOME): what it writes and says
is all these tests read, and a process for each would only start the same interpreter again. One test runs the
command as a process and starts the server from what it wrote; the entries of the other clients are the same command
(their equality with `expected_entry` says so), so they are not started again for each client.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import help_text, toolkit_here

from toolkit import Client, TextContent
from toolkit.cli._install import config_path

TIMEOUT = 60.0
PYTHON = os.path.abspath(sys.executable)  # the venv's python by its own path: what a client must run
CHECKOUT = Path(__file__).resolve().parents[2]  # what pip installs toolkit from: this clone (not on the index yet)
SERVER = '''
import os

from toolkit import tool


@tool
def setting(key: str) -> str:
    """A variable of the server's environment."""
    return os.environ.get(key, "(unset)")
'''
# Where each client's file is under the temporary home (Linux: XDG_CONFIG_HOME unset) or the project folder.
USER_FILES = {
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
    "claude-code": ".claude.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".config/Code/User/mcp.json",
    "gemini": ".gemini/settings.json",
}
PROJECT_FILES = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "gemini": ".gemini/settings.json",
}
KEYS = {"vscode": "servers"}  # the others keep their servers under mcpServers
TYPED = {"claude-code", "vscode"}  # entries that say "type": "stdio"
WHERE = [(client, False) for client in USER_FILES] + [(client, True) for client in PROJECT_FILES]
IDS = [f"{client}-{'project' if project else 'user'}" for client, project in WHERE]


class Place:
    """A temporary home folder and a project folder holding the server, `weather.py`."""

    def __init__(self, root: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.capfd, self.monkeypatch = capfd, monkeypatch
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir()
        self.project.mkdir()
        (self.project / "weather.py").write_text(SERVER.lstrip(), encoding="utf-8")
        self.elsewhere = root / "elsewhere"  # where the client starts the server: not the project folder
        self.elsewhere.mkdir()

    def install(self, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
        """`toolkit install ARGS` run by `main` in this process, from the project folder, with the temporary home
        (and `path` as PATH if given)."""
        with self.monkeypatch.context() as patched:
            for name, value in self.environ(path).items():
                if value is None:
                    patched.delenv(name, raising=False)
                else:
                    patched.setenv(name, value)
            return toolkit_here("install", *args, cwd=self.project, capfd=self.capfd, monkeypatch=patched)

    def environ(self, path: str | None = None) -> dict[str, str | None]:
        """The variables the command runs with: the temporary home, no other place a client's file could be."""
        changes: dict[str, str | None] = {"HOME": str(self.home), "XDG_CONFIG_HOME": None, "APPDATA": None}
        changes["USERPROFILE"] = None
        if path is not None:
            changes["PATH"] = path
        return changes

    def install_in_a_process(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`python -m toolkit install ARGS` in the project folder, with the temporary home."""
        env = {**os.environ, **self.environ()}
        return subprocess.run(
            [sys.executable, "-m", "toolkit", "install", *args],
            capture_output=True,
            text=True,
            cwd=self.project,
            env={name: value for name, value in env.items() if value is not None},
            timeout=TIMEOUT,
            check=False,
        )

    def file(self, client: str, project: bool) -> Path:
        return self.project / PROJECT_FILES[client] if project else self.home / USER_FILES[client]


@pytest.fixture
def anyio_backend() -> str:
    """The server runs in its own process: the tests' side runs on one backend (each start takes a second)."""
    return "asyncio"


@pytest.fixture
def place(tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Place:
    return Place(tmp_path, capfd, monkeypatch)


def expected_entry(client: str, place: Place, env: dict[str, str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio"} if client in TYPED else {}
    entry.update(command=PYTHON, args=["-m", "toolkit", "serve", str(place.project / "weather.py")])
    if env:
        entry["env"] = env
    if client == "gemini":  # the one client whose entries say where to start the server: the file's folder
        entry["cwd"] = str(place.project)
    return entry


async def start_and_call(entry: dict[str, Any], cwd: Path) -> str:
    """Start the server as a client would, from the entry alone, and call its tool."""
    async with Client.stdio([entry["command"], *entry["args"]], env=entry.get("env"), cwd=cwd) as client:
        result = await client.call_tool("setting", {"key": "GREETING"})
    assert not result.is_error
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


@pytest.mark.parametrize(("client", "project"), WHERE, ids=IDS)
def test_the_entry_is_written_where_the_client_reads_it(place: Place, client: str, project: bool) -> None:
    run = place.install(client, "weather.py", "--env", "GREETING=hello", *(["--project"] if project else []))
    path = place.file(client, project)
    config = json.loads(path.read_text(encoding="utf-8"))

    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith(f"added 'weather' in {path} (restart ")
    # The same command for every client (what `expected_entry` writes): the next test starts it.
    assert config == {KEYS.get(client, "mcpServers"): {"weather": expected_entry(client, place, {"GREETING": "hello"})}}


@pytest.mark.anyio
async def test_the_entry_the_command_writes_starts_the_server_with_its_env_from_another_folder(place: Place) -> None:
    # As a process, as a user runs it; gemini's project file, the one entry that says a working directory too.
    run = place.install_in_a_process("gemini", "weather.py", "--env", "GREETING=hello", "--project")
    entry = json.loads(place.file("gemini", True).read_text(encoding="utf-8"))["mcpServers"]["weather"]

    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith(f"added 'weather' in {place.file('gemini', True)} (restart ")
    assert entry == expected_entry("gemini", place, {"GREETING": "hello"})
    assert await start_and_call(entry, place.elsewhere) == "hello"


@pytest.mark.parametrize(("client", "project"), WHERE, ids=IDS)
def test_the_entry_is_merged_into_a_file_and_everything_else_in_it_is_kept(
    place: Place, client: str, project: bool
) -> None:
    key = KEYS.get(client, "mcpServers")
    other = {"command": "node", "args": ["other.js"]}
    existing = {"theme": "dark", key: {"other": other, "weather": {"command": "old"}}, "zeta": [1, 2]}
    path = place.file(client, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(existing), encoding="utf-8")
    path.chmod(0o600)  # ~/.claude.json holds tokens: its mode stays
    run = place.install(client, "weather.py", "--name", "weather", *(["--project"] if project else []))
    config = json.loads(path.read_text(encoding="utf-8"))

    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"replaced 'weather' in {path}")
    assert config == {"theme": "dark", key: {"other": other, "weather": expected_entry(client, place)}, "zeta": [1, 2]}
    assert list(config) == ["theme", key, "zeta"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(("client", "project"), WHERE, ids=IDS)
def test_dry_run_prints_the_change_and_writes_nothing(place: Place, client: str, project: bool) -> None:
    path = place.file(client, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = '{"keep": true}\n'
    path.write_text(before, encoding="utf-8")
    run = place.install(client, "weather.py", "--dry-run", *(["--project"] if project else []))

    assert run.returncode == 0, run.stderr
    assert path.read_text(encoding="utf-8") == before
    assert run.stdout.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert '-{"keep": true}\n+{\n+  "keep": true,\n' in run.stdout
    assert f'+      "command": "{PYTHON}",\n' in run.stdout
    assert run.stderr == f"toolkit: --dry-run: {path} was not changed\n"


def test_dry_run_without_a_file_creates_nothing(place: Place) -> None:
    run = place.install("cursor", "weather.py", "--dry-run")
    assert run.returncode == 0, run.stderr
    assert not (place.home / ".cursor").exists()
    assert run.stdout.startswith(f"--- {place.home / '.cursor/mcp.json'}\n")


def test_a_file_that_is_not_json_is_left_alone_with_one_line(place: Place) -> None:
    path = place.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {,}', encoding="utf-8")
    run = place.install("cursor", "weather.py")

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith(f"toolkit: error: {str(path)!r} is not valid JSON (")  # then the parser's words
    assert run.stderr.endswith("line 1 column 17 (char 16)); fix it first: nothing was written\n")
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {,}'


def test_servers_that_are_not_an_object_are_refused(place: Place) -> None:
    path = place.project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"servers": []}', encoding="utf-8")
    run = place.install("vscode", "weather.py", "--project")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"toolkit: error: {str(path)!r}: 'servers' is not a JSON object; nothing was written\n"


@pytest.mark.anyio
async def test_mcp_json_is_printed_and_starts_the_server(place: Place) -> None:
    run = place.install("mcp-json", "weather.py:setting", "--env", "GREETING=hi", "--name", "w")
    config = json.loads(run.stdout)
    entry = config["mcpServers"]["w"]

    assert (run.returncode, run.stderr) == (0, "")
    assert entry["args"] == ["-m", "toolkit", "serve", f"{place.project / 'weather.py'}:setting"]
    assert await start_and_call(entry, place.elsewhere) == "hi"


def test_with_a_package_the_entry_runs_uv_with_toolkit_and_the_package(place: Place, tmp_path: Path) -> None:
    # A `uv` on PATH stands for the real one: the entry names it by its absolute path (clients have a short PATH).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uv = bin_dir / "uv"
    uv.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    uv.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    run = place.install("mcp-json", "weather.py", "--with", "httpx", "--with", "rich", path=path)
    entry = json.loads(run.stdout)["mcpServers"]["weather"]
    root = Path(__file__).resolve().parents[2]  # toolkit runs from this checkout: uv installs it from here
    withs = ["--with", str(root), "--with", "httpx", "--with", "rich"]

    assert run.returncode == 0, run.stderr
    assert entry == {
        "command": str(uv),
        "args": ["run", *withs, "python", "-m", "toolkit", "serve", str(place.project / "weather.py")],
    }


def test_uv_not_on_path_is_one_line(place: Place) -> None:
    run = place.install("cursor", "weather.py", "--uv", path=str(place.elsewhere))
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith("toolkit: error: --uv and --with run the server with uv, which is not on PATH")


def test_a_bad_env_pair_and_a_client_without_a_project_file_are_one_line(place: Place) -> None:
    bad_env = place.install("cursor", "weather.py", "--env", "NOVALUE")
    no_project = place.install("claude-desktop", "weather.py", "--project")
    assert (bad_env.returncode, bad_env.stderr) == (2, "toolkit: error: --env 'NOVALUE' is not KEY=VALUE\n")
    assert (no_project.returncode, no_project.stderr) == (
        2,
        "toolkit: error: Claude Desktop has no project configuration: install it without --project\n",
    )


@pytest.mark.parametrize(
    ("client", "platform", "environ", "expected"),
    [
        (
            "claude-desktop",
            "darwin",
            {"HOME": "/Users/a"},
            "/Users/a/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        (
            "claude-desktop",
            "win32",
            {"HOME": "/h", "APPDATA": "/h/Roaming"},
            "/h/Roaming/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "linux", {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/x/Claude/claude_desktop_config.json"),
        ("vscode", "darwin", {"HOME": "/Users/a"}, "/Users/a/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "win32", {"USERPROFILE": "/u"}, "/u/AppData/Roaming/Code/User/mcp.json"),
        ("vscode", "linux", {"HOME": "/h"}, "/h/.config/Code/User/mcp.json"),
        ("claude-code", "win32", {"USERPROFILE": "/u"}, "/u/.claude.json"),
        ("gemini", "darwin", {"HOME": "/Users/a"}, "/Users/a/.gemini/settings.json"),
    ],
)
def test_each_client_s_user_file_is_where_its_documentation_says_on_each_system(
    client: str, platform: str, environ: dict[str, str], expected: str
) -> None:
    assert config_path(client, platform=platform, environ=environ) == Path(expected)


def test_a_target_that_cannot_load_is_reported_before_anything_is_written(place: Place) -> None:
    (place.project / "broken.py").write_text("raise RuntimeError('no database')\n", encoding="utf-8")
    run = place.install("cursor", "broken.py")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == ("toolkit: error: cannot import 'broken.py': RuntimeError: no database (broken.py, line 1)\n")
    assert not (place.home / ".cursor").exists()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("[1, 2]", "{path!r} does not hold a JSON object; nothing was written"),
        ("directory", "cannot read {path!r}: Is a directory"),
        ("parent-is-a-file", "cannot read {path!r}: Not a directory"),
        (
            '{"mcpServers": {"caf\xe9": {}}}',  # written in Latin-1, not UTF-8
            "{path!r} is not UTF-8 text (byte 20: invalid continuation byte); fix it first: nothing was written",
        ),
    ],
)
def test_a_file_that_cannot_be_read_written_or_merged_is_one_line(place: Place, setup: str, message: str) -> None:
    path = place.home / ".gemini" / "settings.json"
    if setup == "directory":
        path.mkdir(parents=True)
    elif setup == "parent-is-a-file":
        path.parent.write_text("", encoding="utf-8")
    else:
        path.parent.mkdir()
        path.write_text(setup, encoding="latin-1")
    run = place.install("gemini", "weather.py")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == "toolkit: error: " + message.format(path=str(path)) + "\n"


@pytest.mark.parametrize("command", ["install", "dev"])
def test_the_help_of_install_and_dev_fits_in_80_columns(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = help_text(command, capsys, monkeypatch)
    assert [line for line in text.splitlines() if len(line) > 80] == []
    assert "TARGET is package.module, package.module:attr, path/to/file.py or\n" in text


@pytest.mark.anyio
async def test_with_dev_the_client_runs_toolkit_dev_and_it_serves(place: Place) -> None:
    run = place.install("claude-code", "weather.py", "--dev", "--env", "GREETING=dev")
    entry = json.loads(place.file("claude-code", False).read_text(encoding="utf-8"))["mcpServers"]["weather"]

    assert run.returncode == 0, run.stderr
    assert entry["args"] == ["-m", "toolkit", "dev", str(place.project / "weather.py")]
    assert await start_and_call(entry, place.elsewhere) == "dev"


def test_a_symlinked_file_stays_a_link_and_the_file_it_leads_to_is_written(place: Place) -> None:
    dotfiles = place.home / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "cursor-mcp.json"
    real.write_text('{"theme": "dark"}', encoding="utf-8")
    real.chmod(0o600)
    link = place.home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)
    run = place.install("cursor", "weather.py")

    assert run.returncode == 0, run.stderr
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert json.loads(real.read_text(encoding="utf-8")) == {
        "theme": "dark",
        "mcpServers": {"weather": expected_entry("cursor", place)},
    }
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(path.name for path in dotfiles.iterdir()) == ["cursor-mcp.json"]  # no temporary file left


def test_an_interpreter_that_cannot_start_the_server_is_refused(place: Place, tmp_path: Path) -> None:
    no_toolkit = tmp_path / "python"
    no_toolkit.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")  # an interpreter that imports nothing
    no_toolkit.chmod(0o755)
    missing = place.install("cursor", "weather.py", "--python", "/nonexistent/python")
    cannot = place.install("mcp-json", "weather.py", "--python", str(no_toolkit))
    works = place.install("mcp-json", "weather.py", "--python", PYTHON, "--dev")

    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == (
        "toolkit: error: --python '/nonexistent/python' is not an executable file; nothing was written\n"
    )
    assert not (place.home / ".cursor").exists()
    assert (cannot.returncode, cannot.stdout) == (2, "")
    assert cannot.stderr == (
        f"toolkit: error: {no_toolkit} cannot import toolkit, so the client could not start the server: "
        f"{no_toolkit} -m pip install '{CHECKOUT}' (or --uv); nothing was written\n"
    )
    assert works.returncode == 0, works.stderr
    assert json.loads(works.stdout)["mcpServers"]["weather"]["command"] == PYTHON


def test_dev_without_watchfiles_in_the_interpreter_is_refused_with_what_to_install(place: Place) -> None:
    hide = "import sys; sys.modules['watchfiles'] = None; from toolkit.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-c", hide, "install", "cursor", "weather.py", "--dev"],
        capture_output=True,
        text=True,
        cwd=place.project,
        env={**os.environ, "HOME": str(place.home)},
        timeout=TIMEOUT,
        check=False,
    )
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        f"toolkit: error: {PYTHON} cannot import watchfiles, so the client could not start the server: "
        f"{PYTHON} -m pip install -e {shlex.quote(f'{CHECKOUT}[reload]')} (or --uv); nothing was written\n"
    )
    assert not (place.home / ".cursor").exists()


def test_a_url_or_a_command_cannot_be_installed_and_says_what_to_do(place: Place) -> None:
    url = place.install("cursor", "http://127.0.0.1:9/mcp")
    command = place.install("cursor", "--stdio", "--", "python", "weather.py")

    assert (url.returncode, url.stdout) == (2, "")
    assert url.stderr == (
        "toolkit: error: 'http://127.0.0.1:9/mcp' is a URL: toolkit install writes a command that starts a server "
        'over stdio; add a remote server in the client\'s own settings (its entry with a "url"), or install the '
        "module that serves it\n"
    )
    assert (command.returncode, command.stdout) == (2, "")
    assert command.stderr == (
        "toolkit: error: toolkit install writes TARGET (path/to/file.py or a module), which it loads first, not "
        "--stdio -- COMMAND: print an entry with `toolkit install mcp-json TARGET` and edit its command and args\n"
    )
    assert not (place.home / ".cursor").exists()


def test_a_file_with_comments_is_left_alone_and_the_message_says_how_to_add_the_entry(place: Place) -> None:
    path = place.project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    text = '{\n  // my servers\n  "servers": {"a": {"command": "x", "url": "http://a//b"}} /* end */\n}\n'
    path.write_text(text, encoding="utf-8")
    run = place.install("vscode", "weather.py", "--project")

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        f"toolkit: error: {str(path)!r} has comments, which toolkit cannot keep: nothing was written; print the "
        "entry with `toolkit install mcp-json weather.py` and paste it into the file\n"
    )
    assert path.read_text(encoding="utf-8") == text


def test_replacing_an_entry_says_which_env_variables_it_drops(place: Place) -> None:
    first = place.install("cursor", "weather.py", "--env", "KEY1=a", "--env", "KEY2=b", "--env", "KEY3=c")
    again = place.install("cursor", "weather.py", "--env", "KEY2=z")
    config = json.loads((place.home / ".cursor" / "mcp.json").read_text(encoding="utf-8"))

    assert (first.returncode, again.returncode) == (0, 0), first.stderr + again.stderr
    assert again.stdout.startswith(
        f"replaced 'weather' (its env KEY1, KEY3 dropped: give --env again to keep them) in {place.home}/.cursor/"
    )
    assert config["mcpServers"]["weather"]["env"] == {"KEY2": "z"}


def test_replacing_an_entry_that_drops_one_env_variable_says_it(place: Place) -> None:
    first = place.install("cursor", "weather.py", "--env", "KEY1=a", "--env", "KEY2=b")
    again = place.install("cursor", "weather.py", "--env", "KEY2=z")

    assert (first.returncode, again.returncode) == (0, 0), first.stderr + again.stderr
    # Before: "give --env again to keep them", for one variable.
    assert again.stdout.startswith("replaced 'weather' (its env KEY1 dropped: give --env again to keep it) in ")


def test_numbers_are_written_back_as_they_were_read(place: Place) -> None:
    # As floats, 1e400 came back as Infinity (not JSON) and 0.10000000000000001 as 0.1.
    path = place.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"limits": [1e400, 0.10000000000000001, 2.50, -0.0], "count": 12345678901234567890}')
    run = place.install("cursor", "weather.py")
    text = path.read_text(encoding="utf-8")

    assert run.returncode == 0, run.stderr
    assert '"limits": [\n    1e400,\n    0.10000000000000001,\n    2.50,\n    -0.0\n  ],\n' in text
    assert json.loads(text, parse_constant=pytest.fail)["count"] == 12345678901234567890


def test_a_file_holding_nan_is_not_json_and_is_left_alone(place: Place) -> None:
    path = place.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"limit": NaN}')
    run = place.install("cursor", "weather.py")

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        f"toolkit: error: '{path}' is not valid JSON (NaN is not a JSON value); fix it first: nothing was written\n"
    )
    assert path.read_text(encoding="utf-8") == '{"limit": NaN}'


def test_a_hard_linked_file_is_written_in_place_and_every_name_sees_it(place: Place) -> None:
    path = place.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"theme": "dark"}', encoding="utf-8")
    path.chmod(0o600)
    backup = place.home / "mcp-backup.json"
    os.link(path, backup)
    run = place.install("cursor", "weather.py")

    assert run.returncode == 0, run.stderr
    assert os.path.samefile(path, backup)
    assert json.loads(backup.read_text(encoding="utf-8")) == {
        "theme": "dark",
        "mcpServers": {"weather": expected_entry("cursor", place)},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["mcp.json"]  # no temporary file left


def test_the_entry_says_where_to_start_the_server_where_the_client_allows_it(place: Place, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (place.project / "pkg").mkdir()
    (place.project / "pkg" / "__init__.py").write_text("")
    (place.project / "pkg" / "app.py").write_text(SERVER.lstrip(), encoding="utf-8")
    runs = [
        place.install("gemini", "weather.py", "--name", "by-file"),
        place.install("gemini", "weather.py", "--name", "by-cwd", "--cwd", str(data)),
        place.install("gemini", "pkg.app", "--name", "by-module"),
    ]
    refused = place.install("cursor", "weather.py", "--cwd", str(data))
    missing = place.install("gemini", "weather.py", "--cwd", str(tmp_path / "nowhere"))
    servers = json.loads((place.home / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]

    # Before: no working directory at all; a client started the server wherever it was.
    assert [run.returncode for run in runs] == [0, 0, 0], [run.stderr for run in runs]
    assert {name: entry["cwd"] for name, entry in servers.items()} == {
        "by-file": str(place.project),  # the file's folder
        "by-cwd": str(data),
        "by-module": str(place.project),  # the folder the module is imported from, as `python -m` does
    }
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.startswith("toolkit: error: --cwd: Cursor's configuration has no working directory ")
    assert (missing.returncode, missing.stderr) == (
        2,
        f"toolkit: error: --cwd {str(tmp_path / 'nowhere')!r} is not a directory; nothing was written\n",
    )
    assert not (place.home / ".cursor").exists()

"""toolkit as a user gets it: the sdist built from the repository, the wheel built from the sdist, installed into a
fresh virtual environment, and used from a folder with no source tree beside it.

The build is `python -m build` with the project's backend (hatchling, in build's isolated environment); the install
is pip's (this environment's pip, into the fresh one), with the `docs` extra the mkdocs plugin needs and pytest for the
pytest plugin (pip's cache serves them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import toolkit

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 600  # a build or an install, on a loaded machine; only a hang reaches it

PLUGIN_TEST = '''
import pytest

from toolkit import Server, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def toolkit_server() -> Server:
    return Server("calc", tools=[add])


def test_add(toolkit_tester):
    assert toolkit_tester.call("add", a=2, b=3).text == "5"


@pytest.mark.anyio
async def test_add_through_the_client(toolkit_client):
    assert (await toolkit_client.call_tool("add", {"a": 1, "b": 1})).text == "2"
'''


def run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Nothing of this environment leaks in: no PYTHONPATH, no virtual environment, no coverage of the test run.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "COVERAGE"))}
    return subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, cwd=cwd, env=env, timeout=TIMEOUT, check=False
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from it (build's default: so the sdist must hold what a build needs)."""
    out = tmp_path_factory.mktemp("dist")
    built = run(sys.executable, "-m", "build", "--outdir", out, ROOT, cwd=ROOT)
    assert built.returncode == 0, built.stderr
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed; its `bin` folder.

    The environment gets no pip of its own (ensurepip: 5 s): this one's pip installs into it (`--python`), resolving
    the wheel's requirements as the environment's own would. Nothing is byte-compiled at install (5 s for mkdocs and
    its themes): each module compiles when first imported, as a source install does.
    """
    folder = tmp_path_factory.mktemp("venv")
    assert run(sys.executable, "-m", "venv", "--without-pip", folder, cwd=folder).returncode == 0
    bin_dir = folder / ("Scripts" if sys.platform == "win32" else "bin")
    (wheel,) = dist.glob("*.whl")
    pip = (sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "-q", "--no-compile")
    installed = run(*pip, f"{wheel}[docs]", "pytest", cwd=folder)
    assert installed.returncode == 0, installed.stderr
    return bin_dir


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with an example in it, and no source tree."""
    shutil.copy(ROOT / "examples" / "calculator.py", tmp_path / "calculator.py")
    return tmp_path


def test_the_wheel_ships_py_typed_and_the_entry_points(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (entry_points,) = (name for name in names if name.endswith(".dist-info/entry_points.txt"))
        text = archive.read(entry_points).decode()

    assert "toolkit/py.typed" in names
    assert {name.split("/")[0] for name in names} == {"toolkit", f"mcp_toolkit-{toolkit.__version__}.dist-info"}
    assert text.split("\n\n") == [
        "[console_scripts]\ntoolkit = toolkit.cli:main",
        "[mkdocs.plugins]\ntoolkit-tools = toolkit.docs._mkdocs:ToolsPlugin",
        "[pytest11]\ntoolkit = toolkit.testing._plugin\n",
    ]


def test_the_sdist_holds_the_sources_and_tests_and_nothing_stray(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]

    assert {name.split("/")[0] for name in names} == {
        ".gitignore",  # hatchling keeps it, so that a build from the sdist ignores what the repository does
        "PKG-INFO",
        "README.md",
        "benchmarks",  # tests/test_hops.py imports it
        "docs",
        "examples",
        "mkdocs.yml",
        "pyproject.toml",
        "tests",
        "toolkit",
    }
    stray = ("node_modules", ".venv", "__pycache__", ".pyc", "benchmarks/results", ".mypy_cache", ".ci/")
    assert [name for name in names if any(part in name for part in stray)] == []
    assert "toolkit/py.typed" in names
    assert "tests/mcp_schema/2026-07-28.json" in names


def test_the_console_script_calls_a_tool_and_says_its_version(venv: Path, work: Path) -> None:
    called = run(venv / "toolkit", "call", "calculator.py", "add", "a=1", "b=2", cwd=work)
    version = run(venv / "toolkit", "--version", cwd=work)
    where = run(venv / "python", "-c", "import toolkit; print(toolkit.__file__)", cwd=work)

    assert (called.returncode, called.stdout, called.stderr) == (0, "3.0\n", "")
    assert (version.returncode, version.stdout) == (0, f"toolkit {toolkit.__version__}\n")
    assert Path(where.stdout.strip()).is_relative_to(venv.parent)  # the installed copy, not this tree


def test_the_pytest_plugin_provides_its_fixtures(venv: Path, work: Path) -> None:
    (work / "test_calc.py").write_text(PLUGIN_TEST, encoding="utf-8")

    tested = run(venv / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py", cwd=work)

    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "2 passed" in tested.stdout


def test_the_mkdocs_plugin_writes_the_tools_into_a_page(venv: Path, work: Path) -> None:
    (work / "mkdocs.yml").write_text("site_name: calc\nplugins:\n  - toolkit-tools\n", encoding="utf-8")
    (work / "docs").mkdir()
    (work / "docs" / "index.md").write_text("# Calculator\n\n::: toolkit-tools calculator.py\n", encoding="utf-8")

    built = run(venv / "mkdocs", "build", "-q", "--strict", "-d", "site", cwd=work)

    assert built.returncode == 0, built.stderr
    page = (work / "site" / "index.html").read_text(encoding="utf-8")
    assert "toolkit-tools" not in page
    tools = ["add", "divide", "combine", "summarize", "convert_distance", "round_money", "evaluate"]
    assert [name for name in tools if f"<code>{name}</code>" not in page] == []


def test_ruff_and_mypy_check_the_lowest_python_that_pyproject_declares() -> None:
    # The code must run on every version the package accepts: the linters read it as the oldest of them.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    lowest = re.search(r'^requires-python = ">=3\.(\d+)"$', text, re.MULTILINE)
    assert lowest is not None
    minor = lowest[1]

    assert re.findall(r'^target-version = "(.*)"$', text, re.MULTILINE) == [f"py3{minor}"]
    assert re.findall(r'^python_version = "(.*)"$', text, re.MULTILINE) == [f"3.{minor}"]
    assert f'"Programming Language :: Python :: 3.{minor}",' in text

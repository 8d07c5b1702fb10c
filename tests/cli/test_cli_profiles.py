"""`toolkit check --profile` and `toolkit docs --format openai|anthropic|gemini`: the report of rejected tools and its
status run for real in a subprocess, the rest read from `main` in the test's process (`in_process`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import ROOT, InProcess, toolkit

TOOLS = '''
from toolkit import tool


@tool
def search(query: str, when: "str | None" = None, limit: int = 10) -> list[str]:
    """Search."""
    return [query]


@tool(name="notes.add")
def add_note(text: str, tags: dict[str, str]) -> None:
    """Add a note."""
'''

PORTABLE = '''
from toolkit import tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "portable.py").write_text(PORTABLE, encoding="utf-8")
    return tmp_path


def test_check_profile_prints_one_line_per_problem_and_exits_1_when_a_tool_would_be_rejected(project: Path) -> None:
    run = toolkit("check", "tools.py", "--profile", "openai-strict", cwd=project)

    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    so = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
    assert lines == [
        f"search: inputSchema.properties.when: required: optional property 'when' [error, openai-strict/all-required, "
        f"auto-fixable with loss] ({so})",
        "search: inputSchema.properties.limit: default: default 10 [error, openai-strict/default, auto-fixable with "
        "loss] (openai-agents-python src/agents/strict_schema.py)",
        f"search: inputSchema.properties.limit: required: optional property 'limit' [error, "
        f"openai-strict/all-required, auto-fixable with loss] ({so})",
        "notes.add: name: name: 'notes.add' does not match ^[A-Za-z0-9_-]{1,64}$ [error, openai-strict/name, not "
        "auto-fixable] (https://platform.openai.com/docs/guides/function-calling#defining-functions)",
        f"notes.add: inputSchema.properties.tags: additionalProperties: an object with free-form keys [error, "
        f"openai-strict/open-map, not auto-fixable] ({so})",
        "5 problems in 2 tools for openai-strict; 3 auto-fixable (Server(schema_profile=...), "
        "tool.definition_for(...)); 2 rejected as served: notes.add (openai-strict), search (openai-strict)",
    ]


def test_check_takes_several_profiles_or_all_and_json(project: Path, in_process: InProcess) -> None:
    several = in_process("check", "tools.py", "--profile", "openai", "--profile", "anthropic", cwd=project)
    every = in_process(
        "check", "tools.py", "--profile", "all", "--profile", "openai-strict", "--format", "json", cwd=project
    )

    assert several.returncode == 1
    assert [line.split(" [error, ")[1].split(",")[0] for line in several.stdout.splitlines()[:-1]] == [
        "openai/name",
        "anthropic/name",
    ]
    report = json.loads(every.stdout)
    assert every.returncode == 1
    assert {p["profile"] for p in report["problems"]} == {
        "openai",
        "anthropic",
        "claude-desktop",
        "openai-strict",
    }  # gemini accepts both tools as they are; `all` leaves anthropic-strict out, and it was not named
    # `rejected` counts tool/profile pairs, the same count the text summary gives.
    assert (report["rejected"], report["rejected_tools"]) == (
        5,
        [
            {"tool": "notes.add", "profile": "anthropic"},
            {"tool": "notes.add", "profile": "claude-desktop"},
            {"tool": "notes.add", "profile": "openai"},
            {"tool": "notes.add", "profile": "openai-strict"},
            {"tool": "search", "profile": "openai-strict"},
        ],
    )
    assert next(p for p in report["problems"] if p["profile"] == "openai-strict") == {
        "profile": "openai-strict",
        "tool": "search",
        "path": "inputSchema.properties.when",
        "keyword": "required",
        "rule": "all-required",
        "detail": "optional property 'when'",
        "fix": "lossy",
        "rejects": True,
        "source": "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas",
    }


def test_the_text_and_json_reports_count_the_same_rejections(project: Path, in_process: InProcess) -> None:
    text = in_process("check", "tools.py", "--profile", "openai-strict", cwd=project)
    data = json.loads(
        in_process("check", "tools.py", "--profile", "openai-strict", "--format", "json", cwd=project).stdout
    )

    assert "; 2 rejected as served: notes.add (openai-strict), search (openai-strict)" in text.stdout
    assert (data["rejected"], len(data["problems"])) == (2, 5)


def test_check_exits_0_for_tools_every_provider_accepts(project: Path, in_process: InProcess) -> None:
    run = in_process("check", "portable.py", "--profile", "all", cwd=project)

    assert (run.returncode, run.stdout) == (0, "0 problems in 1 tool for " + ", ".join(NOT_STRICT) + "\n")


NOT_STRICT = ["openai", "gemini", "anthropic", "claude-desktop"]


def test_all_is_a_usable_gate_for_the_calculator_example(in_process: InProcess) -> None:
    run = in_process("check", "examples/calculator.py", "--profile", "all", cwd=ROOT)
    strict = in_process("check", "examples/calculator.py", "--profile", "all", "--profile", "openai-strict", cwd=ROOT)

    # summarize declares an output schema: Claude Desktop is warned about, not rejected (its source is a client
    # bug report, and toolkit sends the conforming structuredContent); the strict profiles are asked for by name.
    assert (run.returncode, run.stdout.splitlines()) == (
        0,
        [
            "summarize: outputSchema: outputSchema: the tool declares an output schema [warning, "
            "claude-desktop/output-schema, auto-fixable with loss] (anthropics/claude-code#80105)",
            "1 problem in 7 tools for openai, gemini, anthropic, claude-desktop; 1 auto-fixable "
            "(Server(schema_profile=...), tool.definition_for(...))",
        ],
    )
    assert strict.returncode == 1
    assert strict.stdout.splitlines()[-1].endswith(
        "; 2 rejected as served: evaluate (openai-strict), round_money (openai-strict)"
    )


def test_an_unknown_profile_is_a_usage_error(project: Path, in_process: InProcess) -> None:
    run = in_process("check", "tools.py", "--profile", "gpt-9", cwd=project)

    assert run.returncode == 2
    assert "unknown schema profile 'gpt-9'" in run.stderr


def test_docs_format_gives_each_providers_definitions(project: Path, in_process: InProcess) -> None:
    openai = json.loads(
        in_process("docs", "portable.py", "--format", "openai", "--profile", "openai-strict", cwd=project).stdout
    )
    gemini = json.loads(in_process("docs", "portable.py", "--format", "gemini", cwd=project).stdout)
    anthropic = json.loads(in_process("docs", "portable.py", "--format", "anthropic", cwd=project).stdout)
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }

    assert openai == [
        {"type": "function", "function": {"name": "add", "description": "Add.", "parameters": schema, "strict": True}}
    ]
    assert gemini == [{"name": "add", "description": "Add.", "parameters": schema}]
    assert anthropic == [{"name": "add", "description": "Add.", "input_schema": schema}]


def test_docs_format_warns_on_stderr_about_what_the_provider_would_still_reject(
    project: Path, in_process: InProcess
) -> None:
    run = in_process("docs", "tools.py", "--format", "openai", cwd=project)
    clean = in_process("docs", "portable.py", "--format", "openai", cwd=project)

    assert run.returncode == 0
    assert [d["function"]["name"] for d in json.loads(run.stdout)] == ["search", "notes.add"]
    assert run.stderr == (
        "toolkit: warning: openai would reject this definition: notes.add: name: name: 'notes.add' does not match "
        "^[A-Za-z0-9_-]{1,64}$ [error, openai/name, not auto-fixable] "
        "(https://platform.openai.com/docs/guides/function-calling#defining-functions)\n"
    )
    assert clean.stderr == ""


def test_docs_format_refuses_a_profile_of_another_provider(project: Path, in_process: InProcess) -> None:
    run = in_process("docs", "portable.py", "--format", "openai", "--profile", "gemini", cwd=project)

    assert run.returncode == 2
    assert "profile 'gemini' is not for openai" in run.stderr


def test_the_markdown_reference_has_a_providers_line_per_tool(project: Path, in_process: InProcess) -> None:
    text = in_process("docs", "tools.py", cwd=project).stdout

    assert [line for line in text.splitlines() if line.startswith("**Providers:**")] == [
        "**Providers:** `openai-strict` ok after 3 fixes · `openai` ok · `gemini` ok · `anthropic` ok · "
        "`anthropic-strict` ok after 1 fix · `claude-desktop` ok",
        "**Providers:** `openai-strict` rejected: name, open-map · `openai` rejected: name · `gemini` ok · "
        "`anthropic` rejected: name · `anthropic-strict` rejected: name, open-map · `claude-desktop` rejected: name",
    ]

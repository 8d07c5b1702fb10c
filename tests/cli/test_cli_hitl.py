"""`toolkit call` asks the person at the terminal: answers piped on stdin, questions on stderr, the result on stdout."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from cli_helpers import PYTHON, ROOT, outcome, serving, toolkit

SCRIPT = str(ROOT / "tests" / "servers" / "hitl_server.py")
SERVER = f"{SCRIPT}:build"


def call(*args: str, answers: str = "") -> subprocess.CompletedProcess[str]:
    """`toolkit call ARGS`, with `answers` for the questions it asks."""
    return toolkit("call", *args, answers=answers)


@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_a_form_is_filled_in_field_by_field(transport: str) -> None:
    target = [SERVER, "test_elicitation"] if transport == "memory" else ["--stdio", "test_elicitation"]
    command = ["--", PYTHON, SCRIPT] if transport == "stdio" else []
    run = call(*target, "message=Who are you?", *command, answers="ada\nada@example.org\n\n")
    assert (run.returncode, run.stdout) == (
        0,
        "User response: accept, {'username': 'ada', 'email': 'ada@example.org'}\n",
    )
    assert "? Who are you?" in run.stderr
    assert "username (string, required) - User's response: " in run.stderr


def test_a_confirmation_asks_once_and_yes_skips_it() -> None:
    declined = call(SERVER, "delete_file", "path=/tmp/x", answers="n\n")
    # An error result goes to stderr, on a line of its own: a piped answer is not echoed, so the prompt ends its line.
    assert outcome(declined) == (1, "", "? Delete /tmp/x? [y/N]: \nThe user declined to run delete_file.\n")
    accepted = call(SERVER, "delete_file", "path=/tmp/x", answers="y\n")
    assert (accepted.returncode, accepted.stdout) == (0, "deleted /tmp/x\n")
    yes = call("--yes", SERVER, "delete_file", "path=/tmp/x")
    assert (yes.returncode, yes.stdout) == (0, "deleted /tmp/x\n")


def test_an_answer_that_is_neither_yes_nor_no_is_asked_again() -> None:
    run = call(SERVER, "delete_file", "path=/tmp/x", answers="maybe\nyes\n")
    prompt = "? Delete /tmp/x? [y/N]: \n"
    assert outcome(run) == (0, "deleted /tmp/x\n", f"{prompt}  ! answer y or n; try again\n{prompt}")


def test_the_last_question_of_a_form_is_asked_again_until_it_is_a_d_or_c() -> None:
    run = call(SERVER, "test_elicitation", "message=Who?", answers="ada\nada@example.org\nok\nd\n")
    assert (run.returncode, run.stdout) == (0, "User response: decline, None\n")
    final = "  [a]ccept / [d]ecline / [c]ancel [a]: \n"
    assert run.stderr.endswith(f"{final}    ! answer a, d or c; try again\n{final}")


@pytest.mark.parametrize(
    "answers",
    ["", "ada\n", "ada\nada@example.org\n"],
    ids=["at the first field", "at the second field", "at the last question"],
)
def test_end_of_input_at_any_prompt_answers_cancel_and_says_so(answers: str) -> None:
    run = call(SERVER, "test_elicitation", "message=Who?", answers=answers)
    assert (run.returncode, run.stdout) == (0, "User response: cancel, None\n")
    assert run.stderr.endswith(": \n! input ended: answered cancel\n")


def test_end_of_input_at_a_confirmation_answers_cancel_and_says_so() -> None:
    run = call(SERVER, "delete_file", "path=/tmp/x")
    assert run.returncode == 1
    assert run.stderr.startswith("? Delete /tmp/x? [y/N]: \n! input ended: answered cancel\n")


def test_decline_is_available_at_any_prompt() -> None:
    declined = call(SERVER, "test_elicitation", "message=Who?", answers="ada\n:decline\n")
    assert declined.stdout == "User response: decline, None\n"


def test_the_piped_example_of_the_docs_runs_as_shown() -> None:
    # docs/human-in-the-loop.md, "In the terminal": the command, and what it prints on stderr and stdout.
    docs = (ROOT / "docs" / "human-in-the-loop.md").read_text(encoding="utf-8")
    block = docs.split("```console\n$ printf ", 1)[1].split("```", 1)[0]
    command, *shown = block.splitlines()
    answers, _, shown_call = command.partition(" | ")
    assert shown_call.startswith("toolkit call ")
    words = shlex.split(shown_call)[2:]
    run = call(*words, answers=shlex.split(answers)[0].replace("\\n", "\n"))
    assert run.returncode == 0
    assert [line.rstrip() for line in (run.stderr + run.stdout).splitlines()] == shown


def test_sampling_is_shown_and_fails_clearly() -> None:
    run = call(SERVER, "test_sampling", "prompt=What is 2+2?")
    # 2026-07-28 (what toolkit call speaks to a toolkit server): the client's own refusal ends the call.
    assert (run.returncode, run.stdout) == (2, "")
    assert "user: What is 2+2?" in run.stderr
    assert "toolkit call has no model to answer sampling requests" in run.stderr


def test_a_url_is_shown_and_declined_without_consent() -> None:
    run = call(SERVER, "connect_account", answers="n\n")
    assert (run.returncode, run.stdout) == (0, "decline False\n")
    assert "URL: https://example.com/connect" in run.stderr


@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_the_roots_are_the_current_directory_or_each_root_given(transport: str, tmp_path: Path) -> None:
    target = [SERVER, "sync_roots"] if transport == "memory" else ["--stdio", "sync_roots"]
    command = ["--", PYTHON, SCRIPT] if transport == "stdio" else []
    assert outcome(call(*target, *command)) == (0, f"{ROOT}\n", "")
    other = tmp_path / "other dir"
    other.mkdir()
    given = call("--root", str(tmp_path), "--root", str(other), *target, *command)
    assert outcome(given) == (0, f"{tmp_path} {other}\n", "")
    missing = call("--root", str(tmp_path / "nowhere"), *target, *command)
    assert outcome(missing) == (2, "", f"toolkit: error: --root {tmp_path / 'nowhere'}: no such file or directory\n")


def test_a_server_at_a_url_gets_no_roots_unless_a_root_is_given(tmp_path: Path) -> None:
    with serving(SERVER) as served:
        without = call(served.url, "sync_roots")
        given = call("--root", str(tmp_path), served.url, "sync_roots")

    # The client declares no roots: this machine's directory is not a remote server's to learn.
    assert outcome(without) == (
        2,
        "",
        "toolkit: error: the server refused the call: Server requires the roots capability for this request "
        "(tool 'sync_roots' asks the client) (code -32021)\n",
    )
    assert outcome(given) == (0, f"{tmp_path}\n", "")


def test_a_release_asks_its_form_and_confirmation_at_once_in_the_terminal() -> None:
    run = call(SERVER, "sync_release", answers="v2\n\ny\n")
    assert (run.returncode, run.stdout) == (0, f"released v2 from [{str(ROOT)!r}]\n")
    assert "? Release details?" in run.stderr
    assert "Publish the release?" in run.stderr

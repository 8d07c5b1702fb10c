"""`toolkit call` asks the person at the terminal: answers piped on stdin, questions on stderr, the result on stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(ROOT / "tests" / "servers" / "hitl_server.py")
SERVER = f"{SCRIPT}:build"
PYTHON = sys.executable


def toolkit(*args: str, answers: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [PYTHON, "-m", "toolkit", "call", *args],
        input=answers,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_a_form_is_filled_in_field_by_field(transport: str) -> None:
    target = [SERVER, "test_elicitation"] if transport == "memory" else ["--stdio", "test_elicitation"]
    command = ["--", PYTHON, SCRIPT] if transport == "stdio" else []
    run = toolkit(*target, "message=Who are you?", *command, answers="ada\nada@example.org\n\n")
    assert (run.returncode, run.stdout) == (
        0,
        "User response: accept, {'username': 'ada', 'email': 'ada@example.org'}\n",
    )
    assert "? Who are you?" in run.stderr
    assert "username (string, required) - User's response: " in run.stderr


def test_a_confirmation_asks_once_and_yes_skips_it() -> None:
    declined = toolkit(SERVER, "delete_file", "path=/tmp/x", answers="n\n")
    assert (declined.returncode, declined.stdout) == (1, "")  # an error result goes to stderr
    assert "? Delete /tmp/x? [y/N]: The user declined to run delete_file." in declined.stderr
    accepted = toolkit(SERVER, "delete_file", "path=/tmp/x", answers="y\n")
    assert (accepted.returncode, accepted.stdout) == (0, "deleted /tmp/x\n")
    yes = toolkit("--yes", SERVER, "delete_file", "path=/tmp/x")
    assert (yes.returncode, yes.stdout) == (0, "deleted /tmp/x\n")


def test_end_of_input_cancels_and_decline_is_available_at_any_prompt() -> None:
    cancelled = toolkit(SERVER, "test_elicitation", "message=Who?")
    assert (cancelled.returncode, cancelled.stdout) == (0, "User response: cancel, None\n")
    declined = toolkit(SERVER, "test_elicitation", "message=Who?", answers="ada\n:decline\n")
    assert declined.stdout == "User response: decline, None\n"


def test_sampling_is_shown_and_fails_clearly() -> None:
    run = toolkit(SERVER, "test_sampling", "prompt=What is 2+2?")
    # 2026-07-28 (what toolkit call speaks to a toolkit server): the client's own refusal ends the call.
    assert (run.returncode, run.stdout) == (2, "")
    assert "user: What is 2+2?" in run.stderr
    assert "toolkit call has no model to answer sampling requests" in run.stderr


def test_a_url_is_shown_and_declined_without_consent() -> None:
    run = toolkit(SERVER, "connect_account", answers="n\n")
    assert (run.returncode, run.stdout) == (0, "decline False\n")
    assert "URL: https://example.com/connect" in run.stderr

import functools

import pytest
from cli_helpers import InProcess, toolkit_here


@pytest.fixture
def in_process(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> InProcess:
    """`in_process(*args, cwd=...)`: `toolkit ARGS` run by `main` in this test's process (see `toolkit_here`)."""
    return functools.partial(toolkit_here, capfd=capfd, monkeypatch=monkeypatch)

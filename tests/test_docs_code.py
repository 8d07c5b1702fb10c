"""Every ```python block in docs/*.md and README.md runs as-is, each in a fresh namespace.

A block preceded by the line `<!-- no-run -->` is skipped (for example one that starts a stdio server).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    """`(id, code)` of each runnable block; the id is `file:line`."""
    found: list[tuple[str, str]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            if before == "<!-- no-run -->":
                continue
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(ROOT).as_posix()}:{line}", match.group(1)))
    return found


BLOCKS = blocks()


def test_the_docs_have_code_to_run() -> None:
    assert any(block_id.startswith("docs/tools.md:") for block_id, _ in BLOCKS)


@pytest.mark.parametrize("code", [code for _, code in BLOCKS], ids=[block_id for block_id, _ in BLOCKS])
def test_docs_code_block_runs(code: str, request: pytest.FixtureRequest) -> None:
    namespace = {"__name__": f"docs_block_{abs(hash(request.node.callspec.id))}"}
    exec(compile(code, request.node.callspec.id, "exec"), namespace)

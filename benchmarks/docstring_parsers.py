"""Compare griffe and docstring-parser as the engine behind `toolkit._definition.docstrings.parse_docstring`.

Prints a Markdown table: accuracy on the corpus in `tests/definition/test_docstrings.py` (share of docstrings whose
description and params both come out exactly as expected), import time, and parse time per docstring.

Both libraries get the same style detection and pre-processing, so only the section parsing differs.
griffe is measured through `parse_docstring` itself; docstring-parser through an adapter of the same shape.

Run: `.venv/bin/python benchmarks/docstring_parsers.py`
"""

from __future__ import annotations

import importlib.util
import inspect
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolkit._definition.docstrings import (  # noqa: E402
    DocstringStyle,
    ParsedDocstring,
    detect_style,
    join_lines,
    parse_docstring,
    separate_google_sections,
)

IMPORT_RUNS = 9
KEYWORD_SECTIONS = ("Keyword Args", "Keyword Arguments", "Other Args", "Other Arguments", "Other Parameters")
Parser = Callable[[str | None], ParsedDocstring]


def parse_with_docstring_parser(doc: str | None, style: DocstringStyle | None = None) -> ParsedDocstring:
    """`parse_docstring`, with docstring-parser doing the section parsing."""
    text = inspect.cleandoc(doc) if doc else ""
    style = style or detect_style(text)
    if style is None:
        return ParsedDocstring(description=text, params={})

    import docstring_parser
    from docstring_parser import google

    if style == "google":
        # Its Google parser knows fewer section titles than griffe's; teach it the keyword ones.
        keyword = [google.Section(title, "param", google.SectionType.MULTIPLE) for title in KEYWORD_SECTIONS]
        parser = google.GoogleParser([*google.DEFAULT_SECTIONS, *keyword])
        parsed = parser.parse(separate_google_sections(text))
    else:
        dp_style = (
            docstring_parser.DocstringStyle.NUMPYDOC if style == "numpy" else docstring_parser.DocstringStyle.REST
        )
        parsed = docstring_parser.parse(text, dp_style)
    return ParsedDocstring(
        description=(parsed.description or "").strip(),
        params={param.arg_name: join_lines(param.description or "") for param in parsed.params},
    )


def load_corpus() -> list[tuple[str, str | None, ParsedDocstring]]:
    """(id, docstring, expected) for every corpus function in the test module."""
    spec = importlib.util.spec_from_file_location(
        "docstring_corpus", ROOT / "tests" / "definition" / "test_docstrings.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building the class
    spec.loader.exec_module(module)
    return [(case.id, case.function.__doc__, case.expected) for case in module.CASES]


def accuracy(parse: Parser, corpus: list[tuple[str, str | None, ParsedDocstring]]) -> tuple[float, list[str]]:
    failures = []
    for case_id, doc, expected in corpus:
        try:
            ok = parse(doc) == expected
        except Exception:  # a crash counts as a miss, like a wrong answer
            ok = False
        if not ok:
            failures.append(case_id)
    return 1 - len(failures) / len(corpus), failures


def median_import_ms(module: str) -> tuple[float, float]:
    """Median cumulative import time, alone and after `import pydantic` (what a toolkit server has loaded)."""
    alone = []
    after_pydantic = []
    for _ in range(IMPORT_RUNS):
        run = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True
        )
        last = run.stderr.strip().splitlines()[-1]  # "import time: self | cumulative | name"
        alone.append(int(last.split("|")[1]) / 1000)
        code = f"import time, pydantic\nt = time.perf_counter()\nimport {module}\nprint(time.perf_counter() - t)"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        after_pydantic.append(float(run.stdout) * 1000)
    return statistics.median(alone), statistics.median(after_pydantic)


def microseconds_per_call(parse: Parser, docs: list[str | None]) -> float:
    """Best of 5 repeats of parsing every doc in `docs`, per doc."""
    for doc in docs:  # warm up: imports, regex caches
        parse(doc)
    number = max(1, 2000 // len(docs))
    best = min(timeit.repeat(lambda: [parse(doc) for doc in docs], number=number, repeat=5))
    return best / number / len(docs) * 1e6


def main() -> None:
    corpus = load_corpus()
    typical = next(doc for case_id, doc, _ in corpus if case_id == "google_body_and_sections")
    sectioned = [doc for _, doc, _ in corpus if detect_style(inspect.cleandoc(doc or ""))]
    candidates: list[tuple[str, str, str, Parser]] = [
        ("griffelib", version("griffelib"), "griffe", parse_docstring),
        ("docstring-parser", version("docstring-parser"), "docstring_parser", parse_with_docstring_parser),
    ]

    print(f"Python {sys.version.split()[0]}, {len(corpus)} corpus docstrings ({len(sectioned)} with sections)\n")
    print(
        "| library | accuracy on corpus | import alone (ms) | import after pydantic (ms) "
        "| typical Google docstring (µs) | corpus mean (µs) |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    misses = {}
    for name, library_version, module, parse in candidates:
        share, misses[name] = accuracy(parse, corpus)
        alone, incremental = median_import_ms(module)
        hits = round(share * len(corpus))
        print(
            f"| {name} {library_version} | {share:.0%} ({hits}/{len(corpus)}) | {alone:.1f} | {incremental:.1f} "
            f"| {microseconds_per_call(parse, [typical]):.1f} | {microseconds_per_call(parse, sectioned):.1f} |"
        )
    print()
    for name, failures in misses.items():
        print(f"{name} misses: {', '.join(failures) or 'none'}")


def version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


if __name__ == "__main__":
    main()

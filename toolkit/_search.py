"""Tool search: `ToolIndex`, an index over tool definitions that finds the tools a request needs, and says so when
none fits.

Pure Python, no dependencies: BM25F (BM25 over several fields, each with its weight and length normalization; Robertson
and Zaragoza 2009) over everything a definition holds: the name split into words (snake_case, camelCase, kebab-case,
dots), the title, the description, the parameters' names, descriptions and enum values, and the annotations. Text is
normalized once (NFKC, accents folded, case folded), split on Unicode word boundaries, and written without spaces
(Chinese, Japanese, Thai) is split into characters and character pairs, so that a query in any script finds what it
names. English words get a light stemmer (plurals, -ing, -ed, a final e), applied alike to queries and tools.

Relevance: a score measures the evidence a tool matches (BM25F's sum over the query's terms), in units of one term that
a single tool has, matched at full strength, squashed into 0 to 1 (one unit scores 0.5): the same scale on 10 tools as
on 1,000. `threshold` is the least a match must score. A query that shares no word with a tool, or only words many
tools have, finds nothing rather than the least bad tool: a search that always answers teaches a model to call the
wrong tool.

Updating is incremental: `update(tools)` analyses only the tools that are new or changed, and drops the removed ones;
the statistics a score uses (document frequencies, field lengths) are kept as sums, and the length normalization is
applied at query time, so no update rewrites the others.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from toolkit._protocol.types import ToolDefinition

__all__ = ["DEFAULT_THRESHOLD", "ToolIndex", "ToolMatch", "tokens"]

DEFAULT_THRESHOLD = 0.3
"""The least score a match must reach by default (tuned on MetaTool's tuning half: docs/search.md)."""

# The fields of a definition, their weights and their length normalization (BM25F's w_f and b_f). A name is short and
# says the most; parameters and annotations say what a tool takes and how it behaves, less what it is for.
_FIELDS = ("name", "title", "description", "parameters", "annotations")
_WEIGHTS = (3.0, 2.0, 1.0, 0.6, 0.3)
_B = (0.3, 0.3, 0.75, 0.75, 0.5)
_K1 = 1.2

_WORD = re.compile(r"[^\W_]+")
# camelCase and digit boundaries inside one word: getHTTPResponse2 -> get, HTTP, Response, 2
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_A-Za-z]+")
# Scripts written without spaces between words: split into characters and character pairs.
_UNSPACED = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f]+"
)
_STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been before being below between both but by can
    could did do does doing down during each few for from further get had has have having he her here hers him his how
    i if in into is it its itself just let like me more most my no nor not now of off on once only or other our ours out
    over own please same she should so some such than that the their them then there these they this those through to
    too under until up us very want was we were what when where which while who whom why will with would you your
    yours""".split()  # noqa: SIM905 - a paragraph of words reads better than 130 quoted ones
)


def _fold(text: str) -> str:
    """`text` in NFKC, accents removed, case folded: "Café" and "CAFE" are one word."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", bare).casefold()


class _Suffix(NamedTuple):
    """One rule of the stemmer: a word ending in `ending`, longer than `longer_than` letters and ending in none of
    `unless`, ends in `replacement` instead."""

    ending: str
    replacement: str = ""
    longer_than: int = 3
    unless: tuple[str, ...] = ()


# The first rule that applies is the only one: "searches" loses "es", never "s" too.
_SUFFIXES = (
    _Suffix("ies", "y", longer_than=4),  # queries -> query, never "ties" -> "ty"
    _Suffix("sses", "ss"),
    _Suffix("ches", "ch"),
    _Suffix("shes", "sh"),
    _Suffix("xes", "x"),
    _Suffix("zes", "z"),
    _Suffix("s", unless=("ss", "us", "is")),  # class, status and analysis are not plurals
    _Suffix("ing", longer_than=5),  # "thing" and "bring" stay
    _Suffix("ed", longer_than=4),  # "need" and "used" stay
)
_ENDINGS = tuple(rule.ending for rule in _SUFFIXES)
# A doubled final consonant left by -ing or -ed is undoubled ("running" -> "run"), except these (ll: "fill", ss, zz).
_DOUBLED_KEPT = frozenset("lsz")
_VOWELS = frozenset("aeiou")


def _stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, a final e, a doubled final consonant): enough to meet "searches"
    and "searching" with "search", never so much that two unrelated words meet. Words not in ASCII pass unchanged."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    word = _strip_suffix(word)
    if _ends_doubled(word):  # "running" -> "runn" -> "run"
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):  # "make" and "making" meet at "mak"
        word = word[:-1]
    return word


def _strip_suffix(word: str) -> str:
    """`word` rewritten by the first rule of `_SUFFIXES` that applies to it, if any."""
    if not word.endswith(_ENDINGS):  # most words: no rule to try
        return word
    for ending, replacement, longer_than, unless in _SUFFIXES:
        if word.endswith(ending) and len(word) > longer_than and not word.endswith(unless):
            return word[: -len(ending)] + replacement
    return word


def _ends_doubled(word: str) -> bool:
    """Whether a word of more than three letters ends in a doubled consonant other than l, s or z ("runn")."""
    last = word[-1]
    return len(word) > 3 and last == word[-2] and last not in _DOUBLED_KEPT and last not in _VOWELS


def tokens(text: str) -> list[str]:
    """The terms of `text` as the index and its queries see them: words split at case and digit changes, folded,
    stop words dropped, stemmed; characters and their pairs for scripts written without spaces."""
    terms: list[str] = []
    for word in _WORD.findall(text):
        for part in _CAMEL.findall(word) or (word,):
            folded = _fold(part)
            terms += [_stem(piece) for piece in _UNSPACED.split(folded) if _is_term(piece)]
            for run in _UNSPACED.findall(folded):
                terms += _characters_and_pairs(run)
    return terms


def _is_term(piece: str) -> bool:
    """Whether a folded piece of spaced text is worth a term: not empty, no stop word, no lone ASCII character."""
    if not piece or piece in _STOPWORDS:
        return False
    return len(piece) > 1 or not piece.isascii()


def _characters_and_pairs(run: str) -> list[str]:
    """The terms of a run of text written without spaces: each character, then each pair of neighbours."""
    return [*run, *(run[i : i + 2] for i in range(len(run) - 1))]


def _definition(item: Any) -> dict[str, Any]:
    definition = getattr(item, "definition", item)
    if isinstance(definition, ToolDefinition):
        return definition.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(definition, Mapping) and isinstance(definition.get("name"), str):
        return dict(definition)
    raise TypeError(f"ToolIndex takes tool definitions (a Tool, a ToolDefinition or a dict with a name), got {item!r}")


def _schema_text(schema: Any, out: list[str], depth: int = 0) -> None:
    """The words of a JSON schema a search should see: property names, descriptions, titles, enum and const values
    (nested objects and arrays too, a few levels deep)."""
    if not isinstance(schema, Mapping) or depth > 4:
        return
    out.extend(_own_words(schema))
    for name, sub in _properties(schema).items():
        out.append(str(name))
        _schema_text(sub, out, depth + 1)
    for sub in _subschemas(schema):
        _schema_text(sub, out, depth + 1)


def _own_words(schema: Mapping[str, Any]) -> list[str]:
    """The texts a schema says of itself: its title and description, its enum and const values that are strings."""
    said = [schema.get("title"), schema.get("description"), *(schema.get("enum") or ()), schema.get("const")]
    return [text for text in said if isinstance(text, str)]


def _properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema's properties by name (none when it has no properties mapping)."""
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _subschemas(schema: Mapping[str, Any]) -> list[Any]:
    """The schemas inside `schema` other than its properties': items, additional properties, alternatives, $defs."""
    found = [schema.get("items"), schema.get("additionalProperties")]
    for key in ("anyOf", "oneOf", "allOf"):
        found.extend(schema.get(key) or ())
    definitions = schema.get("$defs")
    found.extend(definitions.values() if isinstance(definitions, Mapping) else ())
    return found


_HINTS = {
    "readOnlyHint": (True, "read only"),
    "destructiveHint": (True, "destructive delete"),
    "idempotentHint": (True, "idempotent"),
    "openWorldHint": (True, "external web"),
}


def _annotation_text(annotations: Any) -> str:
    if not isinstance(annotations, Mapping):
        return ""
    words = [text for key, (when, text) in _HINTS.items() if annotations.get(key) is when]
    return " ".join(words)


def _fields(definition: Mapping[str, Any]) -> tuple[list[str], ...]:
    """A definition's terms, field by field (`_FIELDS`)."""
    name = str(definition.get("name", ""))
    annotations = definition.get("annotations")
    title = definition.get("title")
    if not title and isinstance(annotations, Mapping):
        title = annotations.get("title")
    parameters: list[str] = []
    _schema_text(definition.get("inputSchema"), parameters)
    description = definition.get("description")
    name_terms = tokens(name)
    whole = _fold(name)
    if len(name_terms) > 1 or (name_terms and name_terms[0] != whole):
        name_terms.append(whole)  # the name as typed finds it too
    return (
        name_terms,
        tokens(title) if isinstance(title, str) else [],
        tokens(description) if isinstance(description, str) else [],
        tokens(" ".join(parameters)),
        tokens(_annotation_text(annotations)),
    )


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One tool a search found."""

    name: str
    """The tool's name."""
    score: float
    """How well it matches, from 0 to 1 (0.5: as much as one word that only this tool has)."""
    definition: dict[str, Any]
    """The tool's definition, shaped as `tools/list` sends it."""


@dataclass(frozen=True, slots=True)
class _Doc:
    source: Any
    definition: dict[str, Any]
    lengths: tuple[int, ...]
    counts: dict[str, tuple[int, ...]]  # term -> its count in each field


class ToolIndex:
    """An index over tool definitions: `search` finds the tools a request needs, best first, and none when nothing
    fits.

    ```python
    from toolkit import ToolIndex

    index = ToolIndex(
        [
            {"name": "get_weather", "description": "Current weather for a city.", "inputSchema": {"type": "object"}},
            {"name": "send_email", "description": "Send an email.", "inputSchema": {"type": "object"}},
        ]
    )
    assert [match.name for match in index.search("what's the weather in Paris?")] == ["get_weather"]
    assert index.search("tell me a joke") == []
    ```

    Args:
        tools: What to index: a `Server` (its tools), `Tool`s, `ToolDefinition`s, or `tools/list`-shaped dicts
            (`name`, `description`, `inputSchema`, ...).
        threshold: The least score (0 to 1) a match must reach; higher finds less and wrongly less often
            (docs/search.md measures the trade-off).

    Raises:
        TypeError: an item that is no tool definition.
        ValueError: a threshold outside [0, 1], or two tools with one name.
    """

    def __init__(self, tools: Any = (), *, threshold: float = DEFAULT_THRESHOLD) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold!r}")
        self.threshold = threshold
        self._docs: dict[str, _Doc] = {}
        self._postings: dict[str, dict[str, tuple[int, ...]]] = {}
        # Per field: the sum of its lengths, and how many tools have it (its average is over those: tools without
        # parameters must not make one tool's parameters look long).
        self._totals = [0] * len(_FIELDS)
        self._filled = [0] * len(_FIELDS)
        self.update(tools)

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, name: object) -> bool:
        return name in self._docs

    @property
    def names(self) -> list[str]:
        """The names of the tools indexed, in the order they were added."""
        return list(self._docs)

    def update(self, tools: Any) -> int:
        """Index `tools` from now on (the same kinds `ToolIndex` takes): a tool new or changed since the last update is
        analysed, one gone is dropped, the others are left as they are.

        Returns:
            How many tools were analysed again (new or changed) or dropped.

        Raises:
            TypeError: an item that is no tool definition.
            ValueError: two tools with one name.
        """
        seen = _definitions_by_name(tools)
        gone = [name for name in self._docs if name not in seen]
        for name in gone:
            self.remove(name)
        fresh = [definition for name, definition in seen.items() if self._changed(name, definition)]
        for definition in fresh:
            self.add(definition)
        return len(gone) + len(fresh)

    def _changed(self, name: str, definition: Any) -> bool:
        """Whether `definition` is new to the index, or differs from the one indexed under `name`."""
        old = self._docs.get(name)
        if old is None:
            return True
        return old.source is not definition and old.source != definition

    def add(self, tool: Any) -> None:
        """Index one tool (replacing one of its name).

        Raises:
            TypeError: it is no tool definition.
        """
        source = getattr(tool, "definition", tool)
        definition = _definition(source)
        name = definition["name"]
        if name in self._docs:
            self.remove(name)
        fields = _fields(definition)
        counts: dict[str, list[int]] = {}
        for position, terms in enumerate(fields):
            for term, count in Counter(terms).items():
                counts.setdefault(term, [0] * len(_FIELDS))[position] = count
        doc = _Doc(
            source if isinstance(source, ToolDefinition) else json.loads(json.dumps(source, default=str)),
            definition,
            tuple(len(terms) for terms in fields),
            {term: tuple(values) for term, values in counts.items()},
        )
        self._docs[name] = doc
        for term, values in doc.counts.items():
            self._postings.setdefault(term, {})[name] = values
        self._count(doc, 1)

    def remove(self, name: str) -> bool:
        """Drop the tool `name` from the index; whether it was there."""
        doc = self._docs.pop(name, None)
        if doc is None:
            return False
        for term in doc.counts:
            postings = self._postings[term]
            del postings[name]
            if not postings:
                del self._postings[term]
        self._count(doc, -1)
        return True

    def _count(self, doc: _Doc, sign: int) -> None:
        for position, length in enumerate(doc.lengths):
            self._totals[position] += sign * length
            self._filled[position] += sign * (length > 0)

    def search(self, query: str, limit: int = 5, *, where: Callable[[str], bool] | None = None) -> list[ToolMatch]:
        """The tools that match `query`, best first: at most `limit`, only those scoring at least the threshold, so
        fewer or none when nothing fits.

        Args:
            query: What the caller needs, in words (any language; English words are stemmed).
            limit: The most matches to return.
            where: Only tools whose name it accepts (a caller's visibility, say); the others are never returned.

        Raises:
            ValueError: a limit under 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        scores = self.scores(query)
        ranked = sorted(scores.items(), key=lambda item: -item[1])
        matches: list[ToolMatch] = []
        # The best match must reach the threshold (is anything relevant?); the others, half of it (a request may need
        # several tools, and the second is often named in fewer words).
        floor = self.threshold
        for name, score in ranked:
            if score < floor or len(matches) == limit:
                break
            if where is None or where(name):
                matches.append(ToolMatch(name, round(score, 4), self._docs[name].definition))
                floor = self.threshold / 2
        return matches

    def scores(self, query: str) -> dict[str, float]:
        """Every tool that shares a term with `query`, with its score (0 to 1, before the threshold)."""
        terms = set(tokens(query))
        if not terms or not self._docs:
            return {}
        count = len(self._docs)
        averages = self._average_lengths()
        weights = {term: _idf(count, len(self._postings[term])) for term in terms if term in self._postings}
        found: dict[str, float] = {}
        for term, weight in weights.items():
            self._add_evidence(found, self._postings[term], weight, averages)
        # One unit of evidence: a term that one tool alone has, matched at full strength. Scores count units, so a
        # threshold means the same on 10 tools as on 1,000 (a rare term weighs more among more tools), and grow with
        # the evidence a query brings, never with the words no tool has.
        unit = (_K1 + 1.0) * _idf(count, 1)
        return {name: _squash(score / unit) for name, score in found.items()}

    def _add_evidence(
        self, found: dict[str, float], postings: Mapping[str, tuple[int, ...]], weight: float, averages: Sequence[float]
    ) -> None:
        """Add one query term's evidence to the score in `found` of each tool that has it (`postings`: the term's count
        in each field, by tool): BM25F's term frequency (each field's count, weighted by the field and normalized by
        its length against its average), saturated by k1, times the term's weight (its idf)."""
        for name, counts in postings.items():
            lengths = self._docs[name].lengths
            frequency = 0.0
            for position, value in enumerate(counts):
                if value:
                    norm = 1.0 - _B[position] + _B[position] * lengths[position] / averages[position]
                    frequency += _WEIGHTS[position] * value / norm
            found[name] = found.get(name, 0.0) + weight * frequency * (_K1 + 1.0) / (frequency + _K1)

    def _average_lengths(self) -> list[float]:
        """Each field's average length over the tools that have it (1 for a field no tool has)."""
        return [total / filled if filled else 1.0 for total, filled in zip(self._totals, self._filled, strict=True)]


def _definitions_by_name(tools: Any) -> dict[str, Any]:
    """The definitions of `tools` (as `ToolIndex` takes them) by name, as given.

    Raises:
        TypeError: an item that is no tool definition.
        ValueError: two tools with one name.
    """
    mapping = getattr(tools, "tools", None)
    items = list(mapping.values() if isinstance(mapping, Mapping) else tools)
    seen: dict[str, Any] = {}
    for item in items:
        definition = getattr(item, "definition", item)
        name = definition.get("name") if isinstance(definition, Mapping) else getattr(definition, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"ToolIndex takes tool definitions (a Tool, a ToolDefinition or a dict), got {item!r}")
        if name in seen:
            raise ValueError(f"two tools are named {name!r}")
        seen[name] = definition
    return seen


def _idf(count: int, df: int) -> float:
    """BM25's idf (the Lucene form, never negative)."""
    return math.log(1.0 + (count - df + 0.5) / (df + 0.5))


def _squash(units: float) -> float:
    """Units of evidence to a score between 0 and 1 (one unit: 0.5)."""
    return units / (1.0 + units)

"""A tool's output schema compiled once into a check of plain Python closures, with jsonschema for the rest.

`jsonschema` walks the schema for every value it checks, building a validator object per subschema: a 1 MB result
of 12,000 records cost about a second in pure Python (issue 23). `compile_schema` walks it once, at the first call of
the tool, into small closures that answer valid or not; the keywords it does not compile (and a schema that moves
its base URI, or names another draft) leave the whole schema to jsonschema, so the check is never less strict than
`jsonschema.Draft202012Validator`. The message of a value that fails is jsonschema's own (the first error by path):
failing is the rare case, and the message stays what it was.

Draft 2020-12 semantics, as jsonschema has them: `format` is an annotation (no format checker), `integer` takes a
float with no fraction, `true`/`false` are neither integers nor numbers, `enum` and `const` tell `1` from `true`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence, Sized
from typing import Any, NamedTuple

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import INTERNAL_ERROR

__all__ = ["Check", "OutputCheck", "OutputChecks", "compile_schema"]

Check = Callable[[Any], bool]
"""Whether a JSON value (as `json.loads` gives it) is valid."""

# Draft 2020-12 keywords that assert or apply and that `compile_schema` does not compile: any of them in a schema
# it reaches hands the whole schema to jsonschema.
_NOT_COMPILED = frozenset(
    {
        "$dynamicRef",
        "$recursiveRef",
        "contains",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "if",
        "multipleOf",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
# Keys that change how `$ref` resolves, anywhere in the document: jsonschema then, not a JSON pointer from the root.
_MOVES_REFS = frozenset({"$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"})
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


class _Unsupported(Exception):
    """The schema uses what `compile_schema` does not compile."""


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and value is not True and value is not False


def _is_integer(value: Any) -> bool:
    if isinstance(value, int):
        return value is not True and value is not False
    return isinstance(value, float) and value.is_integer()


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    "integer": _is_integer,
}


def equal(one: Any, two: Any) -> bool:
    """JSON equality: `1 == 1.0`, but `true != 1`; lists and objects compared item by item."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):  # a string is a Sequence, but no array
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return _equal_arrays(one, two)
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return _equal_objects(one, two)
    return _equal_scalars(one, two)


def _equal_arrays(one: Sequence[Any], two: Sequence[Any]) -> bool:
    """Two arrays are equal item by item."""
    return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))


def _equal_objects(one: Mapping[str, Any], two: Mapping[str, Any]) -> bool:
    """Two objects have the same keys, and equal values."""
    return len(one) == len(two) and all(key in two and equal(value, two[key]) for key, value in one.items())


def _equal_scalars(one: Any, two: Any) -> bool:
    """Numbers by value (`1 == 1.0`); a boolean equals only a boolean (`true != 1`); null only null."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)


def _bound(schema: Mapping[str, Any], key: str) -> float | None:
    value = schema.get(key)
    if value is None:
        return None
    if not _is_number(value):
        raise _Unsupported(key)
    return value  # type: ignore[no-any-return]


def _count(schema: Mapping[str, Any], key: str) -> int | None:
    value = schema.get(key)
    if value is None:
        return None
    if not _is_integer(value) or value < 0:
        raise _Unsupported(key)
    return int(value)


def _within(least: int | None, most: int | None) -> Callable[[Sized], bool] | None:
    """The check of a length (of a string, an array, an object) between `least` and `most` (None: no bound), or None
    with neither bound."""
    if least is None and most is None:
        return None
    low = 0 if least is None else least
    high = math.inf if most is None else most
    return lambda value: low <= len(value) <= high


def _type_names(names: Any) -> list[str]:
    """The names `type` gives (one, or a list), each a JSON type."""
    listed = [names] if isinstance(names, str) else names
    if not isinstance(listed, list) or not all(isinstance(n, str) and n in _TYPES for n in listed):
        raise _Unsupported("type")
    return listed


def _object_of(schema: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The object a keyword takes (`properties`, `patternProperties`); empty when it is absent."""
    value = schema.get(key, {})
    if not isinstance(value, dict):
        raise _Unsupported(key)
    return value


def _required(schema: Mapping[str, Any]) -> list[str]:
    """The names `required` lists; empty when it is absent."""
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise _Unsupported("required")
    return required


class _PerType(NamedTuple):
    """The checks of the keywords that apply to one type of value only (None: no such keyword in the schema)."""

    on_object: Check | None
    on_array: Check | None
    on_string: Check | None
    on_number: Check | None

    @property
    def empty(self) -> bool:
        """No keyword of any type."""
        return self.on_object is None and self.on_array is None and self.on_string is None and self.on_number is None

    def only(self, type_name: Any) -> Check | None:
        """The usual shape, in one closure: `"type": "object"` with its properties, `"type": "array"` with its
        items; None for any other."""
        on_object, on_array = self.on_object, self.on_array
        if type_name == "object" and on_object is not None:
            return lambda value: isinstance(value, dict) and on_object(value)
        if type_name == "array" and on_array is not None:
            return lambda value: isinstance(value, list) and on_array(value)
        return None


class _Compiler:
    """Compiles the subschemas of one document; a `$ref` is a JSON pointer from its root, compiled once."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise _Unsupported("a schema is an object or a boolean")
        if _NOT_COMPILED & schema.keys():
            raise _Unsupported(sorted(_NOT_COMPILED & schema.keys())[0])
        return (
            _all(
                [
                    check
                    for check in (
                        self._typed(schema),
                        self._ref(schema.get("$ref")),
                        self._choice(schema),
                        self._combined(schema),
                    )
                    if check is not None
                ]
            )
            or _always
        )

    def _type(self, names: Any) -> Check | None:
        """`type`: one name or several (any of them); None when absent."""
        if names is None:
            return None
        predicates = [_TYPES[n] for n in _type_names(names)]
        if len(predicates) == 1:
            return predicates[0]
        return lambda value: any(predicate(value) for predicate in predicates)

    def _ref(self, ref: Any) -> Check | None:
        if ref is None:
            return None
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise _Unsupported("$ref")
        found = self.refs.get(ref)
        if found is not None:
            return found
        compiled: list[Check] = []

        def later(value: Any) -> bool:  # a recursive definition reaches itself through this
            return compiled[0](value)

        self.refs[ref] = later
        compiled.append(self.compile(_pointer(self.root, ref)))
        self.refs[ref] = compiled[0]
        return compiled[0]

    def _choice(self, schema: Mapping[str, Any]) -> Check | None:
        checks = []
        if "enum" in schema:
            options = schema["enum"]
            if not isinstance(options, list):
                raise _Unsupported("enum")
            checks.append(_enum(options))
        if "const" in schema:
            const = schema["const"]
            checks.append(lambda value: equal(value, const))
        return _all(checks)

    def _combined(self, schema: Mapping[str, Any]) -> Check | None:
        checks = []
        for key in ("allOf", "anyOf", "oneOf"):
            if key in schema:
                subs = schema[key]
                if not isinstance(subs, list) or not subs:
                    raise _Unsupported(key)
                compiled = [self.compile(sub) for sub in subs]
                checks.append(_COMBINE[key](compiled))
        if "not" in schema:
            negated = self.compile(schema["not"])
            checks.append(lambda value: not negated(value))
        return _all(checks)

    def _typed(self, schema: Mapping[str, Any]) -> Check | None:
        """`type`, and the keywords that apply to one type of value only; one closure for a single container type."""
        kind = self._type(schema.get("type"))
        per_type = _PerType(self._object(schema), self._array(schema), _string(schema), _number(schema))
        if per_type.empty:
            return kind
        only = per_type.only(schema.get("type"))
        if only is not None:
            return only
        by_type = _by_type(*per_type)
        return by_type if kind is None else _all([kind, by_type])

    def _object(self, schema: Mapping[str, Any]) -> Check | None:
        """The keywords of an object (its properties by name and by pattern, the additional ones, `required`, how many
        it has) in one check; None when they check nothing."""
        properties, patterns = _object_of(schema, "properties"), _object_of(schema, "patternProperties")
        required = _required(schema)
        within = _within(_count(schema, "minProperties"), _count(schema, "maxProperties"))
        subs = {name: self.compile(sub) for name, sub in properties.items()}
        by_pattern = [(_regex(pattern), self.compile(sub)) for pattern, sub in patterns.items()]
        extra = self.compile(schema["additionalProperties"]) if "additionalProperties" in schema else None
        walk = _walker(subs, by_pattern, extra)
        if walk is None and within is None and not required:
            return None

        def check(value: dict[str, Any]) -> bool:
            if within is not None and not within(value):
                return False
            for name in required:
                if name not in value:
                    return False
            return walk is None or walk(value)

        return check

    def _array(self, schema: Mapping[str, Any]) -> Check | None:
        prefix = schema.get("prefixItems", [])
        if not isinstance(prefix, list):
            raise _Unsupported("prefixItems")
        walk = _items(
            [self.compile(sub) for sub in prefix], self.compile(schema["items"]) if "items" in schema else None
        )
        within = _within(_count(schema, "minItems"), _count(schema, "maxItems"))
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise _Unsupported("uniqueItems")
        if walk is None and within is None and not unique:
            return None

        def check(value: list[Any]) -> bool:
            if within is not None and not within(value):
                return False
            if unique and not _unique(value):
                return False
            return walk is None or walk(value)

        return check


def _by_type(
    on_object: Check | None, on_array: Check | None, on_string: Check | None, on_number: Check | None
) -> Check:
    """Each group of keywords behind one `isinstance`: a keyword does not apply to a value of another type."""

    def check(value: Any) -> bool:
        if isinstance(value, dict):
            return on_object is None or on_object(value)
        if isinstance(value, list):
            return on_array is None or on_array(value)
        if isinstance(value, str):
            return on_string is None or on_string(value)
        if on_number is not None and _is_number(value):
            return on_number(value)
        return True

    return check


def _walker(
    known: Mapping[str, Check], by_pattern: list[tuple[re.Pattern[str], Check]], extra: Check | None
) -> Check | None:
    """The check of an object's properties: by name, by pattern, and the additional ones; None when none is checked."""
    if extra is _always:
        extra = None
    checked = {name: sub for name, sub in known.items() if sub is not _always}
    if not checked and not by_pattern and extra is None:
        return None
    if not by_pattern and extra is None:  # the usual shape: named properties only
        return _named(tuple(checked.items()))
    return _walk_all(checked, known, by_pattern, extra)


def _walk_all(
    checked: Mapping[str, Check],
    known: Mapping[str, Check],
    by_pattern: list[tuple[re.Pattern[str], Check]],
    extra: Check | None,
) -> Check:
    """The check of every property of an object, each by its name, the patterns it matches, or as an additional one."""
    joined = _regex("|".join(pattern.pattern for pattern, _ in by_pattern)) if by_pattern else None

    def walk(value: dict[str, Any]) -> bool:
        for name, item in value.items():
            sub = checked.get(name)
            if sub is not None and not sub(item):
                return False
            for pattern, pattern_sub in by_pattern:
                if pattern.search(name) and not pattern_sub(item):
                    return False
            # jsonschema's rule for what is additional: no property of that name, no match of the joined patterns.
            additional = name not in known and not (joined is not None and joined.search(name))
            if additional and extra is not None and not extra(item):
                return False
        return True

    return walk


def _named(named: tuple[tuple[str, Check], ...]) -> Check:
    def walk(value: dict[str, Any]) -> bool:
        for name, sub in named:  # noqa: SIM110 (a loop: `all()` over a generator cost half as much again, measured)
            if name in value and not sub(value[name]):
                return False
        return True

    return walk


def _items(firsts: list[Check], rest: Check | None) -> Check | None:
    """The check of an array's items: the first ones each by its own schema (`prefixItems`), the rest by `items`."""
    if rest is _always:
        rest = None
    if not firsts and rest is None:
        return None

    def walk(value: list[Any]) -> bool:
        for item, sub in zip(value, firsts, strict=False):
            if not sub(item):
                return False
        if rest is not None:
            for item in value[len(firsts) :] if firsts else value:
                if not rest(item):
                    return False
        return True

    return walk


def _string(schema: Mapping[str, Any]) -> Check | None:
    within = _within(_count(schema, "minLength"), _count(schema, "maxLength"))
    pattern = _regex(schema["pattern"]) if "pattern" in schema else None
    if within is None and pattern is None:
        return None

    def check(value: str) -> bool:
        if within is not None and not within(value):
            return False
        return pattern is None or pattern.search(value) is not None

    return check


def _number(schema: Mapping[str, Any]) -> Check | None:
    low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
    above, below = _bound(schema, "exclusiveMinimum"), _bound(schema, "exclusiveMaximum")
    if low is None and high is None and above is None and below is None:
        return None

    def check(value: float) -> bool:
        return not (
            (low is not None and value < low)
            or (high is not None and value > high)
            or (above is not None and value <= above)
            or (below is not None and value >= below)
        )

    return check


def _every(checks: list[Check]) -> Check:
    return lambda value: all(check(value) for check in checks)


def _some(checks: list[Check]) -> Check:
    return lambda value: any(check(value) for check in checks)


def _one(checks: list[Check]) -> Check:
    return lambda value: sum(1 for check in checks if check(value)) == 1


_COMBINE: dict[str, Callable[[list[Check]], Check]] = {"allOf": _every, "anyOf": _some, "oneOf": _one}


_TRUE, _FALSE = object(), object()


def _unique(items: list[Any]) -> bool:
    """No two items equal, as jsonschema decides it: sorted neighbours when the items sort, else every pair.

    `true` and `false` stand apart from `1` and `0` (only at the top level, as in jsonschema).
    """
    keyed: list[Any] = [_TRUE if item is True else _FALSE if item is False else item for item in items]
    try:
        ordered = sorted(keyed)
    except (TypeError, NotImplementedError):
        return not any(equal(keyed[i], keyed[j]) for i in range(len(keyed)) for j in range(i))
    return not any(equal(a, b) for a, b in itertools.pairwise(ordered))


def _enum(options: list[Any]) -> Check:
    if options and all(isinstance(option, str) for option in options):
        strings = frozenset(options)
        return lambda value: isinstance(value, str) and value in strings
    return lambda value: any(equal(option, value) for option in options)


def _all(checks: list[Check]) -> Check | None:
    """All of `checks`, or None for none; two (the common case: a type and its keywords) without a generator."""
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    return lambda value: all(check(value) for check in checks)


def _regex(pattern: Any) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise _Unsupported("pattern")
    try:
        return re.compile(pattern)
    except re.error as exc:  # jsonschema raises it on the first value; so does the fallback
        raise _Unsupported("pattern") from exc


def _pointer(root: Any, ref: str) -> Any:
    """The subschema a local `$ref` names: a JSON pointer (RFC 6901) from the document's root."""
    from urllib.parse import unquote

    node = root
    for raw in ref[2:].split("/") if ref != "#" else ():
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise _Unsupported("$ref")
    return node


def _moves_refs(schema: Any) -> bool:
    """Whether any object of the document has a key that moves how `$ref` resolves (a property name counts too)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if _MOVES_REFS & node.keys() or node.get("$schema", _DRAFT) != _DRAFT:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def compile_schema(schema: Any) -> Check | None:
    """Compile a JSON Schema (draft 2020-12) into a check, or None when it uses what is not compiled here.

    Compiled: `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`, `patternProperties`,
    `minProperties`, `maxProperties`, `items`, `prefixItems`, `minItems`, `maxItems`, `uniqueItems`, `minLength`,
    `maxLength`, `pattern`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `allOf`, `anyOf`,
    `oneOf`, `not` and local `$ref`s (recursive ones too); annotations (`title`, `description`, `format`,
    `default`, ...) and unknown keywords are ignored, as jsonschema ignores them.
    """
    if _moves_refs(schema):
        return None
    try:
        return _Compiler(schema).compile(schema)
    except (_Unsupported, RecursionError):
        return None


class OutputCheck:
    """One tool's output schema, compiled once: `first_error` on each result."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._compiled = compile_schema(schema)
        self._validator: Any = None

    def first_error(self, value: Any) -> str | None:
        """The message of the first error (by path) in `value`, or None when it matches the schema."""
        if self._compiled is not None:
            try:
                if self._compiled(value):
                    return None
            except RecursionError:  # a value nested deeper than the stack: jsonschema says what it says of it
                pass
        if self._validator is None:
            import jsonschema

            self._validator = jsonschema.Draft202012Validator(self._schema)
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        return str(errors[0].message) if errors else None


class OutputChecks:
    """The `outputSchema` of each tool a client listed, each compiled once (at the tool's first result), and the check
    of a result against it (`structuredContent` needed, and matching).

    Without `jsonschema` (the optional `validation` extra) nothing is checked, and the tools are not listed to learn
    their schemas either.

    Args:
        list_tools: Lists the server's tools (`Client.list_tools`, which tells `learn` each one's schema).
    """

    def __init__(self, list_tools: Callable[[], Awaitable[Any]]) -> None:
        self._list_tools = list_tools
        self._schemas: dict[str, dict[str, Any] | None] = {}
        self._checks: dict[str, OutputCheck] = {}
        self._available: bool | None = None  # jsonschema importable; looked up on the first call

    def learn(self, name: str, schema: dict[str, Any] | None) -> None:
        """Note a listed tool's `outputSchema`."""
        self._schemas[name] = schema

    def forget(self) -> None:
        """The server's tool list changed: the tools are listed again before their next result is checked, each
        against its schema as listed then (a tool of the same name may return another shape now)."""
        self._schemas.clear()
        self._checks.clear()

    async def check(self, name: str, structured: Any) -> None:
        """Check a result's `structuredContent` (None when it has none) against the tool's schema, if it has one (the
        tools are listed to learn it, the first time).

        Raises:
            ProtocolError: -32603 when the tool has an `outputSchema` and the result has no `structuredContent`, or
                one that does not match it.
        """
        if self._available is None:
            self._available = _can_import_jsonschema()
        if not self._available:  # without jsonschema nothing can be checked: do not fetch the schemas either
            return
        if name not in self._schemas:
            await self._list_tools()
        schema = self._schemas.get(name)
        if schema is None:
            return
        if structured is None:
            raise ProtocolError(INTERNAL_ERROR, f"tool {name!r} has an outputSchema but returned no structuredContent")
        check = self._checks.get(name)
        if check is None:  # compiled once per tool: jsonschema walking a 1 MB result cost a second (issue 23)
            check = self._checks[name] = OutputCheck(schema)
        error = check.first_error(structured)
        if error is not None:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"tool {name!r} returned structuredContent that does not match its outputSchema: {error}",
            )


def _can_import_jsonschema() -> bool:
    """Whether `jsonschema` (the optional `validation` extra) can be imported."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return False
    return True

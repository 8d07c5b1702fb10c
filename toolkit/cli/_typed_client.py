"""`toolkit client`: a typed Python module for a server's tools, from their schemas.

One class wraps a connected `toolkit.Client`; each tool is an async method whose keyword parameters come from its
`inputSchema` and whose return type from its `outputSchema`: objects become `TypedDict`s, enums `Literal`s, arrays
lists, `anyOf` unions; what JSON Schema says and Python's types cannot (a `not`, a tuple's positions) is `Any`. A
tool without an `outputSchema` returns its `CallToolResult`. The module is written to pass `mypy --strict` and
ruff as it is, so that it can be committed and checked for drift (`--check`).
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import textwrap
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ._common import CommandError, data_on_stdout, deliver, read_server, tools_payload

if TYPE_CHECKING:
    from toolkit import Client

__all__ = ["render_client", "write_client"]

_WIDTH = 120  # the line length ruff checks (pyproject.toml): every line written fits in it
_INLINE_LITERAL = 60  # a longer Literal gets a name of its own
_MAX_DEPTH = 32
_MAX_INDENT = 16  # the most indent a docstring line keeps from a description
_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_TOOLKIT_NAMES = ("CallToolResult", "Client", "OutputMismatchError", "ToolError")
_RESERVED = {"self", "arguments", "result"}  # names the generated methods use themselves
_METHODS = {"client", "_call", "_structured"}  # the class's own attributes
_IMPORTED = {"annotations", "json", "Any", "Literal", "cast", "NotRequired", "TypedDict", *_TOOLKIT_NAMES}


@data_on_stdout
def write_client(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit client`: write (or, with `--check`, compare) the typed client module of the server's tools."""
    if args.class_name is not None and (not args.class_name.isidentifier() or keyword.iskeyword(args.class_name)):
        raise CommandError(f"--class-name {args.class_name!r} is not a Python class name")

    async def read(client: Client) -> tuple[str, list[dict[str, Any]]]:
        return (client.server_info.name if client.server_info else "server"), await tools_payload(client)

    name, tools = read_server(args, read)
    text = render_client(tools, server=name, class_name=args.class_name)
    return deliver(text, args, out)


def render_client(tools: Sequence[Mapping[str, Any]], *, server: str, class_name: str | None = None) -> str:
    """The source of a typed client module for `tools` (the `tools` of a `tools/list` result).

    The text depends on the tools and the server's name only, never on how the command named its target (a relative
    or absolute path, a URL with the port of the day), so that `--check` passes wherever CI runs it.

    Args:
        tools: The tool definitions, as JSON.
        server: The server's name, for the docstrings and the default class name.
        class_name: The client class's name (default: the server's name in CapWords, then `Client`).
    """
    cls = class_name or _class_name(_camel(server) or "Tools") + "Client"
    module = _Module({cls, *_IMPORTED})
    module.titles = _titles(tools)
    for tool in tools:  # a first pass names every type, so that no parameter shadows one in a method's body
        module.method(tool, set(_METHODS))
    taken = set(_METHODS)
    methods = [module.method(tool, taken) for tool in tools]
    return "\n".join([*_head(module, server), *_client_class(cls, server, methods)]) + "\n"


def _head(module: _Module, server: str) -> list[str]:
    """The module's docstring, its imports, and the types its methods use."""
    typing_names = sorted(module.typing | {"Any"} | ({"cast"} if module.casts else set()))
    extensions = sorted(module.extensions)
    header = (
        f"Typed calls to the tools of `{server}`: written by `toolkit client`.\n\n"
        "Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is "
        "up to date)."
    )
    lines = [
        *_docstring(header, 0),
        "",
        "from __future__ import annotations",
        "",
        "import json",
        f"from typing import {', '.join(typing_names)}",
        "",
    ]
    if extensions:
        lines += [f"from typing_extensions import {', '.join(extensions)}", ""]
    lines.append(f"from toolkit import {', '.join(_TOOLKIT_NAMES)}")
    for i, block in enumerate(module.blocks):
        # After the imports, isort's one blank line before an assignment; two around a class.
        lines += ["", *block] if i == 0 and not block[0].startswith("class ") else ["", "", *block]
    return lines


def _client_class(cls: str, server: str, methods: list[list[str]]) -> list[str]:
    """The client class: one method a tool, then the two that call and check."""
    lines = [
        "",
        "",
        f"class {cls}:",
        *_docstring(f"The tools of {server!r}, called through a connected `toolkit.Client`.", 4),
        "",
        "    def __init__(self, client: Client) -> None:",
        "        self.client = client",
    ]
    for method in methods:
        lines += ["", *method]
    return lines + _CALLING


_CALLING = [
    "",
    "    async def _call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:",
    "        result = await self.client.call_tool(name, arguments)",
    "        if result.is_error:",
    '            raise ToolError(result.text or f"{name} failed")',
    "        return result",
    "",
    "    async def _structured(self, name: str, arguments: dict[str, Any], *, wrapped: bool = False) -> Any:",
    "        result = await self._call(name, arguments)",
    "        content = result.structured_content",
    "        if content is None and wrapped and not self.client.modern and result.text is not None:",
    "            # A value that is not an object, from a tool whose outputSchema only 2026-07-28 lists: the handshake",
    "            # era has it as JSON text alone.",
    "            return json.loads(result.text)",
    "        if content is None:",
    '            raise OutputMismatchError(f"{name} has an outputSchema but returned no structuredContent")',
    '        # A value that is not an object comes as {"result": value} in the handshake era.',
    '        return content["result"] if wrapped and not self.client.modern else content',
]


class _Module:
    """What the module defines besides the class: TypedDicts and Literal aliases, named once per shape."""

    def __init__(self, reserved: set[str]) -> None:
        self.blocks: list[list[str]] = []
        self.names: set[str] = set(reserved)
        """Every name the module defines, imports included."""
        self.shapes: dict[str, str] = {}
        self.typing: set[str] = set()
        self.extensions: set[str] = set()
        self.casts = False
        self.titles: dict[str, str] = {}
        """The name each object's shape has of its own anywhere in the tools (`_titles`), whichever tool is first."""
        self.refs: dict[tuple[int, str], str | None] = {}
        """Each `$ref` of a schema (by the schema's id) as its annotation, `None` while it is being resolved: every
        reference is resolved once, so a schema whose references branch back to themselves (`anyOf` of three
        self-references) costs its size, not three to the power of the depth."""

    # -- methods -----------------------------------------------------------------------------------------------

    def method(self, tool: Mapping[str, Any], taken: set[str]) -> list[str]:
        """The lines of the method that calls `tool`, named apart from the names in `taken` (which gets its name)."""
        name = _identifier(_snake(str(tool["name"])), taken, "tool_")
        taken.add(name)
        hint = _camel(str(tool["name"])) or "Tool"
        signature = self.signature(_mapping(tool.get("inputSchema")), hint)
        returns, call = self.result_of(tool, hint)
        return [
            *signature.header(name, returns),
            *_docstring(_method_doc(tool, signature.docs), 8),
            *signature.arguments(),
            *call,
        ]

    def signature(self, schema: Mapping[str, Any], hint: str) -> _Signature:
        """A method's keyword parameters, one per property of the tool's input schema."""
        required = set(schema.get("required") or ())
        signature = _Signature()
        arg_names: set[str] = _RESERVED | self.names
        for key, sub in _mapping(schema.get("properties")).items():
            arg = _identifier(_snake(key), arg_names, "arg_")
            arg_names.add(arg)
            kind = self.type_of(sub, schema, hint + _camel(key), 0)
            self.parameter(signature, (key, arg), kind, sub, key in required)
            if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
                signature.docs.append((arg, sub["description"]))
        return signature

    def parameter(self, signature: _Signature, names: tuple[str, str], kind: str, sub: Any, required: bool) -> None:
        """Add one parameter (its property's key and its Python name): required, defaulted to the schema's default
        when the annotation takes it (or to None for a parameter that takes only None), else optional (omitted from
        the call when None)."""
        default = sub.get("default", _NO_DEFAULT) if isinstance(sub, Mapping) else _NO_DEFAULT
        if required:
            signature.add(names, kind, always=True)
        elif kind == "None":
            signature.add(names, "None = None", always=True)
        elif default is not _NO_DEFAULT and self.fits(default, kind):
            signature.add(names, f"{kind} = {_literal(default)}", always=True)
        else:
            signature.add(names, f"{_union([kind, 'None'])} = None", always=False)

    def result_of(self, tool: Mapping[str, Any], hint: str) -> tuple[str, list[str]]:
        """The return annotation of a tool's method, and the lines that call the tool and return its result."""
        name = _literal(str(tool["name"]))
        output = tool.get("outputSchema")
        if not isinstance(output, Mapping):
            return "CallToolResult", [f"        return await self._call({name}, arguments)"]
        body: Mapping[str, Any] = output
        if _wrapped(output):  # toolkit's handshake-era `{"result": value}` around a value that is not an object
            body = output["properties"]["result"]
        kind = self.type_of(body, output, hint + "Result", 0)
        # 2026-07-28 lists (and sends) the value itself; the handshake era wraps it: the method unwraps at runtime.
        root = _resolve(body["$ref"], output) if isinstance(body.get("$ref"), str) else body
        wrapped = "" if isinstance(root, Mapping) and root.get("type") == "object" else ", wrapped=True"
        lines = [f"        result = await self._structured({name}, arguments{wrapped})"]
        if kind == "Any":
            return kind, [*lines, "        return result"]
        self.casts = True
        return kind, [*lines, f"        return cast({kind}, result)"]

    # -- types -------------------------------------------------------------------------------------------------

    def type_of(self, schema: Any, root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The annotation of a JSON Schema (as text), defining the names it needs."""
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return "Any"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.referred(ref, root, hint, depth)
        values = _listed_values(schema)
        if isinstance(values, list) and values:
            literal = self.literal(values, hint)
            if literal is not None:
                return literal
        members = _alternatives(schema)
        if members and values is None:
            return _union([self.type_of(m, root, hint, depth + 1) for m in members])
        return self.plain(schema, root, hint, depth)

    def referred(self, ref: str, root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The annotation of a `$ref`, resolved once per schema. Met again while it is being resolved (a recursive
        type), it is the name its object got (a `TypedDict` refers to itself), or `Any` where Python has none."""
        key = (id(root), ref)
        target = _resolve(ref, root)
        if key not in self.refs:
            self.refs[key] = None
            self.refs[key] = self.type_of(target, root, _camel(ref.rsplit("/", 1)[-1]) or hint, depth + 1)
        return self.refs[key] or self.named(target)

    def named(self, schema: Any) -> str:
        """What a schema being resolved is called so far: its object's `TypedDict`, a union of what its members
        are called, `None` for null; else `Any`."""
        if not isinstance(schema, Mapping):
            return "Any"
        members = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(members, list) and members:
            return _union([self.named(m) for m in members])
        if schema.get("type") == "null":
            return "None"
        return self.shapes.get(_shape(schema), "Any")

    def plain(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The annotation of a schema by its `type` (an object's properties make it one without `type`)."""
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.plain({**schema, "type": k}, root, hint, depth) for k in kind])
        if kind is None and "properties" in schema:
            kind = "object"
        if kind == "array":
            return self.list_of(schema, root, hint, depth)
        if kind == "object":
            return self.dict_of(schema, root, hint, depth)
        return _TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"

    def list_of(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The annotation of an array: a list of its items' type (of `Any` for a tuple's positions)."""
        if "prefixItems" in schema:
            return "list[Any]"
        return f"list[{self.type_of(schema.get('items'), root, hint + 'Item', depth + 1)}]"

    def dict_of(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The annotation of an object: a `TypedDict` of its properties, else a dict of its additional ones."""
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            return self.typed_dict(schema, properties, root, hint, depth)
        extra = schema.get("additionalProperties")
        value = self.type_of(extra, root, hint + "Value", depth + 1) if isinstance(extra, Mapping) else "Any"
        return f"dict[str, {value}]"

    def literal(self, values: list[Any], hint: str) -> str | None:
        if not all(v is None or isinstance(v, (str, int)) for v in values):
            return None  # floats, arrays and objects cannot be Literal
        some = [v for v in dict.fromkeys(values, None) if v is not None]
        if not some:
            return "None"
        self.typing.add("Literal")
        text = f"Literal[{', '.join(_literal(v) for v in some)}]"
        if len(text) > _INLINE_LITERAL:
            text = self.define(f"literal:{text}", hint, lambda name: _literal_alias(name, some))
        return _union([text, "None"]) if None in values else text

    def typed_dict(
        self, schema: Mapping[str, Any], properties: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int
    ) -> str:
        """The name of the `TypedDict` of an object's shape, defined the first time the shape is met."""
        shape = _shape(schema)
        if shape in self.shapes:
            return self.shapes[shape]
        name = self.claim(self.titles.get(shape) or hint)
        self.shapes[shape] = name  # before the fields: a recursive schema refers to itself by this name
        self.extensions.add("TypedDict")
        fields = self.fields(properties, set(schema.get("required") or ()), root, name, depth)
        if all(_is_name(key) for key, _ in fields):
            description = schema.get("description")
            self.blocks.append(_typed_dict_class(name, description if isinstance(description, str) else None, fields))
        else:
            self.blocks.append(_typed_dict_call(name, fields))
        return name

    def fields(
        self, properties: Mapping[str, Any], required: set[str], root: Mapping[str, Any], name: str, depth: int
    ) -> list[tuple[str, str]]:
        """The fields of a `TypedDict`: each property's key and annotation (`NotRequired` unless required)."""
        fields: list[tuple[str, str]] = []
        for key, sub in properties.items():
            kind = self.type_of(sub, root, name + _camel(key), depth + 1)
            if key not in required:
                self.extensions.add("NotRequired")
                kind = f"NotRequired[{kind}]"
            fields.append((key, kind))
        return fields

    def define(self, shape: str, hint: str, write: Callable[[str], list[str]]) -> str:
        if shape not in self.shapes:
            name = self.claim(hint)
            self.shapes[shape] = name
            self.blocks.insert(0, write(name))  # aliases first: the TypedDicts after them may use them
        return self.shapes[shape]

    def fits(self, value: Any, kind: str) -> bool:
        """Whether a schema's default is a value of the annotation, plainly (else the parameter defaults to None:
        a server's default that its own schema refuses must not break the module's type check)."""
        if kind == "Any":
            return True
        aliases = {name: shape.removeprefix("literal:") for shape, name in self.shapes.items()}
        members = [aliases.get(m, m) for m in _members(kind)]
        if _plain_type(value) in members:
            return True
        if type(value) is int and "float" in members:  # an int is a float to a type checker
            return True
        literals = [m[8:-1].split(", ") for m in members if m.startswith("Literal[")]
        return any(_literal(value) in items for items in literals)

    def claim(self, hint: str) -> str:
        base = hint if hint.isidentifier() and not keyword.iskeyword(hint) else f"T{hint}"
        name, n = base, 2
        while name in self.names:
            name, n = f"{base}{n}", n + 1
        self.names.add(name)
        return name


_NO_DEFAULT: Any = object()


class _Signature:
    """A method's keyword parameters as it writes them, the arguments every call sends and those it sends only when
    given (`(key, parameter)` pairs), and the parameters' descriptions."""

    def __init__(self) -> None:
        self.params: list[str] = []
        self.always: list[tuple[str, str]] = []
        self.omitted: list[tuple[str, str]] = []
        self.docs: list[tuple[str, str]] = []

    def add(self, names: tuple[str, str], annotation: str, *, always: bool) -> None:
        """Add the parameter `names[1]` (the argument `names[0]`), annotated (and defaulted) as `annotation`."""
        self.params.append(f"{names[1]}: {annotation}")
        (self.always if always else self.omitted).append(names)

    def header(self, name: str, returns: str) -> list[str]:
        """The method's `async def` line(s)."""
        if not self.params:
            return [f"    async def {name}(self) -> {returns}:"]
        return [
            f"    async def {name}(",
            "        self,",
            "        *,",
            *(f"        {p}," for p in self.params),
            f"    ) -> {returns}:",
        ]

    def arguments(self) -> list[str]:
        """The lines of the method's body that make the call's arguments."""
        if self.always:
            lines = ["        arguments: dict[str, Any] = {"]
            lines += [f"            {_literal(key)}: {arg}," for key, arg in self.always]
            lines.append("        }")
        else:
            lines = ["        arguments: dict[str, Any] = {}"]
        for key, arg in self.omitted:
            lines += [f"        if {arg} is not None:", f"            arguments[{_literal(key)}] = {arg}"]
        return lines


def _alternatives(schema: Mapping[str, Any]) -> list[Any] | None:
    """The schemas of which a value matches one (`anyOf`, `oneOf`, or an `allOf` of one: pydantic's way of adding a
    description beside a `$ref`); None for a schema without."""
    members = schema.get("anyOf") or schema.get("oneOf")
    if not members:
        all_of = schema.get("allOf")
        members = all_of if isinstance(all_of, list) and len(all_of) == 1 else None
    return members if isinstance(members, list) else None


def _listed_values(schema: Mapping[str, Any]) -> Any:
    """The values a schema is restricted to (`const`, or `enum`); None when it lists none."""
    return [schema["const"]] if "const" in schema else schema.get("enum")


def _plain_type(value: Any) -> str:
    """The annotation of a JSON scalar's Python type (`bool` for True, `None` for None); empty for another value."""
    if value is None:
        return "None"
    return {bool: "bool", str: "str", int: "int", float: "float"}.get(type(value), "")


def _typed_dict_class(name: str, description: str | None, fields: list[tuple[str, str]]) -> list[str]:
    """A `TypedDict` in the class form, for keys that are all Python names."""
    block = [f"class {name}(TypedDict):"]
    if description:
        block += [*_docstring(description, 4), ""]
    return block + [f"    {key}: {kind}" for key, kind in fields]


def _typed_dict_call(name: str, fields: list[tuple[str, str]]) -> list[str]:
    """A `TypedDict` in the functional form, for keys that are not Python names (its types quoted, resolved lazily
    as annotations)."""
    # ruff's UP013 would rewrite names it takes for Python's (`ﬁle`) into the class form, where they are not.
    readable = all(key.isidentifier() and not keyword.iskeyword(key) for key, _ in fields)
    block = [f"{name} = TypedDict({'  # noqa: UP013' if readable else ''}", f"    {_literal(name)},", "    {"]
    block += [f"        {_literal(key)}: {_literal(kind)}," for key, kind in fields]
    return [*block, "    },", ")"]


def _titles(tools: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The name of each object shape that has one of its own somewhere in the tools' schemas: its `title` (a model's
    class name, as pydantic writes it), else the `$defs` key it is kept under. A model several tools share is named
    after itself, not after the first tool that happens to return it."""
    named: dict[str, str] = {}
    keyed: dict[str, str] = {}
    for node in _objects([[tool.get("inputSchema"), tool.get("outputSchema")] for tool in tools]):
        title = _own_title(node)
        if title:
            named.setdefault(_shape(node), title)
        for shape, key in _def_names(node):
            keyed.setdefault(shape, key)
    return {**keyed, **named}


def _objects(roots: list[Any]) -> Iterator[Mapping[str, Any]]:
    """Every JSON object in `roots` and below, depth first, the last root first."""
    stack: list[Any] = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack += node
        elif isinstance(node, Mapping):
            stack += list(node.values())
            yield node


def _own_title(node: Mapping[str, Any]) -> str:
    """The `title` of an object schema with properties, in CapWords; empty when it has none."""
    title = node.get("title")
    properties = node.get("properties")
    if not isinstance(title, str) or not isinstance(properties, Mapping) or not properties:
        return ""
    return _camel(title)


def _def_names(node: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The shape and the CapWords `$defs` key of each object schema with properties that `node` keeps in `$defs`."""
    defs = node.get("$defs")
    for key, sub in defs.items() if isinstance(defs, Mapping) else ():
        if isinstance(sub, Mapping) and isinstance(sub.get("properties"), Mapping) and _camel(str(key)):
            yield _shape(sub), _camel(str(key))


def _shape(schema: Mapping[str, Any]) -> str:
    """An object's own shape: the same model reached as a `$defs` entry and as a whole output is one."""
    return json.dumps({k: v for k, v in schema.items() if k not in ("$defs", "title")}, sort_keys=True, default=str)


def _is_name(key: str) -> bool:
    """Whether `key` can be written as a name as it is: Python reads names in NFKC, so `ﬁle` would be `file`."""
    return key.isidentifier() and not keyword.iskeyword(key) and unicodedata.normalize("NFKC", key) == key


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _wrapped(output: Mapping[str, Any]) -> bool:
    """`{"type": "object", "properties": {"result": ...}, "required": ["result"]}` and nothing else: toolkit's wrapper
    of a value that is not an object (a titled model with one `result` field has a `title`)."""
    properties = output.get("properties")
    return (
        set(output) <= {"type", "properties", "required", "$defs"}
        and isinstance(properties, Mapping)
        and list(properties) == ["result"]
        and output.get("required") == ["result"]
    )


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    if not ref.startswith("#/"):
        return None
    target: Any = root
    for part in ref[2:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        target = target.get(key) if isinstance(target, Mapping) else None
    return target


def _union(kinds: list[str]) -> str:
    flat: list[str] = []
    for part in (part for kind in kinds for part in _members(kind)):
        if part not in flat:
            flat.append(part)
    if "Any" in flat:
        return "Any"
    if "None" in flat:
        flat = [*(k for k in flat if k != "None"), "None"]
    return " | ".join(flat)


def _members(kind: str) -> list[str]:
    """The members of a union written as text (`A | list[B | C]` has two)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(kind):
        depth += (ch == "[") - (ch == "]")
        if depth == 0 and kind.startswith(" | ", i):
            parts.append(kind[start:i])
            start = i + 3
    return [*parts, kind[start:]]


def _literal_alias(name: str, values: list[Any]) -> list[str]:
    one_line = f"{name} = Literal[{', '.join(_literal(v) for v in values)}]"
    if len(one_line) <= _WIDTH:
        return [one_line]
    return [f"{name} = Literal[", *(f"    {_literal(v)}," for v in values), "]"]


def _literal(value: Any) -> str:
    """Python source for a JSON scalar, as ruff would format it (double quotes unless single ones escape less)."""
    if not isinstance(value, str):
        return repr(value)
    quote = "'" if value.count('"') > value.count("'") else '"'
    return quote + "".join(_escape(ch, quote) for ch in value) + quote


def _escape(ch: str, quote: str) -> str:
    if ch in (quote, "\\"):
        return "\\" + ch
    if " " <= ch <= "~":
        return ch
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if ch in named:
        return named[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _doc_text(text: str) -> str:
    """Text safe inside a docstring: backslashes escaped, anything outside ASCII as an escape (ruff's RUF002 flags
    characters that look like others), and no three quotes in a row."""
    text = "".join(_escape(ch, "") if ch == "\\" or not " " <= ch <= "~" else ch for ch in text)
    return text.replace('"""', '\\"\\"\\"')


def _docstring(text: str, indent: int) -> list[str]:
    """The lines of a docstring of `text` at `indent`: on one line when it fits, else wrapped to the line length."""
    pad = " " * indent
    width = _WIDTH - indent
    lines = _doc_lines(text, width)
    if lines[-1].endswith('"'):
        lines[-1] = lines[-1][:-1] + '\\"'
    if len(lines) == 1 and len(lines[0]) + 6 <= width:
        return [f'{pad}"""{lines[0]}"""']
    lines[0] = '"""' + lines[0]
    return [f"{pad}{line}" if line else "" for line in lines] + [f'{pad}"""']


def _doc_lines(text: str, width: int) -> list[str]:
    """`text` as docstring lines of at most `width`: its paragraphs apart by an empty line, each line wrapped."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()] or ["-"]
    lines: list[str] = []
    for i, paragraph in enumerate(paragraphs):
        if i:
            lines.append("")
        for raw in paragraph.splitlines():
            lines += _wrapped_line(raw, width)
    return lines


def _wrapped_line(raw: str, width: int) -> list[str]:
    """One line of a description, wrapped: an Args entry's continuation keeps its indent; a deeper one (a
    description's own layout) is cut to the most a docstring line has room for."""
    lead = min(len(raw) - len(raw.lstrip()), _MAX_INDENT)
    return textwrap.wrap(
        _doc_text(raw.strip()),
        width - lead,
        initial_indent=" " * lead,
        subsequent_indent=" " * (lead + 4 if lead else 0),
        break_long_words=False,
        break_on_hyphens=False,
    )


def _method_doc(tool: Mapping[str, Any], params: list[tuple[str, str]]) -> str:
    description = tool.get("description") or tool.get("title") or f"Call the tool {tool['name']!r}."
    text = str(description).strip()
    if params:
        text += "\n\nArgs:\n" + "\n".join(f"    {arg}: {' '.join(doc.split())}" for arg, doc in params)
    return text


def _identifier(name: str, taken: set[str], prefix: str) -> str:
    """`name` made a Python name that none of `taken` is: `_snake` has made it one Python reads as written."""
    name = name or "value"
    if not name.isidentifier():  # a digit (or a mark) first
        name = prefix + name
    if keyword.iskeyword(name) or name in taken:
        name += "_"
    while name in taken:
        name += "_"
    return name


def _snake(name: str) -> str:
    """`name` in NFKC (as Python reads names: `ﬁle` is `file`, `x²` is `x2`), each run of characters a name cannot
    hold made one `_`."""
    text = unicodedata.normalize("NFKC", name)
    return re.sub(r"\W+", "_", "".join(ch if ("_" + ch).isidentifier() else " " for ch in text)).strip("_")


def _camel(name: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", unicodedata.normalize("NFKC", name))
    return "".join(w[:1].upper() + w[1:] for w in words)


def _class_name(name: str) -> str:
    """A CapWords name that Python accepts (`9lives` is `T9lives`, as `_Module.claim` names a type)."""
    return name if name.isidentifier() else f"T{name}"

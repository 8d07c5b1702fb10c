"""`toolkit lint`'s rules, each with a tool that trips it and a close one that does not, through the public API:
`toolkit.testing.assert_lint_clean` over tool definitions (as any server lists them) and over toolkit tools."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from toolkit import ProtocolError, Server, Tool, ToolDefinition, ToolDefinitionError, tool
from toolkit._lint import lint
from toolkit.testing import assert_lint_clean
from toolkit.testing._snapshots import Definitions

DESCRIBED = "Find the orders of one customer, newest first; use it before refunding an order."


def codes(target: Definitions, **options: Any) -> list[str]:
    """The codes `assert_lint_clean` reports, in order (none when it passes)."""
    try:
        assert_lint_clean(target, **options)
    except AssertionError as exc:
        return re.findall(r": (TK\d{3}) ", str(exc))
    return []


def definition(name: str = "find_orders", description: str | None = DESCRIBED, **fields: Any) -> ToolDefinition:
    properties = fields.pop("properties", {"customer": {"type": "string", "description": "The customer's id."}})
    wire = {"name": name, "inputSchema": {"type": "object", "properties": properties}, **fields}
    if description is not None:
        wire["description"] = description
    return ToolDefinition.model_validate(wire)


def string(description: str = "", **keywords: Any) -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {}), **keywords}


# Tools beside a pair that TK107 compares: a search weighs a word by how few tools have it, as on a real server.
OTHER_TOOLS = [
    definition(),
    definition("refund_order", "Refund one order in full; use find_orders to get its id first."),
    definition("send_invoice", "Send the invoice of an order to its customer by email."),
    definition("read_file", "Read a text file and return its contents."),
]


# Each case: the code, a definition that trips it, and a close one that does not.
CASES: list[tuple[str, list[ToolDefinition], list[ToolDefinition]]] = [
    ("TK101", [definition(description=None)], [definition()]),
    (
        "TK102",
        [definition(description="Shows orders.")],
        [definition(description="Find a customer's orders, newest first.")],
    ),
    ("TK103", [definition(description="Find orders.")], [definition(description="Find orders of one customer by id.")]),
    (
        "TK104",
        [definition(description="A helper for various order things.")],
        [
            definition(description="Find the open orders of one customer."),
            definition("find_refunds", "Find refunds by various keys (an order, a customer or a date) in the ledger."),
        ],
    ),
    (
        "TK105",
        [definition(properties={"customer": string()})],
        [definition(properties={"customer": string(enum=["a", "b"]), "limit": {"type": "integer"}})],
    ),
    (
        "TK106",
        [definition(), definition("find_orders_by_customer", DESCRIBED.replace("newest", "latest"))],
        [definition(), definition("refund_order", "Refund one order in full; use find_orders to get its id first.")],
    ),
    (
        "TK107",
        [*OTHER_TOOLS, definition("page_lookup", "Page lookup."), definition("lookup_page", "Lookup page.")],
        [*OTHER_TOOLS, definition("page_lookup", "Page lookup."), definition("create_page", "Page creation.")],
    ),
    (
        "TK201",
        [definition("delete_order", "Delete an order for good.", annotations={"readOnlyHint": True})],
        [definition("describe_order", "Describe an order in full.", annotations={"readOnlyHint": True})],
    ),
    (
        "TK202",
        [definition("send_invoice", "Send the invoice to the customer.", annotations={"destructiveHint": False})],
        [definition("draft_invoice", "Draft the invoice for the customer.", annotations={"destructiveHint": False})],
    ),
    (
        "TK204",
        [
            definition(
                "fetch_page", "Fetch a web page as text.", annotations={"readOnlyHint": True, "openWorldHint": False}
            )
        ],
        [
            definition(
                "fetch_page", "Fetch a web page as text.", annotations={"readOnlyHint": True, "openWorldHint": True}
            )
        ],
    ),
    (
        "TK205",
        [definition("create_order", "Create an order for a customer.", annotations={"idempotentHint": True})],
        [
            definition(
                "create_order", "Create an order, or update it if it exists.", annotations={"idempotentHint": True}
            )
        ],
    ),
    (
        "TK301",
        [definition(properties={"sql": string("The query to run.")})],
        [definition(properties={"sql": string("The query to run.", pattern="^SELECT ")})],
    ),
    (
        "TK301",
        [definition(properties={"path": string("A file to read.")})],
        [definition(properties={"name": string("A file's display name.")})],
    ),
    (
        "TK301",
        [definition(properties={"command": string("The shell command to run.")})],
        [definition(properties={"command": string("The operation.", enum=["start", "stop"])})],
    ),
    (
        "TK301",
        [definition(properties={"paths": {"type": "array", "items": string("A file.")}})],
        [definition(properties={"paths": {"type": "array", "items": string("A file.", pattern="^[a-z]+$")}})],
    ),
    (
        "TK301",
        [definition(properties={"url": {"anyOf": [string(), {"type": "null"}], "description": "The page."}})],
        [
            definition(
                properties={"url": {"anyOf": [string(format="uri"), {"type": "null"}], "description": "The page."}}
            )
        ],
    ),
    (
        "TK301",
        [definition(properties={"url": string("The page to fetch.")})],
        [definition(properties={"url": string("The page to fetch.", format="uri")})],
    ),
    (
        "TK401",
        [definition("list_orders", DESCRIBED, outputSchema={"type": "array", "items": {"type": "object"}})],
        [
            definition(
                "list_orders",
                DESCRIBED,
                properties={
                    "customer": string("The customer's id."),
                    "limit": {"type": "integer", "description": "At most."},
                },
                outputSchema={"type": "array", "items": {"type": "object"}},
            )
        ],
    ),
    (
        "TK401",
        [definition("search_orders", DESCRIBED)],
        [definition("search_orders", "Find a customer's orders; at most 20, newest first.")],
    ),
    (
        "TK401",
        [
            definition(
                "order_ids", DESCRIBED, outputSchema={"type": "object", "properties": {"result": {"type": "array"}}}
            )
        ],
        [
            definition(
                "order_ids",
                DESCRIBED,
                outputSchema={"type": "object", "properties": {"result": {"type": "array", "maxItems": 50}}},
            )
        ],
    ),
    (
        "TK601",
        [definition(properties={f"field{i}": string(f"Field {i}.") for i in range(16)})],
        [definition(properties={f"field{i}": string(f"Field {i}.") for i in range(15)})],
    ),
    (
        "TK602",
        [definition(properties={"action": string("What to do.", enum=["get", "update", "delete"])})],
        [definition(properties={"action": string("How to combine them.", enum=["sum", "product", "max"])})],
    ),
]


@pytest.mark.parametrize(("code", "trips", "passes"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_trips_on_one_tool_and_not_on_a_close_one(
    code: str, trips: list[ToolDefinition], passes: list[ToolDefinition]
) -> None:
    assert code in codes(trips)
    assert code not in codes(passes)


def test_a_well_made_tool_has_no_findings() -> None:
    @tool(read_only=True, idempotent=True, open_world=False)
    def order_total(order_id: Annotated[str, Field(description="The order's id, as find_orders gives it.")]) -> float:
        """The total of one order in euros, taxes included; use find_orders first to get the id."""
        return 0.0

    assert codes(order_total) == []


def test_a_local_tool_is_located_at_its_function_and_its_code_is_read() -> None:
    @tool
    def delete_order(order_id: Annotated[str, Field(description="The order's id.")]) -> str:
        """Delete an order for good; it cannot be restored afterwards."""
        return order_id

    with pytest.raises(AssertionError) as raised:
        assert_lint_clean(delete_order)

    line = delete_order.fn.__code__.co_firstlineno
    expected = f"- tests/test_lint.py:{line}: TK203 [delete_order] deletes without asking the user (no confirm=) "
    expected += "[warning]"
    assert expected in str(raised.value)


def test_a_confirmed_destructive_tool_passes() -> None:
    @tool(confirm="Delete order {order_id}?")
    def delete_order(order_id: Annotated[str, Field(description="The order's id.")]) -> str:
        """Delete an order for good; it cannot be restored afterwards."""
        return order_id

    assert codes(delete_order) == []


def test_raising_a_protocol_error_for_a_failed_run_is_found_in_the_code_and_a_tool_error_is_not() -> None:
    @tool(read_only=True)
    def order_total(order_id: Annotated[str, Field(description="The order's id.")]) -> float:
        """The total of one order in euros, taxes included; use find_orders first to get the id."""
        raise ProtocolError(-32603, f"no order {order_id}")

    @tool(read_only=True)
    def order_count(customer: Annotated[str, Field(description="The customer's id.")]) -> int:
        """How many orders one customer has placed, cancelled ones included."""
        raise ValueError(customer)

    assert codes([order_total, order_count]) == ["TK501"]


def test_a_local_tool_returning_an_unbounded_list_is_found_by_its_return_type() -> None:
    @tool(read_only=True)
    def recent_orders(customer: Annotated[str, Field(description="The customer's id.")]) -> list[str]:
        """The ids of one customer's orders, newest first."""
        return []

    @tool(read_only=True)
    def first_orders(
        customer: Annotated[str, Field(description="The customer's id.")],
        limit: Annotated[int, Field(description="At most this many.")] = 10,
    ) -> list[str]:
        """The ids of a customer's first orders, oldest first, at most `limit` of them."""
        return []

    assert codes([recent_orders, first_orders]) == ["TK401"]


def test_lint_ignore_silences_one_code_for_one_tool() -> None:
    @tool(lint_ignore={"TK203": "the caller is an admin script, not a model"})
    def delete_order(order_id: Annotated[str, Field(description="The order's id.")]) -> str:
        """Delete an order for good; it cannot be restored afterwards."""
        return order_id

    @tool
    def delete_customer(customer: Annotated[str, Field(description="The customer's id.")]) -> str:
        """Delete a customer and every order of theirs, for good."""
        return customer

    assert codes(Server("shop", tools=[delete_order, delete_customer])) == ["TK203"]
    assert dict(delete_order.lint_ignore) == {"TK203": "the caller is an admin script, not a model"}
    assert "lint" not in delete_order.definition.model_dump_json()  # not sent to clients


def test_lint_ignore_needs_a_code_and_a_reason() -> None:
    with pytest.raises(ToolDefinitionError) as raised:

        @tool(lint_ignore={"TK203": " ", "silence": "why"})
        def delete_order(order_id: str) -> str:
            return order_id

    assert raised.value.problems == [
        "lint_ignore['TK203']: the reason must be a non-empty string",
        "lint_ignore['silence']: not a lint code such as 'TK301'",
    ]


def test_select_and_ignore_take_codes_and_prefixes_and_warnings_false_keeps_errors_only() -> None:
    tools = [definition("order_total", description=None, properties={"path": string()})]

    assert codes(tools) == ["TK101", "TK105", "TK301"]
    assert codes(tools, select=["TK3"]) == ["TK301"]
    assert codes(tools, ignore=["TK1"]) == ["TK301"]
    assert codes(tools, warnings=False) == ["TK101"]


def test_a_reading_tool_returning_an_object_with_an_unbounded_list_field_is_found() -> None:
    class Listing(BaseModel):
        names: list[str]
        total: int

    @tool(read_only=True)
    def list_orders(customer: Annotated[str, Field(description="The customer's id.")]) -> Listing:
        """The ids of one customer's orders, newest first, and how many there are."""
        return Listing(names=[], total=0)

    @tool(read_only=True)
    def order_summary(customer: Annotated[str, Field(description="The customer's id.")]) -> Listing:
        """The ids of one customer's open orders right now, and how many there are in all."""
        return Listing(names=[], total=0)

    assert codes([list_orders, order_summary]) == ["TK401"]


def test_a_tool_of_a_partial_is_located_at_the_function_and_one_without_source_is_still_linted() -> None:
    def remove(order_id: Annotated[str, Field(description="The order's id.")], *, shop: str) -> str:
        """Remove an order from the shop's books, for good."""
        return order_id

    namespace: dict[str, Any] = {}
    exec(  # a tool whose source cannot be read (no file): its definition is still linted
        compile(
            "from toolkit import ProtocolError, tool\n@tool\ndef f() -> str:\n    raise ProtocolError(1, 'x')\n",
            "<made>",
            "exec",
        ),
        namespace,
    )
    with pytest.raises(AssertionError) as raised:
        assert_lint_clean([tool(name="remove_order")(functools.partial(remove, shop="main")), namespace["f"]])

    line = remove.__code__.co_firstlineno
    assert f"- tests/test_lint.py:{line}: TK203 [remove_order] removes without asking the user" in str(raised.value)
    assert "- <made>:2: TK101 [f] has no description" in str(raised.value)
    assert "TK501" not in str(raised.value)


def test_a_code_that_names_no_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="no lint rule has the code 'TK9'"):
        assert_lint_clean([definition()], ignore=["TK9"])


def test_lint_ignore_must_be_a_mapping() -> None:
    silences: Any = ["TK203"]  # what the type of lint_ignore= refuses, given anyway
    with pytest.raises(ToolDefinitionError) as raised:

        @tool(lint_ignore=silences)
        def delete_order(order_id: str) -> str:
            return order_id

    assert raised.value.problems == ["lint_ignore must map lint codes to reasons, e.g. {'TK301': 'why'}, not list"]


def test_a_silence_that_silences_nothing_or_names_no_rule_is_reported_but_one_only_a_call_can_show_is_not() -> None:
    @tool(read_only=True, lint_ignore={"TK301": "no path", "TK310": "a typo", "TK402": "measured by --call"})
    def order_total(order_id: Annotated[str, Field(description="The order's id.")]) -> float:
        """The total of one order in euros, taxes included; use find_orders first to get the id."""
        return 0.0

    with pytest.raises(AssertionError) as raised:
        assert_lint_clean(order_total)

    line = order_total.fn.__code__.co_firstlineno
    assert str(raised.value).splitlines()[1:] == [
        f"- tests/test_lint.py:{line}: TK001 [order_total] lint_ignore silences TK301, which finds nothing here "
        "[warning] (fix: remove the entry from lint_ignore)",
        f"- tests/test_lint.py:{line}: TK001 [order_total] lint_ignore silences TK310, which is no rule (the codes: "
        "TK001, TK101, TK102, TK103, TK104, TK105, TK106, TK107, TK201, TK202, TK203, TK204, TK205, TK301, TK401, "
        "TK402, TK501, TK601, TK602, TK701, TK702, TK703) [warning] (fix: remove the entry from lint_ignore)",
    ]


def test_tools_and_definitions_are_not_mixed() -> None:
    @tool(read_only=True)
    def order_total(order_id: Annotated[str, Field(description="The order's id.")]) -> float:
        """The total of one order in euros, taxes included; use find_orders first to get the id."""
        return 0.0

    with pytest.raises(TypeError, match="not a mix"):
        assert_lint_clean([order_total, definition()])
    assert codes([]) == []


def test_each_line_names_its_tool_when_a_factory_makes_several_at_one_line() -> None:
    def lister(thing: str) -> Tool[Any, Any]:
        @tool(name=f"list_{thing}", read_only=True)
        def list_things() -> list[str]:
            """List every thing of this kind that the store holds, newest first, with nothing left out."""
            return []

        return list_things

    tools = [lister("orders"), lister("refunds")]
    line = tools[0].fn.__code__.co_firstlineno

    assert [str(f) for f in lint(tools) if f.rule.code == "TK401"] == [
        f"tests/test_lint.py:{line}: TK401 [list_orders] returns a list with no maxItems and takes no limit, page or "
        "cursor parameter",
        f"tests/test_lint.py:{line}: TK401 [list_refunds] returns a list with no maxItems and takes no limit, page "
        "or cursor parameter",
    ]
    assert [f.message for f in lint(tools) if f.rule.code == "TK106"] == [
        "description is nearly the same as the description of 'list_orders'"
    ]


def test_the_pytest_helper_takes_a_target_string_as_the_command_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lint_target_shop.py").write_text(
        "from toolkit import tool\n\n\n@tool(read_only=True)\ndef delete_order(order_id: str) -> str:\n"
        '    """Delete an order for good; it cannot be restored afterwards."""\n    return order_id\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)

    with pytest.raises(AssertionError) as raised:
        assert_lint_clean("lint_target_shop.py", select=["TK2"])
    assert_lint_clean("lint_target_shop.py:delete_order", select=["TK6"])
    with pytest.raises(ValueError, match="no such file"):
        assert_lint_clean("missing.py")

    assert str(raised.value).splitlines()[1].startswith("- lint_target_shop.py:4: TK201 [delete_order] is marked")

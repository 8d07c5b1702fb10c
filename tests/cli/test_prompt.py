"""The terminal prompt of `toolkit call`: forms field by field, validation, defaults, choices, decline, cancel, EOF."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from toolkit import ClientRequestError, ElicitRequest, ElicitResult, SampleRequest
from toolkit._asking.sampling import messages_of
from toolkit.cli._prompt import TerminalPrompt

pytestmark = pytest.mark.anyio

CONTACT = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "description": "Your address"},
        "color": {
            "type": "string",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
            "default": "r",
        },
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
        "news": {"type": "boolean", "default": False},
        "when": {"type": "string", "format": "date"},
    },
    "required": ["email"],
}


class Terminal:
    """Lines to read, and everything written."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.out: list[str] = []

    async def read(self) -> str:
        await anyio.lowlevel.checkpoint()  # as reading stdin on a thread does: another task may run meanwhile
        return self.lines.pop(0) + "\n" if self.lines else ""

    def prompt(self, **options: Any) -> TerminalPrompt:
        return TerminalPrompt(read_line=self.read, write=self.out.append, **options)

    @property
    def text(self) -> str:
        return "".join(self.out)


async def test_a_form_is_asked_field_by_field_with_checks_and_defaults() -> None:
    term = Terminal("ada@", "ada@example.org", "", "200", "40", "1, 3", "", "2026-13-01", "2026-12-01", "")
    result = await term.prompt().elicit(ElicitRequest("Contact?", requested_schema=CONTACT))
    assert result == ElicitResult.accept(
        {"email": "ada@example.org", "color": "r", "age": 40, "tags": ["a", "c"], "news": False, "when": "2026-12-01"}
    )
    assert "? Contact?" in term.text
    assert "email (email, required) - Your address: " in term.text
    assert "color (1 Red, 2 Green) [Red]: " in term.text
    assert "! not an email address; try again" in term.text
    assert "! at most 150; try again" in term.text
    assert "! not a date" in term.text
    assert "[a]ccept / [d]ecline / [c]ancel [a]: " in term.text


async def test_choices_by_number_title_or_value_and_optional_fields_skipped() -> None:
    term = Terminal("x@y.io", "Green", "", "a,b,c", "b", "yes", "", "a")
    result = await term.prompt().elicit(ElicitRequest("Contact?", requested_schema=CONTACT))
    assert result.content == {"email": "x@y.io", "color": "g", "tags": ["b"], "news": True}
    assert "! at most 2 choices" in term.text


@pytest.mark.parametrize(
    ("lines", "action"), [(("x@y.io", ":decline"), "decline"), ((":cancel",), "cancel"), ((), "cancel")]
)
async def test_decline_cancel_and_end_of_input(lines: tuple[str, ...], action: str) -> None:
    result = await Terminal(*lines).prompt().elicit(ElicitRequest("Contact?", requested_schema=CONTACT))
    assert result.action == action


async def test_a_required_field_is_asked_again_and_the_last_question_decides() -> None:
    term = Terminal("", "a@b.cd", "", "", "", "", "", "d")
    result = await term.prompt().elicit(ElicitRequest("Contact?", requested_schema=CONTACT))
    assert result.action == "decline"
    assert "! required; try again" in term.text


async def test_a_confirmation_is_one_line_and_yes_accepts_it() -> None:
    empty = {"type": "object", "properties": {}}
    term = Terminal("y")
    assert (await term.prompt().elicit(ElicitRequest("Delete /tmp/x?", requested_schema=empty))).accepted
    assert term.text == "? Delete /tmp/x? [y/N]: "
    assert (await Terminal("").prompt().elicit(ElicitRequest("Delete?", requested_schema=empty))).declined
    term = Terminal()
    assert (await term.prompt(yes=True).elicit(ElicitRequest("Delete?", requested_schema=empty))).accepted
    assert "(--yes)" in term.text


async def test_a_url_is_shown_in_full_and_declined_without_consent() -> None:
    term = Terminal("n")
    request = ElicitRequest("Sign in", mode="url", url="https://auth.example.com/connect?x=1")
    assert (await term.prompt(yes=True).elicit(request)).declined  # --yes never opens a URL for the user
    assert "URL: https://auth.example.com/connect?x=1" in term.text
    assert "host: auth.example.com" in term.text


async def test_sampling_is_shown_and_refused() -> None:
    term = Terminal()
    request = SampleRequest(messages_of("What is 2+2?"), 10)
    with pytest.raises(ClientRequestError) as caught:
        await term.prompt().sample(request)
    assert caught.value.code == -1
    assert "user: What is 2+2?" in term.text


async def test_questions_sent_together_are_asked_one_after_the_other() -> None:
    term = Terminal("ada", "", "y")
    prompt = term.prompt()
    name = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answers: dict[str, ElicitResult[Any]] = {}
    first = anyio.Event()

    async def ask(request: ElicitRequest) -> None:
        if request.message == "Sure?":
            await first.wait()  # sent second, while the form is being filled in
        else:
            first.set()
        answers[request.message] = await prompt.elicit(request)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, ElicitRequest("Sure?", requested_schema={"type": "object", "properties": {}}))
        tg.start_soon(ask, ElicitRequest("Name?", requested_schema=name))
    assert answers == {"Name?": ElicitResult.accept({"name": "ada"}), "Sure?": ElicitResult.accept({})}
    assert term.text.index("[a]ccept") < term.text.index("? Sure? [y/N]: ")

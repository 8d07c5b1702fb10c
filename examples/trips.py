"""A trip planner that asks its user: a booking form, a confirmation before cancelling, a sign-in page, a model
(which may call a tool of its own).

Run it as a stdio server with `python examples/trips.py`, and try it in the terminal:
`toolkit call examples/trips.py book_trip city=Lisbon` asks the form's fields one by one.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Annotated

from pydantic import BaseModel, Field

from toolkit import Choices, Context, Form, SamplingMessage, Server, ToolError, URLElicitationRequired, tool


class Cabin(str, enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


class Booking(BaseModel):
    """What the traveller fills in."""

    traveller: str = Field(min_length=1, description="Full name, as on the passport")
    departure: dt.date = Field(description="Day of the outbound flight")
    nights: int = Field(3, ge=1, le=30)
    cabin: Cabin = Cabin.ECONOMY
    seat: Annotated[str, Choices({"window": "Window seat", "aisle": "Aisle seat"})] = "window"
    insurance: bool = False


# Built at import, so that a form outside the spec's subset is an error when the module loads.
BOOKING = Form(Booking)

TRIPS: dict[str, dict[str, object]] = {}
PAID: set[str] = set()  # the payment provider's callback (not shown) adds to it


@tool(read_only=True)
def list_trips() -> list[str]:
    """The booked trips, by reference."""
    return sorted(TRIPS)


@tool
async def book_trip(city: str, ctx: Context) -> str:
    """Book a trip to a city, asking the traveller for the details.

    Args:
        city: Where to go.
    """
    answer = await ctx.elicit(f"Book a trip to {city}: who travels, and when?", BOOKING)
    booking = answer.data
    if booking is None:
        return f"No trip booked ({answer.action})."
    # The side effect comes after the last question: in 2026-07-28 the body runs again in each round.
    reference = f"{city[:3].upper()}-{len(TRIPS) + 1:03d}"
    TRIPS[reference] = {"city": city, **booking.model_dump(mode="json")}
    return f"Booked {reference}: {booking.traveller} to {city} on {booking.departure}, {booking.nights} nights."


@tool(destructive=True, confirm="Cancel trip {reference}? This cannot be undone.")
def cancel_trip(reference: str) -> str:
    """Cancel a booked trip (the user confirms first).

    Args:
        reference: The trip's reference, as `list_trips` gives it.
    """
    if TRIPS.pop(reference, None) is None:
        raise ToolError(f"There is no trip {reference}.")
    return f"Cancelled {reference}."


@tool(lint_ignore={"TK203": "the traveller confirms on the payment provider's own page"})
def pay_trip(reference: str) -> str:
    """Pay for a trip on the payment provider's page (card details never pass through the client).

    Args:
        reference: The trip's reference.
    """
    if reference not in TRIPS:
        raise ToolError(f"There is no trip {reference}.")
    if reference not in PAID:
        # Until the provider confirms, every call (every retry in 2026-07-28) sends the user to its page.
        raise URLElicitationRequired(
            f"Pay for {reference} on the provider's page", f"https://pay.example.com/{reference}"
        )
    return f"{reference} is paid."


@tool
async def suggest_activities(city: str, ctx: Context) -> str:
    """Ask the client's model for three things to do in a city (sampling; deprecated in 2026-07-28).

    Args:
        city: The city.
    """
    if not ctx.can_sample():
        return f"Walk around {city}."
    question = f"Suggest three things to do in {city}, one line each."
    if not ctx.can_sample(tools=True):
        return (await ctx.sample(question, max_tokens=200)).text
    # The model may check the forecast first: it asks for `forecast`, this tool runs it and sends the result back.
    conversation: list[str | SamplingMessage] = [f"{question} Check the forecast first."]
    for _ in range(3):
        reply = await ctx.sample(conversation, max_tokens=200, tools=[forecast])
        if not reply.tool_uses:
            return reply.text
        conversation += [reply.message, await reply.run_tools([forecast])]
    return (await ctx.sample(conversation, max_tokens=200, tools=[forecast], tool_choice="none")).text


@tool(read_only=True)
def forecast(city: str) -> str:
    """Today's weather forecast for a city (offered to the client's model, not served).

    Args:
        city: The city.
    """
    return f"{city}: 21°C, sunny"  # a real server would call a weather service


server = Server("trips", tools=[list_trips, book_trip, cancel_trip, pay_trip, suggest_activities])

if __name__ == "__main__":
    server.run()

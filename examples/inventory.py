"""A stock-keeping server with state: one SQLite connection, opened by the server's lifespan, used by every tool.

    python examples/inventory.py                      # serve over stdio, stock kept in inventory.db beside this file
    INVENTORY_DB=:memory: python examples/inventory.py

The lifespan opens the database before the first message is read, and closes it after the last reply is sent
(also when the client goes away mid-call). Tools read it from `ctx.lifespan_context`, typed by `Context[Stock]`.
The tools are plain functions, so toolkit runs them on worker threads: the connection is opened with
`check_same_thread=False`, and a lock keeps each transaction whole.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from toolkit import Context, Server, ToolError

DATABASE = str(Path(__file__).with_name("inventory.db"))
"""Where the stock is kept unless `INVENTORY_DB` says otherwise."""


@dataclass
class Stock:
    """What the lifespan yields: the database, and a lock around each transaction."""

    db: sqlite3.Connection
    lock: threading.Lock = field(default_factory=threading.Lock)


@asynccontextmanager
async def open_stock(server: Server) -> AsyncIterator[Stock]:
    """Open (and if needed create) the stock database for as long as the server runs."""
    # By its absolute path, next to this file: an MCP client starts the server in a folder of its own choosing.
    db = sqlite3.connect(os.environ.get("INVENTORY_DB", DATABASE), check_same_thread=False)
    try:
        db.execute("CREATE TABLE IF NOT EXISTS items (sku TEXT PRIMARY KEY, name TEXT NOT NULL, quantity INTEGER)")
        yield Stock(db)
    finally:
        db.close()


server = Server(
    "inventory",
    version="1.0.0",
    instructions="Stock levels of a small shop: add items, record sales and deliveries, and report stock.",
    lifespan=open_stock,
)

Quantity = Annotated[int, Field(ge=1, description="How many units.")]


class Item(BaseModel):
    sku: str
    name: str
    quantity: int


@server.tool(idempotent=True, open_world=False)
def add_item(sku: str, name: str, ctx: Context[Stock], quantity: Annotated[int, Field(ge=0)] = 0) -> Item:
    """Add an item to the catalogue, or rename it and set its stock if it exists.

    Args:
        sku: The item's stock-keeping unit, e.g. "TEA-001".
        name: What the item is called.
        quantity: Units in stock.
    """
    stock = ctx.lifespan_context
    with stock.lock, stock.db:
        stock.db.execute(
            "INSERT INTO items VALUES (?, ?, ?) ON CONFLICT(sku) DO UPDATE SET name = excluded.name, "
            "quantity = excluded.quantity",
            (sku, name, quantity),
        )
    return Item(sku=sku, name=name, quantity=quantity)


@server.tool(destructive=False, open_world=False)
def receive_delivery(sku: str, quantity: Quantity, ctx: Context[Stock]) -> Item:
    """Add delivered units to an item's stock.

    Args:
        sku: The item delivered.
        quantity: Units delivered.
    """
    return _change(ctx.lifespan_context, sku, quantity)


@server.tool(destructive=False, open_world=False)
def record_sale(sku: str, quantity: Quantity, ctx: Context[Stock]) -> Item:
    """Take sold units out of an item's stock.

    Args:
        sku: The item sold.
        quantity: Units sold; no more than are in stock.
    """
    return _change(ctx.lifespan_context, sku, -quantity)


@server.tool(read_only=True, open_world=False)
def stock_report(ctx: Context[Stock], below: int | None = None) -> list[Item]:
    """Every item and its stock, fewest units first.

    Args:
        below: Only items with fewer units than this (to reorder).
    """
    stock = ctx.lifespan_context
    limit = below if below is not None else 2**63 - 1
    with stock.lock:
        rows = stock.db.execute(
            "SELECT sku, name, quantity FROM items WHERE quantity < ? ORDER BY quantity, sku", (limit,)
        ).fetchall()
    return [Item(sku=sku, name=name, quantity=quantity) for sku, name, quantity in rows]


def _change(stock: Stock, sku: str, delta: int) -> Item:
    with stock.lock, stock.db:
        row = stock.db.execute("SELECT name, quantity FROM items WHERE sku = ?", (sku,)).fetchone()
        if row is None:
            raise ToolError(f"No item with SKU {sku!r}; add it with add_item first.")
        name, quantity = row
        if quantity + delta < 0:
            raise ToolError(f"Only {quantity} of {sku!r} in stock; cannot take {-delta}.")
        stock.db.execute("UPDATE items SET quantity = ? WHERE sku = ?", (quantity + delta, sku))
    return Item(sku=sku, name=name, quantity=quantity + delta)


if __name__ == "__main__":
    server.run()

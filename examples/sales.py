"""An MCP App: a sales report that hosts speaking MCP Apps show as a table with bars, and others as text.

`sales_report` is the model's tool; its page (`sales.html`, beside this file) shows the result and lets the user
switch regions, calling `region_sales`, a tool only the page may call. Try it in a browser, with no host:

    toolkit preview examples/sales.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from toolkit import UI, Server, tool

Region = Literal["all", "north", "south"]

PAGE = UI("ui://sales/report", Path(__file__).with_name("sales.html"), prefers_border=True, description="Sales table")

_UNITS = {  # (month, region): units sold
    ("2026-09", "north"): 120,
    ("2026-09", "south"): 95,
    ("2026-10", "north"): 140,
    ("2026-10", "south"): 80,
    ("2026-11", "north"): 165,
    ("2026-11", "south"): 110,
}


class Row(BaseModel):
    month: str
    region: str
    units: int


class Report(BaseModel):
    region: Region
    total: int
    rows: list[Row]


def _report(region: Region) -> Report:
    rows = [Row(month=m, region=r, units=u) for (m, r), u in _UNITS.items() if region in ("all", r)]
    return Report(region=region, total=sum(row.units for row in rows), rows=rows)


@tool(ui=PAGE, read_only=True)
def sales_report(region: Region = "all") -> Report:
    """Units sold per month, for one region or all of them.

    Args:
        region: `north`, `south`, or `all`.
    """
    return _report(region)


@tool(ui=PAGE, visibility=["app"], read_only=True)
def region_sales(region: Region) -> Report:
    """The report for another region: the page's region buttons call it.

    Args:
        region: `north`, `south`, or `all`.
    """
    return _report(region)


server = Server("sales", version="1.0.0", tools=[sales_report, region_sales])

if __name__ == "__main__":
    server.run()

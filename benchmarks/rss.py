"""Resident memory of an idle stdio server with N tools, after the handshake and one `tools/list`."""

from __future__ import annotations

from typing import Any

from . import _raw, _sides


def rss_kib(pid: int | str = "self") -> int:
    """Resident memory of process `pid` (default: this one), in KiB, from Linux `/proc`."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def run(side_name: str, params: dict[str, Any]) -> float:
    """Return MiB resident (Linux `/proc`)."""
    client = _raw.RawClient(_sides.serve_argv(side_name, params["tools_dir"], params["tools"]))
    try:
        client.initialize()
        page = client.request("tools/list", {})
        listed = len(page["tools"])
        while cursor := page.get("nextCursor"):
            page = client.request("tools/list", {"cursor": cursor})
            listed += len(page["tools"])
        if listed != params["tools"] + 1:
            raise RuntimeError(f"{side_name} listed {listed} tools, expected {params['tools'] + 1}")
        return rss_kib(client.process.pid) / 1024
    finally:
        client.close()

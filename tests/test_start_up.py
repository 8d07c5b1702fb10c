"""What `from toolkit import Server` loads: what a server does not need at import stays out until first use.

Counted in a fresh interpreter (`sys.modules`), never timed: the start-up figures are the benchmarks' (issue 23).
"""

from __future__ import annotations

import json
import subprocess
import sys

import toolkit

# Made lazy for start-up (issue 23): a client's handler types, HTTP's token verifiers and rate limit, the in-memory
# transport. A server that uses one imports it through `toolkit.X` on first use.
LAZY_MODULES = ("toolkit._asking.handlers", "toolkit._http", "toolkit._http.auth", "toolkit._http.limits")
LAZY_NAMES = ("ElicitationHandler", "SamplingHandler", "StaticTokenVerifier", "RateLimit", "MemoryTransport")


def _loaded(code: str, names: tuple[str, ...]) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps([n for n in {list(names)!r} if n in sys.modules]))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    return list(json.loads(out.stdout))


def test_importing_the_server_api_loads_no_client_handlers_http_auth_rate_limit_or_memory_transport() -> None:
    assert _loaded("from toolkit import Server, tool", (*LAZY_MODULES, "toolkit._transports.memory")) == []


def test_a_lazy_name_loads_its_module_on_first_use_and_says_it_comes_from_toolkit() -> None:
    code = "import toolkit\nassert toolkit.RateLimit.__module__ == 'toolkit'"
    assert _loaded(code, ("toolkit._http.limits",)) == ["toolkit._http.limits"]
    assert all(name in toolkit.__all__ and name in dir(toolkit) for name in LAZY_NAMES)

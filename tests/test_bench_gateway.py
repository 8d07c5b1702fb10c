"""`python -m benchmarks.gateway`: its count of upstream connections holds (one for every call), run small."""

from __future__ import annotations

import pytest

from benchmarks.gateway import initializations

pytestmark = pytest.mark.anyio


async def test_one_upstream_initialize_serves_every_call_through_the_gateway() -> None:
    assert await initializations(200) == (1, 200)

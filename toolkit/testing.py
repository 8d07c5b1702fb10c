"""Testing helpers for toolkit users: a pytest plugin (loaded automatically) and a synchronous tool tester."""

from __future__ import annotations

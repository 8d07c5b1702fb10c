"""Asking the client while a tool runs: elicitation, sampling, roots, in both eras (live or by replay)."""

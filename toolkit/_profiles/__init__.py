"""Provider profiles: which JSON Schema each model provider accepts, and a tool adapted to it."""

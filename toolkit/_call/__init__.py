"""What a tool's call runs with, below the tool's definition: its `Context` (progress, logging, cancellation, the
lifespan's state, the caller's identity, asking the client) and the worker thread a sync tool runs on."""

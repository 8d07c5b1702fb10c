"""The state that the processes serving one server share: the `Backend` protocol and its backends (memory, Redis)."""

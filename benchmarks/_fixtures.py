"""The two tools every call benchmark uses; kept apart from the generated module so a one-tool server stays small."""


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.

    Returns:
        The sum of `a` and `b`.
    """
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers, as a coroutine.

    Args:
        a: The first addend.
        b: The second addend.

    Returns:
        The sum of `a` and `b`.
    """
    return a + b

"""The price of a run's tokens: what the runner records in a run's metadata and the score stage in
the results database (``common.run_identity``), one formula for both, apart from the model layer
so that the database's code imports none of it.
"""

from typing import Any


def cost_usd(
    price: dict[str, Any] | None,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
    batch: bool = False,
) -> float | None:
    """Return the dollars of a run's tokens at ``price`` (a ``Price`` as plain data: dollars per
    1,000 tokens), or None when the model has no price. ``cached_tokens`` (part of the prompt
    tokens) cost ``cached_input`` when set; reasoning tokens are completion tokens. Tokens of a
    ``batch`` cost the price's ``batch`` share of that (default 0.5)."""
    if not price:
        return None
    cached_price = price["input"] if price.get("cached_input") is None else price["cached_input"]
    dollars = (
        (prompt_tokens - cached_tokens) * price["input"]
        + cached_tokens * cached_price
        + completion_tokens * price["output"]
    )
    share = price.get("batch", 0.5) if batch else 1.0
    return round(dollars * share / 1000, 6)

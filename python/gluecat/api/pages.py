"""Every item of a paged Glue call, following NextToken (what boto3's paginators do)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def every(call: Callable[..., dict[str, Any]], key: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """The items under ``key`` of every page of ``call(**kwargs)``, in order."""
    while True:
        page = call(**kwargs)
        yield from page[key]
        if not page.get("NextToken"):
            return
        kwargs["NextToken"] = page["NextToken"]

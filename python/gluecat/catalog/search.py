"""SearchTables: property filters with Glue's punctuation-token match, free-text search, sorting, paging.

A Filters string value matches a field when it equals the whole field or one of its tokens, the field
being split on punctuation ("customer-link" and "xx-link-yy" match "link"; "xxlinkyy" does not); matching
ignores case. Time fields compare with the predicate's Comparator. A key that names no table field is
looked up among the table's Parameters (e.g. Key=classification, Value=csv).

SearchText matches tables whose searchable text (names, description, owner, table type, location,
column names and comments, parameter values) contains every word of it as a token, or, in double quotes,
the exact phrase as a whole field value or token sequence.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from gluecat.catalog import access, paging
from gluecat.catalog.context import TABLE, Context, copy_doc
from gluecat.errors import InvalidInputException
from gluecat.store.store import HistoryExpired

_TOKEN_SPLIT = re.compile(r"[\s\-_:#/.,;|@!?()\[\]{}'\"=+*&%$^~`<>\\]+")
_TIME_FIELDS = {"CreateTime", "UpdateTime", "LastAccessTime", "LastAnalyzedTime"}
_STRING_FIELDS = {"Name", "DatabaseName", "Description", "Owner", "TableType", "CreatedBy", "CatalogId"}
_SORTABLE = _TIME_FIELDS | _STRING_FIELDS


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN_SPLIT.split(text.lower()) if t]


def _string_match(field_value: str, wanted: str) -> bool:
    value, want = field_value.lower(), wanted.lower()
    if value == want:
        return True
    want_tokens = _tokens(want)
    tokens = _tokens(value)
    n = len(want_tokens)
    return n > 0 and any(tokens[i : i + n] == want_tokens for i in range(len(tokens) - n + 1))


def _parse_time(value: str, key: str, field: str = "Filters") -> datetime:
    try:
        if re.fullmatch(r"[0-9]+(\.[0-9]+)?", value):
            seconds = float(value)
            if seconds > 1e11:  # epoch milliseconds, as the Glue console sends
                seconds /= 1000
            return datetime.fromtimestamp(seconds, UTC)
        ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return ts if ts.tzinfo else ts.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError) as e:
        raise InvalidInputException(
            f"{field}: {value[:40]!r} is not a time to compare {key} with "
            "(ISO-8601, or epoch seconds or milliseconds, in years 1 to 9999)"
        ) from e


def _field(table: dict[str, Any], key: str) -> Any:
    if key in _TIME_FIELDS or key in _STRING_FIELDS:
        return table.get(key)
    if key == "Location":
        return (table.get("StorageDescriptor") or {}).get("Location")
    params = dict((table.get("StorageDescriptor") or {}).get("Parameters") or {})
    params.update(table.get("Parameters") or {})
    lowered = {k.lower(): v for k, v in params.items()}
    return lowered.get(key.lower())


def _matches_filter(table: dict[str, Any], pred: dict[str, Any]) -> bool:
    key, value = pred.get("Key"), pred.get("Value")
    if key is None or value is None:
        return True
    actual = _field(table, key)
    if actual is None:
        return False
    if key in _TIME_FIELDS:
        want = _parse_time(value, key)
        op = pred.get("Comparator", "EQUALS")
        return {
            "EQUALS": actual == want,
            "GREATER_THAN": actual > want,
            "LESS_THAN": actual < want,
            "GREATER_THAN_EQUALS": actual >= want,
            "LESS_THAN_EQUALS": actual <= want,
        }[op]
    return _string_match(str(actual), value)


def _searchable(table: dict[str, Any]) -> list[str]:
    sd = table.get("StorageDescriptor") or {}
    texts = [table.get(k) for k in ("Name", "DatabaseName", "Description", "Owner", "TableType")]
    texts.append(sd.get("Location"))
    for col in list(sd.get("Columns") or []) + list(table.get("PartitionKeys") or []):
        texts.extend([col.get("Name"), col.get("Comment")])
    texts.extend((table.get("Parameters") or {}).values())
    return [t for t in texts if isinstance(t, str) and t]


def _matches_text(table: dict[str, Any], text: str) -> bool:
    fields = _searchable(table)
    for phrase in re.findall(r'"([^"]*)"', text):
        if phrase and not any(_string_match(f, phrase) for f in fields):
            return False
    words = _tokens(re.sub(r'"[^"]*"', " ", text))
    tokens = {t for f in fields for t in _tokens(f)}
    return all(w in tokens for w in words)


def _as_seen(table: dict[str, Any] | None) -> dict[str, Any] | None:
    """A table as the caller sees it (None if it may not), so that a search matches only what it shows:
    a column the caller may not see must not make its table a hit."""
    view = access.current()
    if table is None or view is None:
        return table
    if not view.table_visible(table["DatabaseName"], table["Name"]):
        return None
    if view.visible_columns(table["DatabaseName"], table["Name"]) is None:
        return table
    return access.project_table(copy_doc(table))


def search_tables(
    ctx: Context,
    *,
    filters: list[dict[str, Any]],
    search_text: str | None,
    sort_criteria: list[dict[str, Any]],
    next_token: str | None,
    max_results: int | None,
    resource_share_type: str | None,
) -> dict[str, Any]:
    for crit in sort_criteria:
        if crit.get("FieldName") not in _SORTABLE:
            raise InvalidInputException(
                f"SortCriteria.FieldName: {crit.get('FieldName')!r} is not sortable; use one of {sorted(_SORTABLE)}"
            )
    for i, pred in enumerate(filters):
        # Checked before any table is: a time that is not one is refused whether or not some table has
        # the field to compare it with.
        if pred.get("Key") in _TIME_FIELDS and pred.get("Value") is not None:
            _parse_time(pred["Value"], pred["Key"], f"Filters[{i}].Value")
    query = paging.query_digest("SearchTables", filters, search_text, sort_criteria, resource_share_type)
    position = paging.read_token(ctx.store.secret, query, next_token)
    # A continuation reads the same snapshot as the first page, so offsets stay exact.
    if position is None:
        snap, offset = ctx.store.latest(), 0
    else:
        try:
            snap, offset = ctx.store.at_version(int(position[0])), int(position[1])
        except HistoryExpired as e:
            raise InvalidInputException(
                f"NextToken: the search it continues read version {position[0]} of the warehouse, which is "
                "older than the history it keeps now; search again from the start"
            ) from e
    if resource_share_type == "FOREIGN" or resource_share_type == "FEDERATED":
        hits: list[dict[str, Any]] = []  # this catalog has no tables shared from other accounts
    else:
        hits = [
            t
            for key in snap.sorted_keys(TABLE)
            if (t := _as_seen(snap.get(TABLE, key))) is not None
            and all(_matches_filter(t, p) for p in filters)
            and (not search_text or _matches_text(t, search_text))
        ]
    for crit in sort_criteria:
        name = crit["FieldName"]
        present = [t for t in hits if t.get(name) is not None]
        missing = [t for t in hits if t.get(name) is None]
        present.sort(key=lambda t: t[name], reverse=crit.get("Sort", "ASC") == "DESC")
        hits = present + missing
    limit = max_results or 100
    page = hits[offset : offset + limit]
    out: dict[str, Any] = {"TableList": [copy_doc(t) for t in page]}
    if offset + limit < len(hits):
        out["NextToken"] = paging.make_token(ctx.store.secret, query, [snap.version, offset + limit])
    return out

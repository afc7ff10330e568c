"""Spark's pushed partition filters (gluecat.expressions.spark's JSON form) as a catalog service reads
them: GetPartitions' ``Expression`` and GetTableObjects' ``PartitionPredicate``. Each selects every
partition the filters select, perhaps more: Spark filters the partitions it gets again."""

from __future__ import annotations

import dataclasses
from typing import Any

from gluecat.expressions.explain import predicate_text
from gluecat.expressions.spark import TooDeep, parse_spark_filters, relaxed
from gluecat.expressions.types import And, Compare, FalseP, In, IsNull, Like, Not, Or, Predicate, TrueP

EXPRESSION_LIMIT = 2048
"""GetPartitions' Expression and GetTableObjects' PartitionPredicate: at most this many characters."""


def _fold(p: Predicate) -> Predicate:
    """``p`` without TRUE and FALSE inside (Glue's expressions have no constants), or just one of them."""
    if isinstance(p, And | Or):
        children = [_fold(c) for c in p.children]
        absorbing, neutral = (FalseP, TrueP) if isinstance(p, And) else (TrueP, FalseP)
        if any(isinstance(c, absorbing) for c in children):
            return absorbing()
        kept = [c for c in children if not isinstance(c, neutral)]
        if not kept:
            return neutral()
        return kept[0] if len(kept) == 1 else type(p)(tuple(kept))
    if isinstance(p, Not):
        child = _fold(p.child)
        if isinstance(child, TrueP):
            return FalseP()
        if isinstance(child, FalseP):
            return TrueP()
        return Not(child)
    return p


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _column(name: str) -> str:
    """A key's name as an expression names it: backquoted unless a plain identifier."""
    if name and name[0] not in "0123456789" and set(name) <= _PLAIN:
        return name
    return "`" + name.replace("`", "``") + "`"


def _quoted(p: Predicate) -> Predicate:
    if isinstance(p, And | Or):
        return type(p)(tuple(_quoted(c) for c in p.children))
    if isinstance(p, Not):
        return Not(_quoted(p.child))
    if isinstance(p, Compare | In | Like | IsNull):
        return dataclasses.replace(p, column=_column(p.column))
    return p


def partition_predicate(filters: list[dict[str, Any]], keys: list[tuple[str, str]]) -> str | None:
    """As ``expression``, in what GetTableObjects' PartitionPredicate takes: comparisons (=, >, <, >=,
    <=) joined by AND; the rest is left to the caller, which filters the objects again."""
    text = expression(filters, keys)
    if not text:
        return text
    parts = _conjuncts(filters, keys)
    kept = []
    for p in parts:
        if isinstance(p, In) and not p.negated and len(p.values) == 1:
            p = Compare("=", p.column, p.values[0])
        if isinstance(p, Compare) and p.op in ("=", ">", "<", ">=", "<="):
            kept.append(predicate_text(_quoted(p)))
    joined = " AND ".join(kept)
    return joined if kept and len(joined) <= EXPRESSION_LIMIT else None


def _conjuncts(filters: list[dict[str, Any]], keys: list[tuple[str, str]]) -> list[Predicate]:
    usable = []
    for f in filters:
        try:
            parse_spark_filters([f])
        except TooDeep:
            continue
        usable.append(f)
    folded = _fold(relaxed(parse_spark_filters(usable), keys))
    return list(folded.children) if isinstance(folded, And) else [folded]


def expression(filters: list[dict[str, Any]], keys: list[tuple[str, str]]) -> str | None:
    """Spark's pushed partition filters as a GetPartitions Expression over ``keys`` ((name, Glue type)),
    selecting every partition they select and perhaps more (Spark filters the partitions it gets again):
    what gluecat cannot evaluate is left out (gluecat.expressions.spark.relaxed), and so is a top-level
    condition the Expression's 2,048 characters cannot hold. None selects every partition; "" none."""
    parts = _conjuncts(filters, keys)
    if len(parts) == 1 and isinstance(parts[0], TrueP):
        return None
    if len(parts) == 1 and isinstance(parts[0], FalseP):
        return ""
    texts = [predicate_text(_quoted(p), nested=len(parts) > 1) for p in parts]
    while texts and len(" AND ".join(texts)) > EXPRESSION_LIMIT:
        texts.remove(max(texts, key=len))
    return " AND ".join(texts) or None

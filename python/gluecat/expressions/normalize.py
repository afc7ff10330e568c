"""Normalize a predicate: NOT pushed down to the leaves, BETWEEN expanded, AND/OR flattened, constants folded.

Every rewrite keeps SQL's three-valued meaning: a comparison with NULL (or with a partition value that is not
valid for its key type) is unknown, NOT unknown is unknown, and a partition matches only when the whole
predicate is true. That is why NOT (year > 5) may become year <= 5.

>>> normalize(Not(And((Compare(">", "y", 5), Between("m", 1, 3)))))
Or(children=(Compare(op='<=', column='y', value=5), Compare(op='<', column='m', value=1), \
Compare(op='>', column='m', value=3)))
"""

from __future__ import annotations

from gluecat.expressions.types import (
    NEGATED,
    And,
    Between,
    Compare,
    FalseP,
    In,
    IsNull,
    Like,
    Not,
    Or,
    Predicate,
    TrueP,
)


def conjunction(children: list[Predicate] | tuple[Predicate, ...]) -> Predicate:
    """AND of ``children``, flattened and folded.

    >>> conjunction([TrueP(), Compare("=", "k", "a")])
    Compare(op='=', column='k', value='a')
    """
    out: list[Predicate] = []
    for c in children:
        if isinstance(c, And):
            out.extend(c.children)
        elif isinstance(c, FalseP):
            return FalseP()
        elif not isinstance(c, TrueP):
            out.append(c)
    if not out:
        return TrueP()
    return out[0] if len(out) == 1 else And(tuple(out))


def disjunction(children: list[Predicate] | tuple[Predicate, ...]) -> Predicate:
    """OR of ``children``, flattened and folded."""
    out: list[Predicate] = []
    for c in children:
        if isinstance(c, Or):
            out.extend(c.children)
        elif isinstance(c, TrueP):
            return TrueP()
        elif not isinstance(c, FalseP):
            out.append(c)
    if not out:
        return FalseP()
    return out[0] if len(out) == 1 else Or(tuple(out))


def flatten(pred: Predicate) -> Predicate:
    """Flatten nested AND/OR and fold TRUE/FALSE, leaving NOT and BETWEEN as written (what planning needs)."""
    if isinstance(pred, And):
        return conjunction([flatten(c) for c in pred.children])
    if isinstance(pred, Or):
        return disjunction([flatten(c) for c in pred.children])
    if isinstance(pred, Not):
        child = flatten(pred.child)
        if isinstance(child, TrueP):
            return FalseP()
        if isinstance(child, FalseP):
            return TrueP()
        return Not(child)
    return pred


def conjuncts(pred: Predicate) -> tuple[Predicate, ...]:
    """The top-level AND-joined parts of a predicate (one part if it is not an AND)."""
    flat = flatten(pred)
    if isinstance(flat, And):
        return flat.children
    if isinstance(flat, TrueP):
        return ()
    return (flat,)


def _between(p: Between, negated: bool) -> Predicate:
    if negated:
        return Or((Compare("<", p.column, p.low), Compare(">", p.column, p.high)))
    return And((Compare(">=", p.column, p.low), Compare("<=", p.column, p.high)))


def _normalize(pred: Predicate, negate: bool) -> Predicate:
    if isinstance(pred, Not):
        return _normalize(pred.child, not negate)
    if isinstance(pred, And | Or):
        children = [_normalize(c, negate) for c in pred.children]
        as_and = isinstance(pred, And) != negate
        return conjunction(children) if as_and else disjunction(children)
    if isinstance(pred, Between):
        return flatten(_between(pred, pred.negated != negate))
    if isinstance(pred, TrueP | FalseP):
        return (FalseP() if isinstance(pred, TrueP) else TrueP()) if negate else pred
    if not negate:
        return pred
    if isinstance(pred, Compare):
        return Compare(NEGATED[pred.op], pred.column, pred.value)
    if isinstance(pred, In):
        return In(pred.column, pred.values, not pred.negated)
    if isinstance(pred, Like):
        return Like(pred.column, pred.pattern, not pred.negated)
    assert isinstance(pred, IsNull)
    return IsNull(pred.column, not pred.negated)


def normalize(pred: Predicate) -> Predicate:
    """Push NOT to the leaves (De Morgan; comparisons flip, IN/LIKE/BETWEEN/IS NULL toggle), expand
    BETWEEN into >= AND <=, flatten AND/OR and fold TRUE/FALSE."""
    return _normalize(pred, False)

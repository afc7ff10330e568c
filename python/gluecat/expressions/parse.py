"""Parse a GetPartitions Expression into the predicate IR (Spark's filters: see spark.py).

sqlglot tokenizes and parses; this module only translates sqlglot's tree into the IR and rejects what a
partition filter cannot be (functions, arithmetic, column-vs-column, ...), saying where.

>>> parse("year = '2017' AND 2015 < month")
And(children=(Compare(op='=', column='year', value=Literal(text='2017', kind='string')), \
Compare(op='>', column='month', value=Literal(text='2015', kind='number'))))
>>> parse("   ")
TrueP()
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Tokenizer as BaseTokenizer
from sqlglot.tokens import TokenType

from gluecat.errors import InvalidInputException
from gluecat.expressions.types import (
    FLIPPED,
    And,
    Between,
    Compare,
    CompareOp,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
    Predicate,
    TrueP,
    Value,
)


class GlueExpressionDialect(Dialect):
    """Strings in single quotes ('' escapes a quote); identifiers in double quotes or backquotes.

    Glue (JSQLParser) also takes a double-quoted string as a literal; :func:`parse` turns a double-quoted
    name back into a string wherever a value is expected (``year = "2017"``).
    """

    class Tokenizer(BaseTokenizer):
        QUOTES: ClassVar[list[tuple[str, str] | str]] = ["'"]
        IDENTIFIERS: ClassVar[list[str | tuple[str, str]]] = ['"', "`"]
        STRING_ESCAPES: ClassVar[list[str]] = ["'"]


_COMPARISONS: dict[type[exp.Expr], CompareOp] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}


class _Translator:
    def __init__(self, text: str) -> None:
        self.text = text

    # -- error reporting -------------------------------------------------------------------------------

    def span(self, node: exp.Expr) -> tuple[int, int] | None:
        starts, ends = [], []
        for n in node.walk():
            meta = n.meta
            if "start" in meta and "end" in meta:
                starts.append(int(meta["start"]))
                ends.append(int(meta["end"]))
        if not starts:
            return None
        return min(starts), max(ends)

    def error(self, what: str, node: exp.Expr) -> InvalidInputException:
        span = self.span(node)
        if span is None:
            # Keyword-only nodes (NULL, TRUE) carry no position; find their text instead.
            fragment = node.sql()
            found = self.text.lower().find(fragment.lower())
            if found < 0:
                return InvalidInputException(f"Invalid Expression: {what}: {fragment!r}")
            span = (found, found + len(fragment) - 1)
        start, end = span
        # A parenthesised or function node's own tokens carry no position; widen to its brackets.
        while (
            end + 1 < len(self.text)
            and self.text[end + 1] == ")"
            and self.text.count("(", start, end + 1) > self.text.count(")", start, end + 1)
        ):
            end += 1
        return InvalidInputException(
            f"Invalid Expression: {what} at position {start + 1}: {self.text[start : end + 1]!r}"
        )

    # -- predicates ------------------------------------------------------------------------------------

    def predicate(self, node: exp.Expr) -> Predicate:
        if isinstance(node, exp.Paren):
            return self.predicate(node.this)
        if isinstance(node, exp.And):
            return And(_flatten(And, (self.predicate(node.this), self.predicate(node.expression))))
        if isinstance(node, exp.Or):
            return Or(_flatten(Or, (self.predicate(node.this), self.predicate(node.expression))))
        if isinstance(node, exp.Not):
            inner = node.this
            if isinstance(inner, exp.Paren):
                return Not(self.predicate(inner))
            child = self.predicate(inner)
            # sqlglot reads "x NOT IN (...)" as NOT (x IN (...)); keep the operator form Glue documents.
            if isinstance(child, In | Between | Like | IsNull):
                return _toggle(child)
            return Not(child)
        op = _COMPARISONS.get(type(node))
        if op is not None:
            return self.comparison(op, node)
        if isinstance(node, exp.In):
            return self.in_list(node)
        if isinstance(node, exp.Between):
            column = self.column(node.this, node)
            return Between(column, self.value(node.args["low"]), self.value(node.args["high"]))
        if isinstance(node, exp.Like):
            return self.like(node, node.this, node.expression, "\\", bool(node.args.get("negate")))
        if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):
            escape = self.value(node.expression)
            if not isinstance(escape, Literal) or len(escape.text) != 1:
                raise self.error("ESCAPE takes a single character", node.expression)
            like = node.this
            return self.like(node, like.this, like.expression, escape.text, bool(like.args.get("negate")))
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise self.error("IS takes only NULL or NOT NULL", node)
            return IsNull(self.column(node.this, node))
        if isinstance(node, exp.Column | exp.Identifier):
            raise self.error("a column name is not a condition; compare it with a value", node)
        if isinstance(node, exp.Literal | exp.Boolean | exp.Null):
            raise self.error("a constant is not a condition", node)
        if isinstance(node, exp.Func):
            raise self.error("functions are not supported", node)
        raise self.error(f"unsupported syntax ({type(node).__name__})", node)

    def comparison(self, op: CompareOp, node: exp.Expr) -> Compare:
        left, right = node.this, node.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column):
            # Glue reads a double-quoted word in value position as a string ("year" = "2017").
            if self.double_quoted(right):
                right_value: Value = Literal(right.name)
                return Compare(op, self.column(left, node), right_value)
            if self.double_quoted(left):
                return Compare(FLIPPED[op], self.column(right, node), Literal(left.name))
            raise self.error("comparing two columns is not supported; compare a column with a value", node)
        if isinstance(right, exp.Column):
            return Compare(FLIPPED[op], self.column(right, node), self.value(left))
        if not isinstance(left, exp.Column):
            if self.is_value(left) and self.is_value(right):
                raise self.error("a comparison needs a partition key column on one side", node)
            bad = left if not self.is_value(left) else right
            self.value(bad)  # raises the precise complaint about the operand
            raise self.error("a comparison needs a partition key column on one side", node)
        return Compare(op, self.column(left, node), self.value(right))

    def in_list(self, node: exp.In) -> In:
        if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
            raise self.error("IN takes a list of values", node)
        items = node.expressions
        if not items:
            raise self.error("IN needs at least one value", node)
        return In(self.column(node.this, node), tuple(self.value(v) for v in items))

    def like(self, node: exp.Expr, column: exp.Expr, pattern: exp.Expr, escape: str, negated: bool) -> Like:
        value = self.value(pattern)
        if not isinstance(value, Literal):  # pragma: no cover - value() only builds literals
            raise self.error("LIKE takes a string pattern", pattern)
        return Like(
            self.column(column, node),
            _to_backslash_escapes(value.text, escape, lambda m: self.error(m, pattern)),
            negated,
        )

    # -- operands --------------------------------------------------------------------------------------

    def double_quoted(self, node: exp.Expr) -> bool:
        ident = node.this if isinstance(node, exp.Column) else node
        if not isinstance(ident, exp.Identifier) or not ident.args.get("quoted"):
            return False
        start = ident.meta.get("start")
        return start is not None and self.text[int(start)] == '"'

    def is_value(self, node: exp.Expr) -> bool:
        return isinstance(node, exp.Literal | exp.Neg | exp.Cast) or self.double_quoted(node)

    def column(self, node: exp.Expr, context: exp.Expr) -> str:
        if isinstance(node, exp.Paren):
            return self.column(node.this, context)
        if isinstance(node, exp.Column):
            if node.table:
                raise self.error("qualified column names are not supported", node)
            return str(node.name)
        if isinstance(node, exp.Func):
            raise self.error("functions are not supported", node)
        if isinstance(node, exp.Binary):
            raise self.error("arithmetic is not supported", node)
        raise self.error("expected a partition key column", node)

    def value(self, node: exp.Expr) -> Literal:
        if isinstance(node, exp.Paren):
            return self.value(node.this)
        if isinstance(node, exp.Literal):
            return Literal(str(node.this), "string" if node.is_string else "number")
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
            return Literal(f"-{node.this.this}", "number")
        if isinstance(node, exp.Column) and self.double_quoted(node):
            return Literal(str(node.name))
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
            to = node.to.this
            if to == exp.DataType.Type.DATE:
                return Literal(str(node.this.this), "date")
            if to in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.DATETIME):
                return Literal(str(node.this.this), "timestamp")
            raise self.error("only DATE and TIMESTAMP typed literals are supported", node)
        if isinstance(node, exp.Null):
            raise self.error("NULL is not a value to compare with; use IS NULL or IS NOT NULL", node)
        if isinstance(node, exp.Column):
            raise self.error("expected a value, found a column", node)
        if isinstance(node, exp.Func):
            raise self.error("functions are not supported", node)
        if isinstance(node, exp.Binary | exp.Neg):
            raise self.error("arithmetic is not supported", node)
        raise self.error(f"unsupported value ({type(node).__name__})", node)


def _flatten(kind: type[And] | type[Or], children: Sequence[Predicate]) -> tuple[Predicate, ...]:
    out: list[Predicate] = []
    for c in children:
        if isinstance(c, kind):
            out.extend(c.children)
        else:
            out.append(c)
    return tuple(out)


def _toggle(p: In | Between | Like | IsNull) -> Predicate:
    if isinstance(p, In):
        return In(p.column, p.values, not p.negated)
    if isinstance(p, Between):
        return Between(p.column, p.low, p.high, not p.negated)
    if isinstance(p, Like):
        return Like(p.column, p.pattern, not p.negated)
    return IsNull(p.column, not p.negated)


def _to_backslash_escapes(pattern: str, escape: str, fail: Callable[[str], InvalidInputException]) -> str:
    """Rewrite a LIKE pattern to use backslash as its escape character (what the evaluators expect)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == escape:
            if i + 1 >= len(pattern):
                raise fail("a LIKE pattern cannot end with its escape character")
            out.append("\\" + pattern[i + 1])
            i += 2
            continue
        out.append("\\\\" if ch == "\\" else ch)
        i += 1
    return "".join(out)


def _unterminated_quote(text: str) -> int | None:
    quote: str | None = None
    opened = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None:
            if ch in "'\"`":
                quote, opened = ch, i
        elif ch == quote:
            if i + 1 < len(text) and text[i + 1] == quote:
                i += 1
            else:
                quote = None
        i += 1
    return opened if quote is not None else None


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(s) + 1 for s in lines[: line - 1]) + col - 1


def _join_spaced_not_equal(text: str) -> str:
    """Glue's operator table writes not-equal as ``< >``; read it as ``<>`` (same length, same positions)."""
    try:
        tokens = GlueExpressionDialect().tokenize(text)
    except TokenError:
        return text  # parse_one reports it
    out = text
    for a, b in pairwise(tokens):
        if (
            a.token_type == TokenType.LT
            and b.token_type == TokenType.GT
            and not text[a.end + 1 : b.start].strip()
        ):
            out = out[: a.start] + "<>" + " " * (b.end - a.start - 1) + out[b.end + 1 :]
    return out


def parse(expression: str | None) -> Predicate:
    """Parse a GetPartitions Expression. A blank expression matches everything.

    Raises InvalidInputException naming what is wrong and the 1-based character position where it is.

    >>> parse("f(year) = 1")
    Traceback (most recent call last):
    ...
    gluecat.errors.InvalidInputException: An error occurred (InvalidInputException): \
Invalid Expression: functions are not supported at position 1: 'f(year)'
    """
    if expression is None or not expression.strip():
        return TrueP()
    return _parsed(expression)


# The IR is immutable, so a parse can be shared: every page of a query names the same expression again,
# and parsing takes sqlglot a fifth of a millisecond. (Errors are not kept; they raise anew.)
@functools.lru_cache(maxsize=256)
def _parsed(expression: str) -> Predicate:
    try:
        tree = sqlglot.parse_one(_join_spaced_not_equal(expression), read=GlueExpressionDialect)
    except ParseError as e:
        err = e.errors[0] if e.errors else {}
        line, col = err.get("line"), err.get("col")
        highlight = str(err.get("highlight") or "")
        description = str(err.get("description") or e)
        if "Required keyword: 'expression' missing" in description:
            description = "an operator is missing its right-hand operand"
        elif description == "Expecting )":
            description = "a closing parenthesis ')' is missing"
        elif description.startswith("Invalid expression / Unexpected token"):
            description = "unexpected token"
        if line is None or col is None:
            raise InvalidInputException(f"Invalid Expression: {description}") from e
        start = max(_offset(expression, int(line), int(col)) - len(highlight) + 1, 0)
        where = f"position {start + 1}"
        if "\n" in expression:
            where += f" (line {line}, column {start + 1 - _offset(expression, int(line), 1)})"
        raise InvalidInputException(f"Invalid Expression: {description} at {where}: {highlight!r}") from e
    except TokenError as e:
        pos = _unterminated_quote(expression)
        if pos is not None:
            raise InvalidInputException(
                f"Invalid Expression: unterminated quoted text at position {pos + 1}: {expression[pos:]!r}"
            ) from e
        raise InvalidInputException(f"Invalid Expression: cannot tokenize: {e}") from e
    if isinstance(tree, exp.Alias):
        raise _Translator(expression).error("unexpected text after a value", tree.args["alias"])
    if tree is None or isinstance(tree, exp.Block):
        raise InvalidInputException("Invalid Expression: expected exactly one condition")
    return _Translator(expression).predicate(tree)

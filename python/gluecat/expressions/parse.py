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

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType
from sqlglot.tokens import Tokenizer as BaseTokenizer

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
        return InvalidInputException(f"Invalid Expression: {what}{self.where(node)}")

    def where(self, node: exp.Expr) -> str:
        """`` at position N: '...'``, the node's place in the caller's text ('' where it has none)."""
        span = self.span(node)
        if span is None:
            # Keyword-only nodes (NULL, TRUE) carry no position; find their text instead.
            fragment = node.sql()
            found = self.text.lower().find(fragment.lower())
            if found < 0:  # sqlglot's rendering is not the caller's text: do not quote it
                return ""
            span = (found, found + len(fragment) - 1)
        start, end = span
        # A parenthesised or function node's own tokens carry no position; widen to its brackets.
        while (
            end + 1 < len(self.text)
            and self.text[end + 1] == ")"
            and self.text.count("(", start, end + 1) > self.text.count(")", start, end + 1)
        ):
            end += 1
        return f" at position {start + 1}: {self.text[start : end + 1]!r}"

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
        raise self.error(f"{_what(node)} is not a condition that a partition expression can hold", node)

    def comparison(self, op: CompareOp, node: exp.Expr) -> Compare:
        left, right = node.this, node.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column):
            # Glue reads a double-quoted word in value position as a string ("year" = "2017").
            if self.double_quoted(right):
                right_value: Value = Literal(right.name)
                return Compare(op, self.column(left, node), right_value)
            if self.double_quoted(left):
                return Compare(FLIPPED[op], self.column(right, node), Literal(left.name))
            raise _TwoNames((str(left.name), str(right.name)), self.where(node))
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
        what = _what(node)
        raise self.error(
            "expected a value (a quoted string, a number, DATE '...' or TIMESTAMP '...')"
            + ("" if what == "this" else f", not {what}"),
            node,
        )


def _what(node: exp.Expr) -> str:
    """What a node is, in the words of someone writing an expression (not sqlglot's class names)."""
    if isinstance(node, exp.Binary):
        return "an operator"
    if isinstance(node, exp.Star):
        return "'*'"
    if isinstance(node, exp.Placeholder | exp.Parameter):
        return "a parameter"
    if isinstance(node, exp.Query | exp.Subquery | exp.Command):
        return "a statement"
    return "this"


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


MAX_DEPTH = 32
"""How deeply an expression may nest parentheses and NOTs (counted together): deeper ones are refused
with InvalidInputException before they are parsed, since the parser recurses once per level."""


def _unterminated(text: str) -> tuple[int, str] | None:
    """Where an unterminated quote or /* comment starts, and which it is."""
    quote: str | None = None
    opened = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None:
            if ch in "'\"`":
                quote, opened = ch, i
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    return i, "comment"
                i = end + 1
            elif text.startswith("--", i):
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
        elif ch == quote:
            if i + 1 < len(text) and text[i + 1] == quote:
                i += 1
            else:
                quote = None
        i += 1
    return (opened, "quoted text") if quote is not None else None


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(s) + 1 for s in lines[: line - 1]) + col - 1


def _where(text: str, start: int) -> str:
    """A 1-based position, with line and column when the expression has several lines."""
    where = f"position {start + 1}"
    if "\n" in text:
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        where += f" (line {line}, column {column})"
    return where


def _tokens(text: str) -> list[Token]:
    try:
        tokens = GlueExpressionDialect().tokenize(text)
    except TokenError as e:
        found = _unterminated(text)
        if found is not None:
            pos, what = found
            raise InvalidInputException(
                f"Invalid Expression: unterminated {what} at {_where(text, pos)}: {text[pos : pos + 40]!r}"
            ) from None
        raise InvalidInputException("Invalid Expression: the text cannot be read as an expression") from e
    return tokens


def _joined_not_equal(text: str, tokens: list[Token]) -> tuple[str, list[Token]]:
    """Glue's operator table writes not-equal as ``< >``; read it as ``<>`` (same length, same positions)."""
    out = text
    for a, b in pairwise(tokens):
        if (
            a.token_type == TokenType.LT
            and b.token_type == TokenType.GT
            and not text[a.end + 1 : b.start].strip()
        ):
            out = out[: a.start] + "<>" + " " * (b.end - a.start - 1) + out[b.end + 1 :]
    return (out, _tokens(out)) if out != text else (text, tokens)


# Tokens after which a NOT starts a new negated operand (rather than being NOT IN, NOT LIKE, ...).
_OPERAND_START = {TokenType.L_PAREN, TokenType.AND, TokenType.OR, TokenType.NOT}


def check_depth(text: str, tokens: list[Token]) -> None:
    """Refuse an expression nesting more than MAX_DEPTH parentheses and NOTs.

    A level is an open parenthesis, or a NOT whose operand has not ended yet (NOT binds tighter than AND
    and OR, so an AND or OR at its parenthesis level ends it); long AND/OR chains do not nest.
    """
    nots = [0]  # per open parenthesis level, the NOTs still applying there
    depth = 0
    previous: Token | None = None
    for token in tokens:
        kind = token.token_type
        if kind == TokenType.L_PAREN:
            nots.append(0)
            depth += 1
        elif kind == TokenType.R_PAREN and len(nots) > 1:
            depth -= 1 + nots.pop()
        elif kind == TokenType.NOT and (previous is None or previous.token_type in _OPERAND_START):
            nots[-1] += 1
            depth += 1
        elif kind in (TokenType.AND, TokenType.OR):
            depth -= nots[-1]
            nots[-1] = 0
        if depth > MAX_DEPTH:
            raise InvalidInputException(
                f"Invalid Expression: nested more than {MAX_DEPTH} levels deep (parentheses and NOTs) at "
                f"{_where(text, token.start)}"
            )
        previous = token


class _TwoNames(InvalidInputException):
    """A comparison of two unquoted names: two columns, or (given the partition keys, which tell) a key
    compared with a value written without its quotes (``country = US``)."""

    def __init__(self, names: tuple[str, str], where: str) -> None:
        self.names, self.where = names, where
        super().__init__(
            "Invalid Expression: comparing two columns is not supported; compare a column with a value "
            f"(a string value is quoted: '{names[1]}'){where}"
        )

    def with_keys(self, keys: Sequence[str]) -> InvalidInputException:
        known = {k.lower() for k in keys}
        strangers = [n for n in self.names if n.lower() not in known]
        if len(strangers) == 1:
            what = f"{strangers[0]} is neither a partition key nor a quoted value ('{strangers[0]}')"
        elif strangers:
            what = f"neither {self.names[0]} nor {self.names[1]} is a partition key ({', '.join(keys)})"
        else:
            return InvalidInputException(self.message)
        return InvalidInputException(f"Invalid Expression: {what}{self.where}")


def parse(expression: str | None, keys: Sequence[str] | None = None) -> Predicate:
    """Parse a GetPartitions Expression. A blank expression matches everything. Given the names of the
    table's partition keys, an error can say which word is not one (``country = US``).

    Raises InvalidInputException naming what is wrong and the 1-based character position where it is.

    >>> parse("f(year) = 1")
    Traceback (most recent call last):
    ...
    gluecat.errors.InvalidInputException: An error occurred (InvalidInputException): \
Invalid Expression: functions are not supported at position 1: 'f(year)'
    """
    if expression is None or not expression.strip():
        return TrueP()
    try:
        return _parsed(expression)
    except _TwoNames as e:  # (an error of its own class only here, where the keys may tell more)
        raise (e.with_keys(keys) if keys is not None else InvalidInputException(e.message)) from None


# sqlglot's error descriptions, said as a caller would say them.
_DESCRIPTIONS = (
    ("Required keyword: 'expression' missing", "an operator is missing its right-hand operand"),
    ("Expecting )", "a closing parenthesis ')' is missing"),
    ("Invalid expression / Unexpected token", "unexpected token"),
)


def _parse_error(text: str, tokens: list[Token], error: ParseError) -> InvalidInputException:
    detail = error.errors[0] if error.errors else {}
    raw = str(detail.get("description") or "")
    description = next((ours for theirs, ours in _DESCRIPTIONS if raw.startswith(theirs)), "unexpected token")
    line, col = detail.get("line"), detail.get("col")
    highlight = str(detail.get("highlight") or "")
    hint = _keyword_hint(tokens)
    if line is None or col is None:
        return InvalidInputException(f"Invalid Expression: {description}{hint}")
    start = max(_offset(text, int(line), int(col)) - len(highlight) + 1, 0)
    return InvalidInputException(
        f"Invalid Expression: {description} at {_where(text, start)}: {highlight!r}{hint}"
    )


_PREDICATE_OPERATORS = {
    TokenType.EQ,
    TokenType.NEQ,
    TokenType.LT,
    TokenType.LTE,
    TokenType.GT,
    TokenType.GTE,
    TokenType.IN,
    TokenType.LIKE,
    TokenType.BETWEEN,
    TokenType.IS,
    TokenType.NOT,
}


def _keyword_hint(tokens: list[Token]) -> str:
    """A word that SQL reserves cannot name a partition key unquoted; say so when one stands where a key
    would (before a comparison), since that is the likely cause of the error."""
    for token, after in pairwise(tokens):
        if (
            token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER)
            and token.text.upper() in BaseTokenizer.KEYWORDS
            and after.token_type in _PREDICATE_OPERATORS
        ):
            word = token.text
            return f' ({word!r} is a reserved word: quote a partition key of that name, as "{word}")'
    return ""


# The IR is immutable, so a parse can be shared: every page of a query names the same expression again,
# and parsing takes sqlglot a fifth of a millisecond. (Errors are not kept; they raise anew.)
@functools.lru_cache(maxsize=256)
def _parsed(expression: str) -> Predicate:
    text, tokens = _joined_not_equal(expression, _tokens(expression))
    check_depth(expression, tokens)
    try:
        trees = [t for t in GlueExpressionDialect().parser().parse(tokens, text) if t is not None]
    except ParseError as e:
        raise _parse_error(expression, tokens, e) from None
    except RecursionError:  # pragma: no cover - check_depth keeps the parser well inside the stack
        raise InvalidInputException(
            f"Invalid Expression: nested too deeply (at most {MAX_DEPTH} levels)"
        ) from None
    if not trees:
        raise InvalidInputException("Invalid Expression: no condition (only comments or ';')")
    tree = trees[0]
    if len(trees) > 1 or isinstance(tree, exp.Block):
        raise InvalidInputException("Invalid Expression: expected exactly one condition")
    if isinstance(tree, exp.Alias):
        raise _Translator(expression).error("unexpected text after a value", tree.args["alias"])
    if isinstance(tree, exp.Command):
        error = _Translator(expression).error("not a condition", tree)
        raise InvalidInputException(error.message + _keyword_hint(tokens))
    return _Translator(expression).predicate(tree)

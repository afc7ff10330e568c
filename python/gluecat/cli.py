"""gluecat: the operators' tools over a warehouse, and the servers of its protocols.

(The first line above is ``gluecat --help``'s description.) Subsystems add their own subcommands
(``gluecat serve`` and ``gluecat users`` from gluecat.serve_cli,
``gluecat spark-conf`` from gluecat.spark.cli) through a ``register(subparsers)`` function.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from gluecat.api.pages import every
from gluecat.errors import GlueError

_SUBSYSTEMS = ("gluecat.serve_cli", "gluecat.spark.cli", "gluecat.demo")


class Refused(Exception):
    """A command refused before it did anything; the message says why in one line."""


class Missing(Refused):
    """No warehouse at the path: nothing there, or a folder without gluecat's log."""


def _existing(warehouse: str, *, can_create: bool = False) -> str:
    """``warehouse``, if it is a gluecat warehouse. The commands that read or maintain one refuse any
    other path: ``Catalog`` would make a new, empty warehouse there (in a mistyped folder, or inside
    another tool's), and answer as if it were the one meant. ``can_create``: the command can make one
    there if asked (``serve --create``), which the refusal says."""
    from gluecat.store import layout
    from gluecat.store.filesystems import open_fs
    from gluecat.store.fs import LocalFS

    create = ", or pass --create to make a new, empty one there" if can_create else ""
    wfs = open_fs(warehouse)
    if isinstance(wfs, LocalFS):
        if not os.path.exists(wfs.root):
            raise Missing(f"{warehouse}: no such warehouse (give its path with --warehouse{create})")
        if not os.path.isdir(wfs.root):
            raise Refused(f"{warehouse}: a file, not a warehouse folder")
    # Version 0 stays (as a stub once expired); warehouses an old expiry trimmed keep checkpoints.
    if not wfs.exists(layout.log_path(0)) and not wfs.list_names(layout.CHECKPOINT_DIR):
        inside = "; pass --create to make a new, empty one in it" if can_create else ""
        raise Missing(f"{warehouse}: not a gluecat warehouse (it has no {layout.LOG_DIR} folder){inside}")
    return warehouse


def _catalog(args: argparse.Namespace) -> Any:
    from gluecat import Catalog

    return Catalog(_existing(args.warehouse))


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str, sort_keys=False))


def _cmd_databases(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    token = None
    while True:
        page = cat.get_databases(**({"NextToken": token} if token else {}))
        for db in page["DatabaseList"]:
            print(db["Name"])
        token = page.get("NextToken")
        if not token:
            return 0


def _cmd_tables(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    kwargs: dict[str, Any] = {"DatabaseName": args.database}
    if args.pattern:
        kwargs["Expression"] = args.pattern
    for t in every(cat.get_tables, "TableList", **kwargs):
        print(f"{t['Name']}\t{t.get('TableType', '')}\tversion {t['VersionId']}")
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    resp = _catalog(args).get_table(DatabaseName=args.database, Name=args.table)
    _print(resp["Table"])
    return 0


def _cmd_partitions_list(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    kwargs: dict[str, Any] = {
        "DatabaseName": args.database,
        "TableName": args.table,
        "Expression": args.expression or "",
    }
    for p in every(cat.get_partitions, "Partitions", **kwargs):
        print("\t".join(p["Values"]) + "\t" + (p.get("StorageDescriptor") or {}).get("Location", ""))
    return 0


def _cmd_partitions_explain(args: argparse.Namespace) -> int:
    plan = _catalog(args).explain_partitions(
        DatabaseName=args.database, TableName=args.table, Expression=args.expression or ""
    )
    if plan["Index"] is None:
        print("index: none (every partition is read, then filtered)")
    else:
        print(
            f"index: {plan['Index']} on ({', '.join(plan['IndexKeys'])}), keys used: {', '.join(plan['KeysUsed'])}"
        )
        for r in plan["Ranges"]:
            print(f"  scans: {r['Text']}")
    print(f"residual filter: {plan['Residual']}")
    print(f"matching partitions: {plan['MatchingPartitions']}")
    return 0


def _lake_formation(args: argparse.Namespace) -> Any:
    from gluecat import LakeFormation

    return LakeFormation(_existing(args.warehouse))


def _cmd_transactions_list(args: argparse.Namespace) -> int:
    lf = _lake_formation(args)
    kwargs: dict[str, Any] = {"StatusFilter": args.status}
    for t in every(lf.list_transactions, "Transactions", **kwargs):
        end = t.get("TransactionEndTime")
        print(
            f"{t['TransactionId']}\t{t['TransactionStatus']}\t{t['TransactionStartTime'].isoformat()}"
            f"\t{end.isoformat() if end else ''}"
        )
    return 0


def _cmd_transactions_show(args: argparse.Namespace) -> int:
    lf = _lake_formation(args)
    shown = dict(lf.describe_transaction(TransactionId=args.id)["TransactionDescription"])
    tx = lf._ctx.transactions().get(args.id)
    shown.update(
        {
            "TransactionType": tx.kind,
            "ReadVersion": tx.start_version,
            "CommitVersion": tx.commit_version,
            "IdleTimeoutSeconds": tx.timeout_us / 1e6,
            "StagedWrites": _staged(tx.writes),
        }
    )
    if tx.reason:
        shown["Reason"] = tx.reason
    if tx.on_cancel:
        shown["DeleteOnCancel"] = sum(len(c["objects"]) for c in tx.on_cancel)
    _print(shown)
    return 0


def _staged(writes: list[dict[str, Any]]) -> list[str]:
    out = []
    for w in writes:
        table = ".".join(w["table"])
        if w["w"] == "objects":
            adds = sum(1 for op in w["ops"] if op[3] is not None)
            out.append(f"{table}: {adds} objects added, {len(w['ops']) - adds} deleted")
        else:
            out.append(f"{table}: {'dropped' if w.get('drop') else 'definition written'}")
    return out


def _cmd_objects(args: argparse.Namespace) -> int:
    kwargs: dict[str, Any] = {"DatabaseName": args.database, "TableName": args.table}
    if args.predicate:
        kwargs["PartitionPredicate"] = args.predicate
    if args.as_of:
        kwargs["QueryAsOfTime"] = args.as_of
    if args.transaction:
        kwargs["TransactionId"] = args.transaction
    for group in every(_lake_formation(args).get_table_objects, "Objects", **kwargs):
        values = "\t".join(group.get("PartitionValues", []))
        for o in group["Objects"]:
            print(
                f"{values}\t{o['Uri']}\t{o['ETag']}\t{o['Size']}"
                if values
                else f"{o['Uri']}\t{o['ETag']}\t{o['Size']}"
            )
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from gluecat.store.maintenance import describe
    from gluecat.store.store import Store

    _print(describe(Store(_existing(args.warehouse))))
    return 0


def _cmd_compact(args: argparse.Namespace) -> int:
    """Fold the small per-commit files into a checkpoint, merge partition segments, expire history."""
    from gluecat.store.maintenance import expire
    from gluecat.store.store import Store

    store = Store(_existing(args.warehouse))
    if args.apply:
        from gluecat.catalog.compact import compact_all
        from gluecat.catalog.context import Context

        merged = compact_all(Context(store=store))
        print(f"merged the partition segments of {merged} table(s) into one sorted file each")
        version = store.checkpoint()
        print(f"checkpoint written at version {version}")
        swept = _sweep_governed_writes(args.warehouse)
        print(f"removed {swept} folder(s) of ended governed write jobs")
    else:
        print(
            f"would merge partition segments and write a checkpoint (version {store.latest().version} or, after merges, later)"
        )
    # A retention longer than the calendar goes back is as good as forever (and timedelta could not hold it).
    retain = timedelta(hours=min(args.retain_hours, 24 * 365 * 1000))
    # The dry run reports as if its checkpoint had been written, so that it says what --apply would do.
    report = expire(store, retain=retain, dry_run=not args.apply, assume_checkpoint=not args.apply)
    stubbed, deleted = ("replaced", "deleted") if report.applied else ("would replace", "would delete")
    print(
        f"{stubbed} {len(report.log_entries)} log entries with stubs; {deleted} {len(report.checkpoints)} "
        f"checkpoints, {len(report.data_files)} data files, {len(report.temporary_files)} temporary files "
        f"(history before version {report.base_checkpoint} is older than {args.retain_hours:g} h)"
        if report.base_checkpoint is not None
        else f"nothing is older than the retention period ({args.retain_hours:g} h)"
    )
    if not args.apply:
        print("dry run: pass --apply to write the checkpoint and delete")
    return 0


def _sweep_governed_writes(warehouse: str) -> int:
    """Remove the ``.gluecat-tx-*`` folders of ended write jobs (a killed Spark job's files) in every
    governed table's folder, as the next write to the table would."""
    from gluecat import Catalog
    from gluecat.api.pages import every
    from gluecat.catalog.objects import is_governed
    from gluecat.spark.governed import GovernedWrites

    catalog = Catalog(warehouse)
    writes = GovernedWrites(catalog)
    removed = 0
    for db in every(catalog.get_databases, "DatabaseList"):
        for table in every(catalog.get_tables, "TableList", DatabaseName=db["Name"]):
            if is_governed(table) and (table.get("StorageDescriptor") or {}).get("Location"):
                removed += len(writes.sweep(table))
    return removed


def _cmd_fsck(args: argparse.Namespace) -> int:
    """Verify every file of a warehouse; nonzero exit if anything is damaged."""
    from gluecat.store.fsck import check, render

    report = check(args.warehouse)
    if args.json:
        _print(report.to_json())
    else:
        print(render(report, verbose=args.verbose))
    return 1 if report.damaged else 0


def _iso_time(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 time (e.g. 2026-01-02T03:04:05+00:00)"
        ) from None


def number(kind: type[int] | type[float], least: float, most: float = math.inf, unit: str = "") -> Any:
    """An argparse type: a finite number of ``kind`` from ``least`` to ``most`` (of ``unit``, said in the
    refusal)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and least <= value <= most):
            bounds = f"from {least:g} to {most:g}" if math.isfinite(most) else f"{least:g} or more"
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {what}{f' of {unit}' if unit else ''} ({bounds})"
            )
        return value

    return parse


def table_arguments(p: argparse.ArgumentParser, *, expression: bool = False) -> None:
    """A table, named as ``DATABASE.TABLE`` or as two words ``DATABASE TABLE``, as every command takes it
    (resolved by :func:`_name_the_table` once parsed); with ``expression``, a GetPartitions expression may
    follow (or be given with --expression)."""
    p.add_argument(
        "database",
        metavar="DATABASE[.TABLE]",
        help="the table as DATABASE.TABLE (split at the first dot), or its database followed by TABLE",
    )
    p.add_argument("table", metavar="TABLE", nargs="?", help="the table's name, after its DATABASE")
    if expression:
        p.add_argument(
            "expression",
            metavar="EXPRESSION",
            nargs="?",
            help="a GetPartitions Expression, e.g. \"country = 'US' AND dt >= '2024-01-10'\" "
            "(default: none, every partition)",
        )
        p.add_argument(
            "--expression",
            "-e",
            dest="expression_option",
            metavar="EXPRESSION",
            help="the EXPRESSION, as an option",
        )
    p.set_defaults(table_parser=p)


def _name_the_table(args: argparse.Namespace) -> None:
    """Sets ``args.database`` and ``args.table`` (and ``args.expression``) from the words given: one word
    is DATABASE.TABLE; two are DATABASE TABLE, unless the first has a dot and an expression may follow."""
    takes_expression = hasattr(args, "expression_option")
    words = [w for w in (args.database, args.table, getattr(args, "expression", None)) if w is not None]
    if len(words) == 1 or ("." in words[0] and takes_expression):
        database, _, table = words[0].partition(".")
        rest = words[1:]
    else:
        database, table, rest = words[0], words[1], words[2:]
    if not database or not table:
        args.table_parser.error(f"name the table as DATABASE.TABLE or DATABASE TABLE, not {words[0]!r}")
    if len(rest) > takes_expression:
        args.table_parser.error(f"unrecognized arguments: {' '.join(rest[takes_expression:])}")
    args.database, args.table = database, table
    if takes_expression:
        if rest and args.expression_option is not None:
            args.table_parser.error("give the expression once: as EXPRESSION or with --expression")
        args.expression = rest[0] if rest else args.expression_option


class _NoPasswordArgument(argparse.Action):
    """``--password``: refused with the reason, rather than taken for an abbreviation of another option
    or reported as unknown."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        parser.error(
            "a password is never an argument (it would show in the process list and the shell's "
            "history): pipe it to --password-stdin"
        )


def refuse_password_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--password", action=_NoPasswordArgument, nargs="?", help=argparse.SUPPRESS)


def _finish(parser: argparse.ArgumentParser) -> None:
    """Every command of the tree: no abbreviated options (``--password x`` must not be read as
    ``--password-stdin``), and its one-line help is also its description, the first thing its own
    ``--help`` says."""
    parser.allow_abbrev = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if sub.description is None and helps.get(name):
                    sub.description = str(helps[name])[:1].upper() + str(helps[name])[1:] + "."
                _finish(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gluecat",
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="'gluecat COMMAND --help' describes each command; README.md and docs/ say more.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")

    def with_warehouse(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--warehouse", "-w", default="warehouse", help="warehouse path or URI (default ./warehouse)"
        )
        return p

    p = with_warehouse(sub.add_parser("databases", help="list databases"))
    p.set_defaults(func=_cmd_databases)
    p = with_warehouse(sub.add_parser("tables", help="list the tables of a database"))
    p.add_argument("database", help="the database")
    p.add_argument("--pattern", help="a GetTables Expression (regular expression, '*' wildcards)")
    p.set_defaults(func=_cmd_tables)
    p = with_warehouse(sub.add_parser("table", help="show a table as GetTable returns it"))
    table_arguments(p)
    p.set_defaults(func=_cmd_table)
    parts = sub.add_parser("partitions", help="list partitions, or explain how an expression is planned")
    psub = parts.add_subparsers(dest="partitions_command", required=True, metavar="COMMAND", help="one of:")
    for name, func, helptext in (
        ("list", _cmd_partitions_list, "list the partitions matching an expression"),
        (
            "explain",
            _cmd_partitions_explain,
            "which partition index an expression uses, and what is filtered after",
        ),
    ):
        p = with_warehouse(psub.add_parser(name, help=helptext))
        table_arguments(p, expression=True)
        p.set_defaults(func=func)
    txs = sub.add_parser("transactions", help="Lake Formation transactions: list them, or show one")
    tsub = txs.add_subparsers(dest="transactions_command", required=True, metavar="COMMAND", help="one of:")
    p = with_warehouse(tsub.add_parser("list", help="the transactions, newest first"))
    p.add_argument(
        "--status",
        default="ALL",
        choices=["ALL", "COMPLETED", "ACTIVE", "COMMITTED", "ABORTED"],
        help="only those of this status; COMPLETED is COMMITTED or ABORTED (default ALL)",
    )
    p.set_defaults(func=_cmd_transactions_list)
    p = with_warehouse(tsub.add_parser("show", help="one transaction: status, times, what it staged"))
    p.add_argument("id", help="the TransactionId")
    p.set_defaults(func=_cmd_transactions_show)
    p = with_warehouse(sub.add_parser("objects", help="a governed table's objects (GetTableObjects)"))
    table_arguments(p)
    p.add_argument("--predicate", help="a PartitionPredicate (=, >, <, >=, <= joined by AND)")
    p.add_argument(
        "--as-of", type=_iso_time, help="the objects as of a time (ISO 8601, e.g. 2026-01-02T03:04:05+00:00)"
    )
    p.add_argument("--transaction", help="the objects as a transaction sees them (or its commit left them)")
    p.set_defaults(func=_cmd_objects)
    p = with_warehouse(sub.add_parser("info", help="the warehouse's version, checkpoints and file counts"))
    p.set_defaults(func=_cmd_info)
    p = with_warehouse(sub.add_parser("compact", help="checkpoint, merge small files, expire old history"))
    p.add_argument("--apply", action="store_true", help="really write and delete (default: dry run)")
    p.add_argument(
        "--retain-hours",
        metavar="HOURS",
        type=number(float, 0, unit="hours"),
        default=24 * 7,
        help="time-travel history to keep (default 168)",
    )
    p.set_defaults(func=_cmd_compact)
    p = with_warehouse(
        sub.add_parser(
            "fsck",
            aliases=["check"],
            help="verify every log entry, checkpoint and data file; exit 1 if anything is damaged",
        )
    )
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--verbose", "-v", action="store_true", help="list every note, not three of each kind")
    p.set_defaults(func=_cmd_fsck)
    for module in _SUBSYSTEMS:
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            if e.name != module:
                raise
            continue
        mod.register(sub)
    _finish(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "table_parser"):
        _name_the_table(args)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, where a closed pipe can still be told from a failure
        return code
    except (GlueError, Refused) as e:
        print(f"gluecat: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`gluecat table ... | head`): what it read was right, so no traceback or
        # error; the exit status is a shell's for a command ended by SIGPIPE. Python would fail once more
        # flushing stdout at exit, so stdout goes nowhere from here on.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except OSError as e:  # a folder that cannot be read or written, a port in use, ...
        print(f"gluecat {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

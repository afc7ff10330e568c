"""The gluecat command: the demo warehouse, listing, explaining, compacting."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gluecat import Catalog, LakeFormation
from gluecat.cli import build_parser, main
from tests.governed_table import make_table


@pytest.fixture
def demo(warehouse: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["demo", "--no-spark", "--warehouse", warehouse]) == 0
    out = capsys.readouterr().out
    assert "database sales: tables ['orders']" in out
    assert "5 partitions match" in out
    return warehouse


def test_the_demo_is_created_once_and_reused(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--no-spark", "--warehouse", demo]) == 0
    parts = Catalog(demo).get_partitions(DatabaseName="sales", TableName="orders", MaxResults=1000)[
        "Partitions"
    ]
    assert len(parts) == 4 * 14


def test_listing_commands(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["databases", "-w", demo]) == 0
    assert capsys.readouterr().out.split() == ["sales"]
    assert main(["tables", "sales", "-w", demo]) == 0
    assert capsys.readouterr().out.startswith("orders\tEXTERNAL_TABLE\tversion 1")
    assert main(["table", "sales", "orders", "-w", demo]) == 0
    assert json.loads(capsys.readouterr().out)["PartitionKeys"][1] == {"Name": "dt", "Type": "date"}
    assert (
        main(["partitions", "list", "sales", "orders", "country = 'DE' AND dt < '2024-01-03'", "-w", demo])
        == 0
    )
    assert [line.split("\t")[:2] for line in capsys.readouterr().out.splitlines()] == [
        ["DE", "2024-01-01"],
        ["DE", "2024-01-02"],
    ]


def test_explain_says_which_index_and_what_is_filtered_after(
    demo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "partitions",
                "explain",
                "sales",
                "orders",
                "country = 'US' AND NOT (dt < '2024-01-10' OR dt > '2024-01-19')",
                "-w",
                demo,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "index: by_country_dt on (country, dt), keys used: country" in out
    assert "residual filter: dt >= DATE '2024-01-10' AND dt <= DATE '2024-01-19'" in out
    assert "matching partitions: 5" in out
    assert main(["partitions", "explain", "sales", "orders", "dt = '2024-01-01'", "-w", demo]) == 0
    assert "index: none" in capsys.readouterr().out


def test_compact_is_a_dry_run_unless_applied(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "-w", demo]) == 0
    assert "dry run" in capsys.readouterr().out
    assert main(["info", "-w", demo]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoints"] == 0
    assert main(["compact", "--apply", "-w", demo]) == 0
    assert "checkpoint written" in capsys.readouterr().out
    assert main(["info", "-w", demo]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoints"] == 1


def test_compact_removes_the_folders_of_ended_governed_write_jobs(
    warehouse: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A killed Spark job leaves its files in ``.gluecat-tx-<transaction>``; compaction removes the folders
    of ended transactions and leaves a running job's, and folders that are no transaction of this
    warehouse."""
    location = tmp_path / "t"
    lf = LakeFormation(make_table(warehouse, location=location.as_uri(), keys=()))
    ended, running = (lf.start_transaction()["TransactionId"] for _ in range(2))
    lf.cancel_transaction(TransactionId=ended)
    folders = [location / f".gluecat-tx-{name}" for name in (ended, running, "not-a-transaction")]
    for folder in folders:
        folder.mkdir(parents=True)
        (folder / "part-0.parquet").write_bytes(b"left by a killed job")
    assert main(["compact", "--apply", "-w", warehouse]) == 0
    assert "removed 1 folder(s) of ended governed write jobs" in capsys.readouterr().out
    assert [f.exists() for f in folders] == [False, True, True]


def test_errors_are_reported_not_raised(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["table", "sales", "nope", "-w", demo]) == 1
    assert "EntityNotFoundException" in capsys.readouterr().err


def test_transactions_and_objects_commands(warehouse: str, capsys: pytest.CaptureFixture[str]) -> None:
    glue = make_table(warehouse)
    lf = LakeFormation(glue)
    done = lf.start_transaction()["TransactionId"]
    lf.update_table_objects(
        DatabaseName="db",
        TableName="t",
        TransactionId=done,
        WriteOperations=[
            {"AddObject": {"Uri": f"s3://b/t/{k}", "ETag": "e", "Size": 5, "PartitionValues": [str(k)]}}
            for k in (1, 2)
        ],
    )
    lf.commit_transaction(TransactionId=done)
    then = datetime.now(UTC).isoformat()
    open_tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]

    assert main(["transactions", "list", "-w", warehouse]) == 0
    listed = [line.split("\t")[:2] for line in capsys.readouterr().out.splitlines()]
    assert listed == [[open_tx, "ACTIVE"], [done, "COMMITTED"]]
    assert main(["transactions", "list", "--status", "COMMITTED", "-w", warehouse]) == 0
    assert capsys.readouterr().out.split("\t")[0] == done
    assert main(["transactions", "show", done, "-w", warehouse]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["TransactionStatus"] == "COMMITTED" and shown["TransactionType"] == "READ_AND_WRITE"
    assert shown["StagedWrites"] == ["db.t: 2 objects added, 0 deleted"]
    assert shown["CommitVersion"] == glue.warehouse_version()
    assert main(["transactions", "show", "nosuch", "-w", warehouse]) == 1
    assert "Transaction nosuch not found" in capsys.readouterr().err

    assert main(["objects", "db.t", "-w", warehouse]) == 0
    assert capsys.readouterr().out.splitlines() == ["1\ts3://b/t/1\te\t5", "2\ts3://b/t/2\te\t5"]
    assert main(["objects", "db.t", "--predicate", "k > 1", "--as-of", then, "-w", warehouse]) == 0
    assert capsys.readouterr().out.splitlines() == ["2\ts3://b/t/2\te\t5"]
    assert main(["objects", "db.t", "--predicate", "k = 1 OR k = 2", "-w", warehouse]) == 1
    assert "OR is not supported" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [
        ["databases"],
        ["tables", "sales"],
        ["table", "sales", "orders"],
        ["partitions", "list", "sales", "orders"],
        ["partitions", "explain", "sales", "orders", "country = 'US'"],
        ["transactions", "list"],
        ["transactions", "show", "some-id"],
        ["objects", "sales.orders"],
        ["info"],
        ["compact"],
        ["compact", "--apply"],
    ],
)
def test_commands_refuse_a_path_that_is_no_warehouse_and_make_none(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped path, a file, or another tool's folder: a one-line error, and no empty gluecat warehouse
    made there (which every later command would then read as if it were the one meant)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a warehouse")
    (tmp_path / "other-tool" / "metadata").mkdir(parents=True)
    for path, problem in (
        (tmp_path / "typo", "no such warehouse"),
        (a_file, "a file, not a warehouse folder"),
        (tmp_path / "other-tool", "not a gluecat warehouse"),
    ):
        assert main([*command, "-w", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("gluecat: ") and problem in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a-file", "metadata", "other-tool"]
    assert a_file.read_text() == "not a warehouse"


def test_compact_dry_run_reports_what_apply_does(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The dry run counts the checkpoints that --apply writes before it expires, so it announces the same
    stubs (here the demo's entries before its latest version, in the root's log and the table's), not
    "nothing is older"."""
    assert main(["compact", "--retain-hours", "0", "-w", demo]) == 0
    dry = capsys.readouterr().out
    stubs = int(re.search(r"would replace (\d+) log entries with stubs", dry).group(1))  # type: ignore[union-attr]
    assert stubs >= 3
    assert json.loads((main(["info", "-w", demo]), capsys.readouterr().out)[1])["checkpoints"] == 0
    assert main(["compact", "--apply", "--retain-hours", "0", "-w", demo]) == 0
    assert f"replaced {stubs} log entries with stubs" in capsys.readouterr().out
    assert main(["fsck", "-w", demo]) == 0


@pytest.mark.parametrize("hours", ["-1", "nan", "inf", "-inf", "ten"])
def test_compact_refuses_a_retention_that_is_no_number_of_hours(
    hours: str, demo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["compact", "--apply", "--retain-hours", hours, "-w", demo])
    assert exit.value.code == 2
    assert "--retain-hours" in capsys.readouterr().err
    assert json.loads((main(["info", "-w", demo]), capsys.readouterr().out)[1])["checkpoints"] == 0


def test_compact_with_a_retention_beyond_the_calendar_keeps_everything(
    demo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compact", "--apply", "--retain-hours", "1e30", "-w", demo]) == 0
    assert "nothing is older than the retention period (1e+30 h)" in capsys.readouterr().out


def test_objects_refuses_a_time_that_is_not_iso_8601(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["objects", "sales.orders", "--as-of", "yesterday", "-w", demo])
    assert exit.value.code == 2
    assert "'yesterday' is not an ISO 8601 time" in capsys.readouterr().err


def test_the_explain_example_of_docs_partitions_is_what_the_demo_prints(
    demo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = (Path(__file__).parents[1] / "docs" / "partitions.md").read_text()
    example = doc.split("$ gluecat partitions explain sales orders ", 1)[1].split("```", 1)[0]
    expression, shown = example.split("\n", 1)
    assert main(["partitions", "explain", "sales", "orders", expression.strip('"'), "-w", demo]) == 0
    assert capsys.readouterr().out == shown


def test_spark_conf_takes_the_warehouse_as_every_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["spark-conf", "-w", str(tmp_path / "lake")]) == 0
    assert f"spark.sql.catalog.glue.warehouse {tmp_path / 'lake'}\n" in capsys.readouterr().out


def test_the_demo_refuses_a_warehouse_holding_other_databases(
    warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It neither adds its sample among someone's databases nor tours them as if they were the sample."""
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "mine"})
    version = glue.warehouse_version()
    assert main(["demo", "--no-spark", "--warehouse", warehouse]) == 2
    err = capsys.readouterr().err
    assert "holds databases that are not the sample's (mine)" in err and len(err.splitlines()) == 1
    assert glue.warehouse_version() == version


@pytest.mark.parametrize(
    "command",
    [
        ["table", "{db}.{t}"],
        ["table", "{db}", "{t}"],
        ["partitions", "list", "{db}.{t}"],
        ["partitions", "list", "{db}", "{t}"],
        ["partitions", "list", "{db}.{t}", "k = 1"],
        ["partitions", "list", "{db}", "{t}", "k = 1"],
        ["partitions", "list", "{db}", "{t}", "--expression", "k = 1"],
        ["partitions", "explain", "{db}.{t}", "-e", "k = 1"],
        ["partitions", "explain", "{db}", "{t}", "k = 1"],
        ["objects", "{db}.{t}"],
        ["objects", "{db}", "{t}"],
    ],
)
def test_every_command_names_a_table_either_way(
    command: list[str], warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """DATABASE.TABLE or DATABASE TABLE, whichever the command (``table`` took only the second,
    ``objects`` only the first)."""
    make_table(warehouse)
    assert main([*(w.format(db="db", t="t") for w in command), "-w", warehouse]) == 0
    capsys.readouterr()
    # The same words naming another table are read as naming it: the error names that table.
    assert main([*(w.format(db="db", t="nope") for w in command), "-w", warehouse]) == 1
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "complaint"),
    [
        (["table", "orders"], "name the table as DATABASE.TABLE or DATABASE TABLE, not 'orders'"),
        (["table", ".orders"], "name the table as DATABASE.TABLE or DATABASE TABLE, not '.orders'"),
        (["objects", "sales."], "name the table as DATABASE.TABLE or DATABASE TABLE, not 'sales.'"),
        (["table", "sales", "orders", "extra"], "unrecognized arguments: extra"),
        (["partitions", "list", "sales.orders", "a = '1'", "b = '2'"], "unrecognized arguments: b = '2'"),
        (["partitions", "list", "sales", "orders", "k = 1", "-e", "k = 2"], "give the expression once"),
    ],
)
def test_a_table_named_neither_way_is_a_usage_error(
    command: list[str], complaint: str, demo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main([*command, "-w", demo])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: gluecat ") and complaint in err


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize(
    "path", list(_commands(build_parser())), ids=lambda path: " ".join(path) or "gluecat"
)
def test_help_describes_the_command_each_argument_and_each_default(path: tuple[str, ...]) -> None:
    """`gluecat ... --help` starts with what the command does, in plain text, and says what every
    argument is and, where it has one, its default."""
    parser = _parser_of(path)
    assert parser.description and "``" not in parser.description, path
    assert not parser.allow_abbrev
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        name = action.option_strings or action.metavar or action.dest
        assert action.help, f"gluecat {' '.join(path)}: {name} has no help"
        if action.default not in (None, False):
            assert "default" in action.help, f"gluecat {' '.join(path)}: {name} does not say its default"
    assert "``" not in parser.format_help()


def test_options_are_never_abbreviated(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--app`` is not ``--apply``: a misspelt option is refused, not taken for another one."""
    with pytest.raises(SystemExit) as exit:
        main(["compact", "--app", "-w", demo])
    assert exit.value.code == 2
    assert "unrecognized arguments: --app" in capsys.readouterr().err
    assert json.loads((main(["info", "-w", demo]), capsys.readouterr().out)[1])["checkpoints"] == 0


def test_a_listing_piped_to_a_reader_that_stops_ends_quietly(warehouse: str, tmp_path: Path) -> None:
    """`gluecat table ... | head`: the reader leaves after a line; gluecat stops without a traceback or
    `[Errno 32] Broken pipe`, with the status of a command ended by SIGPIPE."""
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    columns = [
        {"Name": f"column_{i:05}", "Type": "string"} for i in range(3000)
    ]  # far more than a pipe holds
    glue.create_table(
        DatabaseName="db", TableInput={"Name": "wide", "StorageDescriptor": {"Columns": columns}}
    )
    with subprocess.Popen(
        [sys.executable, "-m", "gluecat", "table", "db.wide", "-w", warehouse],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == "{\n"
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 141
    assert err == ""


def test_a_value_written_without_quotes_is_named(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`country = US`: US is no column of the table, so it is said to be neither a key nor a quoted
    value (rather than that two columns cannot be compared)."""
    assert main(["partitions", "list", "sales.orders", "country = US", "-w", demo]) == 1
    err = capsys.readouterr().err
    assert "US is neither a partition key nor a quoted value ('US') at position 1: 'country = US'" in err
    assert main(["partitions", "list", "sales.orders", "country = dt", "-w", demo]) == 1
    assert "comparing two columns is not supported" in capsys.readouterr().err


def test_objects_as_of_a_time_before_the_table_says_it_did_not_exist_then(
    warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    glue = make_table(warehouse)
    made = glue.get_table(DatabaseName="db", Name="t")["Table"]["CreateTime"]
    assert main(["objects", "db.t", "--as-of", "2024-01-02T00:00:00+00:00", "-w", warehouse]) == 1
    err = capsys.readouterr().err
    assert (
        "Table t not found in database db: it did not exist at QueryAsOfTime 2024-01-02T00:00:00+00:00 "
        f"(it was made at {made.isoformat()})." in err
    )
    assert main(["objects", "db.t", "--as-of", datetime.now(UTC).isoformat(), "-w", warehouse]) == 0

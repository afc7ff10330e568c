"""One list of statements, run against Spark's built-in Hive catalog (spark_catalog with Hive support, on Derby)
and against gluecat in the same session, its warehouse opened here and served by gluecat serve over the Glue API:
results agree, except where a difference is listed here, with
gluecat's expected outcome and the reason, as docs/spark.md's table of differences says.

Each step is SQL with ``{db}`` (the side's database, catalog included), ``{loc}`` (a folder of the side's own)
and ``{raw_db}`` (the database without its catalog). An outcome is the statement's rows (sorted, as text) or
its error class. A ``python:`` step runs an action of this file instead of SQL.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.errors import AnalysisException


@dataclass(frozen=True)
class Step:
    sql: str
    # Where gluecat differs from the built-in catalog on purpose: (gluecat's outcome as a regex, why).
    differs: tuple[str, str] | None = None
    # A function of the rows that keeps what is comparable (e.g. one DESCRIBE row).
    keep: Callable[[list[tuple[str, ...]]], Any] | None = None


def described(*names: str) -> Callable[[list[tuple[str, ...]]], Any]:
    """Of DESCRIBE's rows, the values of those named."""
    return lambda rows: [r[:2] for r in rows if r[0] in names]


def statistics_rows(rows: list[tuple[str, ...]]) -> Any:
    """DESCRIBE EXTENDED's row count (sizes differ with file names and footers, not with the data)."""
    return [re.sub(r"^\d+ bytes, ", "", r[1]) for r in rows if r[0] == "Statistics"]


def has_location(rows: list[tuple[str, ...]]) -> Any:
    """Whether SHOW CREATE TABLE names a LOCATION (run again, the statement makes an external table there)."""
    return ["\nLOCATION '" in rows[0][0]]


def columns_of(rows: list[tuple[str, ...]]) -> Any:
    """SHOW CREATE TABLE's column lines (its TBLPROPERTIES differ: Glue keeps the format's)."""
    return [line.strip() for line in rows[0][0].splitlines() if line.startswith("  ") and " = " not in line]


def column_counts(rows: list[tuple[str, ...]]) -> Any:
    return [r for r in rows if r[0] in ("num_nulls", "distinct_count", "max_col_len")]


STEPS = [
    # -- data that was lost or came back ------------------------------------------------------------
    Step("CREATE TABLE {db}.t (a INT, p STRING) USING parquet PARTITIONED BY (p)"),
    Step("INSERT INTO {db}.t VALUES (1, 'x'), (2, 'y')"),
    Step("ALTER TABLE {db}.t RENAME TO {raw_db}.t2"),
    Step("SELECT * FROM {db}.t2"),
    Step("CREATE TABLE {db}.t (a INT, p STRING) USING parquet PARTITIONED BY (p)"),
    Step("SELECT * FROM {db}.t"),  # empty: t2's files moved with it
    Step("INSERT INTO {db}.t VALUES (3, 'x')"),
    Step("DROP TABLE {db}.t2"),
    Step("SELECT * FROM {db}.t"),  # the new t's rows survive t2's drop
    Step("ALTER TABLE {db}.t DROP PARTITION (p='x')"),
    Step("ALTER TABLE {db}.t ADD PARTITION (p='x')"),
    Step("SELECT * FROM {db}.t"),  # the dropped partition's rows do not come back
    Step("INSERT INTO {db}.t VALUES (4, 'z')"),
    Step("ALTER TABLE {db}.t DROP PARTITION (p='z') PURGE"),
    Step("SELECT * FROM {db}.t"),
    Step("CREATE TABLE {db}.ow (a INT, d DOUBLE, p STRING) USING parquet PARTITIONED BY (d, p)"),
    Step("INSERT INTO {db}.ow VALUES (1, 1.5, 'x'), (2, 2.5, 'x'), (3, 2.5, NULL), (4, NULL, 'y')"),
    Step("INSERT OVERWRITE {db}.ow PARTITION (d = 1.5, p = 'x') SELECT 10"),  # only that partition goes
    Step("INSERT OVERWRITE {db}.ow PARTITION (d = 2.5, p = NULL) SELECT 11"),
    Step("INSERT OVERWRITE {db}.ow PARTITION (d = NULL, p = 'y') SELECT 12"),
    Step("SELECT * FROM {db}.ow"),
    Step(
        "INSERT OVERWRITE {db}.ow SELECT a + 100, d, p FROM {db}.ow WHERE p = 'x'",
        differs=("^rows: \\[\\]$", "a v2 write replaces the files it read only at its commit"),
    ),
    Step(
        "SELECT * FROM {db}.ow",
        differs=(r"^rows: \[\('102', '2.5', 'x'\), \('110', '1.5', 'x'\)\]$", "as above"),
    ),
    Step("CREATE TABLE {db}.e (a INT, p STRING) USING parquet PARTITIONED BY (p) LOCATION '{loc}/e'"),
    Step("INSERT INTO {db}.e VALUES (1, 'x'), (2, 'y')"),
    Step("TRUNCATE TABLE {db}.e"),  # CANNOT_TRUNCATE_EXTERNAL_TABLE
    Step("DESCRIBE TABLE EXTENDED {db}.e", keep=described("Type", "Provider")),
    Step("ALTER TABLE {db}.e DROP PARTITION (p='y')"),
    Step("DROP TABLE {db}.e PURGE"),
    Step("CREATE TABLE {db}.e2 (a INT, p STRING) USING parquet PARTITIONED BY (p) LOCATION '{loc}/e'"),
    Step("MSCK REPAIR TABLE {db}.e2", differs=(r"^rows: \[.*added.*p=x.*p=y", "gluecat answers what it did")),
    Step("SELECT * FROM {db}.e2"),  # an external table's data outlives its drop, PURGE too
    Step(
        "ALTER TABLE {db}.e2 RENAME COLUMN a TO b",
        differs=(
            "^error: UNSUPPORTED_TABLE_CHANGE$",
            "both refuse; gluecat says why (Parquet finds columns by name)",
        ),
    ),
    Step("DESCRIBE TABLE EXTENDED {db}.t", keep=described("Type")),
    Step("SHOW CREATE TABLE {db}.t", keep=has_location),  # managed: no LOCATION
    Step("SHOW CREATE TABLE {db}.e2", keep=has_location),  # external: its LOCATION
    Step("CREATE DATABASE {db}_cascade"),
    Step("CREATE TABLE {db}_cascade.m (a INT) USING parquet"),
    Step("INSERT INTO {db}_cascade.m VALUES (1)"),
    Step("DROP DATABASE {db}_cascade"),  # SCHEMA_NOT_EMPTY
    Step("DROP DATABASE {db}_cascade CASCADE"),
    Step("CREATE DATABASE {db}_cascade"),
    Step("CREATE TABLE {db}_cascade.m (a INT) USING parquet"),
    Step("SELECT * FROM {db}_cascade.m"),  # the cascade took the managed data
    Step("DROP DATABASE {db}_cascade CASCADE"),
    # -- formats and options ------------------------------------------------------------------------
    Step("CREATE TABLE {db}.o (a INT, b STRING) STORED AS ORC"),
    Step("INSERT INTO {db}.o VALUES (1, 'x')"),
    Step("SELECT * FROM {db}.o"),
    Step(
        "DESCRIBE TABLE EXTENDED {db}.o",
        keep=described("Serde Library", "InputFormat", "OutputFormat"),
        differs=(
            r"^rows: \[\]$",
            "Spark's DESCRIBE of a v2 table has no SerDe rows; the Glue table has them",
        ),
    ),
    Step(
        "CREATE TABLE {db}.txt (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' STORED AS TEXTFILE"
    ),
    Step("INSERT INTO {db}.txt VALUES (1, 'x'), (2, NULL), (3, '')"),
    Step("SELECT * FROM {db}.txt"),
    Step(
        "CREATE TABLE {db}.txt_ntz (a TIMESTAMP_NTZ) STORED AS TEXTFILE",
        differs=("^error: IllegalArgumentException$", "both refuse: Hive's SerDe has no timestamp_ntz"),
    ),
    Step("python:text {db}.txt"),  # the bytes Hive's SerDe writes
    Step("DESCRIBE TABLE EXTENDED {db}.txt", keep=described("Provider")),
    # Last on txt: Hive's catalog writes the row, so what follows would differ.
    Step(
        "INSERT INTO {db}.txt VALUES (4, 'x|y')",
        differs=(
            "^error: ",
            "Hive's SerDe writes 'x|y' unescaped, read back as 'x'; gluecat refuses a value it would not read back",
        ),
    ),
    Step("CREATE TABLE {db}.c (a INT, b STRING) USING csv OPTIONS (sep ';', header 'true')"),
    Step("INSERT INTO {db}.c VALUES (1, 'x'), (2, 'y;z')"),
    Step("SELECT * FROM {db}.c"),
    Step("python:text {db}.c"),  # a header line and ';'
    Step("CREATE TABLE {db}.m (m MAP<STRING, INT>) USING csv"),  # UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE
    Step(
        "CREATE TABLE {db}.allp (a INT) USING parquet PARTITIONED BY (a)"
    ),  # ALL_PARTITION_COLUMNS_NOT_ALLOWED
    # -- partitions ---------------------------------------------------------------------------------
    Step("CREATE TABLE {db}.pd (v INT, dt DATE, q INT) USING parquet PARTITIONED BY (dt, q)"),
    Step(
        "INSERT INTO {db}.pd VALUES (1, DATE'2025-01-01', 1), (2, DATE'2025-01-01', 2), (3, DATE'2025-01-02', 1)"
    ),
    Step("ALTER TABLE {db}.pd ADD PARTITION (dt='2025-01-01', q=1)"),  # PARTITIONS_ALREADY_EXIST, as written
    Step("ALTER TABLE {db}.pd DROP PARTITION (dt='2025-01-09', q=1)"),  # PARTITIONS_NOT_FOUND, as written
    Step("ALTER TABLE {db}.pd DROP PARTITION (dt='2025-01-01')"),  # a partial spec
    Step("SHOW PARTITIONS {db}.pd"),
    Step("INSERT INTO {db}.pd VALUES (4, NULL, 3)"),
    Step(
        "SHOW PARTITIONS {db}.pd PARTITION (q = 3)",
        differs=(r"^rows: \[\('dt=null/q=3',\)\]$", "Spark's v2 SHOW PARTITIONS prints a null as null"),
    ),
    Step("ALTER TABLE {db}.pd DROP PARTITION (q = 3)"),
    Step("ALTER TABLE {db}.pd PARTITION (dt='2025-01-02', q=1) RENAME TO PARTITION (dt='2025-01-05', q=1)"),
    Step("SELECT * FROM {db}.pd"),
    Step(
        "ALTER TABLE {db}.pd PARTITION (dt='2025-01-05', q=1) SET LOCATION '{loc}/elsewhere'",
        differs=(r"^rows: \[\('dt=2025-01-05/q=1'", "gluecat answers the partition's new location"),
    ),
    Step("SELECT * FROM {db}.pd"),  # nothing at the new location yet
    Step("ALTER TABLE {db}.pd RECOVER PARTITIONS", differs=(r"^rows: ", "gluecat answers what it did")),
    Step("SHOW PARTITIONS {db}.pd"),
    # -- statistics ---------------------------------------------------------------------------------
    Step("CREATE TABLE {db}.s (a INT, b STRING) USING parquet"),
    Step("INSERT INTO {db}.s VALUES (1, 'x'), (2, NULL), (3, 'zz')"),
    Step(
        "ANALYZE TABLE {db}.s COMPUTE STATISTICS",
        differs=(r"^rows: \[.*numRows", "gluecat answers the statistics"),
    ),
    Step("DESCRIBE TABLE EXTENDED {db}.s", keep=statistics_rows),
    Step("ANALYZE TABLE {db}.s COMPUTE STATISTICS FOR ALL COLUMNS", differs=(r"^rows: ", "as above")),
    Step("DESCRIBE TABLE EXTENDED {db}.s b", keep=column_counts),
    # -- views, LIKE, createTable -------------------------------------------------------------------
    Step("CREATE VIEW {db}.v AS SELECT a, b FROM {db}.s WHERE a > 1"),
    Step("SELECT * FROM {db}.v"),
    Step("SHOW VIEWS IN {db}", keep=lambda rows: [r[1] for r in rows]),
    Step("ALTER VIEW {db}.v AS SELECT b FROM {db}.s"),
    Step("SELECT * FROM {db}.v"),
    Step("CREATE VIEW {db}.s AS SELECT 1"),  # TABLE_OR_VIEW_ALREADY_EXISTS
    Step(
        "DROP TABLE {db}.v",
        differs=("^error: WRONG_COMMAND_FOR_OBJECT_TYPE$", "Spark refuses DROP TABLE of a v2 catalog's view"),
    ),
    Step("DROP VIEW {db}.v", differs=("^rows: \\[\\]$", "the view is still there (see above)")),
    Step("DROP VIEW IF EXISTS {db}.v"),
    Step("CREATE TABLE {db}.like_c LIKE {db}.c"),
    Step("INSERT INTO {db}.like_c VALUES (5, 'w')"),
    Step("SELECT * FROM {db}.like_c"),
    Step("DESCRIBE TABLE {db}.like_c"),
    Step("python:create_table {db}.found {loc}/found"),
    Step(
        "SELECT * FROM {db}.found",
        differs=(r"^rows: \[\('1', '1'\), \('2', '2'\)\]$", "gluecat registers the partitions it finds"),
    ),
    Step("SHOW PARTITIONS {db}.found", differs=(r"^rows: \[\('p=1',\), \('p=2',\)\]$", "as above")),
    Step("SHOW TABLES IN {db}", keep=lambda rows: sorted(r[1] for r in rows)),
    Step("CREATE TABLE {db}.rn (a INT) USING parquet"),
    Step("INSERT INTO {db}.rn VALUES (1)"),
    Step("ALTER TABLE {db}.rn RENAME TO {raw_db}.s"),  # TABLE_OR_VIEW_ALREADY_EXISTS, nothing moves
    Step("SELECT * FROM {db}.rn"),
    Step("SELECT a FROM {db}.s"),
    # -- column order (Glue's: columns, then partition keys) and DEFAULT values ------------------------
    Step("CREATE TABLE {db}.ord (p STRING, v STRING) USING parquet PARTITIONED BY (p)"),
    Step("INSERT INTO {db}.ord VALUES ('first', 'second')"),  # positional: v, then p
    Step("SELECT v, p FROM {db}.ord"),
    Step("DESCRIBE TABLE {db}.ord"),
    Step("CREATE TABLE {db}.ordc (a INT, p STRING, b STRING) USING csv PARTITIONED BY (p)"),
    Step("INSERT INTO {db}.ordc VALUES (1, 'x', 'y')"),
    Step("SELECT a, b, p FROM {db}.ordc"),
    Step("CREATE TABLE {db}.octas USING parquet PARTITIONED BY (p) AS SELECT 1 AS v, 'a' AS p, 2 AS q"),
    Step("DESCRIBE TABLE {db}.octas"),
    Step("INSERT INTO {db}.octas VALUES (3, 4, 'b')"),
    Step("SELECT * FROM {db}.octas"),
    Step("CREATE TABLE {db}.dv (x INT DEFAULT 5, y INT, s STRING DEFAULT 'a' || 'b') USING parquet"),
    Step("INSERT INTO {db}.dv (y) VALUES (1)"),
    Step("INSERT INTO {db}.dv VALUES (DEFAULT, 2, DEFAULT)"),
    Step("ALTER TABLE {db}.dv ADD COLUMN z INT DEFAULT 42"),  # rows written before read as 42
    Step("ALTER TABLE {db}.dv ALTER COLUMN y SET DEFAULT 9"),
    Step("INSERT INTO {db}.dv (x) VALUES (8)"),
    Step("ALTER TABLE {db}.dv ALTER COLUMN y DROP DEFAULT"),
    Step("INSERT INTO {db}.dv (x) VALUES (10)"),
    Step("SELECT * FROM {db}.dv"),
    Step("SHOW CREATE TABLE {db}.dv", keep=columns_of),
    Step(
        "CREATE TABLE {db}.dvc (a INT, p STRING DEFAULT 'q', b STRING DEFAULT 'd') USING csv PARTITIONED BY (p)"
    ),
    Step("INSERT INTO {db}.dvc (a) VALUES (1)"),
    Step("ALTER TABLE {db}.dvc ADD COLUMN c INT DEFAULT 3"),
    Step("INSERT INTO {db}.dvc (a, c) VALUES (2, 4)"),
    Step("SELECT * FROM {db}.dvc"),
    Step("CREATE TABLE {db}.dv_like LIKE {db}.dvc"),
    Step("INSERT INTO {db}.dv_like (a) VALUES (5)"),
    Step("SELECT * FROM {db}.dv_like"),
    # -- what gluecat allows that the built-in catalog refuses ---------------------------------------
    Step(
        "ALTER TABLE {db}.s ALTER COLUMN a TYPE BIGINT",
        differs=("^rows: \\[\\]$", "gluecat widens a column to a type its files read as"),
    ),
    Step("SELECT a FROM {db}.s"),
    Step(
        "ALTER TABLE {db}.s ALTER COLUMN a TYPE STRING",
        differs=(
            "^error: UNSUPPORTED_TABLE_CHANGE$",
            "both refuse; gluecat says why (Parquet reads no int as string)",
        ),
    ),
    Step(
        "ALTER TABLE {db}.s DROP COLUMN b",
        differs=("^rows: \\[\\]$", "gluecat drops columns (a dropped name cannot return)"),
    ),
]


def outcome(spark: Any, sql: str, keep: Callable[[list[tuple[str, ...]]], Any] | None) -> str:
    try:
        rows = [tuple("" if v is None else str(v) for v in r) for r in spark.sql(sql).collect()]
    except AnalysisException as e:
        partitions = re.findall(r"PARTITION \([^)]*\)", str(e))  # the values as printed
        return f"error: {e.getCondition() or type(e).__name__}" + (f" {partitions}" if partitions else "")
    except Exception as e:  # Spark's error class where the JVM's exception has one, else its type
        found = re.search(r"\[([A-Z_.]+)\]", str(e))
        return f"error: {found.group(1) if found else type(e).__name__}"
    kept = keep(rows) if keep is not None else sorted(rows)
    return f"rows: {kept}"


def run_python(spark: Any, action: str, db: str, loc: Path) -> str:
    verb, *args = action.split()
    if verb == "text":
        location = next(
            r.data_type
            for r in spark.sql(f"DESCRIBE TABLE EXTENDED {args[0].format(db=db)}").collect()
            if r.col_name == "Location"
        )
        lines = spark.read.option("recursiveFileLookup", "true").text(location).collect()
        return f"lines: {sorted(r.value for r in lines)}"
    if verb == "create_table":
        name, path = args[0].format(db=db), args[1].format(loc=loc)
        frame = spark.createDataFrame([(1, 1), (2, 2)], "v INT, p INT")
        frame.write.partitionBy("p").parquet(path)
        spark.catalog.createTable(name, path=path, source="parquet")
        return f"schema: {spark.table(name).schema.simpleString()}"
    raise AssertionError(action)


def test_the_same_statements_agree_with_sparks_hive_catalog(spark: Any, remote: str, tmp_path: Path) -> None:
    """gluecat twice: its warehouse opened by this application, and served (gluecat serve, over the Glue
    API): both answer as Spark's catalog, or both differ as listed."""
    sides = {
        "hive": "spark_catalog.diff_hive",
        "gluecat": "glue.diff_glue",
        "gluecat remote": f"{remote}.diff_remote",
    }
    for db in sides.values():
        spark.sql(f"CREATE DATABASE {db}")
    try:
        results: dict[str, list[str]] = {}
        for side, db in sides.items():
            loc = tmp_path / side.replace(" ", "_")
            results[side] = []
            for step in STEPS:
                sql = step.sql.format(db=db, raw_db=db.split(".", 1)[1], loc=loc)
                if sql.startswith("python:"):
                    results[side].append(run_python(spark, sql.removeprefix("python:"), db, loc))
                else:
                    results[side].append(outcome(spark, sql, step.keep))
        problems = []
        for side in ("gluecat", "gluecat remote"):
            for step, hive, glue in zip(STEPS, results["hive"], results[side], strict=True):
                if step.differs is None and hive != glue:
                    problems.append(f"{step.sql}\n  hive:    {hive}\n  {side}: {glue}")
                if step.differs is not None and not re.search(step.differs[0], glue):
                    problems.append(f"{step.sql}\n  {side}: {glue} (expected {step.differs[0]})")
        assert not problems, "\n".join(problems)
    finally:
        for db in sides.values():
            for suffix in ("", "_cascade"):
                spark.sql(f"DROP DATABASE IF EXISTS {db}{suffix} CASCADE")

"""A Spark application with S3A, in a process of its own, that runs the SQL statements a test sends it.

Spark takes ``spark.jars.packages`` only when it starts, and the shared test session (conftest.py) does
not load Hadoop's S3A and its AWS SDK (a 660 MB download once, on every start a bigger classpath): the
S3 tests drive this application instead. It is configured only as a user would configure one, with
``spark.hadoop.fs.s3a.*`` settings; its environment holds no AWS setting, so the catalog reaches S3 with
what the shim hands over.

Protocol: ``python s3_app.py WAREHOUSE SETTINGS_JSON``; it answers ``{"ready": true}`` once Spark runs,
then reads one JSON document a line, ``{"sql": "..."}``, and answers each with ``{"rows": [[...], ...]}``
or ``{"error": "<Spark's message>"}``, until its stdin closes. Spark's own output goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def main() -> None:
    warehouse, settings = sys.argv[1], json.loads(sys.argv[2])
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # Ivy's, Spark's and the JVM's output to stderr: stdout carries answers only
    from gluecat.spark import hadoop_aws_package, session

    spark = session(
        warehouse,
        **{"spark.jars.packages": hadoop_aws_package(), "spark.sql.shuffle.partitions": "2", **settings},
    )
    spark.sparkContext.setLogLevel("ERROR")

    def answer(document: dict[str, Any]) -> None:
        answers.write(json.dumps(document, default=str) + "\n")
        answers.flush()

    answer({"ready": True})
    for line in sys.stdin:
        try:
            answer({"rows": [list(row) for row in spark.sql(json.loads(line)["sql"]).collect()]})
        except Exception as e:
            answer({"error": str(e)[:4000]})
    spark.stop()


if __name__ == "__main__":
    main()

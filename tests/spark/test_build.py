"""The shim jar is built from jvm-shim's sources and found by the package; spark-conf prints the settings."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from gluecat.spark import CATALOG_CLASS, EXTENSIONS_CLASS, jar_path


def test_jar_holds_the_catalog_plugin() -> None:
    names = zipfile.ZipFile(jar_path()).namelist()
    assert "io/gluecat/spark/GlueCatalog.class" in names
    assert "io/gluecat/spark/PythonCatalog.class" in names


def test_spark_conf_prints_the_catalog_settings(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gluecat", "spark-conf", "--warehouse", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    settings = dict(line.split(" ", 1) for line in out.splitlines())
    assert settings["spark.sql.catalog.glue"] == CATALOG_CLASS
    assert settings["spark.sql.extensions"] == EXTENSIONS_CLASS
    assert settings["spark.sql.catalog.glue.warehouse"] == str(tmp_path)
    assert Path(settings["spark.jars"]) == jar_path()

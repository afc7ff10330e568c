"""In-tree PEP 517 backend: compiles the Spark shim jar with javac, then defers to setuptools.

The jar is built against the jars of the pyspark installed in the build environment (pyspark is in
build-system.requires), so no Maven repository or gradle is needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _orig  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "jvm-shim" / "src" / "main" / "java"
JAR = ROOT / "python" / "gluecat" / "spark" / "gluecat-spark.jar"

get_requires_for_build_wheel = _orig.get_requires_for_build_wheel
get_requires_for_build_sdist = _orig.get_requires_for_build_sdist
get_requires_for_build_editable = _orig.get_requires_for_build_editable
prepare_metadata_for_build_wheel = _orig.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = _orig.prepare_metadata_for_build_editable
build_sdist = _orig.build_sdist


def pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def build_jar(out: Path = JAR) -> Path:
    javac = shutil.which("javac", path=os.path.join(os.environ.get("JAVA_HOME", ""), "bin")) or shutil.which(
        "javac"
    )
    if javac is None:
        raise RuntimeError("gluecat needs a JDK 17+ (javac) to build its Spark shim")
    sources = sorted(str(p) for p in SOURCES.rglob("*.java"))
    classpath = str(pyspark_jars() / "*")
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(
            [javac, "--release", "17", "-nowarn", "-cp", classpath, "-d", classes, *sources], check=True
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".jar.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: gluecat\n")
            for f in sorted(Path(classes).rglob("*")):
                if f.is_file():
                    jar.write(f, f.relative_to(classes).as_posix())
        tmp.replace(out)
    return out


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    build_jar()
    return str(_orig.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    build_jar()
    return str(_orig.build_editable(wheel_directory, config_settings, metadata_directory))


if __name__ == "__main__":
    print(build_jar())

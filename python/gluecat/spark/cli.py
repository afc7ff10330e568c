"""`gluecat spark-conf`: print the Spark settings that mount a warehouse as a catalog."""

from __future__ import annotations

import argparse
import os
from typing import Any

from gluecat.spark import spark_conf


def _print_conf(args: argparse.Namespace) -> int:
    for key, value in spark_conf(os.path.abspath(args.warehouse), args.name).items():
        print(f"{key} {value}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("spark-conf", help="print spark-defaults.conf lines for the gluecat catalog")
    p.add_argument("--warehouse", "-w", default="./warehouse", help="warehouse path (default ./warehouse)")
    p.add_argument("--name", default="glue", help="the Spark catalog's name (default %(default)s)")
    p.set_defaults(func=_print_conf)

"""`gluecat spark-conf`: print the Spark settings that mount a warehouse, or a catalog service, as a catalog."""

from __future__ import annotations

import argparse
import os
from typing import Any

from gluecat.spark import spark_conf


def _print_conf(args: argparse.Namespace) -> int:
    remote = args.endpoint or args.region or args.profile
    warehouse = args.warehouse if remote else args.warehouse or "./warehouse"
    if warehouse is not None and "://" not in warehouse:
        warehouse = os.path.abspath(warehouse)
    conf = spark_conf(warehouse, args.name, endpoint=args.endpoint, region=args.region, profile=args.profile)
    for key, value in conf.items():
        print(f"{key} {value}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("spark-conf", help="print spark-defaults.conf lines for the gluecat catalog")
    p.add_argument(
        "--warehouse",
        "-w",
        help="warehouse path (default ./warehouse); with --endpoint, where tables made without a location go",
    )
    p.add_argument(
        "--endpoint", help="a catalog service's Glue API (gluecat serve's https://host:port, or any Glue)"
    )
    p.add_argument("--region", help="the region to sign for (AWS Glue itself by --region alone)")
    p.add_argument("--profile", help="the AWS profile whose credentials and CA bundle to use")
    p.add_argument("--name", default="glue", help="the Spark catalog's name (default %(default)s)")
    p.set_defaults(func=_print_conf)

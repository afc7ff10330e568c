"""``gluecat serve`` and ``gluecat users``."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import Any

from gluecat.hms import users
from gluecat.serving.http import Limits


def _serve(args: argparse.Namespace) -> int:
    from gluecat import Catalog
    from gluecat.hms.server import HiveMetastoreServer

    if (args.tls_cert is None) != (args.tls_key is None):
        print("gluecat serve: give both --tls-cert and --tls-key", file=sys.stderr)
        return 2
    if args.tls_cert is None and not args.insecure_http:
        print(
            "gluecat serve: give --tls-cert and --tls-key, or --insecure-http for plain HTTP", file=sys.stderr
        )
        return 2
    if not users.load(args.users):
        print(f"gluecat serve: {args.users} has no users; add one with 'gluecat users add'", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = HiveMetastoreServer(
        Catalog(args.warehouse),
        args.users,
        host=args.host,
        port=args.port,
        path=args.path,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        reply_cache_bytes=args.reply_cache_mb * 1024 * 1024,
        limits=Limits(
            max_connections=args.max_connections,
            workers=args.workers,
            max_body_bytes=int(args.max_body_mb * 1024 * 1024),
            handshake_timeout=args.handshake_timeout,
            idle_timeout=args.idle_timeout,
            request_timeout=args.request_timeout,
        ),
    )
    if not server.tls:
        print(
            "WARNING: serving over plain HTTP (--insecure-http): credentials cross the network unencrypted",
            file=sys.stderr,
        )
    print(f"gluecat Hive Metastore endpoint on {server.url} (warehouse {args.warehouse})", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def _users_add(args: argparse.Namespace) -> int:
    if not args.password_stdin:
        print("gluecat users add: pass the password on standard input with --password-stdin", file=sys.stderr)
        return 2
    password = sys.stdin.readline().rstrip("\r\n")
    try:
        users.add(args.file, args.name, password)
    except users.UsersFileError as e:
        print(f"gluecat users add: {e}", file=sys.stderr)
        return 2
    print(f"user {args.name} saved in {args.file}")
    return 0


def _users_remove(args: argparse.Namespace) -> int:
    if not users.remove(args.file, args.name):
        print(f"gluecat users remove: no user {args.name} in {args.file}", file=sys.stderr)
        return 1
    return 0


def _users_list(args: argparse.Namespace) -> int:
    for name in sorted(users.load(args.file)):
        print(name)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve the Hive Metastore protocol (Thrift over HTTP(S))")
    p.add_argument("--warehouse", "-w", default="warehouse")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9083)
    p.add_argument("--path", default="/")
    p.add_argument("--users", required=True, help="the users file (gluecat users add ...)")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument(
        "--insecure-http", action="store_true", help="serve plain HTTP (only for loopback or tests)"
    )
    p.add_argument(
        "--reply-cache-mb",
        type=int,
        default=256,
        help="memory for encoded replies reused while the warehouse is unchanged (0: none)",
    )
    defaults = Limits()
    p.add_argument(
        "--max-connections",
        type=int,
        default=defaults.max_connections,
        help="open connections at most; the longest-idle is closed to admit a new one (default %(default)s)",
    )
    p.add_argument(
        "--workers", type=int, default=defaults.workers, help="threads serving requests (default %(default)s)"
    )
    p.add_argument(
        "--max-body-mb",
        type=float,
        default=defaults.max_body_bytes / 1024 / 1024,
        help="largest request body; larger is refused with 413 unread (default %(default)s)",
    )
    p.add_argument(
        "--handshake-timeout",
        type=float,
        default=defaults.handshake_timeout,
        help="seconds for a TLS handshake (default %(default)s)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=defaults.idle_timeout,
        help="seconds for a request's headers to arrive, from the connection's start or last reply "
        "(default %(default)s)",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        default=defaults.request_timeout,
        help="seconds for a request's body to arrive, and for its reply to be taken (default %(default)s)",
    )
    p.set_defaults(func=_serve)
    u = sub.add_parser("users", help="manage the users of gluecat serve")
    usub = u.add_subparsers(dest="users_command", required=True)
    a = usub.add_parser("add", help="add a user or change its password")
    a.add_argument("name")
    a.add_argument("--file", required=True)
    a.add_argument("--password-stdin", action="store_true")
    a.set_defaults(func=_users_add)
    r = usub.add_parser("remove", help="remove a user")
    r.add_argument("name")
    r.add_argument("--file", required=True)
    r.set_defaults(func=_users_remove)
    listing = usub.add_parser("list", help="list the users")
    listing.add_argument("--file", required=True)
    listing.set_defaults(func=_users_list)

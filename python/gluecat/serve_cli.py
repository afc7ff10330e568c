"""``gluecat serve`` (gluecat/server.py's servers) and ``gluecat users``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import signal
import sys
from typing import Any

from gluecat.cli import Missing, _existing, number, refuse_password_argument
from gluecat.serving import tls, users
from gluecat.serving.http import Limits

DEFAULT_PORT = 9443


def _serve(args: argparse.Namespace) -> int:
    from gluecat import Catalog, LakeFormation
    from gluecat.aws import client_config, keys
    from gluecat.aws.endpoint import AwsEndpoint
    from gluecat.catalog import grants
    from gluecat.server import Server, default_thrift_limits
    from gluecat.serving.audit import AuditLog
    from gluecat.serving.permissions import Authorizer
    from gluecat.serving.runtime import collect_less_often, use_server_allocator

    if (args.tls_cert is None) != (args.tls_key is None):
        print("gluecat serve: give both --tls-cert and --tls-key", file=sys.stderr)
        return 2
    if args.thrift_tls and args.tls_cert is None:
        print("gluecat serve: --thrift-tls uses --tls-cert and --tls-key: give them", file=sys.stderr)
        return 2
    if args.tls_cert is None and not args.insecure_http:
        print(
            "gluecat serve: give --tls-cert and --tls-key, or --insecure-http for plain HTTP", file=sys.stderr
        )
        return 2
    try:
        no_users = not users.load(args.users) and not keys.listing(args.users)
    except users.UsersFileError as e:
        print(f"gluecat serve: {e}", file=sys.stderr)
        return 2
    if no_users:
        print(f"gluecat serve: {args.users} has no users; add one with 'gluecat users add'", file=sys.stderr)
        return 2
    known = set(users.load(args.users)) | set(keys.listing(args.users))
    unknown = [name for name in args.admin if name not in known]
    if unknown:
        print(
            f"gluecat serve: --admin {unknown[0]}: no such user in {args.users} ('gluecat users add' makes one)",
            file=sys.stderr,
        )
        return 2
    if args.tls_cert is not None:
        tls.server_context(args.tls_cert, args.tls_key)  # refused before the warehouse is opened (made)
    made = False
    try:
        _existing(args.warehouse, can_create=True)
    except Missing:
        if not args.create:
            raise
        made = True
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    use_server_allocator()
    collect_less_often()
    catalog = Catalog(args.warehouse)
    if made:
        where = args.warehouse if "://" in args.warehouse else os.path.abspath(args.warehouse)
        print(f"gluecat serve: made a new, empty warehouse at {where} (--create)", file=sys.stderr)
    if args.admin:
        admins = grants.add_admins(catalog._ctx, list(dict.fromkeys(args.admin)))
        wanted = {grants.user_arn(catalog._ctx.catalog_id, n) for n in args.admin}
        if not wanted <= set(admins):
            print(
                "gluecat serve: the warehouse's data lake settings already name its administrators "
                f"({', '.join(admins) or 'none'}); --admin names only the first ones: change them with "
                "PutDataLakeSettings",
                file=sys.stderr,
            )
    settings = grants.settings_record(catalog.store.latest())
    if settings is None:
        print(
            "gluecat serve: Lake Formation permissions are in their initial state: every user may do "
            "everything until an administrator (--admin NAME) changes them (docs/permissions.md)",
            file=sys.stderr,
        )
    else:
        names = [p.get("DataLakePrincipalIdentifier") for p in settings.get("DataLakeAdmins") or []]
        print(f"gluecat serve: data lake administrators: {', '.join(names) or 'none'}", file=sys.stderr)
    audit = (
        AuditLog(
            args.audit_log, max_bytes=int(args.audit_log_max_mb * 1024 * 1024), backups=args.audit_log_backups
        )
        if args.audit_log
        else None
    )
    authorizer = Authorizer(catalog, audit=audit)
    aws = AwsEndpoint(
        catalog,
        keys.AccessKeys(args.users, args.key_file),
        region=args.region,
        lake_formation=LakeFormation(catalog),
        max_body=int(args.max_body_mb * 1024 * 1024),
        reply_cache_bytes=args.reply_cache_mb * 1024 * 1024,
        authorizer=authorizer,
    )
    limits = Limits(
        max_connections=args.max_connections,
        workers=args.workers,
        max_body_bytes=int(args.max_body_mb * 1024 * 1024),
        handshake_timeout=args.handshake_timeout,
        idle_timeout=args.idle_timeout,
        request_timeout=args.request_timeout,
    )
    thrift_limits = default_thrift_limits(limits)
    if args.thrift_idle_timeout is not None:
        thrift_limits = dataclasses.replace(thrift_limits, idle_timeout=args.thrift_idle_timeout)
    both = Server(
        catalog,
        args.users,
        host=args.host,
        port=args.port,
        path=args.path,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        reply_cache_bytes=args.reply_cache_mb * 1024 * 1024,
        limits=limits,
        aws=aws,
        thrift_port=args.thrift_port,
        thrift_host=args.thrift_host,
        thrift_tls=args.thrift_tls,
        thrift_limits=thrift_limits,
        thrift_require_known_users=args.thrift_require_known_users,
        authorizer=authorizer,
    )
    server = both.http
    if not server.tls:
        print(
            "WARNING: serving over plain HTTP (--insecure-http): credentials cross the network unencrypted",
            file=sys.stderr,
        )
    print(f"gluecat Hive Metastore endpoint on {server.url} (warehouse {args.warehouse})")
    aws_url = f"{'https' if server.tls else 'http'}://{server.host}:{server.port}"
    ca_bundle = os.path.abspath(args.tls_cert) if args.tls_cert else None
    print("\n".join(client_config.banner(aws_url, args.region, ca_bundle, args.users)), flush=True)
    if both.thrift_uri is not None:
        print(
            f"gluecat Hive Metastore Thrift endpoint on {both.thrift_uri}"
            f"{' (TLS)' if both.thrift_tls else ''}: hive.metastore.uris={both.thrift_uri}",
            flush=True,
        )
    if audit is not None:
        print(f"gluecat serve: the audit log is {os.path.abspath(args.audit_log)}", flush=True)
    # SIGTERM (a service manager's stop) ends the server as Ctrl-C does: the audit log's last lines are
    # written before the process exits, not lost with it.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            both.serve_forever()
    finally:
        if audit is not None:
            audit.close()
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _users_add(args: argparse.Namespace) -> int:
    from gluecat.aws import keys

    if not args.password_stdin and not args.access_key:
        print(
            "gluecat users add: pass the password on standard input with --password-stdin, "
            "or ask for an AWS access key with --access-key",
            file=sys.stderr,
        )
        return 2
    try:
        password = sys.stdin.readline().rstrip("\r\n") if args.password_stdin else None
        if password is not None:
            users.check(args.name, password)
        # The access key first: its key file may be refused, and then the password must not have changed.
        if args.access_key:
            key_id, secret = keys.add(args.file, args.name, key_file=args.key_file)
        if password is not None:
            users.add(args.file, args.name, password)
            print(
                f"user {args.name} saved in {args.file}", file=sys.stderr if args.access_key else sys.stdout
            )
    except users.UsersFileError as e:
        print(f"gluecat users add: {e}", file=sys.stderr)
        return 2
    if args.access_key:
        key_file = args.key_file or keys.key_file_for(args.file)
        print(
            f"access key {key_id} of {args.name} saved in {args.file}, its secret encrypted with {key_file}; "
            "the secret is shown only now: paste these lines under a profile in ~/.aws/credentials",
            file=sys.stderr,
        )
        print(f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}")
    return 0


def _users_file(path: str, command: str) -> bool:
    """Whether the users file is there; if not, says so (a mistyped --file is not an empty list)."""
    if os.path.exists(path):
        return True
    print(
        f"gluecat users {command}: {path}: no such users file ('gluecat users add' makes one)",
        file=sys.stderr,
    )
    return False


def _users_remove(args: argparse.Namespace) -> int:
    from gluecat.aws import keys

    try:
        users.load_document(args.file)  # refused whole before anything is removed
    except users.UsersFileError as e:
        print(f"gluecat users remove: {e}", file=sys.stderr)
        return 2
    if not _users_file(args.file, "remove"):
        return 1
    removed_keys = keys.remove(args.file, args.name, args.access_key)
    if args.access_key is not None:
        if not removed_keys:
            print(f"gluecat users remove: {args.name} has no access key {args.access_key}", file=sys.stderr)
            return 1
        print(f"access key {args.access_key} of {args.name} removed from {args.file}")
        return 0
    removed_user = users.remove(args.file, args.name)
    if not removed_user and not removed_keys:
        print(f"gluecat users remove: no user {args.name} in {args.file}", file=sys.stderr)
        return 1
    keys_said = (
        f" and its {removed_keys} access key{'s' if removed_keys != 1 else ''}" if removed_keys else ""
    )
    print(f"user {args.name}{keys_said} removed from {args.file}")
    return 0


def _users_list(args: argparse.Namespace) -> int:
    from gluecat.aws import keys

    try:
        access_keys = keys.listing(args.file)
    except users.UsersFileError as e:
        print(f"gluecat users list: {e}", file=sys.stderr)
        return 2
    if not _users_file(args.file, "list"):
        return 1
    names = sorted(set(users.load(args.file)) | set(access_keys))
    if not names:
        print(f"gluecat users list: {args.file} has no users", file=sys.stderr)
    for name in names:
        print(name)
        if args.access_keys:
            for key_id, created in access_keys.get(name, []):
                print(f"  {key_id}  created {created}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the Hive Metastore protocol and the AWS Glue and Lake Formation APIs over HTTP(S)",
    )
    p.add_argument(
        "--warehouse", "-w", default="warehouse", help="warehouse path or URI to serve (default ./warehouse)"
    )
    p.add_argument(
        "--create",
        action="store_true",
        help="make a new, empty warehouse at --warehouse if there is none (else such a path is refused)",
    )
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default %(default)s)")
    p.add_argument(
        "--port",
        type=number(int, 0, 65535),
        default=DEFAULT_PORT,
        help="the HTTPS (or --insecure-http) port of the Hive Metastore protocol and the AWS APIs; "
        "0: any free port (default %(default)s)",
    )
    p.add_argument(
        "--path", default="/", help="the URL path of the Hive Metastore protocol (default %(default)s)"
    )
    p.add_argument(
        "--users", required=True, metavar="FILE", help="the users file (made by 'gluecat users add')"
    )
    p.add_argument("--tls-cert", metavar="PEM", help="the server's certificate chain (PEM)")
    p.add_argument("--tls-key", metavar="PEM", help="the certificate's private key (PEM)")
    p.add_argument(
        "--insecure-http",
        action="store_true",
        help="serve plain HTTP instead of HTTPS (only for loopback or tests: passwords travel in clear)",
    )
    p.add_argument(
        "--reply-cache-mb",
        metavar="MB",
        type=number(int, 0),
        default=256,
        help="memory for encoded replies reused while the warehouse is unchanged, for each protocol "
        "(0: none; default %(default)s)",
    )
    defaults = Limits()
    p.add_argument(
        "--max-connections",
        metavar="N",
        type=number(int, 1),
        default=defaults.max_connections,
        help="open connections at most; the longest-idle is closed to admit a new one (default %(default)s)",
    )
    p.add_argument(
        "--workers",
        metavar="N",
        type=number(int, 1),
        default=defaults.workers,
        help="threads serving requests (default %(default)s)",
    )
    p.add_argument(
        "--max-body-mb",
        metavar="MB",
        type=number(float, 1 / 1024 / 1024, 1024**2),
        default=defaults.max_body_bytes / 1024 / 1024,
        help="largest request body; larger is refused with 413 unread (default %(default)s)",
    )
    p.add_argument(
        "--handshake-timeout",
        metavar="SECONDS",
        type=number(float, 0.001, 1e9),
        default=defaults.handshake_timeout,
        help="seconds for a TLS handshake (default %(default)s)",
    )
    p.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=number(float, 0.001, 1e9),
        default=defaults.idle_timeout,
        help="seconds for a request's headers to arrive, from the connection's start or last reply "
        "(default %(default)s)",
    )
    p.add_argument(
        "--request-timeout",
        metavar="SECONDS",
        type=number(float, 0.001, 1e9),
        default=defaults.request_timeout,
        help="seconds for a request's body to arrive, and for its reply to be taken (default %(default)s)",
    )
    p.add_argument(
        "--region", default="us-east-1", help="the region AWS clients sign for (default %(default)s)"
    )
    p.add_argument(
        "--key-file",
        metavar="FILE",
        help="the key that encrypts the access keys' secrets (default: the users file's name + .key)",
    )
    p.add_argument(
        "--thrift-port",
        type=number(int, 0, 65535),
        help="also serve the Hive Metastore's binary Thrift over TCP on this port, as stock Hive clients "
        "speak it (conventionally 9083; 0: any free port)",
    )
    p.add_argument(
        "--thrift-host", default="127.0.0.1", help="the TCP endpoint's address (default 127.0.0.1)"
    )
    p.add_argument(
        "--thrift-tls",
        action="store_true",
        help="TLS on the TCP endpoint, with --tls-cert and --tls-key (for clients that support it)",
    )
    p.add_argument(
        "--thrift-require-known-users",
        action="store_true",
        help="refuse TCP callers whose set_ugi user name is not in the users file (the name is not verified)",
    )
    p.add_argument(
        "--thrift-idle-timeout",
        type=number(float, 0.001, 1e9),
        help="seconds a TCP connection may wait between calls (default: 600, or --idle-timeout if longer)",
    )
    p.add_argument(
        "--admin",
        metavar="NAME",
        action="append",
        default=[],
        help="make user NAME a data lake administrator, if the warehouse has no Lake Formation settings yet "
        "(repeatable; later, PutDataLakeSettings changes them; default: none, every user may do everything "
        "until an administrator closes the defaults; docs/permissions.md)",
    )
    p.add_argument(
        "--audit-log",
        metavar="FILE",
        help="append one JSON line per request to FILE: who, what, allowed or denied and why, the outcome",
    )
    p.add_argument(
        "--audit-log-max-mb",
        metavar="MB",
        type=number(float, 0.001, 1024**2),
        default=100,
        help="rotate the audit log when it would pass this size: FILE becomes FILE.1 (default %(default)s)",
    )
    p.add_argument(
        "--audit-log-backups",
        metavar="N",
        type=number(int, 0, 1000),
        default=5,
        help="rotated audit logs kept, FILE.1 to FILE.N (default %(default)s)",
    )
    p.set_defaults(func=_serve)
    u = sub.add_parser("users", help="manage the users of gluecat serve: passwords and AWS access keys")
    usub = u.add_subparsers(dest="users_command", required=True, metavar="COMMAND", help="one of:")
    a = usub.add_parser("add", help="add a user, change its password, or give it an AWS access key")
    a.add_argument("name", help="the user name (letters, digits, '.', '_', '-', '@')")
    a.add_argument("--file", required=True, help="the users file (made if missing)")
    a.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input's first line (never an argument)",
    )
    refuse_password_argument(a)
    a.add_argument(
        "--access-key",
        action="store_true",
        help="make an AWS access key for the user; prints its id and secret once, for ~/.aws/credentials",
    )
    a.add_argument(
        "--key-file",
        metavar="FILE",
        help="the key that encrypts the access keys' secrets (default: the users file's name + .key)",
    )
    a.set_defaults(func=_users_add)
    r = usub.add_parser("remove", help="remove a user and its access keys, or one access key")
    r.add_argument("name", help="the user name")
    r.add_argument("--file", required=True, help="the users file")
    r.add_argument("--access-key", metavar="KEY_ID", help="remove only this access key")
    r.set_defaults(func=_users_remove)
    listing = usub.add_parser("list", help="list the users")
    listing.add_argument("--file", required=True, help="the users file")
    listing.add_argument("--access-keys", action="store_true", help="and each user's access key ids")
    listing.set_defaults(func=_users_list)

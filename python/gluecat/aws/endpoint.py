"""One AWS request in, one reply out: routing, Signature V4, the model's codec, the catalog's answer.

``AwsEndpoint`` knows nothing of sockets. The server that owns the connection asks ``accepts`` whether
a request is an AWS one, ``refuse_length`` before reading its body, and ``handle`` for the reply.

Glue operations are dispatched to the catalog's method of the same name (botocore's snake_case of
the operation, with the request's members as keyword arguments), so whatever ``gluecat.Catalog``
implements is served and nothing else. Lake Formation operations go the same way to the Lake Formation
client given as ``lake_formation`` (boto3's lakeformation shape), when there is one.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import botocore.session
import orjson
from botocore import xform_name
from botocore.exceptions import ClientError
from botocore.model import ServiceModel

from gluecat.api import extensions, validate
from gluecat.aws import sigv4
from gluecat.aws.errors import AwsError, unknown_operation
from gluecat.aws.keys import AccessKeys
from gluecat.aws.protocols import GlueJson, LakeFormationRest, Protocol, Reply
from gluecat.catalog import access
from gluecat.errors import GlueError
from gluecat.serving.permissions import Authorizer, Decision
from gluecat.serving.replies import MAX_BYTES, ReplyCache

log = logging.getLogger("gluecat.aws")

MAX_BODY = 16 * 1024 * 1024
DEFAULT_REGION = "us-east-1"

# The calls that query planners repeat, whose encoded replies are kept while the warehouse is unchanged.
CACHED = frozenset({"GetTable", "GetTables", "GetPartition", "GetPartitions", "BatchGetPartition"})
_ONE_TABLE = {
    "GetTable": "Name",
    "GetPartition": "TableName",
    "GetPartitions": "TableName",
    "BatchGetPartition": "TableName",
}


def _reply_scope(decision: Decision, operation: str, params: dict[str, Any]) -> Any:
    """What a cached reply is keyed by besides the request: the caller's view of the table's columns, or
    of the catalog for a listing (None while every caller sees the same)."""
    field = _ONE_TABLE.get(operation)
    if field is None:
        return decision.view.listing_key()
    database, table = params.get("DatabaseName"), params.get(field)
    if not isinstance(database, str) or not isinstance(table, str):
        return ("unnamed",)
    return decision.view.columns_key(database.lower(), table.lower())


def _reply_version(catalog: Any, operation: str, params: dict[str, Any]) -> int:
    """What a cached reply is labelled with: the version of the one table it is about (which every
    change of that table moves on), or of the catalog's root for a listing; -1 (never a hit) for a
    request that names no table a catalog can hold."""
    field = _ONE_TABLE.get(operation)
    if field is None:
        return int(catalog.warehouse_version())
    try:
        return int(
            catalog.table_version(DatabaseName=params.get("DatabaseName"), TableName=params.get(field))
        )
    except GlueError:
        return -1


@functools.cache
def service_model(name: str) -> ServiceModel:
    """botocore's model of a service, loaded once per process."""
    return botocore.session.get_session().get_service_model(name)


@functools.cache
def _glue() -> GlueJson:
    # Glue's operations and gluecat's own (gluecat.api.extensions), served as Glue's are.
    return GlueJson(extensions.glue_with_extensions())


@functools.cache
def _lake_formation() -> LakeFormationRest:
    return LakeFormationRest(service_model("lakeformation"))


def lower_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Header names in lower case, each with every value it arrived with, in order."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, list[str]] = {}
    for name, value in items:
        out.setdefault(name.lower(), []).append(value)
    return out


class AwsEndpoint:
    """The AWS Glue (JSON 1.1) and Lake Formation (REST-JSON) APIs over one catalog.

    ``region`` is the region clients must sign for; ``max_body`` the largest request body accepted.
    ``lake_formation`` is the object whose methods answer Lake Formation's operations; without one, they
    are UnknownOperationException.

    Replies to the read calls in CACHED are kept encoded (``reply_cache_bytes`` in all, 0 for none),
    keyed by the request body (and by what the caller may see of it) and labelled with the warehouse
    version read before they were computed, and served only while that version is the latest: any
    commit anywhere makes them misses, as for the Hive Metastore endpoint's replies
    (serving/replies.py). Calls in a transaction are never cached.

    Every request is decided by ``authorizer`` (the caller's Lake Formation permissions, gluecat/serving/
    permissions.py; one over ``catalog`` when not given) before it runs, and recorded in its audit log.
    """

    def __init__(
        self,
        catalog: Any,
        access_keys: AccessKeys,
        *,
        region: str = DEFAULT_REGION,
        lake_formation: Any = None,
        max_body: int = MAX_BODY,
        reply_cache_bytes: int = MAX_BYTES,
        authorizer: Authorizer | None = None,
    ) -> None:
        self.catalog = catalog
        self.authorizer = authorizer if authorizer is not None else Authorizer(catalog)
        self.lake_formation = lake_formation
        self.access_keys = access_keys
        self.region = region
        self.max_body = max_body
        self.replies = ReplyCache(reply_cache_bytes) if reply_cache_bytes > 0 else None
        # The protocols keep only what the models determine (routes, converters), so endpoints share them.
        self.glue = _glue()
        self.rest = _lake_formation()

    def accepts(self, method: str, path: str, headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> bool:
        """Whether a request is for this endpoint: it names an X-Amz-Target, is addressed to a Lake
        Formation operation, or carries a Signature V4. Everything else is another protocol's."""
        bare, _, query = path.partition("?")
        lower = lower_headers(headers)
        if "x-amz-target" in lower or (method == "POST" and bare in self.rest.paths):
            return True
        authorization = lower.get("authorization", [""])[0]
        return authorization.startswith("AWS4-") or "X-Amz-Signature=" in query

    def refuse_length(
        self, path: str, headers: Mapping[str, str] | Iterable[tuple[str, str]]
    ) -> Reply | None:
        """The reply for a request whose declared body is missing or too large, before it is read."""
        lower = lower_headers(headers)
        protocol = self._protocol(path, lower)
        try:
            size = int(lower.get("content-length", [""])[0])
        except ValueError:
            return protocol.error("LengthRequiredException", "A Content-Length is required.", 411)
        if size < 0 or size > self.max_body:
            return protocol.error(
                "RequestEntityTooLargeException",
                f"Request must be smaller than {self.max_body + 1} bytes.",
                413,
            )
        return None

    def _protocol(self, path: str, lower: Mapping[str, list[str]]) -> Protocol:
        """Glue's JSON 1.1 for X-Amz-Target requests (and anything at /), else Lake Formation's REST-JSON."""
        return self.glue if "x-amz-target" in lower or path.partition("?")[0] == "/" else self.rest

    def handle(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]],
        body: bytes,
        *,
        now: datetime | None = None,
        client: str | None = None,
    ) -> Reply:
        """The reply to one request (``path`` with its query string, as it arrived) from the address
        ``client``."""
        started = time.monotonic()
        lower = lower_headers(headers)
        bare, _, query = path.partition("?")
        target = lower.get("x-amz-target", [None])[0]
        protocol = self._protocol(bare, lower)
        name: str | None = None
        key_id: str | None = None
        try:
            key_id = sigv4.verify(
                method,
                bare,
                query,
                lower,
                body,
                region=self.region,
                service=protocol.service,
                key_for=self.access_keys.signing_key,
                must_sign=("x-amz-target",),
                now=now,
            )
            if protocol is self.glue:
                operation = self.glue.operation(method, bare, target)
                implementation = self.catalog
            else:
                operation = self.rest.operation(method, bare)
                implementation = self.lake_formation
            name = operation.name
            call = getattr(implementation, xform_name(operation.name), None)
            if call is None:
                raise unknown_operation(f"gluecat does not serve the operation {operation.name}")
            params = protocol.read(operation, body)
        except AwsError as e:
            self.authorizer.record(
                protocol=protocol.service,
                operation=name,
                user=self.access_keys.user(key_id) if key_id else None,
                source=client,
                decision=None,
                outcome=e.code,
                started=started,
                access_key=key_id,
            )
            return protocol.error(e.code, e.message, e.status)
        user = self.access_keys.user(key_id)
        reply, decision = self._authorized(protocol, operation.name, implementation, call, params, body, user)
        outcome = "ok" if reply[0] == 200 else _error_code(reply)
        self.authorizer.record(
            protocol=protocol.service,
            operation=operation.name,
            user=user,
            source=client,
            decision=decision,
            outcome=outcome,
            started=started,
            access_key=key_id,
        )
        return reply

    def _authorized(
        self,
        protocol: Protocol,
        name: str,
        implementation: Any,
        call: Any,
        params: dict[str, Any],
        body: bytes,
        user: str | None,
    ) -> tuple[Reply, Decision | None]:
        """The reply to a request whose caller is known: decided, then run as that caller."""
        try:
            decision = self.authorizer.decide(user, protocol.service, name, params)
            if decision.invalid:
                validate.request(protocol.service, name, params)  # says what is wrong with the request
        except (GlueError, ClientError) as e:
            error = e.response["Error"]
            return protocol.error(str(error["Code"]), str(error["Message"])), None
        if not decision.allowed:
            code = "EntityNotFoundException" if decision.absent else "AccessDeniedException"
            return protocol.error(code, decision.reason), decision
        operation = protocol.model.operation_model(name)
        cache_key, version = None, 0
        if (
            self.replies is not None
            and name in CACHED
            and "TransactionId" not in params
            and implementation is self.catalog
        ):
            scope = _reply_scope(decision, name, params)
            cache_key, version = (name, body, scope), _reply_version(self.catalog, name, params)
            cached = self.replies.get(cache_key, version)
            if cached is not None:
                return (200, protocol.headers(protocol.content_type, str(uuid.uuid4())), cached), decision
        try:
            with access.acting(decision.view):
                result = decision.answer(
                    None if decision.nothing_to_run else call(**decision.request(params))
                )
        except (GlueError, ClientError) as e:
            error = e.response["Error"]
            return protocol.error(str(error["Code"]), str(error["Message"])), decision
        except Exception:
            log.exception("%s failed (user %s)", name, user)
            return protocol.error("InternalServiceException", "An internal error occurred."), decision
        try:
            reply = protocol.reply(operation, result)
        except (TypeError, ValueError):
            log.exception("the answer to %s does not fit its output shape", name)
            return protocol.error("InternalServiceException", "An internal error occurred."), decision
        if cache_key is not None and self.replies is not None:
            self.replies.put(cache_key, version, reply[2], key_bytes=len(body))  # the key holds the request
        return reply, decision


def _error_code(reply: Reply) -> str:
    for k, v in reply[1]:
        if k.lower() == "x-amzn-errortype":
            return v
    try:
        return str(orjson.loads(reply[2]).get("__type", reply[0]))
    except (orjson.JSONDecodeError, AttributeError):
        return str(reply[0])

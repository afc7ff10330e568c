"""AWS Signature Version 4, verified by a server: the canonical request is rebuilt from what arrived.

Both forms are accepted: the ``Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=...,
Signature=...`` header, and the presigned query string (``X-Amz-Algorithm``, ``X-Amz-Credential``,
``X-Amz-Date``, ``X-Amz-Expires``, ``X-Amz-SignedHeaders``, ``X-Amz-Signature``). The body is always
part of what is signed (its SHA-256), so a signed request cannot be replayed with another body.

Refusals carry the codes and messages AWS's JSON services answer with, and no more: which of an unknown
key, a wrong secret or an altered request it was is told only as far as AWS tells it (an unknown key is
UnrecognizedClientException there too). Signatures are compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import quote, unquote

from botocore.utils import normalize_url_path

from gluecat.aws.errors import AwsError

ALGORITHM = "AWS4-HMAC-SHA256"
MAX_SKEW = timedelta(minutes=15)
MAX_EXPIRES = 7 * 24 * 3600  # the longest X-Amz-Expires AWS accepts: a week
_BASIC = "%Y%m%dT%H%M%SZ"
_BASIC_SHAPE = re.compile(r"[0-9]{8}T[0-9]{6}Z")
_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check your AWS "
    "Secret Access Key and signing method. Consult the service documentation for details."
)
_BAD_TOKEN = "The security token included in the request is invalid."

Headers = Mapping[str, Sequence[str]]
"""Header names in lower case, each with its values in the order they arrived."""


def missing_token() -> AwsError:
    return AwsError("MissingAuthenticationTokenException", "Request is missing Authentication Token")


def incomplete(message: str) -> AwsError:
    return AwsError("IncompleteSignatureException", message)


def invalid(message: str = _MISMATCH) -> AwsError:
    return AwsError("InvalidSignatureException", message)


def unrecognized() -> AwsError:
    return AwsError("UnrecognizedClientException", _BAD_TOKEN)


@dataclass(frozen=True)
class Signed:
    """What a request claims: its credential scope, signed headers, signature and time."""

    key_id: str
    scope: str  # date/region/service/aws4_request
    signed_headers: list[str]
    signature: str
    when: datetime
    expires: int | None  # seconds, for the query form


def _parse_authorization(value: str) -> tuple[str, str, str]:
    algorithm, _, rest = value.strip().partition(" ")
    if algorithm != ALGORITHM:
        if algorithm.startswith("AWS4-"):
            raise incomplete(f"Unsupported AWS 'algorithm': '{algorithm}'")
        raise missing_token()
    parts: dict[str, str] = {}
    for part in rest.replace(",", " ").split():
        name, eq, val = part.partition("=")
        if eq:
            parts[name] = val
    missing = [p for p in ("Credential", "Signature", "SignedHeaders") if not parts.get(p)]
    if missing:
        raise incomplete(" ".join(f"Authorization header requires '{p}' parameter." for p in missing))
    return parts["Credential"], parts["SignedHeaders"], parts["Signature"]


def _basic_date(text: str) -> datetime:
    try:
        if _BASIC_SHAPE.fullmatch(text):  # what clients send: no need for strptime's parser
            return datetime(
                int(text[0:4]), int(text[4:6]), int(text[6:8]), int(text[9:11]), int(text[11:13]),
                int(text[13:15]), tzinfo=UTC,
            )  # fmt: skip
        return datetime.strptime(text, _BASIC).replace(tzinfo=UTC)
    except ValueError:
        raise incomplete(
            f"Date must be in ISO-8601 'basic format'. Got '{text}'. See http://en.wikipedia.org/wiki/ISO_8601"
        ) from None


def _header_date(headers: Headers) -> datetime:
    amz = headers.get("x-amz-date")
    if amz:
        return _basic_date(amz[0])
    date = headers.get("date")
    if date:
        try:
            parsed = parsedate_to_datetime(date[0])
        except (TypeError, ValueError):
            raise incomplete(f"Date must be in RFC 1123 format. Got '{date[0]}'.") from None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    raise incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")


def _query_pairs(query: str) -> list[tuple[str, str]]:
    pairs = []
    for item in query.split("&"):
        if item:
            name, _, value = item.partition("=")
            pairs.append((unquote(name), unquote(value)))
    return pairs


def claims(headers: Headers, query: str) -> Signed:
    """The signature a request carries, by header or query string; refused if it has none."""
    authorization = headers.get("authorization")
    if authorization:
        credential, signed_headers, signature = _parse_authorization(authorization[0])
        when = _header_date(headers)
        expires = None
    else:
        params = dict(_query_pairs(query))
        if "X-Amz-Signature" not in params and "X-Amz-Algorithm" not in params:
            raise missing_token()
        if params.get("X-Amz-Algorithm") != ALGORITHM:
            raise incomplete(f"Unsupported AWS 'algorithm': '{params.get('X-Amz-Algorithm', '')}'")
        needed = ("X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date", "X-Amz-Expires")
        missing = [p for p in needed if not params.get(p)]
        if missing:
            raise incomplete(
                " ".join(f"AWS query-string parameters must include '{p}'." for p in missing)
                + " Re-examine the query-string parameters."
            )
        credential, signed_headers = params["X-Amz-Credential"], params["X-Amz-SignedHeaders"]
        signature, when = params["X-Amz-Signature"], _basic_date(params["X-Amz-Date"])
        try:
            expires = int(params["X-Amz-Expires"])
        except ValueError:
            raise incomplete("X-Amz-Expires must be a number of seconds.") from None
        if not 0 < expires <= MAX_EXPIRES:
            raise incomplete(f"X-Amz-Expires must be between 1 and {MAX_EXPIRES} seconds.")
    key_id, slash, scope = credential.partition("/")
    if not slash or len(scope.split("/")) != 4:
        raise incomplete(
            "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term,"
            f" got '{credential}'"
        )
    names = signed_headers.split(";")
    return Signed(key_id, scope, names, signature, when, expires)


def check_time_and_scope(signed: Signed, now: datetime, region: str, service: str) -> None:
    """AWS's checks before the key is looked at: the time, then the credential scope."""
    stamp = signed.when.strftime(_BASIC)
    if signed.expires is not None and now > signed.when + timedelta(seconds=signed.expires):
        end = (signed.when + timedelta(seconds=signed.expires)).strftime(_BASIC)
        raise invalid(f"Signature expired: {end} is now earlier than {now.strftime(_BASIC)}.")
    if signed.expires is None and signed.when < now - MAX_SKEW:
        raise invalid(
            f"Signature expired: {stamp} is now earlier than {(now - MAX_SKEW).strftime(_BASIC)} "
            f"({now.strftime(_BASIC)} - 15 min.)"
        )
    if signed.when > now + MAX_SKEW:
        raise invalid(
            f"Signature not yet current: {stamp} is still later than {(now + MAX_SKEW).strftime(_BASIC)} "
            f"({now.strftime(_BASIC)} + 15 min.)"
        )
    date, scope_region, scope_service, terminator = signed.scope.split("/")
    problems = []
    if scope_region != region:
        problems.append("Credential should be scoped to a valid region. ")
    if scope_service != service:
        problems.append(f"Credential should be scoped to correct service: '{service}'. ")
    if terminator != "aws4_request":
        problems.append(
            f"Credential should be scoped with a valid terminator: 'aws4_request', not '{terminator}'. "
        )
    if date != signed.when.strftime("%Y%m%d"):
        problems.append(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
            f"'{date}' != '{signed.when.strftime('%Y%m%d')}', from '{stamp}'."
        )
    if problems:
        raise invalid("".join(problems).rstrip())
    if "host" not in signed.signed_headers:
        raise invalid("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")


def canonical_request(
    method: str, path: str, query: str, headers: Headers, signed: Signed, payload_hash: str
) -> str:
    """The canonical request as the client built it from what it sent (botocore's rules for non-S3
    services: the already-encoded path is normalised and encoded once more)."""
    canonical_path = quote(normalize_url_path(path), safe="/~")
    pairs = [
        (quote(k, safe="-_.~"), quote(v, safe="-_.~"))
        for k, v in _query_pairs(query)
        if not (signed.expires is not None and k == "X-Amz-Signature")
    ]
    canonical_query = "&".join(f"{k}={v}" for k, v in sorted(pairs))
    lines = [
        f"{name}:{','.join(' '.join(v.split()) for v in headers.get(name, ()))}"
        for name in signed.signed_headers
    ]
    return "\n".join(
        [
            method.upper(),
            canonical_path,
            canonical_query,
            "\n".join(lines) + "\n",
            ";".join(signed.signed_headers),
            payload_hash,
        ]
    )


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = hmac.new(f"AWS4{secret}".encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def verify(
    method: str,
    path: str,
    query: str,
    headers: Headers,
    body: bytes,
    *,
    region: str,
    service: str,
    key_for: Callable[[str, str], bytes | None],
    must_sign: Sequence[str] = (),
    now: datetime | None = None,
) -> str:
    """The access key id that signed the request, or AwsError with AWS's code for the refusal.

    ``key_for(key_id, scope)`` gives the signing key of a known access key for a credential scope
    (date/region/service/aws4_request), None for an unknown key. ``must_sign`` names headers that
    steer the request (X-Amz-Target): a signature that leaves them out could be replayed with others.
    """
    signed = claims(headers, query)
    check_time_and_scope(signed, now or datetime.now(UTC), region, service)
    for name in must_sign:
        if name in headers and name not in signed.signed_headers:
            raise invalid(f"'{name}' must be a 'SignedHeader' in the AWS Authorization.")
    if headers.get("x-amz-security-token"):
        raise unrecognized()  # gluecat issues no session tokens, so none can be valid
    key = key_for(signed.key_id, signed.scope)
    if key is None:
        raise unrecognized()
    payload_hash = hashlib.sha256(body).hexdigest()
    declared = headers.get("x-amz-content-sha256")
    if declared and declared[0] != payload_hash:
        raise invalid()  # UNSIGNED-PAYLOAD, or a hash of another body: the body must be signed
    canonical = canonical_request(method, path, query, headers, signed, payload_hash)
    string_to_sign = "\n".join(
        [
            ALGORITHM,
            signed.when.strftime(_BASIC),
            signed.scope,
            hashlib.sha256(canonical.encode()).hexdigest(),
        ]
    )
    expected = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signed.signature.encode()):
        raise invalid()
    return signed.key_id

"""The AWS endpoint as a route of the shared server (serving/router.py)."""

from __future__ import annotations

from gluecat.aws.endpoint import AwsEndpoint
from gluecat.aws.protocols import Reply
from gluecat.serving.http import Request, Response
from gluecat.serving.router import Route


def _response(reply: Reply, close: bool = False) -> Response:
    status, headers, body = reply
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "application/json")
    rest = {k: v for k, v in headers if k.lower() != "content-type"}
    return Response(status, body, content_type=content_type, headers=rest, close=close)


def aws_route(endpoint: AwsEndpoint) -> Route:
    """The requests ``endpoint.accepts``, answered by it.

    Signature V4 is verified by the endpoint itself, since its refusals are AWS error bodies, not the
    401 challenge of the route's ``authenticate`` (which therefore lets every request through to it). A
    body over the endpoint's limit is refused from the request head, as an AWS error, before it is read.
    """

    def early(request: Request) -> Response | None:
        reply = endpoint.refuse_length(request.target, request.headers.fields)
        return _response(reply, close=True) if reply is not None else None

    return Route(
        matches=lambda request: endpoint.accepts(request.method, request.target, request.headers.fields),
        authenticate=lambda request: "",
        handle=lambda request, _: _response(
            endpoint.handle(
                request.method, request.target, request.headers.fields, request.body, client=request.client[0]
            )
        ),
        refuse_early=early,
    )

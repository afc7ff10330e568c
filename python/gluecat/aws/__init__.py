"""The AWS Glue and Lake Formation APIs over HTTP, as AWS serves them, for ``gluecat serve``.

Sockets are not this package's business: ``AwsEndpoint.handle(method, path, headers, body)`` answers one
request with ``(status, headers, body)``, and the server that owns the connections routes to it the
requests that ``AwsEndpoint.accepts`` claims. Requests are read and replies written by botocore's service
models (codec.py, protocols.py), every request is verified by Signature Version 4 (sigv4.py) against
the access keys kept in the users file (keys.py).
"""

"""Object-store servers, buckets and a fault-injecting proxy for the tests and benchmarks of the warehouse
on S3, GCS and Azure.

Layout:
- install.py: installs the servers PyPI does not have into ``.object-stores/`` (ignored by git), pinned;
  ``python3 tests/object_stores/install.py`` (``.ci/run`` runs it). Needs ``go`` and ``npm``.
- servers.py: context managers starting each server on 127.0.0.1 and a free port, in a process of its
  own, and stopping it: ``moto_s3()`` (moto's server mode; ``thread=True`` for a thread of this
  process), ``versitygw()``, ``fake_gcs()``, ``azurite()``. ``server.new_bucket()`` makes a fresh
  bucket (an Azure container); a bucket gives ``.store()`` (obstore), ``.client()`` (boto3 or Azure's
  client), ``.env`` (what a client reads from the environment) and ``.through(endpoint)``.
- proxy.py, proxy_server.py: ``start_proxy(endpoint, style, latency)``, an HTTP proxy in a process of its
  own that counts requests by kind, adds latency and injects faults by rule (see proxy_server.py).
- fixtures.py: the pytest fixtures, for the whole suite (tests/conftest.py loads them):
  ``moto_s3_server``, ``versitygw_server``, ``fake_gcs_server``, ``azurite_server`` (one per run),
  ``s3_bucket`` (each S3 server in turn), ``moto_bucket``, ``versitygw_bucket``, ``gcs_bucket``,
  ``azure_container`` (fresh per test), and ``proxied(bucket, latency=0.0) -> (proxy, bucket)``.
- test_servers.py, test_proxy.py, test_proxy_server.py: what the servers and the proxy are relied on
  to do.

A test whose server is not installed fails (never skips) and says how to install it. Servers and
proxies get SIGTERM when the thread that started them ends (setpriv --pdeathsig), so a killed test run
leaves none behind: start them from a thread that outlives them. A benchmark imports these modules as
bench/aws_endpoint.py imports tests.certificates, and puts the proxy at 20 ms
(``start_proxy(bucket.endpoint, latency=0.02)``), about what a request to S3 takes.

What each server does (checked by test_servers.py):

| server | version | put-if-absent | obstore | list after a key |
| --- | --- | --- | --- | --- |
| moto, server mode | moto 5.2.x (PyPI) | If-None-Match: * -> 412 PreconditionFailed | reads, writes | yes |
| versitygw (Apache-2.0) | v1.8.0 (Go) | If-None-Match: * -> 412 PreconditionFailed | reads, writes | yes |
| Azurite | 3.37.0 (npm) | If-None-Match: * -> 409 BlobAlreadyExists | reads, writes | yes |
| fake-gcs-server | v1.56.1 (Go) | ifGenerationMatch=0 (JSON API) -> 412 | reads only | ignores start-after |

Each put-if-absent keeps the first object, and of 8 racing creates of one name exactly one wins.
fake-gcs-server implements uploads of GCS's JSON API only, and obstore (Rust's object_store) uploads
through the XML API, which it answers with 400 "invalid uploadType" (fsouza/fake-gcs-server#331): no
test can write gs:// through obstore on it. moto closes each connection after one reply (Werkzeug);
versitygw runs with --keep-alive. MinIO is not used (AGPL).
"""

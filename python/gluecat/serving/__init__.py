"""The request plumbing of ``gluecat serve``, shared by every protocol it speaks: TLS, connections,
timeouts and limits (http.py), and authentication (basic_auth.py). What a request means is up to the
handler it is routed to (the Hive Metastore's Thrift calls: hms/thrift_endpoint.py)."""

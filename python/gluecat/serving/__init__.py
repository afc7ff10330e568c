"""The request plumbing of ``gluecat serve``, shared by every protocol it speaks: TLS, connections,
timeouts and limits (http.py, tcp.py), who the caller is (basic_auth.py, users.py), what the caller may
do (permissions.py, by the warehouse's Lake Formation grants) and the audit log (audit.py). What a
request means is up to the protocol's handler it is routed to (hms/, aws/), which asks permissions.py
before it runs a request."""

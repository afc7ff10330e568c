"""The TLS settings of ``gluecat serve``: TLS 1.2 or 1.3, and on TLS 1.2 only AEAD cipher suites
with forward secrecy (TLS 1.3's suites are all AEAD); no CBC suites, whose padding has been an oracle
time and again, and no RSA key exchange."""

from __future__ import annotations

import ssl

TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:DHE+CHACHA20:!aNULL:!eNULL:!PSK:!SRP:!DSS"


def server_context(cert_file: str, key_file: str | None) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(TLS12_CIPHERS)
    context.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE | ssl.OP_NO_RENEGOTIATION
    try:
        context.load_cert_chain(cert_file, key_file)
    except OSError as e:  # a missing file's error names no file, and a bad one's says only "PEM lib"
        raise OSError(
            f"the TLS certificate {cert_file} and key {key_file} cannot be used: {e.strerror or e}"
        ) from e
    return context

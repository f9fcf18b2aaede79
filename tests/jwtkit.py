"""An identity provider of the test's own, for `orderbot mcp --jwks`: keys made now (never
checked in), JWTs signed with them, forged ones, and the JWKS as a file or served by a
loopback HTTP server (no network)."""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ISSUER = "https://idp.shop.example"
AUDIENCE = "https://orderbot.shop.example/mcp"


class Provider:
    """One signing key (ES256, kid `k1`), its JWKS, and tokens signed with it."""

    def __init__(self, kid: str = "k1") -> None:
        self.kid = kid
        self.key = ec.generate_private_key(ec.SECP256R1())
        public = jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        self.jwks = {"keys": [{**public, "kid": kid, "alg": "ES256", "use": "sig"}]}

    def token(self, *, now: float | None = None, lifetime: float = 3600, **claims) -> str:
        issued = time.time() if now is None else now
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "C001", "iat": int(issued), "exp": int(issued + lifetime)}
        body |= claims
        return jwt.encode(body, self.key, algorithm="ES256", headers={"kid": self.kid})

    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def write(self, path: Path) -> Path:
        path.write_text(json.dumps(self.jwks), encoding="utf-8")
        return path


def unsigned(**claims) -> str:
    """A JWT with `alg: none` and no signature."""

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "C001", "exp": int(time.time() + 3600)} | claims
    return f"{part({'alg': 'none', 'typ': 'JWT', 'kid': 'k1'})}.{part(body)}."


@contextlib.contextmanager
def jwks_server(provider: Provider) -> Iterator[str]:
    """The provider's JWKS at a loopback URL until the block ends."""
    document = json.dumps(provider.jwks).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the standard library's name
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *args):  # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json"
    finally:
        server.shutdown()
        server.server_close()

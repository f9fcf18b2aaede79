"""JWTs that must never name anyone to `orderbot mcp --jwks`: unsigned (`alg: none`), signed
with the provider's public key as an HMAC secret (the algorithm confusion), signed by another
key under the provider's key id, changed after signing, or pointing at keys of their own
(`jku`, `jwk`); and whatever garbage a client sends in their place. Each is simply not valid
(401 invalid_token over HTTP: tests/mcp/test_mcp_jwt.py sends an unsigned one)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import jwt
import pytest
from jwtkit import AUDIENCE, ISSUER, Provider, unsigned

from orderbot.mcp.jwts import Jwts


@pytest.fixture
def provider():
    return Provider()


@pytest.fixture
def jwts(provider, tmp_path):
    return Jwts(str(provider.write(tmp_path / "jwks.json")), issuer=ISSUER, audience=AUDIENCE)


def claims(**more) -> dict:
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": "C002", "exp": int(time.time() + 3600)} | more


def test_the_real_token_is_accepted_the_control(provider, jwts) -> None:
    assert jwts.principal(provider.token(sub="C002")).customer == "C002"


def test_an_unsigned_token_is_refused(jwts) -> None:
    assert jwts.principal(unsigned(sub="C002")) is None
    assert jwts.principal(unsigned(sub="C002").replace('"none"', '"None"')) is None


def test_the_public_key_as_an_hmac_secret_is_refused(provider, jwts) -> None:
    pem = provider.public_pem()
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "kid": "k1"}).encode()).decode().rstrip("=")
    body = base64.urlsafe_b64encode(json.dumps(claims()).encode()).decode().rstrip("=")
    signature = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
    forged = f"{header}.{body}.{base64.urlsafe_b64encode(signature).decode().rstrip('=')}"
    assert jwts.principal(forged) is None


def test_another_key_under_the_providers_key_id_is_refused(jwts) -> None:
    impostor = Provider(kid="k1")
    assert jwts.principal(impostor.token(sub="C002")) is None


def test_a_token_changed_after_signing_is_refused(provider, jwts) -> None:
    header, body, signature = provider.token(sub="C001").split(".")
    changed = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    changed["sub"] = "C002"
    body = base64.urlsafe_b64encode(json.dumps(changed).encode()).decode().rstrip("=")
    assert jwts.principal(f"{header}.{body}.{signature}") is None


def test_keys_a_token_brings_along_are_never_used(jwts) -> None:
    impostor = Provider(kid="mine")
    public = impostor.jwks["keys"][0]
    for headers in ({"kid": "mine", "jwk": public}, {"kid": "mine", "jku": "http://127.0.0.1:9/jwks.json"}):
        forged = jwt.encode(claims(), impostor.key, algorithm="ES256", headers=headers)
        assert jwts.principal(forged) is None


@pytest.mark.parametrize(
    "garbage", ["a.b.c", "..", "x" * 10_000 + ".y.z", "eyJhbGciOiJFUzI1NiJ9.e30.", "\u202e.\x00.\n"]
)
def test_garbage_in_a_tokens_shape_is_refused_without_an_error(jwts, garbage) -> None:
    assert jwts.principal(garbage) is None

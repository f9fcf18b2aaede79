"""JWTs of a shop's own identity provider, for `orderbot mcp --http --jwks FILE|URL --issuer ISS
--audience AUD` (PyJWT, which the mcp package brings; imported only when --jwks is given).

A token is accepted when its signature verifies with one of the provider's public keys (its
JWKS: a file, or a URL read again every few minutes and when a token names a key it has not
seen), with an asymmetric algorithm the key is for (never `none`, never a shared-secret HMAC
that a public key would turn into a forgery), its issuer and audience are the ones given, and
it has not expired at `clock()` (its `nbf`, when it has one, has come). Which claim names the
customer, or the operator, is the server's choice (`--customer-claim`, `--operator-claim`); a
token that names neither is refused. Whatever fails, the token is simply not valid: the
request gets 401 `invalid_token`, and the reason goes to the log without the token.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import jwt

from orderbot.errors import ConfigError
from orderbot.mcp.sessions import Principal
from orderbot.text import cut

log = logging.getLogger("orderbot")

# Asymmetric only: with HS256 a provider's public key would be the secret anyone can sign with.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY = 30.0  # seconds of clock skew allowed between the provider and this server
MAX_CLAIM = 200  # characters of a customer's or an operator's name taken from a token


class Jwts:
    """The identity provider's tokens (orderbot.mcp.identity.Verifier)."""

    def __init__(
        self,
        source: str,
        *,
        issuer: str,
        audience: str,
        customer_claim: str = "sub",
        operator_claim: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer, self.audience = issuer, audience
        self.customer_claim, self.operator_claim = customer_claim, operator_claim
        self._clock = clock
        self._client: jwt.PyJWKClient | None = None
        self._keys: jwt.PyJWKSet | None = None
        if source.startswith(("http://", "https://")):
            self._client = jwt.PyJWKClient(source, cache_jwk_set=True, lifespan=300, timeout=10)
            try:
                self._client.get_jwk_set()  # now, so that a wrong URL is one sentence at start
            except jwt.PyJWKClientError as exc:
                raise ConfigError("error.mcp_jwks", source=cut(source, 200), why=cut(str(exc), 200)) from None
        else:
            try:
                self._keys = jwt.PyJWKSet.from_json(Path(source).expanduser().read_text(encoding="utf-8"))
            except (OSError, ValueError, jwt.PyJWTError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise ConfigError("error.mcp_jwks", source=cut(source, 200), why=cut(why, 200)) from None

    def claims(self, credential: str) -> bool:
        return credential.count(".") == 2

    def principal(self, credential: str) -> Principal | None:
        try:
            claims = self._verified(credential)
        except (jwt.PyJWTError, ValueError, TypeError, KeyError) as exc:
            log.info("mcp: a JWT was refused: %s", cut(str(exc), 200))
            return None
        now = self._clock()
        expires, begins = claims.get("exp"), claims.get("nbf", 0)
        if not isinstance(expires, int | float) or expires + LEEWAY <= now:
            log.info("mcp: a JWT was refused: expired")
            return None
        if not isinstance(begins, int | float) or begins - LEEWAY > now:
            log.info("mcp: a JWT was refused: not valid yet")
            return None
        subject = claims.get("sub")
        operator = _name(claims.get(self.operator_claim)) if self.operator_claim else None
        customer = None if operator is not None else _name(claims.get(self.customer_claim))
        if operator is None and customer is None:
            log.info("mcp: a JWT was refused: it names no customer (%s) or operator", self.customer_claim)
            return None
        who = f"operator {operator}" if operator is not None else f"customer {customer}"
        key = f"jwt:{self.issuer}:{subject if isinstance(subject, str) else who}"
        return Principal(key=key, customer=customer, operator=operator, label=f"{who}, JWT of {cut(self.issuer, 80)}")

    def _verified(self, credential: str) -> dict:
        header = jwt.get_unverified_header(credential)
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise jwt.InvalidAlgorithmError(f"algorithm {str(algorithm)[:20]!r} is not accepted")
        key = self._key(credential, header)
        if key.algorithm_name and key.algorithm_name != algorithm:
            raise jwt.InvalidAlgorithmError("the token's algorithm is not its key's")
        options = {"require": ["exp", "iss", "aud"], "verify_exp": False, "verify_nbf": False, "verify_iat": False}
        return jwt.decode(
            credential,
            key=key.key,
            algorithms=[algorithm],
            audience=self.audience,
            issuer=self.issuer,
            options=options,
        )

    def _key(self, credential: str, header: dict) -> jwt.PyJWK:
        if self._client is not None:
            return self._client.get_signing_key_from_jwt(credential)
        assert self._keys is not None
        kid = header.get("kid")
        if kid is None:
            if len(self._keys.keys) != 1:
                raise jwt.InvalidKeyError("the token names no key (kid) and the JWKS has several")
            return self._keys.keys[0]
        return self._keys[str(kid)]


def _name(value: object) -> str | None:
    """A customer's or operator's name from a claim: a non-empty string, cut short."""
    if isinstance(value, str) and value.strip():
        return cut(value.strip(), MAX_CLAIM)
    return None

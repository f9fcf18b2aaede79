"""A shop's own identity provider: `orderbot mcp --http --jwks FILE|URL --issuer --audience`
accepts its JWTs (signature, issuer, audience and expiry checked with PyJWT, against a clock
the test moves), takes the customer or the operator from the claims the flags name, and
publishes the RFC 9728 protected-resource metadata the MCP authorization spec asks for.
The keys are made by the test; the JWKS is a file or a loopback server."""

from __future__ import annotations

import shutil
import time

import anyio
import httpx2
import pytest
from clikit import cli
from httpkit import connected, serving
from jwtkit import AUDIENCE, ISSUER, Provider, jwks_server, unsigned
from mcpkit import Clock, envelope

from orderbot.mcp.jwts import Jwts
from orderbot.shops.sample.model import SAMPLE_PATH

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture
def provider(tmp_path):
    return Provider()


def verifier(provider, tmp_path, clock, **claims) -> Jwts:
    return Jwts(str(provider.write(tmp_path / "jwks.json")), issuer=ISSUER, audience=AUDIENCE, clock=clock, **claims)


def test_a_jwt_of_the_provider_names_its_customer_until_it_expires(provider, tmp_path) -> None:
    clock = Clock(time.time())
    jwts = verifier(provider, tmp_path, clock)
    token = provider.token(now=clock.now, lifetime=600)
    accepted = jwts.principal(token)
    assert (accepted.customer, accepted.operator) == ("C001", None) and accepted.distinct
    assert ISSUER in accepted.label and token not in accepted.label + accepted.key
    clock.now += 600 + 60  # past its expiry and the leeway
    assert jwts.principal(token) is None
    later = provider.token(now=clock.now + 3600)  # not valid before it was issued? nbf says
    assert jwts.principal(provider.token(now=clock.now, nbf=int(clock.now + 3600))) is None
    assert jwts.principal(later) is not None


def test_a_wrong_audience_or_issuer_or_no_customer_is_refused(provider, tmp_path) -> None:
    jwts = verifier(provider, tmp_path, time.time)
    assert jwts.principal(provider.token(aud="https://elsewhere.example/mcp")) is None
    assert jwts.principal(provider.token(iss="https://other-idp.example")) is None
    assert jwts.principal(provider.token(sub="")) is None
    assert jwts.principal(provider.token(aud=None)) is None


def test_the_claims_that_name_customer_and_operator_are_the_servers_choice(provider, tmp_path) -> None:
    jwts = verifier(provider, tmp_path, time.time, customer_claim="customer_id", operator_claim="staff")
    customer = jwts.principal(provider.token(sub="user-7", customer_id="C002"))
    staff = jwts.principal(provider.token(sub="user-9", staff="desk2"))
    assert (customer.customer, customer.operator) == ("C002", None)
    assert (staff.customer, staff.operator) == (None, "desk2")
    assert customer.key != staff.key
    assert jwts.principal(provider.token(sub="user-8")) is None  # names neither


def test_a_broken_jwks_is_one_sentence_at_start(tmp_path) -> None:
    broken = tmp_path / "jwks.json"
    broken.write_text("{not json")
    done = cli("mcp", "--http", "127.0.0.1:0", "--jwks", str(broken), "--issuer", ISSUER, "--audience", AUDIENCE)
    assert done.exit_code == 6 and "--jwks" in done.stderr and "Traceback" not in done.output
    alone = cli("mcp", "--http", "127.0.0.1:0", "--jwks", str(broken))
    assert alone.exit_code == 2 and "--issuer" in alone.stderr
    plain = cli("mcp", "--http", "127.0.0.1:0", "--jwks", str(broken), "--issuer", "idp", "--audience", AUDIENCE)
    assert plain.exit_code == 2 and "issuer URL" in plain.stderr


@pytest.mark.slow
def test_over_http_a_jwt_signed_by_the_test_key_is_accepted_a_wrong_audience_or_expired_one_refused(
    provider, tmp_path
) -> None:
    orders = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    good = provider.token(sub="C001")
    elsewhere = provider.token(sub="C001", aud="https://elsewhere.example/mcp")
    expired = provider.token(sub="C001", now=time.time() - 7200, lifetime=600)
    flags = ["--orders", str(orders), "--jwks", "URL", "--issuer", ISSUER, "--audience", AUDIENCE]
    with jwks_server(provider) as url:
        flags[3] = url
        with serving(*flags, cwd=tmp_path) as server:

            async def main():
                async with connected(server.url, token=good, mode="auto") as client:
                    mine = envelope(await client.call_tool("get_order_details", {"order_id": "ORD-1001"}))
                    theirs = envelope(await client.call_tool("get_order_details", {"order_id": "ORD-1003"}))
                return mine, theirs

            mine, theirs = anyio.run(main)
            refused = {
                name: httpx2.post(server.url, json=PING, headers={"Authorization": f"Bearer {token}"})
                for name, token in (("audience", elsewhere), ("expired", expired), ("alg none", unsigned()))
            }
            tokenless = httpx2.post(server.url, json=PING)
            root = server.url.removesuffix("/mcp")
            metadata = httpx2.get(f"{root}/.well-known/oauth-protected-resource/mcp")
    assert mine["ok"] and mine["data"]["order_id"] == "ORD-1001"
    assert theirs["code"] == "no_access"
    for response in refused.values():
        assert response.status_code == 401 and response.json()["error"] == "invalid_token"
    assert tokenless.status_code == 401
    assert metadata.status_code == 200
    document = metadata.json()
    assert document["resource"] == AUDIENCE and document["authorization_servers"] == [ISSUER]
    challenge = tokenless.headers["www-authenticate"]
    assert 'resource_metadata="https://orderbot.shop.example/.well-known/oauth-protected-resource/mcp"' in challenge

"""Every route of the app, found by walking its routes (so a route added later is checked without touching this
file), called with no key, a wrong key, a revoked key, a read-only key and another vault's key: 401 or 403 each
time it must be, and the database shows that nothing of the other vault was written (row counts of every vault
table and of audit_log) or handed out (no response carries its contents)."""

from __future__ import annotations

import re

import psycopg
import pytest
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient

from app.api.app import create_app
from app.auth_limit import FailedAuthLimiter
from app.api.guard import METHOD_SCOPE
from app.auth import scope_allows
from app.keys import create_key, revoke_key
from app.vaults import create_vault
from tests.integration.test_auth_rls import fill, vault_tables

# The only routes open without a key: health and the OpenAPI documents. Adding one is a decision made here.
PUBLIC = re.compile(r"^/health$|^/docs(/|$)|^/inspect/log(in|out)$")  # the inspector's sign-in: the way in
# Bodies a permitted caller could send (so a guard that let the call through would write); other routes take the
# first example of their OpenAPI request schema, else {}.
BODIES = {
    ("POST", "/v1/vaults"): {"name": "intruder"},
    ("POST", "/v1/keys"): {"scope": "admin"},
    ("POST", "/v1/vaults/{vault}/memories"): {"content": "INTRUDER wrote this memory."},
    ("POST", "/v1/vaults/{vault}/sessions/{session}/turns"): {"turns": [{"role": "user", "content": "INTRUDER"}]},
    ("POST", "/v1/vaults/{vault}/recall"): {"query": "Where does Alice work?"},
}


def _template(path: str) -> str:
    return re.sub(r"\{(\w+):\w+\}", r"{\1}", path)


def _example(schema: dict, components: dict) -> object:
    for _ in range(5):
        if "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[1]]
        elif "oneOf" in schema or "anyOf" in schema:
            schema = (schema.get("oneOf") or schema.get("anyOf"))[0]
        else:
            break
    return (schema.get("examples") or [{}])[0]


def endpoints(app) -> list[tuple[str, str, object]]:
    """(method, path template, handler) of every HTTP route; HEAD and OPTIONS are answered by Litestar itself."""
    found = []
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            for method, entry in route.route_handler_map.items():
                if method not in ("HEAD", "OPTIONS"):
                    found.append((method, _template(route.path), entry[0] if isinstance(entry, tuple) else entry))
    return found


@pytest.fixture
async def world(services, db_url):
    a = await create_vault(services.db, "vault-a")
    b = await create_vault(services.db, "vault-b")
    await fill(services, a)
    await fill(services, b)
    keys = {
        "read_a": (await create_key(services.db, scope="read", vault=a.name, name="reader of A"))[0],
        "write_b": (await create_key(services.db, scope="write", vault=b.name, name="writer of B"))[0],
        "admin_b": (await create_key(services.db, scope="admin", vault=b.name, name="admin of B"))[0],
    }
    revoked, info = await create_key(services.db, scope="admin", name="revoked admin")
    await revoke_key(services.db, info.id)
    keys["revoked"] = revoked
    keys["wrong"] = keys["read_a"][:-1] + ("a" if keys["read_a"][-1] != "a" else "b")
    block = await services.db.fetchone("SELECT min(id) AS id FROM memvault.block WHERE vault_id = %s", (a.id,),
                                       vault_id=a.id)
    params = {"vault": a.name, "block_id": str(block["id"]), "session": "s1", "entity": "Alice",
              "key_id": keys["read_a"].split("_")[1], "item_id": "1", "path": "x", "name": "rust"}
    return a, b, keys, params


def _snapshot(db_url: str, vault_ids) -> dict:
    with psycopg.connect(db_url) as conn:
        counts = {(t, str(v)): conn.execute(f"SELECT count(*) FROM memvault.{t} WHERE vault_id = %s",
                                            (v,)).fetchone()[0]
                  for t in vault_tables(conn) for v in vault_ids}
        counts["audit_log"] = conn.execute("SELECT count(*) FROM memvault.audit_log").fetchone()[0]
        counts["vaults"] = conn.execute("SELECT count(*) FROM memvault.vault").fetchone()[0]
        counts["keys"] = conn.execute("SELECT count(*), count(revoked_at) FROM memvault.api_key").fetchone()
    return counts


async def test_every_route_refuses_who_may_not(services, db_url, world) -> None:
    a, b, keys, params = world
    app = create_app(services.settings, services=services)
    # two failed keys on each of ~50 routes from one address: the failed-key limit (its own test is in
    # test_auth_edge.py) would answer 429 from the sixth route on; here every refusal must be a 401
    services.auth_attempts = FailedAuthLimiter(per_key=10**6, per_address=10**6, window_s=60)
    schema = app.openapi_schema.to_schema()
    components = schema.get("components", {}).get("schemas", {})
    routes = endpoints(app)
    assert len(routes) >= 30
    documented = {(m.upper(), p) for p, item in schema["paths"].items() for m in item}
    assert documented <= {(m, p) for m, p, _ in routes}  # the schema's routes are all among the walked ones
    public = {p for m, p, h in routes if h.opt.get("public")}
    assert public and all(PUBLIC.match(p) for p in public), f"unexpected public routes: {public - {'/health'}}"

    markers = (f"in {a.name};", f"({a.name})", str(a.id))  # what only vault A's rows hold (see fill)
    before = _snapshot(db_url, (a.id, b.id))
    checked = 0
    async with AsyncTestClient(app=app) as anon:
        for method, template, handler in routes:
            if handler.opt.get("public"):
                continue
            path = template.format(**{name: params[name] for name in re.findall(r"\{(\w+)\}", template)})
            op = schema["paths"].get(template, {}).get(method.lower(), {})
            body_schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            body = BODIES.get((method, template), _example(body_schema, components) if body_schema else None)
            scope = handler.opt.get("scope") or METHOD_SCOPE[method]
            in_vault = "{vault}" in template
            filtered = not in_vault and handler.opt.get("cross_vault") == "filter"

            async def call(headers):
                return await anon.request(method, path, headers=headers,
                                          json=body if method in ("POST", "PUT", "PATCH") else None)

            for who, headers in (("no key", {}), ("wrong key", {"Authorization": f"Bearer {keys['wrong']}"}),
                                 ("revoked key", {"X-API-Key": keys["revoked"]})):
                r = await call(headers)
                assert r.status_code == 401, f"{method} {path} with {who}: {r.status_code} {r.text[:200]}"
                assert r.json()["error"] == "Unauthorized" and "www-authenticate" in r.headers
            if not scope_allows("read", scope):
                r = await call({"Authorization": f"Bearer {keys['read_a']}"})
                assert r.status_code == 403, f"{method} {path} with a read key: {r.status_code} {r.text[:200]}"
                assert r.json()["error"] == "Forbidden" and r.json()["hint"]
            for who in ("write_b", "admin_b"):  # keys of another vault
                r = await call({"Authorization": f"Bearer {keys[who]}"})
                may = filtered and scope_allows(who.split("_")[0], scope)
                if not may:
                    assert r.status_code == 403, f"{method} {path} with {who}: {r.status_code} {r.text[:200]}"
                leaked = [m for m in markers if m in r.text]
                assert not leaked, f"{method} {path} gave {who} vault A's {leaked}"
            checked += 1
    assert checked >= 25
    assert _snapshot(db_url, (a.id, b.id)) == before, "a refused request changed the database"

    async with AsyncTestClient(app=app) as anon:  # what the other vault's key may list is its own only
        listed = await anon.get("/v1/vaults", headers={"Authorization": f"Bearer {keys['write_b']}"})
        assert [v["name"] for v in listed.json()["items"]] == ["vault-b"]
        listed = await anon.get("/v1/keys", headers={"Authorization": f"Bearer {keys['admin_b']}"})
        assert {k["vault"] for k in listed.json()["items"]} == {"vault-b"}

"""Hooks of the schemathesis run in ``tests/integration/test_api_contract.py`` (loaded through SCHEMATHESIS_HOOKS
in the ``st run`` process).

- A request for a vault with a well-formed name is pointed at the vault ``fuzz`` the test created, so generated
  requests reach the routes' logic and not only their 404; a malformed name is left alone (it is what a negative
  case tests). Deleting a vault and importing one keep their generated names (they would delete ``fuzz``, or
  import onto a vault that exists).
- After each call, what a request may have taken away is put back: the test's admin key is un-revoked, the vault
  ``fuzz`` is made again. The database is the test's own clone; its owner's URL, the API's URL and the key come
  in the environment.
"""

from __future__ import annotations

import os
import re

import httpx
import psycopg
import schemathesis

VAULT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
KEEP_NAME = {("DELETE", "/v1/vaults/{vault}"), ("POST", "/v1/vaults/{vault}/import")}


@schemathesis.hook
def before_call(context, case, **kwargs) -> None:
    params = case.path_parameters or {}
    vault = params.get("vault")
    if (isinstance(vault, str) and VAULT_NAME.fullmatch(vault)
            and (case.method.upper(), case.path) not in KEEP_NAME):
        params["vault"] = "fuzz"


@schemathesis.hook
def after_call(context, case, response) -> None:
    if case.method.upper() != "DELETE":
        return
    if case.path.startswith("/v1/keys/"):
        with psycopg.connect(os.environ["MEMVAULT_TEST_OWNER_URL"], autocommit=True) as conn:
            conn.execute("UPDATE memvault.api_key SET revoked_at = NULL WHERE id = %s",
                         (os.environ["MEMVAULT_TEST_KEY_ID"],))
    elif case.path == "/v1/vaults/{vault}" and (case.path_parameters or {}).get("vault") == "fuzz":
        # the stateful phase names vaults it saw listed: purge what is left of fuzz, and create it again
        base = os.environ["MEMVAULT_TEST_BASE_URL"]
        auth = {"Authorization": f"Bearer {os.environ['MEMVAULT_TEST_KEY']}"}
        httpx.delete(f"{base}/v1/vaults/fuzz?purge=true", headers=auth)
        assert httpx.post(f"{base}/v1/vaults", json={"name": "fuzz"}, headers=auth).status_code == 201

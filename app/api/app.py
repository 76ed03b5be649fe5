"""The Litestar application factory."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar, Request, Response
from litestar.di import Provide
from litestar.plugins.pydantic import PydanticPlugin
from litestar.routes import HTTPRoute
from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

from app.api.body import read_json_body
from app.api.browse import EntityController, SessionListController
from app.api.docs import assets_router, openapi_config
from app.api.errors import EXCEPTION_HANDLERS
from app.api.guard import provide_principal, require_key
from app.api.health import HealthController
from app.api.keys import KeyController
from app.api.openapi import check_params, complete_contract
from app.api.vaults import VaultController
from app.background.api import DiscoveryController, DreamController, PersonalController, ReviewController
from app.db.replicas import LSN_HEADER, format_lsn
from app.errors import InvalidInput, MemvaultError
from app.interfaces.inspector import InspectorController
from app.interfaces.inspector_auth import InspectorLoginController
from app.interfaces.inspector_review import InspectorReviewController
from app.portability.api import PortabilityController
from app.read.api import RecallController
from app.services import Services
from app.settings import Settings, get_settings
from app.vaults import Vault, get_vault
from app.write.api import MemoryController, SessionController

# Every route handler, by plain import: a new feature's controller is one import and one entry here.
CONTROLLERS = (HealthController, VaultController, KeyController, MemoryController, SessionController,
               RecallController, SessionListController, EntityController, PortabilityController,
               InspectorController, InspectorLoginController, InspectorReviewController, DreamController,
               ReviewController, DiscoveryController, PersonalController)


BIGINT_MAX = 2**63 - 1
log = logging.getLogger(__name__)


async def read_request(request: Request) -> Response | None:
    """Everything a request carries, checked before its handler runs (after the key's check): an id in the path
    (a memory's, an entity's) is a PostgreSQL bigint, so a larger number is a 422, not a query the database cannot
    type; the other path parameters follow their documented rules (``app.api.openapi``); a JSON body is decoded
    strictly, once (``app.api.body``)."""
    if request.method == "OPTIONS":  # Litestar's own answer lists only some methods of a path several share
        path = next(iter(request.route_handler.paths))
        return Response(None, status_code=204, headers={"Allow": request.app.state.allow.get(path, "OPTIONS")})
    for name, value in request.path_params.items():
        if isinstance(value, int) and not -BIGINT_MAX <= value <= BIGINT_MAX:
            raise InvalidInput(f"{name}: {value} is out of range", hint="ids are 64-bit integers")
    await check_params(request)
    await read_json_body(request)
    return None


def served_app() -> Litestar:
    """The app of one API process of ``memvault serve --workers N`` (uvicorn's factory): its own pool, logged in
    as the service's role, from the settings the parent process put in the environment."""
    from app.services import database_url, service_replica_urls, service_url

    settings = get_settings()
    owner = database_url(settings)
    return create_app(settings, url=service_url(settings, owner), ddl_url=owner,
                      replica_urls=service_replica_urls(settings))


async def provide_vault(vault: str, services: Services) -> Vault:
    """The ``v`` of a route with ``{vault}`` in its path: the live vault it names, looked up once per request
    (404 unknown, 410 deleted), instead of by each handler."""
    return await get_vault(services.db, vault)


def create_app(settings: Settings | None = None, *, services: Services | None = None, url: str | None = None,
               ddl_url: str | None = None, replica_urls: list[str] | None = None) -> Litestar:
    """Build the API. Pass ``services`` to share already-open ones (tests, benchmarks).

    Every route needs an API key (``app.api.guard``) but those marked ``opt={"public": True}``: /health and the
    OpenAPI documents."""
    settings = settings or get_settings()
    state: dict[str, Services] = {}

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        owned = services is None
        # An API process (re)started while the database is away waits for it rather than fail its start-up.
        state["services"] = app.state.services = services or await Services.start_when_reachable(
            settings, url=url, ddl_url=ddl_url, replica_urls=replica_urls)
        try:
            yield
        finally:
            if owned:
                await state["services"].close()

    async def provide_services(request: Request) -> Services:
        """The primary's services; a route marked ``opt={"standby": True}`` (it only reads) gets a healthy
        standby's when there are standbys, one that has replayed the request's X-Memvault-LSN if it sends one."""
        svc = state["services"]
        if svc.replicas is not None and request.route_handler.opt.get("standby"):
            return await svc.for_reads(request.headers.get(LSN_HEADER))
        return svc

    async def wal_position(message: Message, scope: Scope) -> None:
        """With standbys, a write's successful response carries the primary's WAL position after its commit
        (X-Memvault-LSN): sent back on a read, it is served only by a standby that has replayed it."""
        svc = state.get("services")
        if (message["type"] != "http.response.start" or svc is None or svc.replicas is None
                or message["status"] >= 400 or scope.get("method") in ("GET", "HEAD", "OPTIONS")):
            return
        handler = scope.get("route_handler")
        if handler is None or handler.opt.get("scope") == "read" or handler.opt.get("public"):
            return
        try:
            lsn = await svc.replicas.primary_lsn()
        except MemvaultError as exc:  # the write is done: its answer goes out, without a position to wait for
            log.warning("no WAL position for %s %s: %s", scope.get("method"), scope.get("path"), exc)
            return
        MutableScopeHeaders.from_message(message)[LSN_HEADER] = format_lsn(lsn)

    app = Litestar(
        route_handlers=[*CONTROLLERS, assets_router()],
        dependencies={"services": Provide(provide_services),
                      "principal": Provide(provide_principal, sync_to_thread=False),
                      "v": Provide(provide_vault)},  # the {vault} of the path, looked up once per request
        guards=[require_key],
        lifespan=[lifespan],
        before_request=read_request,
        before_send=[wal_position],
        exception_handlers=EXCEPTION_HANDLERS,
        # bodies validated strictly: 0 is not false, "5" is not 5 (times: app.api.body.IsoTime)
        plugins=[PydanticPlugin(validate_strict=True)],
        openapi_config=openapi_config(),  # Swagger UI from the package (app/api/docs.py); the contract: app/api/openapi.py
        request_max_body_size=settings.max_body_bytes,
        debug=False,
    )
    complete_contract(app)
    app.state.allow = {route.path: ", ".join(sorted(route.methods)) for route in app.routes
                       if isinstance(route, HTTPRoute)}
    return app

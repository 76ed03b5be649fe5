"""Jobs reach the shared services (pool, models) through here; the runner binds them at start."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.services import Services

_services: Services | None = None


def bind_services(services: Services) -> None:
    global _services
    _services = services


async def get_services() -> Services:
    """The bound services, or ones started from settings (a worker started by Procrastinate's own CLI)."""
    global _services
    if _services is None:
        from app.services import Services, database_url, service_url
        from app.settings import get_settings

        owner = database_url(get_settings())
        _services = await Services.start(url=service_url(get_settings(), owner), ddl_url=owner)
    return _services

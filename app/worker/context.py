"""How a job receives the worker's services: explicitly, in its Procrastinate job context.

The worker (``app.runner``) is built with ``additional_context=worker_context(services)``; every task is declared
with ``pass_context=True`` and takes ``services_of(context)``. Nothing is bound to this module: two workers in one
process (a test's, the service's) each hand their jobs their own services.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.errors import ConfigError

if TYPE_CHECKING:
    from procrastinate import JobContext

    from app.services import Services

SERVICES = "memvault_services"


def worker_context(services: Services) -> dict[str, Any]:
    """The ``additional_context`` of a Procrastinate worker whose jobs run on ``services``."""
    return {SERVICES: services}


def services_of(context: JobContext) -> Services:
    """The services of the worker running this job."""
    services = context.additional_context.get(SERVICES)
    if services is None:
        raise ConfigError("this job runs in memvault's own worker, which hands it the service's pool and models",
                          hint="run the jobs with `memvault worker` (or `memvault serve`), not Procrastinate's CLI")
    return services

"""The API reference at ``/docs``: Swagger UI from the assets the ``swagger-ui-bundle`` package ships, served by
this app under ``/docs/assets`` (no CDN: the page works offline and behind a firewall). The bearer scheme every route
but the public ones takes is declared in the schema by app/api/openapi.py (the contract), so "Authorize" makes the
page's requests carry the key.

``/docs`` and ``/docs/swagger`` (the older address) are the page, ``/docs/openapi.json`` the schema."""

from __future__ import annotations

from litestar import Router
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.static_files import create_static_files_router

from app import __version__

ASSETS = "/docs/assets"


def _swagger_dir():
    from swagger_ui_bundle import swagger_ui_path

    return swagger_ui_path


def swagger_ui() -> SwaggerRenderPlugin:
    # Swagger UI 4 defines the standalone preset as a global of its own script, not on SwaggerUIBundle as
    # Litestar's page expects; its bundle alone renders the whole page (``presets.apis``).
    return SwaggerRenderPlugin(
        path=["/", "/swagger"], js_url=f"{ASSETS}/swagger-ui-bundle.js", css_url=f"{ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>")


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="memvault",
        version=__version__,
        description="Long-term memory for AI agents: write, recall, and the background track. Every route but "
                    "/health and these documents needs an API key: press Authorize and paste it.",
        path="/docs",
        openapi_router=Router("/docs", route_handlers=[], include_in_schema=False, opt={"public": True}),
        render_plugins=[swagger_ui()],
    )


def assets_router() -> Router:
    """Swagger UI's files, public like the page that loads them."""
    return create_static_files_router(path=ASSETS, directories=[_swagger_dir()], opt={"public": True},
                                      include_in_schema=False, name="docs-assets")

"""The API reference page (``/docs``) in headless Chromium with no network but loopback: it renders from the
assets the app serves itself, and after "Authorize" with a key, "Try it out" on ``GET /v1/vaults`` gets a 200
with the vaults (the request carried the key). Every resource the page loaded came from the app."""

from __future__ import annotations

import asyncio

from tests.integration.test_inspector_browser import CHROMIUM, DRIVER, FLAGS, _not_blank, served
from tests.integration.test_inspector_browser import pytestmark  # noqa: F401  (skipped without chromium)

# Any host but loopback resolves to nothing: a CDN the page still named would fail to load and the page stay blank.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"


def _offline_browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, OFFLINE, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=options)


async def test_docs_page_works_offline_and_sends_the_key(services, admin_key, tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from app.vaults import create_vault

    await create_vault(services.db, "docs-demo")

    def session(base: str) -> dict:
        driver = _offline_browser(tmp_path)
        wait = WebDriverWait(driver, 30)
        try:
            driver.get(f"{base}/docs")
            wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".swagger-ui .info .title"), "memvault"))
            driver.find_element(By.CSS_SELECTOR, ".btn.authorize").click()
            box = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".auth-container input")))
            box.send_keys(admin_key)
            driver.find_element(By.CSS_SELECTOR, ".auth-btn-wrapper .btn.authorize").click()
            wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".auth-btn-wrapper .btn-done"))).click()

            op = driver.find_element(By.XPATH, "//div[contains(@class,'opblock-get')][.//*[@data-path='/v1/vaults']]")
            op.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
            wait.until(lambda d: op.find_elements(By.CSS_SELECTOR, ".try-out__btn"))[0].click()
            wait.until(lambda d: op.find_elements(By.CSS_SELECTOR, ".btn.execute"))[0].click()
            status = wait.until(lambda d: op.find_elements(
                By.CSS_SELECTOR, ".live-responses-table .response .response-col_status"))[0]
            body = op.find_element(By.CSS_SELECTOR, ".live-responses-table .response .response-col_description").text
            curl = op.find_element(By.CSS_SELECTOR, ".curl-command").text
            resources = driver.execute_script(
                "return performance.getEntriesByType('resource').map(e => e.name)")
            return {"status": status.text.strip(), "body": body, "curl": curl, "resources": resources,
                    "png": driver.get_screenshot_as_png()}
        finally:
            driver.quit()

    async with served(services) as base:
        seen = await asyncio.to_thread(session, base)
    assert seen["status"] == "200", seen["body"]
    assert "docs-demo" in seen["body"]
    assert f"Authorization: Bearer {admin_key}" in seen["curl"]
    assert seen["resources"] and all(r.startswith(base) for r in seen["resources"]), seen["resources"]
    assert any(r.endswith("/docs/assets/swagger-ui-bundle.js") for r in seen["resources"])
    assert _not_blank(seen["png"])


async def test_schema_declares_bearer_auth(client) -> None:
    from app.api.openapi import BEARER  # the one scheme, declared by the contract (app/api/openapi.py)

    schema = (await client.get("/docs/openapi.json")).json()
    assert schema["components"]["securitySchemes"][BEARER] == {
        **schema["components"]["securitySchemes"][BEARER], "type": "http", "scheme": "bearer"}
    operations = [op for path in schema["paths"].values() for op in path.values() if isinstance(op, dict)]
    assert all(op.get("security") == [{BEARER: []}] for op in operations if op is not schema["paths"]["/health"]["get"])
    assert "security" not in schema["paths"]["/health"]["get"]  # the one route that needs no key
    page = (await client.get("/docs", headers={"Authorization": ""})).text
    assert "/docs/assets/swagger-ui-bundle.js" in page and "cdn" not in page.lower() and "unpkg" not in page
    asset = await client.get("/docs/assets/swagger-ui-bundle.js", headers={"Authorization": ""})
    assert asset.status_code == 200 and "javascript" in asset.headers["content-type"]

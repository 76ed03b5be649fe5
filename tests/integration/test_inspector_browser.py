"""The inspector in a real browser: headless Chromium (Debian's chromium + chromium-driver, driven by selenium)
against the API served by uvicorn on a loopback port. Real clicks: sign in with a key, search, open a memory, click
an entity in its graph picture, approve a review item, dismiss a finding, sign out; screenshots are not blank.
`make test` installs chromium and chromium-driver when they are missing."""

from __future__ import annotations

import asyncio
import io
import shutil
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest

from app.db.cluster import free_port

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="headless browser tests need Debian's chromium "
                                "and chromium-driver (`make test` installs them as root: apt-get install -y "
                                "chromium chromium-driver)")
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,1000")


@asynccontextmanager
async def served(services):
    import uvicorn

    from app.api.app import create_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(services.settings, services=services), host="127.0.0.1",
                                           port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "uvicorn did not start"
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


def _browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def _not_blank(png: bytes) -> bool:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    colors = image.getcolors(maxcolors=1 << 16) or []
    return image.size[0] > 100 and len(colors) > 8  # text, rules, links, the graph: many shades, not one


async def _seed(services):
    from app.background.dream import DreamLoop
    from app.vaults import get_vault
    from app.write.graph import GraphBuild
    from app.write.items import WriteItem
    from app.write.pipeline import WriteTrack
    from tests.integration.test_dream import _moved

    from app.vaults import create_vault

    vault = await create_vault(services.db, "insp")
    facts = ["Alice works at Acme.", "Alice lives in Paris.", "Bob works at Acme."]
    results = await WriteTrack(services).remember(vault, [
        WriteItem(content=t, said_at=datetime(2024, 3, 1, tzinfo=UTC), source_kind="user") for t in facts])
    await GraphBuild(services).run(vault.id, [r.block_id for r in results])
    await _moved(services, vault)  # two memories that contradict each other: a conflict for the queue
    await services.db.fetchone("SELECT * FROM memvault.review_thresholds_v1('conflict', 0.95, 0.5)",
                               vault_id=vault.id)
    await DreamLoop(services).run(vault, force=True)
    await services.db.fetchone("SELECT memvault.discovery_add_v1(NULL, %s::jsonb) AS n",
                               ('[{"kind": "insight", "key": "k1", "title": "Alice and Bob both work at Acme", '
                                '"score": 0.7}]',), vault_id=vault.id)
    return await get_vault(services.db, "insp"), results[0].block_id


async def test_inspector_in_headless_chromium(services, admin_key, tmp_path) -> None:
    from selenium.webdriver.common.by import By

    vault, alice_block = await _seed(services)
    [pending] = await services.db.fetchall("SELECT id FROM memvault.review_queue WHERE status = 'PENDING'",
                                           vault_id=vault.id)

    def session(base: str) -> list[str]:
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        seen: list[str] = []
        driver = _browser(tmp_path)
        wait = WebDriverWait(driver, 20)

        def gone(element):
            """ec.staleness_of, also when chromedriver answers the old page's node with "Node with given id does
            not belong to the document" (a WebDriverException, not a StaleElementReferenceException: it failed
            the clean-clone suite once)."""
            from selenium.common.exceptions import WebDriverException

            def check(_driver) -> bool:
                try:
                    element.is_enabled()
                except WebDriverException:  # StaleElementReferenceException included
                    return True
                return False
            return check
        try:
            driver.get(f"{base}/inspect/insp")  # no key yet: the sign-in form, which remembers where to go
            assert "/inspect/login" in driver.current_url
            driver.find_element(By.ID, "key").send_keys("mvk_wrong_aaaaaaaaaaaaaaaaaaaaaaaa")
            form = driver.find_element(By.ID, "sign-in")
            form.click()  # the redirect's page has an .err of its own (why sign in): wait for the next page
            wait.until(gone(form))
            wait.until(ec.presence_of_element_located((By.CLASS_NAME, "err")))
            assert "Sign in" in driver.title and driver.find_element(By.CLASS_NAME, "err").text
            driver.get(f"{base}/inspect/login?next=/inspect/insp")
            driver.find_element(By.ID, "key").send_keys(admin_key)
            driver.find_element(By.ID, "sign-in").click()
            wait.until(ec.title_contains("Vault"))
            assert driver.current_url.endswith("/inspect/insp") and "Vault insp" in driver.title
            cookie = driver.get_cookie("memvault_key")
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/inspect"

            box = driver.find_element(By.NAME, "text")
            box.send_keys("acme")
            search = driver.find_element(By.ID, "search-button")
            search.click()
            wait.until(gone(search))  # the rows below are the results page's, not the vault page's
            wait.until(ec.url_contains("text=acme"))
            rows = driver.find_elements(By.CSS_SELECTOR, "table tr")
            assert any("Alice works at Acme." in r.text for r in rows)
            assert not any("Alice lives in Paris." in r.text for r in rows)
            driver.find_element(By.LINK_TEXT, str(alice_block)).click()
            wait.until(ec.title_contains("Memory"))
            assert f"Memory {alice_block}" in driver.title
            assert "valid from" in driver.page_source and "recorded" in driver.page_source
            assert _not_blank(driver.get_screenshot_as_png())
            seen.append(driver.current_url)

            nodes = driver.find_elements(By.CSS_SELECTOR, "svg.graph a circle")
            assert len(nodes) >= 2
            acme = next(n for n in driver.find_elements(By.CSS_SELECTOR, "svg.graph a")
                        if n.find_element(By.TAG_NAME, "text").text == "Acme")
            acme.find_element(By.TAG_NAME, "circle").click()
            wait.until(ec.title_contains("Entity"))
            assert driver.title.startswith("Entity Acme")
            assert "Bob" in driver.page_source  # Acme's neighbourhood reaches Bob
            assert _not_blank(driver.get_screenshot_as_png())

            driver.get(f"{base}/inspect/insp")
            driver.find_element(By.ID, "review").click()
            wait.until(ec.title_contains("Review"))
            driver.find_element(By.ID, f"approve-{pending['id']}").click()
            wait.until(ec.presence_of_element_located((By.ID, "done")))
            assert f"item {pending['id']} approved" in driver.find_element(By.ID, "done").text
            dismiss = driver.find_element(By.CSS_SELECTOR, "button[id^='dismiss-']")
            button_id = dismiss.get_attribute("id")
            dismiss.click()
            wait.until(ec.text_to_be_present_in_element((By.ID, "done"), "dismissed"))
            assert "dismissed" in driver.find_element(By.ID, "done").text
            assert not driver.find_elements(By.ID, button_id)  # no longer listed
            assert _not_blank(driver.get_screenshot_as_png())

            driver.find_element(By.ID, "sign-out").click()
            wait.until(ec.url_contains("/inspect/login"))
            assert "/inspect/login" in driver.current_url
            driver.get(f"{base}/inspect/insp")
            assert "/inspect/login" in driver.current_url  # the cookie is gone
        finally:
            driver.quit()
        return seen

    async with served(services) as base:
        seen = await asyncio.to_thread(session, base)
    assert seen
    status = await services.db.fetchone("SELECT status, decided_by FROM memvault.review_queue WHERE id = %s",
                                        (pending["id"],), vault_id=vault.id)
    assert status["status"] == "APPROVED" and status["decided_by"].startswith("key:")

"""Every inspector page in headless Chromium (offline: no host but loopback resolves), at desktop width (1280 px)
and at phone width (375 px, a phone's viewport emulated): the sign-in form has no "Sign out", and a wrong key gets
that form back with the reason (the target kept); wherever memories are listed both times show, when said and when
recorded, to the minute, how long ago in words and the exact value in the title; the newest memories are ordered by
when they were said; counts in the right number; no page scrolls sideways; the labels of an entity graph overlap
neither each other nor a node, and stay inside the picture (each text's getBBox, in the page).

MEMVAULT_SCREENSHOTS=1 also writes each page at both widths to docs/img/inspector/ (docs/inspector.md shows them);
the normal run writes nothing."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from tests.integration.test_docs_browser import _offline_browser
from tests.integration.test_inspector_browser import _not_blank, served
from tests.integration.test_inspector_browser import _seed as seed_with_review
from tests.integration.test_inspector_browser import pytestmark  # noqa: F401  (skipped without chromium)

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "img" / "inspector"
WIDTHS = {"desktop": 1280, "phone": 375}
TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d$")
# A count of one with its unit in the plural: "1 times", "1 sessions", "1 memories"...
WRONG_PLURAL = re.compile(r"\b1 (times|memories|sessions|turns|entities|triples|candidates|minutes|hours|days|"
                          r"weeks|months|years)\b")


async def _seed(services):
    """A vault with a graph worth drawing (Acme with many neighbours, long names), a memory said long ago but recorded
    last, a conflict in the review queue and a finding in the inbox."""
    from app.write.graph import GraphBuild
    from app.write.items import WriteItem
    from app.write.pipeline import WriteTrack

    vault, alice_block = await seed_with_review(services)
    said = datetime(2025, 6, 1, 9, 30, tzinfo=UTC)
    facts = ["Carol works at Acme.", "Dave works at Acme.", "Erin works at Acme.",
             "Maximilian Alexander Featherstonehaugh-Worthington works at Acme.", "Acme is based in Berlin.",
             "Acme acquired Globex Corporation International Holdings.", "Frank works at Acme.",
             "Grace works at Acme.", "Heidi manages Acme."]
    results = await WriteTrack(services).remember(vault, [
        WriteItem(content=t, said_at=said, source_kind="user") for t in facts])
    await GraphBuild(services).run(vault.id, [r.block_id for r in results])
    old = await WriteTrack(services).remember(vault, [WriteItem(
        content="My grandmother taught me to bake rye bread.", said_at=datetime(2019, 11, 5, 16, 45, 12, 123456,
                                                                                tzinfo=UTC), source_kind="user")])
    return vault, alice_block, old[0].block_id


def _set_width(driver, width: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900 if width > 600 else 812, "deviceScaleFactor": 1, "mobile": width < 600})


def _screenshot(driver, name: str, width_name: str) -> None:
    if os.environ.get("MEMVAULT_SCREENSHOTS") != "1":
        return
    from PIL import Image

    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 2400), "scale": 1}})
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    SHOTS.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=128).save(SHOTS / f"{name}-{width_name}.png", optimize=True)


def _fits(driver, width: int) -> dict:
    """The page's own width against the viewport's: no sideways scroll."""
    return driver.execute_script(
        "return {scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,"
        " inner: window.innerWidth, wide: [...document.body.querySelectorAll('*')].filter("
        "  el => el.getBoundingClientRect().right > arguments[0] + 1 && !el.closest('.graphbox, table.cards')"
        ").slice(0, 5).map(el => el.tagName + '.' + el.className + ' '"
        " + Math.round(el.getBoundingClientRect().right))}",
        width)


def _graph_boxes(driver) -> dict:
    """Every label's and node's box in the picture's own coordinates, and the picture's size."""
    return driver.execute_script("""
        const svg = document.querySelector('svg.graph');
        if (!svg) return null;
        const box = el => { const b = el.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
        return {view: [svg.viewBox.baseVal.width, svg.viewBox.baseVal.height],
                labels: [...svg.querySelectorAll('text')].map(t => ({text: t.textContent, box: box(t)})),
                nodes: [...svg.querySelectorAll('circle')].map(box),
                hidden: svg.querySelectorAll('g.edge').length - svg.querySelectorAll('text.edge-label').length};
    """)


def _collisions(graph: dict) -> list[str]:
    def hit(a, b) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    out = []
    labels = graph["labels"]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if hit(a["box"], b["box"]):
                out.append(f"{a['text']!r} over {b['text']!r}")
        out += [f"{a['text']!r} over a node" for n in graph["nodes"] if hit(a["box"], n)]
        w, h = graph["view"]
        x0, y0, x1, y1 = a["box"]
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
            out.append(f"{a['text']!r} cut off at the picture's edge")
    return out


def _times(driver) -> list[dict]:
    return driver.execute_script(
        "return [...document.querySelectorAll('time')].map(t => ({text: t.firstChild.textContent, "
        "rel: t.querySelector('small') ? t.querySelector('small').textContent : '', title: t.title,"
        " column: (t.closest('td') || {}).dataset ? t.closest('td').dataset.label : null}))")


async def test_every_inspector_page_at_desktop_and_phone_width(services, admin_key, tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    vault, alice_block, old_block = await _seed(services)
    acme = await services.db.fetchone("SELECT id FROM memvault.entity WHERE vault_id = %s AND name = 'Acme'",
                                      (vault.id,), vault_id=vault.id)
    paris = await services.db.fetchone("SELECT id, mention_count FROM memvault.entity WHERE vault_id = %s AND "
                                       "name = 'Paris'", (vault.id,), vault_id=vault.id)
    assert acme and paris and paris["mention_count"] == 1

    def session(base: str) -> dict:
        driver = _offline_browser(tmp_path)
        wait = WebDriverWait(driver, 20)
        seen: dict = {"pages": {}}
        try:
            # signed out: the sign-in form offers no "Sign out"; a wrong key gets the form back, on the same page
            driver.get(f"{base}/inspect/insp")
            wait.until(ec.presence_of_element_located((By.ID, "key")))
            seen["login_url"] = driver.current_url
            seen["login_sign_out"] = len(driver.find_elements(By.ID, "sign-out"))
            for name, width in WIDTHS.items():
                _set_width(driver, width)
                seen["pages"][f"sign-in/{name}"] = {"fits": _fits(driver, width)}
                _screenshot(driver, "sign-in", name)
            _set_width(driver, 1280)
            driver.find_element(By.ID, "key").send_keys(admin_key[:-4] + "oops")
            button = driver.find_element(By.ID, "sign-in")
            button.click()
            wait.until(ec.staleness_of(button))
            seen["wrong"] = {"url": driver.current_url, "why": driver.find_element(By.ID, "why").text,
                             "key": driver.find_element(By.ID, "refused-key").text,
                             "field": driver.find_element(By.ID, "key").get_attribute("value"),
                             "sign_out": len(driver.find_elements(By.ID, "sign-out")), "source": driver.page_source}
            for name, width in WIDTHS.items():
                _set_width(driver, width)
                seen["pages"][f"sign-in-refused/{name}"] = {"fits": _fits(driver, width)}
                _screenshot(driver, "sign-in-refused", name)
            _set_width(driver, 1280)
            driver.find_element(By.ID, "key").send_keys(admin_key)  # the same form, straight to where it was going
            driver.find_element(By.ID, "sign-in").click()
            wait.until(ec.title_contains("Vault insp"))
            seen["after_sign_in"] = driver.current_url

            pages = {"vaults": "/inspect", "vault": "/inspect/insp",
                     "recall": "/inspect/insp?q=Where+does+Alice+work%3F",
                     "search": "/inspect/insp?text=acme&category=&which=all",
                     "memory": f"/inspect/insp/memories/{alice_block}",
                     "old-memory": f"/inspect/insp/memories/{old_block}",
                     "entity": f"/inspect/insp/entities/{acme['id']}",
                     "entity-paris": f"/inspect/insp/entities/{paris['id']}",
                     "review": "/inspect/insp/review"}
            for page, path in pages.items():
                for name, width in WIDTHS.items():
                    _set_width(driver, width)
                    driver.get(base + path)
                    wait.until(ec.presence_of_element_located((By.ID, "sign-out")))
                    seen["pages"][f"{page}/{name}"] = {
                        "fits": _fits(driver, width), "graph": _graph_boxes(driver), "times": _times(driver),
                        "text": driver.find_element(By.TAG_NAME, "body").text, "title": driver.title,
                        "png_ok": _not_blank(driver.get_screenshot_as_png())}
                    if page in ("vault", "search", "recall"):
                        seen["pages"][f"{page}/{name}"]["rows"] = driver.execute_script(
                            "return [...document.querySelectorAll('table.cards tr')].slice(1).map(r => "
                            "[...r.cells].map(c => c.textContent))")
                    if not page.endswith(("-paris", "old-memory")):
                        _screenshot(driver, page, name)
        finally:
            driver.quit()
        return seen

    async with served(services) as base:
        seen = await asyncio.to_thread(session, base)

    # the sign-in form: no "Sign out" on it; a wrong key: the same form, with why, the target kept, no secret echoed
    assert "/inspect/login" in seen["login_url"] and seen["login_sign_out"] == 0
    wrong = seen["wrong"]
    assert "/inspect/login" in wrong["url"] and wrong["sign_out"] == 0 and wrong["field"] == ""
    assert "not valid" in wrong["why"] and "mvk_" in wrong["key"] and "was refused" in wrong["key"]
    assert admin_key.split("_", 2)[2][:-4] not in wrong["source"]  # the secret typed is never sent back
    assert seen["after_sign_in"].endswith("/inspect/insp")

    problems = []
    for key, page in seen["pages"].items():
        fits, width = page["fits"], WIDTHS[key.rsplit("/", 1)[1]]
        if fits["scroll"] > fits["client"] or fits["client"] > width:
            problems.append(f"{key}: the page scrolls sideways ({fits})")
        if page.get("graph"):
            problems += [f"{key}: {c}" for c in _collisions(page["graph"])]
        for t in page.get("times", []):
            if not TIME.match(t["text"].strip()) or "UTC" not in t["title"] or not t["rel"]:
                problems.append(f"{key}: a time not shown to the minute with how long ago: {t}")
        if "text" in page:
            if re.search(r"\d\d:\d\d:\d\d\.\d", page["text"]):
                problems.append(f"{key}: a time with its fractions of a second on the page")
            if WRONG_PLURAL.search(page["text"]):
                problems.append(f"{key}: {WRONG_PLURAL.search(page['text']).group(0)!r}")
            assert page["png_ok"], key
    assert not problems, "\n".join(problems)

    desktop = {k.split("/")[0]: v for k, v in seen["pages"].items() if k.endswith("/desktop")}
    # both times wherever memories are listed
    for page in ("vault", "search", "recall"):
        columns = {t["column"] for t in desktop[page]["times"]}
        assert {"when said", "when recorded"} <= columns, (page, columns)
    memory_text = desktop["old-memory"]["text"]
    assert "when said 2019-11-05 16:45" in memory_text and "years ago" in memory_text
    assert re.search(r"when recorded \d{4}-\d\d-\d\d \d\d:\d\d (just now|minutes? ago)", memory_text), memory_text
    assert any("2019-11-05 16:45:12.123 UTC" in t["title"] for t in desktop["old-memory"]["times"])
    # newest by when said: the memory recorded last but said in 2019 comes after those said in 2024 and 2025
    assert "by when said" in desktop["vault"]["text"]
    rows = desktop["vault"]["rows"]
    order = [r[0] for r in rows]
    said = [r[5] for r in rows]
    assert order.index(str(old_block)) == len(order) - 1, said
    assert said == sorted(said, reverse=True), said
    # the right number: Paris is mentioned once
    assert "named in 1 memory" in desktop["entity-paris"]["text"]
    assert "1 memories" not in desktop["entity-paris"]["text"]
    # the graph draws every node of Acme's neighbourhood, and names most relations in the picture itself
    graph = desktop["entity"]["graph"]
    assert len(graph["nodes"]) >= 10 and sum(1 for t in graph["labels"] if t["text"] == "works_at") >= 4
    assert any("Featherstonehaugh" in t["text"] or "Maximilian" in t["text"] for t in graph["labels"])


def _crowded(nodes: int, cross: int) -> list[dict]:
    """A hub with ``nodes - 1`` neighbours (long names, names with initials, CJK, accents) and ``cross`` relations
    among the neighbours: a deterministic worst case for the layout."""
    names = ["Alice", "Maximilian Alexander Featherstonehaugh-Worthington", "台北市政府衛生局", "Dr. Lin", "J. R. R. Tolkien",
             "Zoë Ångström", "WWWWWWWWWWWWWWWWWWWWWWWW", "Globex Corporation International Holdings", "St. Louis", "i"]
    preds = ["works_at", "is_located_in_the_city_of_the_region", "likes", "WWWWWWWWWW"]
    rels = [{"subject_id": i, "subject": f"{names[i % len(names)]} {i}", "object_id": 0, "object": "Hub",
             "predicate": preds[i % len(preds)]} for i in range(1, nodes)]
    rels += [{"subject_id": 1 + (i * 7) % (nodes - 1), "subject": "", "object_id": 1 + (i * 11 + 3) % (nodes - 1),
              "object": "", "predicate": preds[i % len(preds)]} for i in range(cross)]
    return rels


def test_graph_labels_do_not_collide_on_crowded_graphs(tmp_path) -> None:
    """The layout's text widths are estimates: Chromium measures the real ones (getBBox) on crowded graphs, names of
    every kind, in a page of nothing but the picture."""
    from urllib.parse import quote

    from app.interfaces.graph_svg import graph_svg

    pictures = {(n, c): graph_svg(_crowded(n, c), {0}, lambda node: f"#{node}")
                for n, c in ((2, 0), (6, 3), (12, 12), (20, 30), (40, 0), (40, 60))}
    driver = _offline_browser(tmp_path)
    try:
        found = {}
        for key, svg in pictures.items():
            driver.get("data:text/html;charset=utf-8," + quote(f"<!doctype html><body>{svg}</body>"))
            found[key] = _graph_boxes(driver)
    finally:
        driver.quit()
    problems = [f"{key}: {c}" for key, graph in found.items() for c in _collisions(graph)]
    assert not problems, "\n".join(problems)
    for (n, _), graph in found.items():
        assert len(graph["nodes"]) == n  # every node drawn
    assert sum(g["hidden"] for g in found.values()) <= sum(len(_crowded(*k)) for k in found) // 5  # most are named

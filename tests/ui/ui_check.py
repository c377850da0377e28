"""The audit viewer in a real browser (Chromium, driven by Playwright): each page against a
live `sluice serve` with real executions. Prints a JSON report of what it saw; screenshots go
to the directory given. Run by `tests/integration/ui.rs`.

argv: base_url chromium_path screenshot_dir key_a key_b execution_id container_id refused_id
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import re

from playwright.sync_api import Page, expect, sync_playwright

# How long a page may take to show what the test waits for.
UI_WAIT_MS = 120_000

base, chromium, shots, key_a, key_b, execution, container, refused = sys.argv[1:9]
out = Path(shots)
out.mkdir(parents=True, exist_ok=True)
seen: dict[str, object] = {}


def use_key(page: Page, key: str) -> None:
    page.fill("#key", key)
    page.click("#key-form button")


def shown(page: Page, hash: str) -> None:
    """Waits until the page for `hash` is drawn: a navigation's wait never sees the page before."""
    page.wait_for_selector(f'main[data-shown="{hash}"]')


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(out / f"{name}.png"), full_page=True)


with sync_playwright() as playwright:
    browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    # The whole suite shares two cores: verifying a container replays its executions, which
    # took longer than Playwright's default 30 s wait once while everything else ran.
    page.set_default_timeout(UI_WAIT_MS)
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    # Without a key the API refuses, and the page says so.
    page.goto(f"{base}/ui")
    shown(page, "/")
    page.wait_for_selector("#error")
    seen["without_key"] = page.text_content("#error")

    # Key A: the list shows its executions, newest first.
    use_key(page, key_a)
    shown(page, "/")
    page.wait_for_selector("#executions tbody tr")
    seen["listed"] = page.locator("#executions tbody tr td:nth-child(2)").all_text_contents()
    shot(page, "executions")

    # Filters and pages.
    # (The page's policy forbids eval, so waits go through locators, not wait_for_function.)
    page.goto(f"{base}/ui#/?tool=lookup")
    shown(page, "/?tool=lookup")
    expect(page.locator("#executions tbody tr")).to_have_count(1)
    seen["filtered"] = page.locator("#executions tbody tr td:nth-child(2)").all_text_contents()
    page.goto(f"{base}/ui#/?limit=2")
    shown(page, "/?limit=2")
    page.wait_for_selector("#older")
    first_page = page.locator("#executions tbody tr td:nth-child(2)").all_text_contents()
    page.click("#older")
    expect(page.locator("#executions tbody tr").first).not_to_contain_text(first_page[0])
    seen["pages"] = [first_page, page.locator("#executions tbody tr td:nth-child(2)").all_text_contents()]

    # One execution: code with line numbers, the calls, the output, the figures; replay it.
    page.goto(f"{base}/ui#/executions/{execution}")
    shown(page, f"/executions/{execution}")
    page.wait_for_selector("#code li")
    seen["code_lines"] = page.locator("#code li").all_text_contents()
    seen["calls"] = [row.locator("td").all_text_contents() for row in page.locator("#calls tbody tr").all()]
    seen["stdout"] = page.text_content("#stdout")
    seen["facts"] = page.locator(".fact").all_text_contents()
    seen["counts"] = page.locator("#counts tr").all_text_contents()
    seen["injected_images"] = page.locator("main img").count()
    page.click("#replay")
    expect(page.locator("#replay-result")).to_have_text(re.compile(r"^(identical|diverged|\d{3}:)"))
    seen["replay"] = page.text_content("#replay-result")
    shot(page, "execution")

    # A refused call and an uncaught exception.
    page.goto(f"{base}/ui#/executions/{refused}")
    shown(page, f"/executions/{refused}")
    page.wait_for_selector("#calls tbody tr")
    seen["refused_calls"] = [row.locator("td").all_text_contents() for row in page.locator("#calls tbody tr").all()]
    seen["refused_stderr"] = page.text_content("#stderr")

    # The container: its chain, verified, and its export.
    page.goto(f"{base}/ui#/containers/{container}")
    shown(page, f"/containers/{container}")
    page.wait_for_selector("#verdict")
    seen["verdict"] = page.text_content("#verdict")
    seen["chain"] = page.locator("#chain tbody tr td:nth-child(2)").all_text_contents()
    with page.expect_download() as download:
        page.click("#export")
    seen["export_first_line"] = json.loads(Path(download.value.path()).read_text().splitlines()[0])
    shot(page, "container")

    # Key B sees none of it.
    use_key(page, key_b)
    page.goto(f"{base}/ui#/")
    shown(page, "/")
    page.wait_for_selector("#executions, #error")
    seen["other_key_listed"] = page.locator("#executions tbody tr").count()
    page.goto(f"{base}/ui#/executions/{execution}")
    shown(page, f"/executions/{execution}")
    page.wait_for_selector("#error")
    seen["other_key_execution"] = page.text_content("#error")
    seen["page_errors"] = errors
    seen["alerts"] = alerts
    browser.close()

print(json.dumps(seen))

"""The running app in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, installed by ``scripts/install_browser.sh``) driven by selenium
loads each page from ``elastic-channels dashboard`` on 127.0.0.1, waits for its charts,
checks the figures shown and that no error element is on the page, and saves a
screenshot of it (to ``$DASHBOARD_SCREENSHOT_DIR`` when set, e.g. ``docs``, else the
test's tmp dir).

The browser runs in another time zone than UTC (India's, +05:30, no daylight saving):
what only a browser shows is checked there, the axes' tick labels as Vega drew them
(UTC on a 24-hour clock, money as money) and the toolbar (no Deploy button).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import LandedRun, free_port, sql, wait_port

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = "headless Chromium not installed (run scripts/install_browser.sh)"
#: The browser's time zone: 5 h 30 min from UTC, so a local time is never a UTC one.
BROWSER_TZ = "Asia/Kolkata"


def _require_browser() -> None:
    if CHROMIUM and CHROMEDRIVER:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{MISSING}; CI must have it")
    pytest.skip(MISSING)


@pytest.fixture
def app(with_metrics: LandedRun, tmp_path: Path) -> Iterator[tuple[str, LandedRun]]:
    """``elastic-channels dashboard`` serving the run's data dir; stopped afterwards."""
    _require_browser()
    port = free_port()
    log = (tmp_path / "dashboard.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels.dashboard.cli", "--port", str(port),
         "--data-dir", str(with_metrics.data_dir), "--refresh-seconds", "5"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_port(port, 60)
        yield f"http://127.0.0.1:{port}", with_metrics
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--disable-gpu", "--window-size=1400,3000"):  # fmt: skip
        options.add_argument(arg)
    service = Service(str(CHROMEDRIVER), env={**os.environ, "TZ": BROWSER_TZ})
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot_dir(tmp_path: Path) -> Path:
    d = Path(os.environ.get("DASHBOARD_SCREENSHOT_DIR") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def _load(driver: Any, url: str, charts: int, tables: int) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    drawn = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
    WebDriverWait(driver, 90).until(
        lambda d: (
            len(d.find_elements(By.CSS_SELECTOR, drawn)) >= charts
            and not d.find_elements(By.CSS_SELECTOR, '[data-testid="stSkeleton"]')
        )
    )


def _texts(driver: Any, test_id: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, f'[data-testid="{test_id}"]')]


def _ticks(driver: Any) -> list[str]:
    """The text Vega drew in the charts (SVG): tick labels, titles, legends."""
    from selenium.webdriver.common.by import By

    texts = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"] svg text')
    return [t.text for t in texts if t.text]


def _metric(driver: Any, label: str) -> str:
    from selenium.webdriver.common.by import By

    for m in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMetric"]'):
        if m.find_element(By.CSS_SELECTOR, '[data-testid="stMetricLabel"]').text == label:
            return m.find_element(By.CSS_SELECTOR, '[data-testid="stMetricValue"]').text
    raise AssertionError(f"no metric {label!r} on the page")


def test_pages_in_chromium(app: tuple[str, LandedRun], browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    url, run = app
    shots = _shot_dir(tmp_path)

    _load(browser, url + "/", charts=5, tables=5)
    offset = browser.execute_script("return new Date().getTimezoneOffset()")
    assert offset == -330, "the browser should not be on UTC"
    assert not _texts(browser, "stException")
    alerts = _texts(browser, "stAlert")
    assert not [t for t in alerts if "Could not" in t]
    assert any(t.startswith("Synthetic data.") for t in alerts), alerts
    assert not _texts(browser, "stAppDeployButton")  # toolbar in viewer mode
    (sales,) = sql(
        run.data_dir, f"SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = '{run.run_id}'"
    )[0]
    assert _metric(browser, "Sales") == f"{sales:,}"
    money = [t for t in _ticks(browser) if t.startswith("$")]
    assert len(money) >= 4 and all(re.fullmatch(r"\$\d+(\.\d+)?[KMB]?", t) for t in money), money
    browser.save_screenshot(str(shots / "dashboard-sales.png"))

    _load(browser, url + "/run", charts=4, tables=2)
    assert not _texts(browser, "stException")
    # the workers' state is drawn after the charts: wait for the page to get there
    WebDriverWait(browser, 90).until(
        lambda d: any("Worker 2 failed" in t for t in _texts(d, "stAlert"))
    )
    (workers,) = sql(run.data_dir, "SELECT count(DISTINCT WORKER_ID) FROM ELASTIC_K8S_METRICS")[0]
    assert _metric(browser, "Workers") == str(workers)
    assert not _texts(browser, "stAppDeployButton")
    # the time axes: UTC on a 24-hour clock, within the windows' span (in UTC)
    ((first, last),) = sql(
        run.data_dir, "SELECT min(WINDOW_END), max(WINDOW_END) FROM ELASTIC_K8S_METRICS"
    )
    times = [t for t in _ticks(browser) if re.fullmatch(r"\d\d:\d\d(:\d\d)?", t)]
    assert len(times) >= 8, _ticks(browser)
    day = first.astimezone(dt.timezone.utc).date()
    for text in times:
        tick = dt.datetime.combine(
            day,
            dt.time.fromisoformat(text if text.count(":") == 2 else text + ":00"),
            dt.timezone.utc,
        )
        assert first - dt.timedelta(minutes=2) <= tick <= last + dt.timedelta(minutes=2), (
            text,
            first,
            last,
        )
    assert not [t for t in _ticks(browser) if re.search(r"\b(AM|PM)\b", t)]
    browser.save_screenshot(str(shots / "dashboard-run.png"))
    assert (shots / "dashboard-sales.png").stat().st_size > 10_000

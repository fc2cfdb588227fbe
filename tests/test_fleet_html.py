"""`cudadoctor fleet --format html`: one self-contained page, checked as text and opened in
headless Chromium (Debian's chromium + chromium-driver, driven by selenium; test-only)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, load_fixture, run_cli

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_10k as gen  # noqa: E402

from cudadoctor import fleet_summary  # noqa: E402
from cudadoctor.render.fleet_html import outliers, render_html  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
#: Where screenshots are kept for a person to look at (else only in pytest's tmp_path).
SHOTS = os.environ.get("CUDADOCTOR_SCREENSHOTS")


def smoke_results(d: Path, n: int, slow_every: int = 997) -> list:
    """``n`` single-GPU smoke results (the recorded one, with GPU throughput and transfer numbers),
    every ``slow_every``-th node much slower: the outliers the page must mark."""
    src = json.loads((FIXTURES / "smoke" / "single-cpu-synthetic-pass.json").read_text())
    rnd = random.Random(7)
    d.mkdir(parents=True, exist_ok=True)
    slow = []
    for i in range(n):
        doc = json.loads(json.dumps(src))
        factor = 0.3 if i % slow_every == slow_every // 2 else 1.0
        if factor < 1:
            slow.append(f"smoke-gpu{i:05d}")
        for st in doc["stages"]:
            if st["name"] == "throughput":
                st["evidence"].update(device_samples_per_s=rnd.gauss(50000, 1500) * factor, speedup=9.0)
            if st["name"] == "transfers":
                st.update(verdict="pass", evidence={"h2d_pinned_gbps": rnd.gauss(50, 1) * factor, "h2d_pageable_gbps": 20.0,
                                                    "d2h_pinned_gbps": 50.0, "d2h_pageable_gbps": 20.0})
        (d / f"smoke-gpu{i:05d}.json").write_text(json.dumps(doc))
    return slow


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """40 nodes with deviations (the benchmark's generator), the recorded smoke results, 30 GPU smoke runs."""
    d = tmp_path_factory.mktemp("small") / "reports"
    hosts = gen.generate(d, 40)
    for f in (FIXTURES / "smoke").glob("*.json"):
        shutil.copy(f, d / f.name)
    slow = smoke_results(d / "smoke", 30, slow_every=30)
    return d, hosts, slow


@pytest.fixture(scope="module")
def small_page(small, tmp_path_factory):
    d, _, _ = small
    out = tmp_path_factory.mktemp("page") / "fleet.html"
    r = run_cli("fleet", str(d), "--format", "html", "-o", str(out))
    assert r.returncode == 1 and "wrote" in r.stderr, r.stderr
    return out


def test_page_has_majority_deviating_groups_findings_and_plots(small, small_page):
    pytest.importorskip("matplotlib", reason="the plots need the [html] extra (matplotlib)")
    _, hosts, slow = small
    page = small_page.read_text()
    assert "Majority configuration (31 nodes)" in page and "580.95.05" in page
    for variant in ("old-driver", "cpu-torch", "a100", "gpu-missing"):
        for h in hosts[variant]:
            assert h in page
    assert "535.104.05" in page  # what the old-driver nodes differ in
    assert re.search(r"<code>cpu-only-torch</code>.*?>error<", page)
    for key in ("driver-versions", "torch-versions", "health-codes", "samples-per-s", "h2d-gbps", "busbw-gbps"):
        assert f"id='plot-{key}'" in page, key
    caption = re.search(r"id='plot-samples-per-s'>.*?<figcaption[^>]*>(.*?)</figcaption>", page, re.S).group(1)
    assert slow and all(s in caption for s in slow)
    assert page.count("<svg") >= 6


def test_page_is_self_contained_and_escapes_what_reports_say(tmp_path, small):
    d, _, _ = small
    evil = tmp_path / "evil"
    shutil.copytree(d, evil)
    tpl = gen.templates(load_fixture("live-torch2141-cu130-nodriver.json"))
    (evil / "x.json").write_text(tpl["old-driver"].replace(gen.HOST, "<script>alert(1)<\\/script>").replace(gen.WHEN, "2026-11-22T00:00:00+00:00"))
    r = run_cli("fleet", str(evil), "--format", "html")
    page = r.stdout
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)  # nothing fetched at view time
    assert "default-src 'none'" in page


def test_page_renders_without_the_plotting_library(small, monkeypatch):
    d, hosts, _ = small
    result = fleet_summary.run([str(d)])
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [html] extra were not installed
    page = render_html(result)
    assert "id=no-plots" in page and "cudadoctor[html]" in page and "<svg" not in page
    assert all(h in page for h in hosts["a100"]) and "Findings by code" in page


def test_page_is_redacted(tmp_path, small):
    d, _, _ = small
    home = tmp_path / "home" / "alice"
    target = home / "reports"
    shutil.copytree(d, target)
    (target / "corrupt.json").rename(target / "alice-secret-token=hf_abcdefghijklmnopqrstuvwxyz123456.json")
    r = run_cli("fleet", str(target), "--format", "html", env={"HOME": str(home)})
    assert str(home) not in r.stdout and "~/reports/" in r.stdout
    assert "hf_abcdefghijklmnopqrstuvwxyz123456" not in r.stdout


def test_outliers_are_the_far_values():
    vals = [100.0 + (i % 7) for i in range(200)] + [40.0, 300.0]
    assert outliers(vals) == [200, 201]
    assert outliers([5.0, 5.0, 5.0, 5.0]) == []


# ------------------------------------------------------------------------------ in a browser

@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("headless Chromium not installed (Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is a test dependency: pip install -e '.[test]'")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,3000"):
        o.add_argument(a)
    o.binary_location = CHROMIUM
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
    yield drv
    drv.quit()


def open_page(browser, page: Path, shot: Path) -> float:
    """Open the page, return the seconds until its load event; save a screenshot; no console message at all."""
    browser.get(page.as_uri())
    load_ms = browser.execute_script("const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd;")
    assert browser.get_log("browser") == []  # no error, no warning: nothing blocked, nothing failed
    assert browser.save_screenshot(str(shot))
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(SHOTS) / shot.name)
    return load_ms / 1000


def test_small_fleet_in_chromium(browser, small, small_page, tmp_path):
    pytest.importorskip("matplotlib", reason="the plots need the [html] extra (matplotlib)")
    _, hosts, _ = small
    open_page(browser, small_page, tmp_path / "fleet-small.png")
    deviating = browser.find_element("id", "deviating").find_element("xpath", "following-sibling::table")
    assert deviating.is_displayed()
    for h in hosts["old-driver"] + hosts["a100"]:
        assert h in deviating.text
    figs = browser.find_elements("css selector", "figure.plot svg")
    assert len(figs) >= 6 and all(f.size["width"] > 200 and f.size["height"] > 100 for f in figs)


def test_ten_thousand_nodes_in_chromium(browser, tmp_path):
    """The benchmark's 10,000 reports plus 10,000 GPU smoke results: under 5 MB, open in under 3 s."""
    pytest.importorskip("matplotlib", reason="the plots need the [html] extra (matplotlib)")
    d = tmp_path / "reports"
    hosts = gen.generate(d, 10000)
    slow = smoke_results(tmp_path / "smoke", 10000)
    out = tmp_path / "fleet-10k.html"
    t0 = time.perf_counter()
    r = run_cli("fleet", str(d), str(tmp_path / "smoke"), "--format", "html", "-o", str(out), timeout=600)
    took = time.perf_counter() - t0
    assert r.returncode == 1, r.stderr
    size = out.stat().st_size
    assert size < 5 * 1024 * 1024, size
    load_s = open_page(browser, out, tmp_path / "fleet-10k.png")
    assert load_s < 3, load_s
    assert hosts["a100"][0] in browser.find_element("id", "deviating").find_element("xpath", "following-sibling::table").text
    assert len(browser.find_elements("css selector", "figure.plot svg")) >= 5
    caption = browser.find_element("css selector", "#plot-samples-per-s figcaption").text
    assert all(s in caption for s in slow)
    print(f"\nfleet page for 10,000 nodes + 10,000 smoke results: {size / 1e6:.2f} MB, made in {took:.1f} s "
          f"(cudadoctor fleet, reading included), load event after {load_s:.2f} s in headless Chromium")

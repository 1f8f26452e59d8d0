"""profile --report FILE.html renders in a real headless Chromium (Debian's chromium package),
offline: the page loads nothing, and its charts are there once the browser has laid it out."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace

import pytest

import profilegen as pg
from fakehost import REPO
import doctor_fork

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def report(tmp_path, p, *extra):
    root = pg.write_ascend_pt(tmp_path / "p", p)
    page = tmp_path / "report.html"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "profile", str(root), "--report", str(page), *extra],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return page


def test_the_page_is_self_contained_and_escapes_the_data(tmp_path):
    page = report(tmp_path, replace(pg.HOST_BOUND, steps=12))
    text = page.read_text()
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert "url(" not in text and "@import" not in text
    assert text.count("<svg") == 2 and "host-bound" in text


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow  # ~1 s of CPU or more: headless Chromium
def test_the_report_renders_in_headless_chromium(tmp_path, lang):
    page = report(tmp_path, replace(pg.COMM_BOUND, prefill_steps=(6,), malloc_steps=(9,)), "--lang", lang)
    profile_dir = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
    common = [CHROMIUM, *FLAGS, f"--user-data-dir={profile_dir}", "--window-size=1200,1600"]
    dom = subprocess.run(common + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count("<svg") == 2
    assert len(re.findall(r"<rect ", html)) > 100  # bars of the breakdown, kernels and gaps of the timeline
    assert ("communication-bound" if lang == "en" else "通信瓶颈") in html
    shot = tmp_path / "report.png"
    run = subprocess.run(common + [f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.stat().st_size > 20_000, run.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""The documentation site builds as `make docs` builds it (warnings as errors, nitpicky references),
every internal link and anchor of the built pages resolves, and a browser sees what the pages promise:
the worked example's verdict table on its notebook page, and a plot."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import DOCS, ROOT

SITE_PAGES = ("index.html", "getting-started.html", "reference/cli.html", "reference/api.html",
              "reference/settings.html", "cookbook/01_rfc7519_audit.html", "cookbook/04_threshold_tuning.html")


class _Page(HTMLParser):
    """The ids a page defines and the links it makes (href and src)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif (name == "href" and tag in ("a", "link", "area")) or (name == "src" and tag in ("img", "script")):
                self.links.append(value)


def broken_links(site: Path) -> list[str]:
    """Every internal link of the built HTML under `site` whose file or anchor does not exist, as
    `page: link (why)`; links with a scheme (http:, mailto:, data:) are not followed (no network)."""
    pages: dict[Path, _Page] = {}
    for path in sorted(site.rglob("*.html")):
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = page
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue
            target_path, fragment = parts.path, parts.fragment  # a query (?v=...) names the same file
            target = (path.parent / unquote(target_path)).resolve() if target_path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site.resolve())}: {link}"
            if not target.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and target.suffix == ".html" and unquote(fragment) not in pages[target].ids:
                broken.append(f"{where} (no anchor #{fragment} there)")
    return broken


def test_the_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text('<a href="sub/page.html#here">ok</a> <a href="sub/page.html#gone">anchor</a>'
                                         ' <a href="nowhere.html">file</a> <a href="https://example.org/x">web</a>'
                                         ' <img src="_static/pic.png?v=1"> <a href="#top">self</a><p id="top"></p>')
    (tmp_path / "sub" / "page.html").write_text('<h1 id="here">x</h1><a href="../index.html">back</a>')
    assert broken_links(tmp_path) == ["index.html: sub/page.html#gone (no anchor #gone there)",
                                      "index.html: nowhere.html (no such file)",
                                      "index.html: _static/pic.png?v=1 (no such file)"]


def build_site(out: Path) -> subprocess.CompletedProcess:
    """`make docs`'s sphinx-build, into `out` (its doctrees and notebook execution cache there too)."""
    env = {**os.environ, "CITEAUDIT_DOCS_JUPYTER_CACHE": str(out / "jupyter_cache")}
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q",
                           "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=1200)


@pytest.mark.notebooks  # executes every notebook into its page
@pytest.mark.browser
def test_the_site_builds_without_a_warning_links_resolve_and_pages_show_their_outputs(tmp_path):
    """One test, one build (about 3 minutes, most of it the notebooks): with warnings as errors, then
    the link check, then the pages in headless Chromium."""
    from test_report import playwright_chromium

    built = build_site(tmp_path)
    assert built.returncode == 0, built.stderr[-5000:]
    site = tmp_path / "html"
    for page in SITE_PAGES:
        assert (site / page).is_file(), f"{page} was not built"
    assert broken_links(site) == []

    with playwright_chromium() as browser:
        page = browser.new_page()
        page.goto((site / "cookbook" / "01_rfc7519_audit.html").as_uri())
        body = page.inner_text("body")
        # the worked example's verdict table, as the notebook's step 2 shows it, and its decision
        for citation in ("epoch_seconds", "aud_reject", "sig_reporting", "exp_required", "iat_future"):
            assert citation in body, f"{citation} is not on the worked example's page"
        assert "REJECT" in body and "fabricated" in body
        tables = page.locator("table").count()
        assert tables >= 2, f"{tables} tables on the worked example's page"
        page.goto((site / "cookbook" / "04_threshold_tuning.html").as_uri())
        plots = page.locator("img[src$='.png']")
        assert plots.count() >= 1, "no plot on the threshold-tuning page"
        width = plots.first.evaluate("img => img.naturalWidth")
        assert width > 100, f"the plot is {width} pixels wide: not drawn"
        page.goto((site / "reference" / "settings.html").as_uri())
        assert any("CITEAUDIT_THRESHOLD" in table for table in page.locator("table").all_inner_texts())

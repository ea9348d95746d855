"""Draw the README's picture: the worked example's HTML report, as headless Chromium shows it.

Audits the worked example offline (replay, the shipped recordings), writes its report with
`write_report`, screenshots the top of the page in Debian's Chromium and saves it, scaled down and
with a small palette, as docs/_static/report.png (tens of KB, committed). Run it again when the
report's look changes:

    python tools/report_picture.py [--out docs/_static/report.png] [--width 1000] [--height 900]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

import citeaudit as ca

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-quic",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "_static" / "report.png")
    parser.add_argument("--width", type=int, default=1000, help="the browser window's width (CSS pixels)")
    parser.add_argument("--height", type=int, default=900, help="how much of the page's top is drawn")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("Chromium is not installed (Debian package `chromium`; `make .venv/.test` installs it)", file=sys.stderr)
        return 2
    options = ca.AuditOptions.from_env(cache_mode="replay")
    audit = ca.audit_files(source="rfc7519.txt", citations="data/rfc7519_citations.json", options=options)
    with tempfile.TemporaryDirectory() as scratch:
        page = Path(scratch) / "report.html"
        ca.write_report(audit, page)
        shot = Path(scratch) / "shot.png"
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={scratch}/profile", f"--screenshot={shot}",
                        f"--window-size={args.width},{args.height}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
        image = Image.open(shot).convert("RGB")
        small = image.resize((image.width * 4 // 5, image.height * 4 // 5), Image.Resampling.LANCZOS)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        small.quantize(colors=64).save(args.out, optimize=True)
    print(f"{args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}: "
          f"{args.out.stat().st_size // 1024} KB, {small.width}x{small.height}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

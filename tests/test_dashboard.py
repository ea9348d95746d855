"""The batch dashboard (dashboard.py, `citeaudit batch --html`): its counts agree with the rows and
decisions, every text is escaped, every link has its target, and it renders in headless Chromium."""

import json
import re
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report import chromium

from citeaudit import AuditOptions
from citeaudit.pipeline.batch import audit_dataset
from citeaudit.surfaces import cli, dashboard
from citeaudit.surfaces.dashboard import (
    answer_cards,
    citation_table,
    decision_counts,
    failing_sources,
    render_dashboard,
    score_histogram,
    verdict_counts,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "batch" / "example.jsonl"
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def dataset(tmp_path) -> Path:
    """The example's five answers, one whose id and claim are markup, and a line that is not JSON."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    hostile = {**first, "answer_id": HOSTILE,
               "citations": [{**first["citations"][2], "claim": f"{HOSTILE} claims a thing"}]}
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join([*lines, json.dumps(hostile), '{"answer_id": "cut", "source": '])
                    + "\n", encoding="utf-8")
    return path


@pytest.fixture
def result(dataset, recorded_cache):
    return audit_dataset(dataset, AuditOptions.from_env(cache_mode="replay"), cards=answer_cards)


def test_counts_agree_with_the_rows_and_decisions(result):
    citations = citation_table(result)
    valid = [o for o in result.outcomes if not o.invalid]
    assert len(citations) == sum(len(o.rows) for o in valid) == 16
    counts = decision_counts(result)
    assert counts == {s: int((result.decisions["status"] == s).sum()) for s in ("ACCEPT", "REVIEW", "REJECT")}
    assert sum(counts.values()) == 7 and counts["REJECT"] >= 3  # two fabricated quotes and the line that is not JSON
    verdicts = verdict_counts(citations)
    assert verdicts["total"].sum() == len(citations)
    by_verdict = verdicts.set_index("verdict")
    # fabricated verdicts stand without a model; a model verdict stands exactly when routed auto
    assert by_verdict.loc["fabricated", "waits for review"] == 0
    assert by_verdict.loc["fabricated", "stands"] == (citations["verdict"] == "fabricated").sum() == 4
    judged = citations[citations["score"].notna()]
    bins = score_histogram(citations)
    stands = (judged["route"] == "auto") | (judged["state"] == "reviewed")  # confident, or a human decided
    assert bins["stands"].sum() == stands.sum() and bins["waits"].sum() == (~stands).sum()
    assert (judged.loc[~stands, "route"] == "review").all()
    sources = failing_sources(citations)
    assert list(sources["failing"]) == sorted(sources["failing"], reverse=True)
    failing = citations[citations["verdict"].isin(["contradicted", "unsupported", "fabricated"])]
    assert sources["failing"].sum() == len(failing)
    assert set(sources["source"]) == {"rfc7519.txt", "field_note.txt"}


def test_cards_only_for_answers_to_look_at(result, dataset, recorded_cache):
    assert all((o.cards is None) == (o.status == "ACCEPT" or o.invalid) for o in result.outcomes)
    plain = audit_dataset(dataset, AuditOptions.from_env(cache_mode="replay"))
    assert all(o.cards is None for o in plain.outcomes)
    assert "Cards not rendered" in render_dashboard(plain)


def test_text_is_escaped_and_every_link_has_its_target(result):
    page = render_dashboard(result)
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    targets = set(re.findall(r"id='([^']+)'", page))
    links = re.findall(r"href='#([^']+)'", page)
    assert links and set(links) <= targets
    for o in result.outcomes:  # every answer that is not ACCEPT has its section, listed in the table
        assert (f"answer-{o.line}" in targets) == (o.status != "ACCEPT")
    assert "not valid JSON" in page  # the invalid line's section shows its error


def _png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


@pytest.mark.browser
def test_cli_writes_a_dashboard_that_renders_in_chromium(dataset, recorded_cache, tmp_path):
    out = tmp_path / "dashboard.html"
    result = CliRunner().invoke(cli.main, ["batch", str(dataset), "--cache-mode", "replay", "--html", str(out)])
    assert result.exit_code == 1, result.output
    expected = audit_dataset(dataset, AuditOptions.from_env(cache_mode="replay"))
    counts = decision_counts(expected)
    assert expected.routing is not None and expected.routing.calibrated  # one threshold, from one settings object
    assert "threshold" not in expected.rows.columns  # it does not travel in every row
    assert f"wrote the dashboard to {out}" in result.output
    dom = chromium("--dump-dom", out.as_uri(), tmp_path=tmp_path).stdout
    assert "Citation audit of data.jsonl" in dom
    assert all(f"{status}: {n}" in dom for status, n in counts.items())
    assert "<script>alert" not in dom  # the browser saw text, not an element
    assert dom.count("class=\"answer\"") == counts["REVIEW"] + counts["REJECT"]  # one section per answer to look at
    assert f"threshold {expected.routing.threshold:.2f}" in dom  # the histogram marks the threshold the routes used
    assert expected.routing.note() in dom  # and the summary says where it comes from
    shot = tmp_path / "dashboard.png"
    chromium(f"--screenshot={shot}", "--window-size=1200,1600", out.as_uri(), tmp_path=tmp_path)
    assert shot.is_file() and _png_size(shot) == (1200, 1600)


@pytest.mark.cluster
def test_the_same_page_from_a_local_cluster(dataset, result, recorded_cache):
    """Cards are rendered on the workers: a real 2-process LocalCluster gives the same page."""
    processes = audit_dataset(dataset, AuditOptions.from_env(cache_mode="replay"), cards=answer_cards, scheduler="processes")
    assert render_dashboard(processes) == render_dashboard(result)


def test_past_the_card_limit_answers_keep_their_reasons(result, monkeypatch):
    monkeypatch.setattr(dashboard, "CARD_SECTIONS", 2)
    page = render_dashboard(result)
    look_at = [o for o in result.outcomes if o.status != "ACCEPT"]
    assert look_at[-1].invalid and len(look_at) > 3  # the invalid line is the last
    assert page.count("Cards left out") == len(look_at) - 2 - 1  # 2 with cards, the invalid line its error
    assert page.count("class='card ") == sum(o.cards.count("class='card ") for o in
                                             [o for o in result.outcomes if o.cards][:2])
    assert set(re.findall(r"href='#([^']+)'", page)) <= set(re.findall(r"id='([^']+)'", page))

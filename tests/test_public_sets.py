"""citeaudit.calibrate.public_sets (what tools/public_sets.py and `make public-sets` run): the public TRAIN sets become labelled sets step 1 reads as intended.

The data is not in the repository: these tests run when ../shared/data/public is beside the checkout
(as CI has it, like ../shared/data/rfc) and are skipped otherwise; the helpers' tests always run.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from citeaudit import audit_quotes
from citeaudit.calibrate import public_sets

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = ROOT.parent / "shared" / "data" / "public"
needs_data = pytest.mark.skipif(not PUBLIC.is_dir(), reason=f"no public data at {PUBLIC}")


def test_nearest_sentence_counts_shared_content_words_and_keeps_the_first_on_a_tie():
    sentences = ["The cat sat on the mat.", "Warming raises sea levels.", "Sea levels rise with warming oceans."]
    assert public_sets.nearest_sentence("Ocean warming makes sea levels rise", sentences) == sentences[2]
    assert public_sets.nearest_sentence("the of and", sentences) == sentences[0]  # stop words only: a tie


def test_rationale_sentences_join_with_an_elision_only_where_they_are_not_adjacent():
    s = ["A.", "B.", "C.", "D."]
    assert public_sets.join_sentences(s, [0, 1, 3]) == "A. B. ... D."


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("public")
    return out, public_sets.build(PUBLIC, out, domains=public_sets.DOMAINS + public_sets.JAPANESE)


@needs_data
def test_every_quote_is_found_in_its_own_section_and_labels_are_balanced(built):
    _, written = built
    for domain, (document, cited) in written.items():
        records = json.loads(cited.read_text(encoding="utf-8"))
        counts = Counter(r["expected"] for r in records)
        assert counts == {label: public_sets.DEFAULT_PER_LABEL for label in public_sets.LABELS}, domain
        assert all(r["section"].isdigit() for r in records)  # plain numbers: the prompt names "section 12"
        table = audit_quotes(document, cited, locate_only=True).table
        assert set(table["quote_status"]) <= {"exact", "elided"}, domain
        assert table["section_match"].all(), domain
        assert table["evidence"].notna().all(), domain


@needs_data
def test_output_is_deterministic(built, tmp_path):
    out, written = built
    public_sets.build(PUBLIC, tmp_path, domains=public_sets.DOMAINS + public_sets.JAPANESE)
    for document, cited in written.values():
        for path in (document, cited):
            assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


@needs_data
def test_an_altered_input_file_is_refused_with_its_name(tmp_path, capsys):
    source = PUBLIC / "climate-fever" / "climate-fever-halfA.jsonl"
    altered = tmp_path / "climate-fever" / source.name
    altered.parent.mkdir()
    altered.write_bytes(source.read_bytes().replace(b"polar bears", b"polar beers", 1))
    code = public_sets.main(["--public-dir", str(tmp_path), "--out", str(tmp_path / "out"), "--domain", "climate-fever"],
                            public_dir=tmp_path / "unused", out=tmp_path / "unused")
    assert code == 2
    err = capsys.readouterr().err
    assert str(altered) in err and "SHA-256" in err and "restore the original file" in err
    assert not (tmp_path / "out" / "climate-fever.txt").exists()


def test_jsick_is_built_but_never_a_calibration_domain(tmp_path):
    """JSICK (Japanese) is measured held out (tools/bench_japanese.py), so the calibration's sets
    leave it out even where it is built."""
    for domain in (*public_sets.DOMAINS, *public_sets.JAPANESE):
        (tmp_path / f"{domain}_citations.json").write_text("[]", encoding="utf-8")
    sets = public_sets.public_labelled_sets(tmp_path, tmp_path / "nowhere")
    assert [Path(cited).name for _, cited in sets] == [f"{d}_citations.json" for d in public_sets.DOMAINS]


@needs_data
@pytest.mark.slow  # audits JSICK's 288 pairs from the recordings: seconds
def test_the_docs_show_what_bench_japanese_prints(tmp_path, capsys, recorded_cache):
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import bench_japanese

    assert bench_japanese.main(["--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.strip()
    saved = json.loads((ROOT / "docs" / "measurements" / "data" / "bench_japanese.json").read_text(encoding="utf-8"))
    assert saved["command"] == "python tools/bench_japanese.py"  # what docs/how-to/japanese-statutes.md shows
    assert printed == saved["output"].strip()

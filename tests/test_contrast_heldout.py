"""tools/contrast_heldout.py: the held-out contrast set's rules, and the committed set is what they write
(docs/measurements/contrast.md)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import contrast_heldout

from citeaudit import load_citations

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("claim, changed", [
    ("Tokens live for 15 minutes.", "Tokens live for sixteen minutes."),
    ("Chunks are at most 64 KiB.", "Chunks are at most sixty-five KiB."),
    ("It must be at least one period character.", "It must be at least 2 period character."),
    ("A client must never use a code twice.", "A client must never use a code 3 times."),
    ("It changes quickly once sealed.", None),  # "once" as a conjunction is no amount
    ("It peaks within the first days.", "It peaks within the second days."),
    ("At 07:40 the boat left; bound 2^(-128).", None),  # a time and an exponent's base are no amounts
])
def test_number_words(claim, changed):
    assert contrast_heldout.change_number_words(claim) == changed


@pytest.mark.parametrize("claim, changed", [
    ("Allow a few minutes of leeway.", "Allow 30 minutes of leeway."),
    ("Keep it for 14 days.", "Keep it for hundreds of days."),
    ("Use a 256-bit key.", None),
])
def test_vague_amounts(claim, changed):
    assert contrast_heldout.change_vague(claim) == changed


def test_the_other_rules_change_the_last_place_and_restate_keeps_the_value():
    assert contrast_heldout.change_level("It MUST be kept and may be logged.") == "It MUST be kept and must not be logged."
    assert contrast_heldout.change_number("Wait 5 seconds, then 300 seconds.") == "Wait 5 seconds, then 300 minutes."
    assert contrast_heldout.flip_polarity("It is kept and is not logged.") == "It is kept and is logged."
    assert contrast_heldout.flip_polarity("It is kept and logged.") == "It is not kept and logged."
    assert contrast_heldout.restate("Up to 16777216 bytes.") == "Up to 16,777,216 bytes."
    assert contrast_heldout.restate("Rinse three times.") == "Rinse 3 times."
    assert contrast_heldout.spell(512) == "five hundred and twelve" and contrast_heldout.spell(1000) == "one thousand"


def test_swap_identifier_takes_a_term_of_the_document_the_evidence_lacks():
    pool = contrast_heldout.document_terms('The "iat" claim, the "jti" claim and "exp"; JWS and JWE. MUST "SHALL"')
    assert pool["quoted"] == ["exp", "iat", "jti"] and pool["caps"] == ["JWE", "JWS"]
    evidence = 'The "iat" (Issued At) claim identifies the time at which the JWT was issued.'
    swapped = contrast_heldout.swap_identifier('The "iat" claim says when it was issued.', evidence, pool, "k")
    assert swapped is not None and ("exp" in swapped or "jti" in swapped) and "iat" not in swapped


def test_the_committed_held_out_set_is_what_the_tool_writes_from_the_projects_sets():
    for source, citations, out, group in contrast_heldout.sets(public=False):
        assert group == "project" and out.parent == ROOT / "data" / "contrast" / "heldout"
        table, text = contrast_heldout._locate(source, load_citations(ROOT / citations))
        assert json.loads(out.read_text(encoding="utf-8")) == contrast_heldout.perturb(table, text), out
        records = load_citations(out)  # a quote-citation file like any other
        assert {r.id.split("~")[1] for r in records} <= {*contrast_heldout.KINDS, contrast_heldout.CONTROL}


@pytest.mark.slow  # every check on the project's held-out claims: about 3 s
def test_the_measure_counts_per_kind_and_more_checks_never_let_more_stand():
    claims, originals = contrast_heldout.located(public=False)
    figures = contrast_heldout.measure(claims, originals).set_index("kind")
    assert list(figures.index[:len(contrast_heldout.KINDS)]) == list(contrast_heldout.KINDS)
    count = figures.map(lambda v: int(v.split()[0]) if isinstance(v, str) and v != "-" else v)
    perturbed = count.loc[list(contrast_heldout.KINDS)]
    assert perturbed["claims"].sum() == count.at["all kinds", "claims"] == int((claims["change"] != "restated").sum())
    none, default, every = (perturbed[f"stand, checks {name}"] for name in ("none", "default", "all"))
    assert (every <= default).all() and (default <= none).all() and default.sum() < none.sum()


@pytest.mark.slow  # measures the project's held-out claims with every check set: a few seconds
def test_the_saved_measure_is_what_it_prints_for_the_projects_sets(capsys):
    """docs/measurements/contrast.md shows `contrast_heldout.py --measure`'s saved output (--save-docs);
    its project part is what the tool prints now (the public part needs the public data)."""
    saved = json.loads((ROOT / "docs" / "measurements" / "data" / "contrast_heldout.json").read_text(encoding="utf-8"))
    assert saved["command"] == "python tools/contrast_heldout.py --measure"
    assert contrast_heldout.main(["--measure", "--project-only"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    project = saved["output"].split("held-out set, the public TRAIN sets")[0]
    assert printed == [line.rstrip() for line in project.splitlines() if line.strip()]


@pytest.mark.slow  # replays the shipped judge's answers to the project's 192 held-out claims: about 10 s
def test_the_whole_tool_is_measured_from_recorded_answers_and_checks_only_hold_back(recorded_cache, capsys):
    """The held-out claims measured as the tuning set's are: from the shipped judge's recorded answers
    (every held-out claim of the project's sets is recorded: `make record-contrast-heldout`), with its
    calibrated threshold. More checks never let more stand, the default checks let fewer stand than
    none, and what docs/measurements/contrast.md shows is what the tool prints now."""
    found = contrast_heldout.judged(public=False)
    assert found["judge errors"].sum() == 0 and found["judged"].sum() > 0
    by = found.groupby(["checks", "kind"])[["judged", "stand as verified"]].sum()
    stands = by.drop(index=contrast_heldout.CONTROL, level="kind")["stand as verified"]
    assert (stands.loc["all"] <= stands.loc["default"]).all() and (stands.loc["default"] <= stands.loc["none"]).all()
    assert stands.loc["default"].sum() < stands.loc["none"].sum()
    saved = json.loads((ROOT / "docs" / "measurements" / "data" / "contrast_heldout_judged.json").read_text(
        encoding="utf-8"))
    assert saved["command"] == "python tools/contrast_heldout.py --judged --project-only"
    assert contrast_heldout.main(["--judged", "--project-only"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert printed == [line.rstrip() for line in saved["output"].splitlines() if line.strip()]

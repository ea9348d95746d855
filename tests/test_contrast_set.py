"""tools/contrast_set.py: supported claims changed in one way each, the committed set what the tool
writes, and the checks measured on it (docs/measurements/contrast.md)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import contrast_set

from citeaudit import AuditOptions, audit_quotes, load_citations
from citeaudit.table import ContrastCheck

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("claim, changed", [
    ("A validator has to reject the token.", "A validator may reject the token."),
    ("The JWT MUST NOT be accepted.", "The JWT MAY be accepted."),
    ("Implementers may allow some leeway.", "Implementers must allow some leeway."),
    ("Use of this claim is optional.", "Use of this claim is required."),
    ("The sky is blue.", None),
])
def test_change_level(claim, changed):
    assert contrast_set.change_level(claim) == changed


@pytest.mark.parametrize("claim, changed", [
    ("Readings more than 120 seconds ahead are rejected.", "Readings more than 240 seconds ahead are rejected."),
    ("It lasts five minutes.", "It lasts ten minutes."),
    ("In 1977, PDO switched.", "In 1978, PDO switched."),
    ("Over 31,000 scientists signed.", "Over 62,000 scientists signed."),
    ("See Section 4.1 for the rules.", None),
])
def test_change_number(claim, changed):
    assert contrast_set.change_number(claim) == changed


@pytest.mark.parametrize("claim, changed", [
    ("The token is accepted.", "The token is not accepted."),
    ("The JWT MUST be rejected.", "The JWT MUST NOT be rejected."),
    ("The token is not accepted.", "The token is accepted."),
    ("Clients can't use it.", "Clients can use it."),
    ("Tokens expire.", None),
])
def test_flip_polarity(claim, changed):
    assert contrast_set.flip_polarity(claim) == changed


def test_swap_entity_takes_a_term_of_the_same_shape_the_evidence_lacks():
    evidence = 'The "iat" (issued at) claim identifies the time at which the JWT was issued.'
    pool = ["iat", "nbf", "exp", "JWE", "Alice"]
    swapped = contrast_set.swap_entity('The "iat" claim identifies when the JWT was issued.', evidence, pool, "k")
    assert swapped in ('The "nbf" claim identifies when the JWT was issued.',
                       'The "exp" claim identifies when the JWT was issued.')
    assert contrast_set.swap_entity("the time of issue", evidence, pool, "k") is None


def test_the_committed_set_is_what_the_tool_writes_from_the_projects_sets():
    for source, citations, out in contrast_set.sets(public=False):
        table = audit_quotes(source, load_citations(ROOT / citations), locate_only=True,
                             options=AuditOptions(contrast=())).table
        assert json.loads(out.read_text(encoding="utf-8")) == contrast_set.perturb(table), out
        records = load_citations(out)  # a quote-citation file like any other
        originals = set(table.loc[table["expected"] == "verified", "id"])
        assert records and {r.id.split("~")[0] for r in records} <= originals
        assert {r.id.split("~")[1] for r in records} <= {str(k) for k in ContrastCheck}


@pytest.mark.slow  # every check on every perturbed claim of the project's sets: about 2 s
def test_the_measure_counts_flags_on_perturbed_claims_and_originals():
    perturbed, originals = contrast_set.located(public=False)
    figures = contrast_set.measure(perturbed, originals).set_index("checks")
    assert list(figures.index[:4]) == [str(k) for k in contrast_set.KINDS]
    assert figures["perturbed"].iloc[:4].sum() == len(perturbed)
    assert figures.at["normative", "flagged by these checks"] > 0.3  # the worked example's kind is caught
    assert figures["originals flagged"].max() <= 0.05  # the project's supported claims: the cost stays small


@pytest.mark.slow  # the saved measurement's project part: about 5 s
def test_the_saved_measure_is_what_it_prints_for_the_projects_sets(capsys, recorded_cache):
    """docs/measurements/contrast.md shows `contrast_set.py --measure`'s saved output (--save-docs); its
    project part is checked here (the whole needs the public data: tests/test_docs_figures.py)."""
    saved = json.loads((ROOT / "docs" / "measurements" / "data" / "contrast_set.json").read_text(encoding="utf-8"))
    assert saved["command"] == "python tools/contrast_set.py --measure"
    block = saved["output"]
    assert contrast_set.main(["--measure", "--project-only"]) == 0
    printed = [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    project = [line.strip() for line in block.split("the project's own sets:", 1)[1].splitlines() if line.strip()]
    standing, perturbed = block.split("over the judged citations of the project's own sets:")[1].split(
        "perturbed claims that stand as verified, from the recorded answers (replay), the project's own sets:")
    standing = standing.split("perturbed claims that stand")[0]  # the next group's table, when printed
    assert printed[:9] == [f"the project's own sets: {project[0]}", *project[1:9]]
    assert printed[10:13] == [line.strip() for line in standing.strip().splitlines()]
    assert printed[-6:] == [line.strip() for line in perturbed.strip().splitlines()]


@pytest.mark.slow  # audits every perturbed claim of the project's sets twice, from the recordings: about 2 s
def test_the_default_checks_keep_perturbed_claims_from_standing_as_verified(recorded_cache):
    """The judge's recorded answers to the project's perturbed claims: with the default checks, fewer
    stand as verified than with none, and every kind does at least as well; a claim with no
    recorded answer would be counted apart, and there is none."""
    standing = contrast_set.perturbed_standing(public=False)
    by = standing.groupby(["checks", "kind"])[["judged", "stand as verified", "judge errors"]].sum()
    assert by["judge errors"].sum() == 0 and by.loc["none", "judged"].sum() == 144
    none, default = by.loc["none", "stand as verified"], by.loc["default", "stand as verified"]
    assert (default <= none).all() and default.sum() < none.sum()

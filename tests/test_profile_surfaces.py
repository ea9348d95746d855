"""Profiles on the real recordings: `citeaudit calibrate --reviews ... --profile`, the library's
`profile_from_reviews` with the same numbers, `--profile` routing an audit, and the refusals."""

import json
import re
from dataclasses import replace

import pytest
from click.testing import CliRunner

from citeaudit import table as C
from citeaudit.decide.calibration import load_profile
from citeaudit.decide.reviews import bound_review, store_review
from citeaudit.pipeline.audit import audit_quotes
from citeaudit.settings.options import AuditOptions
from citeaudit.surfaces.cli import main
from citeaudit.table import State
from citeaudit.workflows.profile_fit import profile_from_reviews

# the project's labelled sets over RFC 6749 and RFC 7519 (recorded in the default strategy)
PAIRS = [("rfc7519.txt", "data/eval_rfc7519.json"), ("rfc7519.txt", "data/eval_rfc7519_more.json"),
         ("rfc6749.txt", "data/eval_rfc6749.json"), ("rfc6749.txt", "data/eval_rfc6749_more.json")]
EXAMPLE = ("rfc7519.txt", "data/rfc7519_citations.json")


def inputs(pairs):
    return [arg for source, citations in pairs for arg in ("--source", source, "--citations", citations)]


def review_like_an_analyst(pairs, store):
    """The gold label plays the human: every spot check and every waiting citation, as the queue lists them."""
    options = AuditOptions.from_env()
    for source, citations in pairs:
        table = audit_quotes(source, citations, options=options).table
        queue = table[table[C.SPOT_CHECK].astype(bool) | (table[C.STATE] == State.WAITING)]
        for cid, gold in zip(queue[C.ID], queue[C.EXPECTED]):
            store_review(store, bound_review(table, cid, gold))


@pytest.fixture
def reviewed_store(recorded_cache, tmp_path):
    store = tmp_path / "reviews.jsonl"
    review_like_an_analyst(PAIRS, store)
    return store


def numbers(text):
    return re.findall(r"\d+\.\d%", text)


@pytest.mark.slow  # fits the same profile twice: about 2 s
def test_the_command_line_and_the_library_fit_the_same_profile(reviewed_store, recorded_cache):
    fit = profile_from_reviews(PAIRS, reviewed_store, "rfcs", AuditOptions.from_env())
    result = CliRunner().invoke(main, ["calibrate", "--reviews", str(reviewed_store), *inputs(PAIRS),
                                       "--profile", "rfcs", "--no-save"])
    assert result.exit_code == 0, result.output
    shown = fit.side_by_side().to_string(index=False)
    assert numbers(shown) and numbers(shown) == numbers(result.output.split("judged citations they stand for")[1])
    assert fit.summary() in result.output
    assert f"{fit.profile.a:.3f}" in result.output


@pytest.mark.slow  # fits a profile on a labelled set's reviews, then audits: about 3 s
def test_a_saved_profile_routes_the_audit_and_is_named(reviewed_store, recorded_cache):
    fit = profile_from_reviews(PAIRS, reviewed_store, "rfcs", AuditOptions.from_env())
    if not fit.saveable:
        pytest.skip(f"the recorded reviews do not make a saveable profile: {fit.problems}")
    result = CliRunner().invoke(main, ["calibrate", "--reviews", str(reviewed_store), *inputs(PAIRS),
                                       "--profile", "rfcs"])
    assert result.exit_code == 0, result.output
    options = AuditOptions.from_env()
    saved = load_profile("rfcs", options.user_folder, options.model, str(options.strategy))
    assert replace(saved, when=fit.profile.when) == fit.profile
    audited = CliRunner().invoke(main, ["audit", *inputs([PAIRS[0]]), "--profile", "rfcs"])
    assert "recommended by the calibration of profile rfcs (fitted on" in audited.output
    library = audit_quotes(*PAIRS[0], options=options.with_(profile="rfcs"))
    assert library.routing.calibration.profile == "rfcs"
    assert library.routing.threshold == fit.profile.route_threshold
    # a refit on too few reviews is refused, and says the profile saved earlier stays in force
    few = reviewed_store.parent / "few.jsonl"
    review_like_an_analyst([EXAMPLE], few)
    refused = CliRunner().invoke(main, ["calibrate", "--reviews", str(few), *inputs([EXAMPLE]), "--profile", "rfcs"])
    assert refused.exit_code == 2 and "saved earlier" in refused.output and "stays in force" in refused.output
    assert load_profile("rfcs", options.user_folder, options.model, str(options.strategy)) == saved


def test_too_few_reviews_are_refused_with_exit_2_and_nothing_is_written(recorded_cache, tmp_path):
    store = tmp_path / "few.jsonl"
    review_like_an_analyst([EXAMPLE], store)
    result = CliRunner().invoke(main, ["calibrate", "--reviews", str(store), *inputs([EXAMPLE]), "--profile", "few"])
    assert result.exit_code == 2
    assert "profile few not saved: too few reviews" in result.output
    assert "more waiting citations" in result.output
    assert not (AuditOptions.from_env().user_folder / "profiles").exists()


def test_an_unknown_profile_is_a_clear_error(recorded_cache):
    result = CliRunner().invoke(main, ["audit", *inputs([EXAMPLE]), "--profile", "missing"])
    assert result.exit_code == 2
    assert "no profile 'missing' in" in result.output and "citeaudit calibrate --reviews" in result.output


def test_stale_reviews_are_reported_and_left_out(reviewed_store, recorded_cache, tmp_path):
    lines = reviewed_store.read_text().splitlines()
    first = json.loads(lines[0])
    first["fingerprint"] = "0" * 64  # reviewed when the evidence read otherwise
    stale = tmp_path / "stale.jsonl"
    stale.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    fit = profile_from_reviews(PAIRS, stale, "rfcs", AuditOptions.from_env())
    assert len(fit.sample.stale) == 1
    assert "1 stale review(s) left out" in fit.summary()


def test_every_command_that_routes_takes_a_profile():
    commands = {name: {p.name for p in command.params} for name, command in main.commands.items()}
    routing = sorted(name for name, params in commands.items() if "spot_check" in params)
    assert all("profile" in commands[name] for name in routing if name != "calibrate"), routing
    assert "profile_name" in commands["calibrate"]

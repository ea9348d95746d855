"""Judge strategies as objects registered by name: the registry, and a strategy of a test's own
(`Agree`) registered here and run end to end through the public `Judge(http_client=...)` seam
(`citeaudit.testing.Endpoint().client()`), with no other module touched (docs/extending/strategy.md)."""

import math
from functools import partial

import pytest
from conftest import DATA

from citeaudit import CallCache, Judge, audit_quotes, registry
from citeaudit.calibrate.maps import answer_keys, default_inputs
from citeaudit.calibrate.scoring import judged_rows
from citeaudit.errors import InputError
from citeaudit.judge.cache import read_recording, recording_name, request_key
from citeaudit.judge.judge import YESNO_GRAMMAR
from citeaudit.judge.prompts import yes_no_messages
from citeaudit.judge.strategies import (
    PROMPT_VERSIONS,
    STRATEGIES,
    YES_NO,
    Ask,
    JudgeStrategy,
    calls_per_citation,
    get_strategy,
    register_strategy,
    unregister_strategy,
)
from citeaudit.judge.strategies.probe import VECTOR
from citeaudit.pipeline.audit import judge_questions
from citeaudit.settings import environment as config
from citeaudit.testing import Endpoint, answer_by_claim

EXAMPLE = DATA / "rfc7519_citations.json"
JUDGED = 7  # of the worked example's 8 citations, one is fabricated (never asked)
AGREE = "Does the passage agree with the claim?"
YES = math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.5))  # P(yes) of `completion("Yes")`


class Agree(JudgeStrategy):
    """One yes/no question in its own wording: P(supports) is its P(yes), the rest says nothing."""

    name = "agree"
    summary = "one yes/no question of its own"
    prompt_version = "agree-v1"
    letters = False
    calibration_inputs = "answers"

    def asks(self, claim, evidence, where, questions=None):
        return [Ask("agree", yes_no_messages(claim, evidence, where, AGREE), YES_NO, self.prompt_version)]

    def read(self, readings):
        q = readings["agree"].p_yes
        return {"supports": q, "contradicts": 0.0, "says_nothing": 1.0 - q}, {"agree": q}

    def answer_keys(self, questions=None):
        return ("agree",)


@pytest.fixture
def agree():
    strategy = register_strategy(Agree())
    yield strategy
    unregister_strategy(strategy.name)


def judge_over(endpoint, tmp_cache, strategy, mode="record", **kw):
    """A judge of `citeaudit.testing`'s scripted endpoint, in process: it answers Yes to a yes/no
    question and A to the three-way one (`answer_by_claim`)."""
    return Judge(model="stub", base_url=endpoint.url, api_key="k", grammar=True, max_retries=0,
                 strategy=strategy, cache=CallCache(tmp_cache, mode=mode), http_client=endpoint.client(), **kw)


def test_the_shipped_strategies_are_registered_in_the_order_every_list_shows():
    shipped = ["choice", "yesno", "panel", "examples", "panel+examples"]
    assert STRATEGIES is registry.STRATEGIES and list(STRATEGIES)[:5] == shipped
    assert all(type(name) is str for name in STRATEGIES)  # plain names, no enum making up members
    assert {name: PROMPT_VERSIONS[name] for name in shipped} == {
        "choice": "relation-v2", "yesno": "yesno-v1", "panel": "panel-v1", "examples": "examples-v1",
        "panel+examples": "panel-v1"}  # the recordings' keys
    assert [calls_per_citation(name) for name in shipped] == [1, 2, 3, 1, 4]
    assert [STRATEGIES[name].calibration_inputs for name in shipped] == [
        "supports", "answers", "answers", "supports", "answers"]


def test_unknown_or_taken_names_are_refused_with_the_choices():
    with pytest.raises(InputError) as refused:
        get_strategy("vote")
    assert str(refused.value) == (f"unknown judge strategy 'vote': use one of {', '.join(STRATEGIES)} "
                                  "(--strategy or CITEAUDIT_STRATEGY)")
    assert str(refused.value).startswith("unknown judge strategy 'vote': use one of choice, yesno, panel, examples")
    with pytest.raises(ValueError, match="'panel' is registered already"):
        register_strategy(get_strategy("panel").__class__())
    with pytest.raises(ValueError, match="lower-case letters"):
        register_strategy(type("Spaced", (Agree,), {"name": "two words"})())
    assert "agree" not in STRATEGIES  # nothing half-registered


def test_a_registered_strategy_is_a_strategy_name_everywhere_until_unregistered(agree):
    assert "agree" in STRATEGIES and list(STRATEGIES)[-1] == "agree" and STRATEGIES.get("agree") is agree
    assert config.parse_strategy("agree") == "agree"
    assert PROMPT_VERSIONS["agree"] == "agree-v1" and calls_per_citation("agree") == 1
    unregister_strategy("agree")
    with pytest.raises(InputError, match="unknown judge strategy 'agree'"):
        config.parse_strategy("agree")
    register_strategy(agree)  # for the fixture's own unregistering


def test_a_strategy_of_its_own_runs_end_to_end_through_the_judge(agree, tmp_cache):
    seen = Endpoint()
    audit = audit_quotes("rfc7519.txt", EXAMPLE, judge=judge_over(seen, tmp_cache, "agree"), calibration=False)
    judged = audit.table[audit.table["confidence"].notna()]
    assert seen.requests == len(judged) == JUDGED  # one request per citation, as the strategy asks
    for body in seen.bodies:  # its own question over the tagged data, with the Yes/No grammar
        assert body["messages"][-1]["content"].endswith(f"{AGREE}\n\nAnswer Yes or No.")
        assert "[/CLAIM-" in body["messages"][-1]["content"] and body["grammar"] == YESNO_GRAMMAR
    assert all(p == pytest.approx({"supports": YES, "contradicts": 0.0, "says_nothing": 1 - YES})
               for p in judged["probabilities"])
    assert all(a == pytest.approx({"agree": YES}) for a in judged["answers"])
    assert set(judged["relation"]) == {"supports"} and set(judged["method"]) == {"logprobs"}
    recording = read_recording(tmp_cache / recording_name("stub"))
    assert {r["prompt_version"] for r in recording} == {"agree-v1"} and len(recording) == JUDGED
    replayed = audit_quotes("rfc7519.txt", EXAMPLE, judge=judge_over(seen, tmp_cache, "agree", mode="replay"),
                            calibration=False).table
    assert seen.requests == JUDGED and replayed["cached"].dropna().all()  # the cache answers: nothing sent
    assert list(replayed["probabilities"]) == list(audit.table["probabilities"])


def test_a_strategy_of_its_own_falls_back_to_sampling(agree, tmp_cache):
    seen = Endpoint(partial(answer_by_claim, logprobs=False))  # only the sampled token
    result = judge_over(seen, tmp_cache, "agree", samples=5).judge("the claim", "the evidence")
    assert seen.requests == 1 + 5 and [body.get("seed") for body in seen.bodies] == [None, 0, 1, 2, 3, 4]
    assert result.method == "sampling (n=5, Wilson 99% lower bound)" and result.answers == {"agree": 1.0}
    assert result.confidence == pytest.approx(0.430, abs=1e-3)  # 5 of 5 agreeing: a lower bound, below 1/2


def test_a_strategy_says_whether_it_reads_hidden_states():
    for name, strategy in STRATEGIES.items():
        asked = any(ask.answer is VECTOR for ask in strategy.asks("claim", "evidence", "where"))
        assert strategy.reads_hidden_states == asked, name


# a strategy that reads hidden states needs a local model: tests/test_probe.py replays them
@pytest.mark.parametrize("name", [*(n for n, s in STRATEGIES.items() if not s.reads_hidden_states), "agree"])
def test_each_strategy_sends_its_calls_and_keeps_the_answers_calibrate_reads(agree, tmp_cache, name):
    """What a strategy declares (calls per citation, answer keys, calibration inputs) is what the
    judge sends and what `calibrate` works out from the judged rows."""
    seen = Endpoint()
    judge = judge_over(seen, tmp_cache, name)
    strategy = judge.strategy_object
    audit = audit_quotes("rfc7519.txt", EXAMPLE, judge=judge, calibration=False)
    assert seen.requests == JUDGED * strategy.calls_per_citation(judge.questions)
    asked = judge_questions(audit.table, audit.document.name).values()  # what a cost estimate counts
    assert {request_key(r) for claim, evidence, where, _ in asked for r in judge.requests(claim, evidence, where)} \
        == {r["key"] for r in read_recording(tmp_cache / recording_name("stub"))}
    table = audit.table
    rows = judged_rows(table)
    assert answer_keys(rows) == list(strategy.answer_keys(judge.questions))
    assert default_inputs(table) == strategy.calibration_inputs


def test_the_command_line_offers_the_registered_strategies():
    from citeaudit.surfaces.cli import main

    (option,) = [p for p in main.commands["audit"].params if p.name == "strategy"]
    assert tuple(option.type.choices) == tuple(STRATEGIES)
    assert all(f"{name} ({s.summary})" in option.help for name, s in STRATEGIES.items())

"""The probe on the judge's hidden states (issue 37): its vectors' store and key, its weights file,
and that no domain's rows are ever in a fit that scores it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from citeaudit.calibrate.probe import (
    class_probabilities,
    fit_logistic_probe,
    fit_weights,
    nested_scores,
    refuse_in_sample,
)
from citeaudit.errors import InputError, JudgeError
from citeaudit.judge.cache import CallCache, request_key
from citeaudit.judge.hidden_states import (
    CLASSES,
    FINAL,
    LAYERS,
    ProbeWeights,
    block_layer,
    encode_vector,
    recorded_vector,
)
from citeaudit.judge.judge import Judge

SHA = "a" * 64


def test_a_vector_is_kept_as_float16_and_asked_under_a_key_of_its_own(tmp_path):
    vector = np.linspace(-40.0, 40.0, 1536).astype(np.float32)
    response = {"vector": encode_vector(vector), "dimensions": 1536}
    assert np.allclose(recorded_vector(response), vector, rtol=1e-3, atol=0.05)
    for bad in ({}, {"vector": "not base64!"}, {"vector": encode_vector(np.array([np.inf]))}, {"vector": ""}):
        with pytest.raises(JudgeError, match="hidden-state"):
            recorded_vector(bad)
    probe, choice = (Judge(model="m", strategy=name, cache=CallCache(tmp_path)) for name in ("probe", "choice"))
    (asked,) = probe.requests("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4 of x")
    (chosen,) = choice.requests("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4 of x")
    assert asked["messages"] == chosen["messages"] and asked["prompt_version"] == chosen["prompt_version"]
    assert asked["params"] == {"hidden_state": "last"} and request_key(asked) != request_key(chosen)


def test_each_layer_is_a_request_of_its_own_and_the_final_one_is_the_probes(tmp_path):
    judge = Judge(model="m", strategy="probe", cache=CallCache(tmp_path, mode="replay"))
    question = ("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4 of x")
    (probes,) = judge.requests(*question)
    layers = judge.hidden_state_requests(*question, layers=LAYERS)
    assert layers[FINAL] == probes  # the shipped vectors of the final layer are still replayed
    assert len({request_key(r) for r in layers.values()}) == len(LAYERS) == 9
    assert all(r["params"] == {"hidden_state": name} and r["messages"] == probes["messages"]
               for name, r in layers.items())
    assert block_layer(14) == "l_out-14" and block_layer(14) in LAYERS


def test_only_a_local_model_has_hidden_states_to_read(tmp_path):
    judge = Judge(model="gpt-4o", strategy="probe", cache=CallCache(tmp_path, mode="record"))
    judged = judge.judge("The exp claim is optional.", "Use of this claim is OPTIONAL.")
    assert judged.error and "reads the hidden states of a local model" in judged.error and judged.relation is None


def separable(n: int = 120, d: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, d)) + np.eye(3, d)[y] * 2.5
    groups = np.array(["a", "b", "c", "d"])[np.arange(n) % 4]
    return x, y, groups


def test_no_domain_is_in_a_fit_that_scores_it():
    x, y, groups = separable()
    ids = np.arange(len(x))
    scored: list[tuple[set[int], set[int]]] = []  # (rows a fit saw, rows it scored)

    class Recorded:
        """A probe that records what it was fitted on and what it scores (the last column: row ids)."""

        def __init__(self, train_x, train_y, c):
            self.model = fit_logistic_probe(train_x[:, :-1], train_y, c)
            self.seen, self.classes_ = set(train_x[:, -1].astype(int)), self.model.classes_

        def predict_proba(self, rows):
            scored.append((self.seen, set(rows[:, -1].astype(int))))
            return self.model.predict_proba(rows[:, :-1])

    with_ids = np.column_stack([x, ids])
    for held in "abcd":
        scored.clear()
        p, _ = nested_scores(with_ids, y, groups, held, fit=Recorded)
        assert p.shape == (len(x), len(CLASSES)) and np.allclose(p.sum(axis=1), 1.0)
        held_rows = set(ids[groups == held])
        for seen, rows in scored:
            assert not seen & held_rows, "a fit that saw the held-out domain scored something"
            assert not seen & rows, "a fit scored rows it was fitted on"
        assert held_rows <= set().union(*(rows for _, rows in scored))


def test_held_out_probe_separates_what_it_never_saw():
    x, y, groups = separable()
    p, _ = nested_scores(x, y, groups, "a")
    mine = groups == "a"
    assert (np.argmax(p[mine], axis=1) == y[mine]).mean() > 0.8


def test_saved_weights_give_the_fitted_probabilities_and_refuse_other_vectors(tmp_path):
    x, y, _ = separable()
    weights = fit_weights(x, y, 0.1, SHA, "relation-v2", "last", {"a": 30})
    model = fit_logistic_probe(x, y, 0.1)
    path = weights.save(tmp_path / "probe.json")
    loaded = ProbeWeights.load(path, SHA, "relation-v2", "last")
    assert np.allclose(loaded.probabilities(x), class_probabilities(model, x), atol=1e-4)
    assert loaded.fitted_on == {"a": 30}
    for other, what in (({"model_sha256": "b" * 64}, "model file SHA-256"), ({"prompt_version": "relation-v3"},
                        "prompt version"), ({"layer": "12"}, "layer")):
        wanted = {"model_sha256": SHA, "prompt_version": "relation-v2", "layer": "last", **other}
        with pytest.raises(InputError, match=f"probe of other vectors .*{what}"):
            ProbeWeights.load(path, **wanted)
    (tmp_path / "broken.json").write_text(json.dumps({"dimensions": 3}), encoding="utf-8")
    with pytest.raises(InputError, match="broken.json is not a probe file"):
        ProbeWeights.load(tmp_path / "broken.json", SHA, "relation-v2", "last")
    with pytest.raises(InputError, match="no probe file there"):
        ProbeWeights.load(tmp_path / "absent.json", SHA, "relation-v2", "last")


def test_two_classes_only_still_give_three_probabilities():
    x, y, _ = separable()
    two = y != 1
    weights = fit_weights(x[two], y[two], 0.1, SHA, "relation-v2", "last")
    p = weights.probabilities(x)
    assert np.allclose(p.sum(axis=1), 1.0) and p[:, 1].max() < 1e-6
    assert np.allclose(p, class_probabilities(fit_logistic_probe(x[two], y[two], 0.1), x), atol=1e-4)


def test_calibrate_refuses_a_strategy_that_reads_the_probe_in_sample():
    for name in ("probe", "stacked"):
        with pytest.raises(InputError, match="out-of-domain scores by `make bench-probe-save`"):
            refuse_in_sample(name)
    refuse_in_sample("panel")  # the others are calibrated as before


@pytest.mark.integration
def test_a_hidden_state_is_read_from_the_local_model_recorded_and_replayed(tmp_path):
    """The real model (SmolLM2, the fast local one) read in-process through llama-cpp-python: one
    vector per question, the same for the same question, recorded, and replayed with no model."""
    pytest.importorskip("llama_cpp")
    from citeaudit.judge.localmodel import MODELS

    name = MODELS["smollm2"].name
    recorder = Judge(model=name, strategy="probe", cache=CallCache(tmp_path, mode="record"))
    optional = recorder.hidden_state("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4")
    required = recorder.hidden_state("The exp claim is required.", "Use of this claim is OPTIONAL.", "section 4.1.4")
    assert optional.shape == required.shape and optional.shape[0] > 100 and np.isfinite(optional).all()
    assert not np.allclose(optional, required)
    replayer = Judge(model=name, strategy="probe", cache=CallCache(tmp_path, mode="replay"))
    again = replayer.hidden_state("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4")
    assert np.array_equal(again, optional)
    judged = replayer.judge("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4")
    assert judged.error and "no probe file there" in judged.error  # no probe is fitted for SmolLM2: a row error


@pytest.mark.integration
def test_middle_layers_are_read_in_the_pass_that_reads_the_final_one(tmp_path):
    """llama.cpp's evaluation callback on the real model (SmolLM2, 30 blocks): the final norm's output
    it copies is the embeddings output the probe has always read, every block's output is a vector
    of the model's width, the same on a second pass, and each layer is recorded and replayed."""
    pytest.importorskip("llama_cpp")
    from citeaudit.judge.hidden_states import HiddenStates
    from citeaudit.judge.localmodel import MODELS, model_path
    from citeaudit.judge.strategies.probe import probe_ask

    question = ("The exp claim is optional.", "Use of this claim is OPTIONAL.", "section 4.1.4")
    states = HiddenStates(model_path("smollm2"), n_threads=2, n_ctx=2048)
    text = states.text(probe_ask(*question).messages)
    first, tokens = states.vectors(text, LAYERS, taps=("result_norm",))
    again, _ = states.vectors(text, LAYERS)
    alone, same_tokens = states.vectors(text)
    width = states.llm.n_embd()
    assert tokens == same_tokens > 20 and set(first) == {*LAYERS, "result_norm"} and set(alone) == {FINAL}
    assert np.allclose(first["result_norm"], first[FINAL], rtol=1e-4, atol=1e-4)
    assert np.allclose(alone[FINAL], first[FINAL], rtol=1e-4, atol=1e-4)  # the callback changes no number
    for layer in LAYERS:
        assert first[layer].shape == (width,) and np.isfinite(first[layer]).all()
        assert np.allclose(again[layer], first[layer], rtol=1e-4, atol=1e-4)
    assert not np.allclose(first[block_layer(8)], first[block_layer(24)], rtol=0.1, atol=0.1)
    with pytest.raises(ValueError, match="computed no tensor l_out-99"):
        states.vectors(text, (FINAL, block_layer(99)))
    states.llm.close()

    name = MODELS["smollm2"].name
    recorder = Judge(model=name, strategy="probe", cache=CallCache(tmp_path, mode="record"))
    recorded = recorder.hidden_states(*question, layers=LAYERS)
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert sorted(r["params"]["hidden_state"] for r in records) == sorted(LAYERS)
    assert np.allclose(recorded[block_layer(14)], first[block_layer(14)], rtol=1e-2, atol=0.05)  # float16
    replayer = Judge(model=name, strategy="probe", cache=CallCache(tmp_path, mode="replay"))
    replayed = replayer.hidden_states(*question, layers=LAYERS)
    assert all(np.array_equal(replayed[layer], recorded[layer]) for layer in LAYERS)
    assert np.array_equal(replayer.hidden_state(*question), recorded[FINAL])


def test_a_hidden_state_nobody_recorded_says_how_to_record_it(tmp_path):
    judge = Judge(model="qwen2.5-coder-1.5b-instruct-q4_k_m", strategy="probe", cache=CallCache(tmp_path, mode="replay"))
    judged = judge.judge("A claim nobody recorded.", "Evidence nobody recorded.")
    assert judged.error_kind == "replay_miss" and "no recorded hidden state" in judged.error
    assert "--cache-mode record" in judged.error and "no server is needed" in judged.error

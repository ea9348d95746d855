"""The probe: a linear model from the judge's hidden state to the three relations (issue 37), fitted
and scored held out by domain.

A probe is scikit-learn's logistic regression (multinomial over supports, contradicts, says
nothing; inputs standardized; an L2 penalty `c` chosen by leave-one-domain-out log-loss on the
training domains alone) on the vectors of `citeaudit.judge.hidden_states`. `fit_weights` keeps
what the `probe` strategy reads of it (`judge.hidden_states.ProbeWeights`): the standardization
and the coefficients, bound to the model file's SHA-256, the prompt version and the layer the
vectors were read with; `ProbeWeights.load` refuses a file made for another (`InputError`, saying
which and what to do).

Held out by domain (`nested_scores`): the domain scored is never in a fit that scores it, and the
scores of the other domains, on which the calibration's map and threshold are then fitted, each
come from a probe fitted without that domain too (nested leave-one-domain-out), so the map sees
scores as a probe gives them to citations it never saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from citeaudit.errors import InputError
from citeaudit.judge.hidden_states import CLASSES, ProbeWeights
from citeaudit.settings import environment as config
from citeaudit.table import Verdict

GOLD_CLASS = {Verdict.VERIFIED: 0, Verdict.CONTRADICTED: 1, Verdict.UNSUPPORTED: 2, Verdict.FABRICATED: 2}
C_GRID = (0.00003, 0.0001, 0.0003, 0.001, 0.003, 0.01)  # 1/λ of the L2 penalty, on standardized inputs

Fit = Callable[[np.ndarray, np.ndarray, float], Any]  # (x, classes, c) -> a fitted model with predict_proba


def refuse_in_sample(strategy: str) -> None:
    """`InputError` for a strategy that reads hidden states (`probe`, `stacked`): a map fitted on the
    labelled citations the probe was itself fitted on would see its in-sample scores and trust it
    too much; its calibration is fitted on out-of-domain probe scores by `tools/bench_probe.py
    --save` (`make bench-probe-save`)."""
    from citeaudit.judge.strategies import get_strategy

    if get_strategy(strategy).reads_hidden_states:
        where = ("`make bench-probe-save` (tools/bench_probe.py --save)" if config.in_checkout()
                 else "tools/bench_probe.py --save in a checkout of citeaudit")
        raise InputError(f"strategy {strategy} reads the probe, fitted on the labelled sets themselves: its "
                         f"calibration is fitted on the probe's out-of-domain scores by {where}, not by "
                         "`citeaudit calibrate`")


def gold_classes(expected: Sequence[object]) -> np.ndarray:
    """Each gold verdict's class index in `CLASSES` (a fabricated citation that was judged fails as
    says nothing)."""
    return np.array([GOLD_CLASS[Verdict(str(v))] for v in expected])


def fit_logistic_probe(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    """Standardized inputs, multinomial logistic regression with penalty `c` (scikit-learn)."""
    from sklearn.linear_model import LogisticRegression  # here: importing scikit-learn takes seconds
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000)).fit(x, y)


def class_probabilities(model: Any, x: np.ndarray) -> np.ndarray:
    """P of each of `CLASSES` per row (a class the training rows lacked: 0)."""
    out = np.zeros((len(x), len(CLASSES)))
    out[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(x)
    return out


def out_of_group(x: np.ndarray, y: np.ndarray, groups: np.ndarray, c: float,
                 fit: Fit = fit_logistic_probe) -> np.ndarray:
    """Each group's rows scored by a probe fitted on the other groups only."""
    out = np.zeros((len(x), len(CLASSES)))
    for g in np.unique(groups):
        mine = groups == g
        out[mine] = class_probabilities(fit(x[~mine], y[~mine], c), x[mine])
    return out


def choose_c(x: np.ndarray, y: np.ndarray, groups: np.ndarray, grid: Sequence[float] = C_GRID,
             fit: Fit = fit_logistic_probe) -> float:
    """The penalty of `grid` whose out-of-group P(supports) has the least pass/fail log-loss (ties
    to the stronger penalty)."""
    passes = y == 0
    losses = []
    for c in grid:
        p = np.clip(out_of_group(x, y, groups, c, fit)[:, 0], 1e-6, 1 - 1e-6)
        losses.append(-float(np.mean(np.where(passes, np.log(p), np.log(1 - p)))))
    best = min(losses)
    return min(c for c, loss in zip(grid, losses) if loss <= best + 1e-12)


def nested_scores(x: np.ndarray, y: np.ndarray, groups: np.ndarray, held: str,
                  fit: Fit = fit_logistic_probe, grid: Sequence[float] = C_GRID) -> tuple[np.ndarray, float]:
    """Class probabilities of every row for scoring domain `held`: its own rows by a probe fitted
    on every other domain, each other domain's rows by a probe fitted on the rest (neither `held`
    nor itself); the penalty chosen on the other domains alone. Returns them and the penalty."""
    mine = groups == held
    if not mine.any() or mine.all():
        raise ValueError(f"domain {held!r} must be some but not all of the rows")
    c = choose_c(x[~mine], y[~mine], groups[~mine], grid, fit)
    out = np.zeros((len(x), len(CLASSES)))
    out[~mine] = out_of_group(x[~mine], y[~mine], groups[~mine], c, fit)
    out[mine] = class_probabilities(fit(x[~mine], y[~mine], c), x[mine])
    return out, c


def fit_weights(x: np.ndarray, y: np.ndarray, c: float, model_sha256: str, prompt_version: str, layer: str,
                fitted_on: dict[str, int] | None = None) -> ProbeWeights:
    """`fit_logistic_probe` on every row, kept as `ProbeWeights` (what the `probe` strategy reads)."""
    model = fit_logistic_probe(x, y, c)
    scaler, logistic = model[0], model[-1]
    coef = np.zeros((len(CLASSES), x.shape[1]))
    intercept = np.full(len(CLASSES), -1e3)  # a class never seen: probability 0
    classes = np.asarray(logistic.classes_, dtype=int)
    if len(classes) == 2:  # scikit-learn keeps one row for two classes: the second's against the first's
        coef[classes[1]], intercept[classes[1]] = logistic.coef_[0], logistic.intercept_[0]
        intercept[classes[0]] = 0.0
    else:
        coef[classes], intercept[classes] = logistic.coef_, logistic.intercept_
    return ProbeWeights(model_sha256, prompt_version, layer, float(c), scaler.mean_, scaler.scale_, coef, intercept,
                        dict(fitted_on or {}))

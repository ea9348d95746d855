"""Numbers read off the judge's answers: probabilities from token log-probabilities, the yes/no
combination, and the bound of a sampled answer. Never free text parsed into a probability.

A log-probability that is not a finite number makes the whole answer unusable (`JudgeError`, a
row error), never a confidence.
"""

from __future__ import annotations

import math

from citeaudit.errors import JudgeError
from citeaudit.table import Relation

RELATIONS = tuple(Relation)
LETTERS = {"A": Relation.SUPPORTS, "B": Relation.CONTRADICTS, "C": Relation.SAYS_NOTHING}
Z_95 = 1.959963984540054  # two-sided 95% normal quantile
Z_99 = 2.5758293035489004  # two-sided 99% normal quantile: the bound of sampled confidences
LOGPROB_SLACK = 1e-6  # rounding room: a server may print a log-probability of 0 as 1e-9


def checked_logprobs(top: list[dict]) -> None:
    """Refuse an answer whose log-probabilities cannot be right: not finite numbers (NaN, infinity,
    recorded as null) or above 0 (a probability above 1). `JudgeError` (a row error), never a
    confidence.

    >>> checked_logprobs([{"token": "A", "logprob": -0.1}, {"token": "B", "logprob": -2.5}])
    >>> checked_logprobs([{"token": "A", "logprob": 0.5}])
    Traceback (most recent call last):
    citeaudit.errors.JudgeError: the endpoint returned log-probabilities above 0 ...
    """
    bad = [entry.get("token") for entry in top if finite_or_none(entry.get("logprob")) is None]
    if bad:
        raise JudgeError(
            f"the endpoint returned log-probabilities that are not finite numbers (NaN or infinity) "
            f"for the tokens {bad!r}; its answer cannot be used. Check the server or its model file."
        )
    above = [entry.get("token") for entry in top if entry["logprob"] > LOGPROB_SLACK]
    if above:
        raise JudgeError(
            f"the endpoint returned log-probabilities above 0 (probabilities above 1) for the tokens "
            f"{above!r}; its answer cannot be used. Check the server or its model file."
        )


def probabilities_from_top_logprobs(top: list[dict]) -> dict[str, float] | None:
    """Renormalize the probability mass of the tokens "A", "B", "C" (spaces ignored) to sum to 1.

    A log-probability that cannot be right (`checked_logprobs`) makes the whole answer unusable:
    `JudgeError`.

    >>> p = probabilities_from_top_logprobs([{"token": "A", "logprob": -0.1}, {"token": " B", "logprob": -2.4},
    ...                                      {"token": "The", "logprob": -3.0}])
    >>> round(p["supports"], 3), p["says_nothing"]
    (0.909, 0.0)
    """
    checked_logprobs(top)
    mass = dict.fromkeys(RELATIONS, 0.0)
    for entry in top:
        letter = entry["token"].strip()
        if letter in LETTERS:
            mass[LETTERS[letter]] += math.exp(min(entry["logprob"], 0.0))
    total = sum(mass.values())
    if total <= 0:
        return None
    return {relation: value / total for relation, value in mass.items()}


def yes_probability(top: list[dict]) -> float | None:
    """P(yes) renormalized over the tokens yes and no (any case, spaces ignored); None if neither.

    >>> round(yes_probability([{"token": "Yes", "logprob": -0.2}, {"token": " no", "logprob": -2.0},
    ...                        {"token": "NO", "logprob": -3.0}, {"token": "Maybe", "logprob": -1.0}]), 3)
    0.816
    """
    checked_logprobs(top)
    mass = {"yes": 0.0, "no": 0.0}
    for entry in top:
        word = entry["token"].strip().lower()
        if word in mass:
            mass[word] += math.exp(min(entry["logprob"], 0.0))
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None


def sampled_letters(answers: list[str], samples: int) -> tuple[dict[str, float], float] | None:
    """The shares of A, B and C among sampled answers (each read by its first character) and the
    Wilson 99% lower bound of the pass-or-fail winner's count out of all `samples` (an answer that
    is no letter counts against the winner too); None when no answer is a letter.

    >>> shares, bound = sampled_letters(["A", "A", "The", "A", "C"], 5)
    >>> shares["supports"], round(bound, 3) == round(wilson_lower_bound(3, 5, Z_99), 3)
    (0.75, True)
    """
    counts = {relation: sum(a[:1] == letter for a in answers) for letter, relation in LETTERS.items()}
    answered = sum(counts.values())
    if answered == 0:
        return None
    passes, fails = counts[Relation.SUPPORTS], answered - counts[Relation.SUPPORTS]
    return ({relation: count / answered for relation, count in counts.items()},
            wilson_lower_bound(max(passes, fails), samples, Z_99))


def sampled_yes(answers: list[str], samples: int) -> tuple[float, float] | None:
    """The share of yes among sampled answers that are yes or no (each read by its first word, any
    case, trailing punctuation dropped) and the Wilson 99% lower bound of the majority's count out
    of all `samples`; None when no answer is yes or no.

    >>> share, bound = sampled_yes(["Yes", "yes.", "No", "Maybe", ""], 5)
    >>> round(share, 3), bound == wilson_lower_bound(2, 5, Z_99)
    (0.667, True)
    """
    words = [a.split()[0].strip(".,:;!").lower() if a else "" for a in answers]
    given = sum(w in ("yes", "no") for w in words)
    if given == 0:
        return None
    return words.count("yes") / given, wilson_lower_bound(max(words.count("yes"), words.count("no")), samples, Z_99)


def combine_yesno(q_true: float, q_false: float) -> dict[str, float]:
    """The three probabilities from P(yes) to "is it true?" (q_true) and to "is it false?" (q_false).

    The first question is the one that decides pass or fail, so P(supports) = q_true; the second
    only names a failure: the rest, 1 - q_true, is split between contradicts and says nothing as
    q_false : 1 - q_false. (Measured on the labelled sets, the weak local model says yes to both
    questions together more often than chance, so letting q_false pull P(supports) down ranked the
    supported citations worse: AUROC 0.87 against 0.90 for q_true alone.)

    >>> {str(k): round(v, 3) for k, v in combine_yesno(0.9, 0.2).items()}
    {'supports': 0.9, 'contradicts': 0.02, 'says_nothing': 0.08}
    """
    rest = 1.0 - q_true
    return {
        Relation.SUPPORTS: q_true,
        Relation.CONTRADICTS: rest * q_false,
        Relation.SAYS_NOTHING: rest * (1.0 - q_false),
    }


def decided_relation(probabilities: dict[str, float]) -> Relation:
    """`supports` when P(supports) ≥ 1/2, else the larger of contradicts and says nothing.

    Pass or fail is what decides the answer, so the non-support mass counts together: with
    P = 0.40 / 0.35 / 0.25 the citation fails (0.60), and the larger failing relation names it.

    >>> str(decided_relation({"supports": 0.40, "contradicts": 0.35, "says_nothing": 0.25}))
    'contradicts'
    """
    if probabilities[Relation.SUPPORTS] >= 0.5:
        return Relation.SUPPORTS
    if probabilities[Relation.CONTRADICTS] >= probabilities[Relation.SAYS_NOTHING]:
        return Relation.CONTRADICTS
    return Relation.SAYS_NOTHING


def pass_fail_confidence(probabilities: dict[str, float]) -> float:
    """max(P(supports), 1 − P(supports)): how sure the judge is of pass or fail.

    >>> pass_fail_confidence({"supports": 0.3, "contradicts": 0.3, "says_nothing": 0.4})
    0.7
    """
    p = probabilities[Relation.SUPPORTS]
    return max(p, 1.0 - p)


def finite_or_none(value: object) -> float | None:
    """`value` as a float when it is a finite number, else None (recorded as JSON null).

    >>> finite_or_none(-0.5), finite_or_none(float("nan")), finite_or_none(float("-inf")), finite_or_none(None)
    (-0.5, None, None, None)
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def wilson_lower_bound(successes: int, n: int, z: float = Z_95) -> float:
    """Lower end of the Wilson score interval of a proportion (95% two-sided by default).

    The confidence of a sampled answer: 5 agreeing samples out of 5 give about 0.57, not 1.0.

    >>> round(wilson_lower_bound(5, 5), 3), round(wilson_lower_bound(3, 5), 3), round(wilson_lower_bound(20, 20), 3)
    (0.566, 0.231, 0.839)
    >>> wilson_lower_bound(0, 5), wilson_lower_bound(0, 0)
    (0.0, 0.0)
    >>> round(wilson_lower_bound(5, 5, Z_99), 3), round(wilson_lower_bound(20, 20, Z_99), 3)
    (0.43, 0.751)
    """
    if n <= 0 or successes <= 0:
        return 0.0
    share = successes / n
    z2 = z * z
    centre = share + z2 / (2 * n)
    margin = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    return max(0.0, (centre - margin) / (1 + z2 / n))

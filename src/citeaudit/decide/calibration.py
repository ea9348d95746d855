"""The runtime calibration: a fitted map from the judge's answers to P(pass), its threshold, and
the `Routing` (threshold and calibration) every surface routes with.

`Calibration` is read from `calibration/<model>.<strategy>.json` of the user cache
(`cache/local/`, written by `citeaudit calibrate` and `citeaudit judge-setup`), else of the shipped
folder (`cache/calibration/`, written with `--shipped`); fitted in `calibrate.py`.
`Routing.resolve` is the one place the threshold in force is chosen: the one given, else the
calibration's recommended one, else `DEFAULT_THRESHOLD`; and `Routing.note` says in one line which
it is, naming a model that has no calibration and the command that fits one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import AllowInfNan, BaseModel, ConfigDict, Field, Strict, StrictStr, ValidationError

from citeaudit import strictjson
from citeaudit.errors import InputError
from citeaudit.judge.answers import wilson_lower_bound
from citeaudit.settings import environment as config
from citeaudit.settings.environment import DEFAULT_SPOT_CHECK, DEFAULT_THRESHOLD
from citeaudit.settings.values import check_profile_name
from citeaudit.sources.reading import read_bounded

DEFAULT_TARGET = 0.95
# what a calibration maps: P(supports); each yes/no answer; or each answer and the evidence's length
SUPPORTS, ANSWERS, ANSWERS_LENGTH = "supports", "answers", "answers+length"
EVIDENCE_CHARS = "evidence_chars"  # feature: log of the judged evidence's length in characters
PRODUCT = "*"  # a feature "a*b" is the product of features a and b
COVER_MIN = 20  # judged citations a document needs before its share of no-to-everything answers says anything


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # beyond ±500 it is 0 or 1 anyway; np.clip's dispatch costs more than the sum (a fit: 100,000 calls)
    return 1.0 / (1.0 + np.exp(-np.minimum(np.maximum(z, -500.0), 500.0)))


def _sigmoid_one(z: float) -> float:
    """`_sigmoid` of one number, in plain floats (a row is mapped millions of times in a fit)."""
    return 1.0 / (1.0 + math.exp(-min(max(z, -500.0), 500.0)))


def log_odds(p: float | np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """log(p / (1 - p)), p clipped to [eps, 1 - eps] so that 0 and 1 stay finite."""
    q = np.clip(np.asarray(p, dtype=float), eps, 1 - eps)
    return np.log(q / (1 - q))


def _log_odds_one(p: float, eps: float = 1e-6) -> float:
    """`log_odds` of one number, in plain floats."""
    q = min(max(p, eps), 1 - eps)
    return math.log(q / (1 - q))


def feature_value(key: str, answers: dict[str, float], evidence_chars: int | None) -> float | None:
    """One input of a map of the answers: the log-odds of a question's P(yes) (`key` is the
    question's key), the log of the evidence's length in characters (`EVIDENCE_CHARS`), or the
    product of two of these ("true*evidence_chars": how much a yes weighs, by the passage's
    length); None when the row lacks it.

    >>> round(feature_value("true*evidence_chars", {"true": 0.5}, 100), 6), feature_value(EVIDENCE_CHARS, {}, None)
    (0.0, None)
    """
    value = answers.get(key)  # a question's P(yes): the common case, first (a fit reads millions)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return _log_odds_one(float(value))
    if PRODUCT in key:
        product = 1.0
        for part in key.split(PRODUCT):
            factor = feature_value(part, answers, evidence_chars)
            if factor is None:
                return None
            product *= factor
        return product
    if key == EVIDENCE_CHARS:
        return math.log(max(evidence_chars, 1)) if isinstance(evidence_chars, int) else None
    return None


def said_no_to_all(answers: object) -> bool:
    """Whether the model said no (P(yes) < 1/2) to every yes/no question it was asked."""
    return isinstance(answers, dict) and bool(answers) and all(
        isinstance(v, (int, float)) and v < 0.5 for v in answers.values())


def no_count(answers: Iterable[object]) -> tuple[int, int]:
    """How many of the rows with yes/no answers said no to every question, and how many rows have
    answers."""
    answered = [a for a in answers if isinstance(a, dict) and a]
    return sum(said_no_to_all(a) for a in answered), len(answered)


# A fit scores the same rows with many maps of the same inputs: within `remembered_features`, the
# inputs of one answers dict are worked out once. Keyed by the dict's id, kept beside it, so that no
# other dict can take that id while the entry lives.
_REMEMBERED: ContextVar[dict[tuple, tuple[dict, list[float] | None]] | None] = ContextVar(
    "citeaudit_remembered_features", default=None)


@contextmanager
def remembered_features() -> Iterator[None]:
    """Within it, `feature_values` of the same answers dict (the very object), evidence length and
    keys is computed once and looked up after: for fits, which score each row thousands of times.
    The answers dicts must not change inside. Nested, the outer one is used; other threads and code
    outside compute as always."""
    if _REMEMBERED.get() is not None:
        yield
        return
    token = _REMEMBERED.set({})
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


def feature_values(keys: Iterable[str], answers: object, evidence_chars: int | None) -> list[float] | None:
    """`feature_value` of each key, or None when any is missing (the row cannot be mapped). The
    list returned is not to be changed (`remembered_features` may hand it out again)."""
    if not isinstance(answers, dict):
        return None
    remembered = _REMEMBERED.get()
    if remembered is None:
        return _feature_values(keys, answers, evidence_chars)
    key = (id(answers), evidence_chars, tuple(keys))
    hit = remembered.get(key)
    if hit is None or hit[0] is not answers:
        hit = remembered[key] = (answers, _feature_values(keys, answers, evidence_chars))
    return hit[1]


def _feature_values(keys: Iterable[str], answers: dict, evidence_chars: int | None) -> list[float] | None:
    values = []
    for key in keys:
        value = feature_value(key, answers, evidence_chars)
        if value is None:
            return None
        values.append(float(value))
    return values


@dataclass(frozen=True)
class Calibration:
    """A fitted map to P(pass), and the threshold it recommends.

    The map is a logistic curve (Platt scaling) in the log-odds of what the judge answered: of
    P(supports), with slope `b`, when `weights` is empty (inputs `supports`); otherwise of each
    yes/no question's P(yes) (`Judgement.answers`), with the weight of its key in `weights`
    (inputs `answers`), and in inputs `answers+length` also of the evidence's length and its
    products with answers (`feature_value`; `b` is then 0; ridge penalty `l2`, chosen by
    `choose_l2`); a second map of the answers may name a failure (`name_weights`, `p_contradicted`).
    `p_pass` applies to answers read from log-probabilities; `threshold` is on the routing score
    max(P(pass), 1 − P(pass)) (None when no threshold reached `target` on the fitted set: nothing
    the model says should stand). `cross_validated` holds the
    held-out figures of the same procedure (`cross_validate`).
    """

    model: str
    strategy: str
    a: float
    b: float
    threshold: float | None
    target: float = DEFAULT_TARGET
    method: str = "platt"
    fitted_on: dict = field(default_factory=dict)
    cross_validated: dict = field(default_factory=dict)
    when: str = ""
    weights: dict[str, float] = field(default_factory=dict)
    l2: float = 0.0  # the ridge penalty the weights were fitted with (`choose_l2`)
    # P(contradicted | the citation fails), from the answers' log-odds like P(pass) (empty: the judge's
    # larger failing relation names a failure)
    name_a: float = 0.0
    name_weights: dict[str, float] = field(default_factory=dict)
    # the largest share of citations answered no to every question among the fitted documents of at
    # least COVER_MIN judged citations (None: not measured, so no document is found uncovered)
    no_share_max: float | None = None

    def uncovered(self, answers: Iterable[object]) -> str | None:
        """Why this calibration does not cover a document whose judged citations gave these
        `answers`, or None when it does (or cannot tell: fewer than COVER_MIN rows with answers, or
        no `no_share_max`). A document is not covered when the model said no to every question for
        a larger share of its citations than for any fitted document, beyond sampling noise (the
        share's 95% Wilson lower bound is above `no_share_max`): on text it cannot read, a small
        model says no to everything, and the map would read that as failing citations."""
        said_no, count = no_count(answers)
        if self.no_share_max is None or count < COVER_MIN:
            return None
        share = said_no / count
        at_least = wilson_lower_bound(said_no, count)  # beyond what sampling alone explains
        if at_least <= self.no_share_max:
            return None
        of = f" of {self.model} / {self.strategy}" if self.model else ""
        return (f"the model said no to every question for {share:.1%} of this document's {count} judged citations "
                f"(at least {at_least:.1%} at 95% confidence), more than for any document the calibration{of} was "
                f"fitted on (at most {self.no_share_max:.1%}), so every model verdict goes to review")

    @property
    def profile(self) -> str | None:
        """The profile's name when this calibration is one (fitted on a user's reviews,
        `calibrate.profile`), else None."""
        name = self.fitted_on.get("profile")
        return name if isinstance(name, str) and name else None

    @property
    def inputs(self) -> str:
        """What the map reads: `supports` (P(supports)), `answers` (each question's P(yes)) or
        `answers+length` (those and the evidence's length, `EVIDENCE_CHARS`)."""
        if not self.weights:
            return SUPPORTS
        return ANSWERS_LENGTH if any(EVIDENCE_CHARS in key for key in self.weights) else ANSWERS

    def maps(self, answers: object, evidence_chars: int | None = None) -> bool:
        """Whether a row with these yes/no `answers` (or None) and evidence of `evidence_chars`
        characters can be mapped: always for a map of P(supports); for a map of the answers, when
        every input it weighs is there (`feature_values`)."""
        return not self.weights or feature_values(self.weights, answers, evidence_chars) is not None

    def p_contradicted(self, answers: object) -> float | None:
        """P(contradicted | the citation fails) from the answers, when this calibration names
        failures (`name_weights`) and the row answered its questions; else None."""
        values = feature_values(self.name_weights, answers, None) if self.name_weights else None
        if values is None:
            return None
        z = self.name_a + sum(w * x for w, x in zip(self.name_weights.values(), values))
        return _sigmoid_one(z)

    def p_pass(self, p_supports: float, answers: dict[str, float] | None = None,
               evidence_chars: int | None = None) -> float:
        """P(the citation passes): a logistic curve in the log-odds of P(supports), or in the
        inputs of a map of the answers (`feature_value`; `maps(answers, evidence_chars)` must
        hold: else ValueError)."""
        p = self.p_pass_if_mapped(p_supports, answers, evidence_chars)
        if p is None:
            raise ValueError(f"this calibration reads {sorted(self.weights)}; the row has answers to "
                             f"{sorted(answers or {})} and evidence of {evidence_chars} characters")
        return p

    def p_pass_if_mapped(self, p_supports: float, answers: object = None,
                         evidence_chars: int | None = None) -> float | None:
        """`p_pass`, or None where `maps(answers, evidence_chars)` does not hold (each input read
        once: a fit scores every row millions of times)."""
        if not self.weights:
            return _sigmoid_one(self.a + self.b * _log_odds_one(float(p_supports)))
        values = feature_values(self.weights, answers, evidence_chars)
        if values is None:
            return None
        z = self.a + sum(w * x for w, x in zip(self.weights.values(), values))
        return _sigmoid_one(z)

    @property
    def route_threshold(self) -> float:
        """The threshold `audit` uses: the recommended one, or 1.0 (all to review) when none was found."""
        return self.threshold if self.threshold is not None else 1.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "calibration", fix: str = "") -> Calibration:
        """A calibration file, validated field by field (`CalibrationFile`); anything else is an
        `InputError` naming the file, the field and the fix (`fix`, else how to recreate a calibration)."""
        fix = fix or "recreate it with `citeaudit calibrate` (or delete it: the model then routes uncalibrated)"
        try:
            data = strictjson.loads(text)
        except ValueError as exc:
            raise InputError(f"{where} is not a calibration file: not JSON ({exc}); {fix}.") from None
        try:
            checked = CalibrationFile.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"`{'.'.join(map(str, e['loc'])) or 'the file'}`: {e['msg']}" for e in exc.errors())
            raise InputError(f"{where} is not a usable calibration file ({problems}); {fix}.") from None
        return cls(**checked.model_dump())


FiniteFloat = Annotated[float, Strict(), AllowInfNan(False)]


class CalibrationFile(BaseModel):
    """What a calibration file must hold before anything routes with it: finite weights, a
    threshold above 0.5 and at most 1 (or null: nothing stands), a target in the same range."""

    model_config = ConfigDict(extra="forbid")

    model: StrictStr
    strategy: StrictStr
    a: FiniteFloat
    b: Annotated[FiniteFloat, Field(ge=0.0)]
    threshold: Annotated[FiniteFloat, Field(gt=0.5, le=1.0)] | None
    target: Annotated[FiniteFloat, Field(gt=0.5, le=1.0)] = DEFAULT_TARGET
    method: StrictStr = "platt"
    fitted_on: dict = {}
    cross_validated: dict = {}
    when: StrictStr = ""
    weights: dict[StrictStr, FiniteFloat] = {}
    l2: Annotated[FiniteFloat, Field(ge=0.0)] = 0.0
    name_a: FiniteFloat = 0.0
    name_weights: dict[StrictStr, FiniteFloat] = {}
    no_share_max: Annotated[FiniteFloat, Field(ge=0.0, le=1.0)] | None = None



def calibration_path(model: str, strategy: str, directory: Path) -> Path:
    """`<directory>/calibration/<model>.<strategy>.json` (unsafe characters of the model name
    replaced); `directory` is a cache folder (the shipped `cache/`, or the user cache)."""
    from citeaudit.judge.cache import recording_name

    stem = recording_name(model).removesuffix(".jsonl")
    return directory / "calibration" / f"{stem}.{strategy}.json"


def load_calibration(model: str, strategy: str, directory: Path) -> Calibration | None:
    """The calibration of a model and strategy saved in the cache folder `directory`, or None when
    there is none."""
    path = calibration_path(model, strategy, directory)
    if not path.is_file():
        return None
    try:
        text = read_bounded(path, 1_000_000, "calibration file").decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a calibration file: not UTF-8 text; recreate it with "
                         "`citeaudit calibrate`.") from None
    calibration = Calibration.from_json(text, str(path))
    if (calibration.model, calibration.strategy) != (model, str(strategy)):
        raise InputError(f"{path} holds the calibration of {calibration.model} / {calibration.strategy}, not "
                         f"{model} / {strategy}; recreate it with `citeaudit calibrate`.")
    return calibration


def calibration_folder(model: str, strategy: str, folders: Iterable[Path]) -> Path | None:
    """The first of `folders` that holds a calibration of this model and strategy (a user's own
    before the shipped one), or None."""
    return next((folder for folder in folders if calibration_path(model, strategy, folder).is_file()), None)


def find_calibration(model: str, strategy: str, folders: Iterable[Path]) -> Calibration | None:
    """The calibration of a model and strategy in the first of `folders` that holds one
    (`calibration_folder`), or None."""
    folder = calibration_folder(model, strategy, folders)
    return None if folder is None else load_calibration(model, strategy, folder)


def save_calibration(calibration: Calibration, directory: Path) -> Path:
    """Write the calibration atomically into the cache folder `directory`, beside the recordings;
    returns its path."""
    path = calibration_path(calibration.model, calibration.strategy, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(calibration.to_json(), encoding="utf-8")
    temporary.replace(path)
    return path


def profile_path(name: str, folder: Path) -> Path:
    """`<user cache>/profiles/<name>.json`."""
    return folder / "profiles" / f"{check_profile_name(name)}.json"


def profile_names(folder: Path) -> list[str]:
    """The profiles saved in a cache folder, by name."""
    return sorted(p.stem for p in (folder / "profiles").glob("*.json")) if (folder / "profiles").is_dir() else []


def save_profile_file(name: str, calibration: Calibration, folder: Path) -> Path:
    """Write a profile atomically to `profile_path` (`calibrate.profile.save_profile` checks it first)."""
    path = profile_path(name, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(calibration.to_json(), encoding="utf-8")
    temporary.replace(path)
    return path


def load_profile(name: str, folder: Path, model: str, strategy: str) -> Calibration:
    """Profile `name` of the user cache `folder`, checked to be one of this model and strategy; a
    missing or mismatched one is an `InputError` naming the folder and the fix."""
    path = profile_path(name, folder)
    fix = ("fit it with `citeaudit calibrate --reviews STORE --source S --citations C --profile "
           f"{name}`, or leave out --profile (and unset CITEAUDIT_PROFILE) to route with the model's calibration")
    if not path.is_file():
        known = profile_names(folder)
        there = f"profiles there: {', '.join(known)}" if known else "it holds none"
        raise InputError(f"no profile {name!r} in {path.parent} ({there}): {fix}.")
    try:
        text = read_bounded(path, 1_000_000, "profile file").decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a profile: not UTF-8 text; {fix}.") from None
    profile = Calibration.from_json(text, str(path), fix)
    if (profile.model, profile.strategy) != (model, str(strategy)):
        raise InputError(f"profile {name!r} ({path}) was fitted for {profile.model} / {profile.strategy}, not "
                         f"{model} / {strategy}: give that --model and --strategy, or {fix}.")
    return profile


def fit_command(model: str, strategy: str) -> str:
    """The command that fits a calibration for this model and strategy: in a checkout, for the shipped
    model, the Makefile's target (its labelled sets); else `citeaudit judge-setup`, which answers from
    the recordings what they hold and asks the endpoint the rest."""
    if model == config.DEFAULT_MODEL and config.in_checkout():
        return "make calibrate-qwen"
    return (f"citeaudit judge-setup --model {model} --strategy {strategy} (records the labelled sets with "
            "the endpoint of OPENAI_BASE_URL, then fits and saves the calibration)")


@dataclass(frozen=True)
class Routing:
    """What routes a judged table: the threshold in force, the calibration (or None), and for whom.

    `given` is True when the threshold was set explicitly (an argument, `--threshold`, or
    `CITEAUDIT_THRESHOLD`) rather than taken from the calibration or the default. `spot_check` is
    the share of standing verdicts drawn for review (`decide.spotcheck`).
    """

    threshold: float
    calibration: Calibration | None = None
    model: str = ""
    strategy: str = ""
    given: bool = False
    spot_check: float = DEFAULT_SPOT_CHECK

    @classmethod
    def resolve(cls, threshold: float | None, calibration: Calibration | None, model: str = "",
                strategy: str = "", spot_check: float = DEFAULT_SPOT_CHECK) -> Routing:
        """The threshold given, else the calibration's recommended one, else `DEFAULT_THRESHOLD`."""
        if threshold is not None:
            return cls(float(threshold), calibration, model, str(strategy), True, spot_check)
        if calibration is not None:
            return cls(calibration.route_threshold, calibration, model, str(strategy), False, spot_check)
        return cls(DEFAULT_THRESHOLD, None, model, str(strategy), False, spot_check)

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None

    @property
    def promise(self) -> float | None:
        """The share of standing verdicts the calibration promises are right (its `target`), or
        None: no calibration (the model's own probabilities promise nothing), or one that found
        no threshold reaching its target (nothing of the model's stands)."""
        if self.calibration is None or self.calibration.threshold is None:
            return None
        return self.calibration.target

    def note(self) -> str:
        """One line: the threshold in force and where it comes from.

        >>> print(Routing.resolve(None, None, "gpt-4o-mini", "panel").note())  # doctest: +ELLIPSIS
        threshold 0.80 (default): no calibration for gpt-4o-mini / panel, scores are the model's own ...
        """
        if self.calibration is None:
            origin = "given" if self.given else "default"
            who = f"{self.model} / {self.strategy}" if self.model else "this judge"
            return (f"threshold {self.threshold:.2f} ({origin}): no calibration for {who}, scores are the "
                    f"model's own probabilities; fit one with {fit_command(self.model, self.strategy)}")
        where = f"{self.calibration.model} / {self.calibration.strategy}"
        if self.calibration.profile:
            where = (f"profile {self.calibration.profile} (fitted on {self.calibration.fitted_on.get('reviews', '?')} "
                     f"of your reviews) of {where}")
        if self.given:
            return f"threshold {self.threshold:.2f} (given), scores from the calibration of {where}"
        if self.calibration.threshold is None:
            return (f"threshold 1.00: the calibration of {where} found no threshold reaching "
                    f"{self.calibration.target:.0%}, so every model verdict goes to review")
        return f"threshold {self.threshold:.2f}, recommended by the calibration of {where}"

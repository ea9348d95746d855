"""One set of settings for every surface: `AuditOptions`, read once from arguments and the environment.

The command line (one shared option decorator), `batch`, the library entry points and every
notebook's parameter cell build one `AuditOptions` and ask it for the judge (`judge()`, the one
factory) and for the routing (`routing()`: the threshold in force and the calibration). What is
not given comes from the environment (`settings/environment.py`, imported here as `config`, names every
variable), then the defaults.

    >>> AuditOptions.from_env(model="qwen", threshold=0.9).model
    'qwen2.5-coder-1.5b-instruct-q4_k_m'
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.decide.calibration import Calibration, Routing, check_profile_name, find_calibration, load_profile
from citeaudit.decide.spotcheck import check_rate
from citeaudit.errors import InputError
from citeaudit.settings import environment as config
from citeaudit.table import CacheMode, ContrastCheck, EvidenceMode, Strategy

if TYPE_CHECKING:
    from citeaudit.judge.cache import CallCache
    from citeaudit.judge.judge import Judge


def model_name(value: str) -> str:
    """A judge model name; the local model keys (`qwen`, `smollm2`) stand for their full names."""
    from citeaudit.judge.localmodel import MODELS

    return MODELS[value].name if value in MODELS else value


def check_threshold(value: float, where: str = "threshold") -> float:
    """A threshold from 0 to 1 (NaN and infinities are refused with the fix)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{where} {value!r} is not a number from 0 to 1; give one like 0.84, or leave it unset "
                         "to use the calibration's recommended threshold.")
    return float(value)


@dataclass(frozen=True)
class JudgeEndpoint:
    """The judge's endpoint as the client resolved it (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
    `CITEAUDIT_GRAMMAR`): what a Dask worker's judge calls, whatever the worker's environment
    (`AuditOptions.endpoint`; the key travels to the workers, never into a repr)."""

    base_url: str | None
    api_key: str | None = field(repr=False)
    grammar: bool

    def overrides(self) -> dict[str, object]:
        """The `Judge` arguments that call this endpoint (`AuditOptions.judge(**overrides)`)."""
        return {"base_url": self.base_url, "api_key": self.api_key, "grammar": self.grammar}


@dataclass(frozen=True)
class AuditOptions:
    """How to judge and route: model, strategy, cache, threshold, calibration, concurrency, timeout.

    `threshold` None means the model's calibrated threshold (the calibration's recommended one),
    else `config.DEFAULT_THRESHOLD` when the model has no calibration, which every surface then
    says (`Routing.note`). `use_calibration` False routes on the model's own probabilities.
    `cache_dir` None is `config.cache_dir()`: the shipped recordings and calibrations, read-only
    inputs. `user_dir` None is `config.user_cache_dir(cache_dir)`: where new answers, the store and
    calibrations of your own go (`cache/local/`, ignored by git), read before the shipped ones.
    `shipped` True records into the shipped folder itself (the project's maintenance recordings,
    `citeaudit record --shipped`). `spot_check` is the share of standing verdicts drawn for review
    (`decide.spotcheck`; `CITEAUDIT_SPOT_CHECK`). `contrast` names the contrast checks between claim
    and evidence that run (`decide.contrast`; `CITEAUDIT_CONTRAST_CHECKS`; `()` or "none": none; a
    blank string is refused). `profile` names a profile of the user cache (a calibration fitted on
    your reviews, `calibrate.profile`; `CITEAUDIT_PROFILE`) that routes instead of the model's
    calibration. `evidence` says what the judge reads of a long cited section (`pipeline.focus`;
    `CITEAUDIT_EVIDENCE`): all of it (`section`, the default) or the passage that matters
    (`focused`). Picklable, so Dask workers get the same settings (`pinned()`).
    """

    model: str = config.DEFAULT_MODEL
    strategy: Strategy = config.DEFAULT_STRATEGY
    cache_mode: CacheMode = CacheMode.REPLAY
    cache_dir: Path | None = None
    threshold: float | None = None
    use_calibration: bool = True
    concurrency: int | None = None  # None: CITEAUDIT_CONCURRENCY, else config.default_concurrency(model)
    timeout: float = config.DEFAULT_TIMEOUT
    retries: int = config.DEFAULT_RETRIES
    user_dir: Path | None = None
    shipped: bool = False
    spot_check: float = config.DEFAULT_SPOT_CHECK
    contrast: tuple[ContrastCheck, ...] = config.DEFAULT_CONTRAST_CHECKS
    profile: str | None = None
    evidence: EvidenceMode = EvidenceMode.SECTION
    # the calibration, once looked up (or given: `with_calibration`, `for_judge`); `with_` forgets it
    _calibration: list = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", model_name(self.model))
        object.__setattr__(self, "strategy", config.parse_strategy(self.strategy))
        object.__setattr__(self, "cache_mode", config.parse_cache_mode(self.cache_mode))
        if self.threshold is not None:
            object.__setattr__(self, "threshold", check_threshold(self.threshold))
        object.__setattr__(self, "spot_check", check_rate(self.spot_check))
        object.__setattr__(self, "contrast", config.parse_contrast_checks(self.contrast, "contrast"))
        object.__setattr__(self, "evidence", config.parse_evidence_mode(self.evidence, "evidence"))
        if self.profile is not None:
            check_profile_name(self.profile)
        if self.concurrency is not None and not 1 <= self.concurrency <= config.MAX_CONCURRENCY:
            raise InputError(f"concurrency must be a whole number from 1 to {config.MAX_CONCURRENCY}, "
                             f"not {self.concurrency!r}")

    @classmethod
    def from_env(cls, *, model: str | None = None, strategy: str | None = None, cache_mode: str | None = None,
                 cache_dir: str | Path | None = None, threshold: float | None = None,
                 use_calibration: bool = True, concurrency: int | None = None,
                 shipped: bool = False, spot_check: float | None = None,
                 contrast: str | tuple | None = None, profile: str | None = None,
                 evidence: str | None = None) -> AuditOptions:
        """The settings given here (None: not given), else the environment's, else the defaults."""
        return cls(
            model=model or config.model(),
            strategy=config.parse_strategy(strategy) if strategy else config.strategy(),
            cache_mode=config.parse_cache_mode(cache_mode) if cache_mode else config.cache_mode(),
            cache_dir=Path(cache_dir) if cache_dir else config.cache_dir(),
            threshold=threshold if threshold is not None else config.threshold(),
            use_calibration=use_calibration,
            concurrency=concurrency,
            timeout=config.timeout(),
            retries=config.retries(),
            shipped=shipped,
            spot_check=spot_check if spot_check is not None else config.spot_check(),
            contrast=config.parse_contrast_checks(contrast) if contrast is not None else config.contrast_checks(),
            profile=profile or config.profile(),
            evidence=config.parse_evidence_mode(evidence) if evidence else config.evidence_mode(),
        )

    def with_(self, **changes: object) -> AuditOptions:
        """A copy with some settings changed (the calibration is looked up again)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def with_calibration(self, calibration: Calibration | None) -> AuditOptions:
        """A copy that routes by `calibration` instead of the saved one (None: by the model's own
        probabilities)."""
        copy = self.with_(use_calibration=calibration is not None)
        if calibration is not None:
            copy._calibration.append(calibration)
        return copy

    def for_judge(self, judge: Judge) -> AuditOptions:
        """These settings as `judge` runs them: unchanged when it is the judge they describe (same
        model, strategy and cache folders), else with its model and strategy, routed by the
        calibration saved for them in its cache folders (`find_calibration`)."""
        if (judge.model, str(judge.strategy), judge.cache.folders) == (self.model, str(self.strategy), self.folders):
            return self
        theirs = self.with_(model=judge.model, strategy=judge.strategy)
        if not self.use_calibration:
            return theirs
        return theirs.with_calibration(find_calibration(judge.model, judge.strategy, judge.cache.folders))

    def pinned(self) -> AuditOptions:
        """These settings with their cache folders as absolute paths and the concurrency resolved,
        read here once: what a Dask worker gets, so that it audits with the client's settings
        whatever its working directory or environment. A calibration already given is kept."""
        concurrency = self.concurrency or config.concurrency(default=config.default_concurrency(self.model))
        copy = self.with_(cache_dir=self.folder.resolve(), user_dir=self.user_folder.resolve(), concurrency=concurrency)
        copy._calibration.extend(self._calibration)
        return copy

    @property
    def folder(self) -> Path:
        """The shipped cache folder: its recordings and `calibration/` (read-only unless `shipped`)."""
        return self.cache_dir or config.cache_dir()

    @property
    def user_folder(self) -> Path:
        """The user cache: new recordings, the working store and calibrations of your own."""
        return self.user_dir or config.user_cache_dir(self.folder)

    @property
    def write_folder(self) -> Path:
        """Where new answers and fitted calibrations go: the user cache, or the shipped folder when `shipped`."""
        return self.folder if self.shipped else self.user_folder

    @property
    def folders(self) -> tuple[Path, ...]:
        """Where recordings and calibrations are looked for, first found first: the write folder,
        then (unless `shipped`) the shipped one."""
        return (self.folder,) if self.shipped else (self.user_folder, self.folder)

    def call_cache(self, *, hold: bool = False) -> CallCache:
        """The `CallCache` of these settings: writes `write_folder`, reads every one of `folders`."""
        from citeaudit.judge.cache import CallCache

        return CallCache(self.write_folder, mode=self.cache_mode, hold=hold, read_also=self.folders[1:])

    def judge(self, *, hold: bool = False, **overrides: object) -> Judge:
        """The judge these settings describe (the one factory of every surface); `overrides` go to
        `Judge` (e.g. `base_url` of a local server, or a `cache` of its own), `hold` to its `CallCache`."""
        from citeaudit.judge.judge import Judge

        self.check_probe()
        cache = overrides.pop("cache", None) or self.call_cache(hold=hold)
        settings: dict[str, object] = dict(model=self.model, strategy=self.strategy, cache=cache,
                                           timeout=self.timeout, max_retries=self.retries)
        settings.update(overrides)
        return Judge(**settings)  # type: ignore[arg-type]

    def check_probe(self) -> None:
        """For a strategy that reads the local model's hidden state (`probe`, `stacked`): the probe
        file it would read (the user cache's, else the shipped one) checked before anything is
        judged, so that a damaged one is an `InputError` naming it (exit 2), not a row error per
        citation. No file, or a model that is not local, stays a row error (the judge says why)."""
        from citeaudit.judge.localmodel import MODELS
        from citeaudit.judge.strategies import get_strategy

        if not get_strategy(str(self.strategy)).reads_hidden_states or self.model not in {
                m.name for m in MODELS.values()}:
            return
        from citeaudit.judge.hidden_states import ProbeWeights, probe_file

        path = probe_file(self.model, self.folders)
        if path is not None:
            ProbeWeights.read(path)

    def endpoint(self) -> JudgeEndpoint:
        """The judge's endpoint as this process's environment gives it, for a worker to call."""
        return JudgeEndpoint(config.base_url(), config.api_key(), config.use_grammar(self.model))

    def calibration(self) -> Calibration | None:
        """The profile named by `profile` (`profiles/` of the user cache; missing: `InputError`), else
        the saved calibration of this model and strategy (`calibration/` of the user cache, else of
        the shipped folder), or None."""
        if not self.use_calibration:
            return None
        if not self._calibration:
            self._calibration.append(
                load_profile(self.profile, self.user_folder, self.model, str(self.strategy)) if self.profile
                else find_calibration(self.model, self.strategy, self.folders))
        return self._calibration[0]

    def routing(self) -> Routing:
        """The threshold in force and the calibration that scores the rows (`Routing.resolve`)."""
        return Routing.resolve(self.threshold, self.calibration(), self.model, self.strategy, self.spot_check)

"""`AuditRun`: the judge, its call cache and the routing that one `AuditOptions` describes, built once.

The settings (`settings.options.AuditOptions`) are a plain description: values, checked. What is
built from them lives here, above the stages, so that the settings import no stage and every
stage takes the values it needs: the command line, `batch`, the library entry points, the
workflows, the tools and the notebooks make one `AuditRun` per run and ask it, never the options.

    >>> run = AuditRun(AuditOptions(threshold=0.9))
    >>> run.routing.threshold, run.routing.given
    (0.9, True)
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from citeaudit.decide.calibration import Calibration, Routing, find_calibration, load_profile
from citeaudit.judge.cache import CallCache
from citeaudit.judge.hidden_states import ProbeWeights, probe_file
from citeaudit.judge.judge import Judge
from citeaudit.judge.strategies import get_strategy
from citeaudit.settings import environment as config
from citeaudit.settings.options import AuditOptions

_SAVED: Any = object()  # `calibration` not given: the one saved for the model and strategy (or the profile)


class AuditRun:
    """One run's judge, call cache and routing, each built on first use and then kept.

    A *run*, not a factory: it is made once per audit, batch or command from the settings it runs
    with (`options`), and everything the run judges and routes by comes from it, so two parts of
    one run never build two judges or look the calibration up twice. `judge` is a judge the caller
    holds already (a worker's, one pointed at a local server): the run then runs as that judge does
    (its model, strategy and cache; the calibration saved for them in its cache folders, unless the
    settings route without one). `calibration` given (a `Calibration`, or None for none) replaces
    the saved one. `hold` goes to the call cache (`CallCache`: new calls held for the client), and
    `judge_arguments` to `Judge` (e.g. `base_url` of a local server, `grammar`, or a `cache` of its
    own).
    """

    def __init__(self, options: AuditOptions, *, judge: Judge | None = None,
                 calibration: Calibration | None = _SAVED, hold: bool = False, **judge_arguments: object) -> None:
        if judge is not None and (judge.model, str(judge.strategy), judge.cache.folders) != (
                options.model, str(options.strategy), options.folders):
            options = options.with_(model=judge.model, strategy=judge.strategy)
            if calibration is _SAVED and options.use_calibration:
                calibration = find_calibration(judge.model, judge.strategy, judge.cache.folders)
        if calibration is not _SAVED:
            options = options.with_(use_calibration=calibration is not None)
        self.options = options
        self._given_judge = judge
        self._given_calibration = calibration
        self._hold = hold
        self._judge_arguments = judge_arguments

    def __repr__(self) -> str:
        return f"AuditRun({self.options!r})"

    @cached_property
    def cache(self) -> CallCache:
        """The run's call cache: the judge's own when one was given, else one that writes the
        settings' `write_folder` and reads every one of their `folders`."""
        if self._given_judge is not None:
            return self._given_judge.cache
        if "cache" in self._judge_arguments:
            return self._judge_arguments["cache"]  # type: ignore[return-value]
        o = self.options
        return CallCache(o.write_folder, mode=o.cache_mode, hold=self._hold, read_also=o.folders[1:])

    @cached_property
    def judge(self) -> Judge:
        """The run's judge: the one given, else the one the settings describe (its endpoint from the
        environment unless `judge_arguments` name it), its probe file checked first (`check_probe`)."""
        if self._given_judge is not None:
            return self._given_judge
        self.check_probe()
        o = self.options
        settings: dict[str, object] = dict(model=o.model, strategy=o.strategy, timeout=o.timeout,
                                           max_retries=o.retries, models=config.models_dir(),
                                           **o.endpoint().overrides())
        settings.update(self._judge_arguments)
        settings["cache"] = self.cache
        return Judge(**settings)  # type: ignore[arg-type]

    def check_probe(self) -> None:
        """For a strategy that reads the local model's hidden state (`probe`, `stacked`): the probe
        file it would read (the user cache's, else the shipped one) checked before anything is
        judged, so that a damaged one is an `InputError` naming it (exit 2), not a row error per
        citation. No file, or a model that is not local, stays a row error (the judge says why)."""
        o = self.options
        if not get_strategy(str(o.strategy)).reads_hidden_states or o.model not in config.LOCAL_MODELS.values():
            return
        path = probe_file(o.model, o.folders)
        if path is not None:
            ProbeWeights.read(path, o.folder)

    @cached_property
    def calibration(self) -> Calibration | None:
        """The calibration given, else the profile named by `profile` (`profiles/` of the user cache;
        missing: `InputError`), else the saved calibration of this model and strategy
        (`calibration/` of the user cache, else of the shipped folder), or None."""
        o = self.options
        if self._given_calibration is not _SAVED:
            return self._given_calibration
        if not o.use_calibration:
            return None
        if o.profile:
            return load_profile(o.profile, o.user_folder, o.model, str(o.strategy))
        return find_calibration(o.model, o.strategy, o.folders)

    @cached_property
    def routing(self) -> Routing:
        """The threshold in force and the calibration that scores the rows (`Routing.resolve`)."""
        o = self.options
        return Routing.resolve(o.threshold, self.calibration, o.model, o.strategy, o.spot_check)

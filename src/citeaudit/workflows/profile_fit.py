"""A profile from a review store: audit the reviewed inputs as they were audited, then fit.

`profile_from_reviews` is what `citeaudit calibrate --reviews STORE --source S --citations C ...
--profile NAME` and notebook 05 run: each (source, citations) pair is audited with the settings
(the judge's recorded answers in replay mode; the model's calibration, never a profile, so the
strata are those the reviews were selected under), the store's reviews are applied to the
citations they were made on, and `calibrate.profile.fit_profile` fits the profile.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from citeaudit import table as C
from citeaudit.calibrate.profile import PROFILE_FOLDS, PROFILE_REPEATS, ProfileFit, fit_profile
from citeaudit.decide.calibration import Calibration
from citeaudit.decide.reviews import Review, load_reviews
from citeaudit.errors import InputError
from citeaudit.pipeline.audit import Audit, audit_quotes
from citeaudit.pipeline.run import AuditRun
from citeaudit.settings.options import AuditOptions


def _prints(audit: Audit) -> set[str]:
    return {p for p in audit.table[C.FINGERPRINT] if isinstance(p, str)}


def reviewed_audits(pairs: Sequence[tuple[str | Path, str | Path]], reviews: Iterable[Review] | str | Path,
                    options: AuditOptions | None = None) -> tuple[dict[str, Audit], Calibration | None]:
    """Each (source, citations) pair audited with `options` without their profile (replay mode
    asks no model), with the reviews made on its citations applied, keyed by the citations file;
    and the calibration they were routed by.

    A review store is keyed by citation id, and two citation files may share ids: a review goes
    to the file one of whose citations it fingerprints, and a review that fingerprints no citation
    of any file (the claim or the evidence changed since) to the files holding its id, where it
    shows as stale."""
    if not pairs:
        raise InputError("give the reviewed inputs: --source and --citations, one pair per citation file")
    base = (options or AuditOptions.from_env()).with_(profile=None)
    store = list(load_reviews(reviews) if isinstance(reviews, (str, Path)) else reviews)
    if not store:
        raise InputError(f"{reviews} holds no review: review waiting citations and spot checks first "
                         "(`citeaudit review`, or notebook 05's queue)")
    judge = AuditRun(base).judge
    try:
        audits = {}
        for source, citations in pairs:
            key = str(citations)
            if key in audits:
                raise InputError(f"{citations} is given twice")
            audits[key] = audit_quotes(str(source), str(citations), options=base, judge=judge)
    finally:
        judge.cache.close()
    everywhere = set().union(*(_prints(a) for a in audits.values()))
    applied = {}
    for key, audit in audits.items():
        prints, ids = _prints(audit), set(map(str, audit.table[C.ID]))
        mine = [r for r in store
                if r.fingerprint in prints or (r.citation_id in ids and r.fingerprint not in everywhere)]
        applied[key] = audit.with_reviews(mine)
    calibrations = {id(a.calibration): a.calibration for a in applied.values()}
    return applied, next(iter(calibrations.values()), None)


def profile_from_reviews(pairs: Sequence[tuple[str | Path, str | Path]], reviews: Iterable[Review] | str | Path,
                         name: str, options: AuditOptions | None = None, target: float | None = None,
                         folds: int = PROFILE_FOLDS, repeats: int = PROFILE_REPEATS) -> ProfileFit:
    """Fit profile `name` on the reviews of the audited pairs (`reviewed_audits`, `fit_profile`);
    nothing is saved (`calibrate.profile.save_profile`, in `options.write_folder`)."""
    audits, base = reviewed_audits(pairs, reviews, options)
    tables: dict[str, pd.DataFrame] = {key: audit.table for key, audit in audits.items()}
    return fit_profile(tables, base, name, target, folds, repeats)

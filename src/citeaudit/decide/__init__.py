"""Steps 3 and 4: routing on the calibrated score (`routing`, `calibration`), human reviews bound by a
fingerprint (`reviews`, `fingerprints`), and each answer's ACCEPT / REVIEW / REJECT (`decision`)."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.decide.agreements import Agreement as Agreement
    from citeaudit.decide.agreements import SpotChecks as SpotChecks
    from citeaudit.decide.agreements import agreement as agreement
    from citeaudit.decide.agreements import precision_warning as precision_warning
    from citeaudit.decide.agreements import wilson_interval as wilson_interval
    from citeaudit.decide.batch_review import BatchOutcome as BatchOutcome
    from citeaudit.decide.batch_review import review_batch as review_batch
    from citeaudit.decide.calibration import DEFAULT_TARGET as DEFAULT_TARGET
    from citeaudit.decide.calibration import Calibration as Calibration
    from citeaudit.decide.calibration import Routing as Routing
    from citeaudit.decide.calibration import load_calibration as load_calibration
    from citeaudit.decide.calibration import load_profile as load_profile
    from citeaudit.decide.calibration import save_calibration as save_calibration
    from citeaudit.decide.contrast import check_contrast as check_contrast
    from citeaudit.decide.contrast import contrast_findings as contrast_findings
    from citeaudit.decide.decision import Decision as Decision
    from citeaudit.decide.decision import apply_reviews as apply_reviews
    from citeaudit.decide.decision import decide as decide_answer  # noqa: F401 (public under this name: _HOME)
    from citeaudit.decide.decision import row_state as row_state
    from citeaudit.decide.decision import settle as settle
    from citeaudit.decide.decision import why_it_waits as why_it_waits
    from citeaudit.decide.fingerprints import fingerprint as fingerprint
    from citeaudit.decide.reviews import Review as Review
    from citeaudit.decide.reviews import ReviewCommand as ReviewCommand
    from citeaudit.decide.reviews import bound_review as bound_review
    from citeaudit.decide.reviews import load_reviews as load_reviews
    from citeaudit.decide.reviews import record_review as record_review
    from citeaudit.decide.reviews import review_row as review_row
    from citeaudit.decide.reviews import review_store_path as review_store_path
    from citeaudit.decide.reviews import row_fingerprint as row_fingerprint
    from citeaudit.decide.routing import blocked_by as blocked_by
    from citeaudit.decide.routing import flags_of as flags_of
    from citeaudit.decide.routing import route as route
    from citeaudit.decide.spotcheck import is_spot_check as is_spot_check
    from citeaudit.decide.spotcheck import open_spot_checks as open_spot_checks
    from citeaudit.decide.spotcheck import spot_draw as spot_draw

_HOME: Home = {
    "DEFAULT_TARGET": "citeaudit.decide.calibration",
    "Agreement": "citeaudit.decide.agreements",
    "BatchOutcome": "citeaudit.decide.batch_review",
    "Calibration": "citeaudit.decide.calibration",
    "Decision": "citeaudit.decide.decision",
    "Review": "citeaudit.decide.reviews",
    "ReviewCommand": "citeaudit.decide.reviews",
    "Routing": "citeaudit.decide.calibration",
    "SpotChecks": "citeaudit.decide.agreements",
    "agreement": "citeaudit.decide.agreements",
    "apply_reviews": "citeaudit.decide.decision",
    "blocked_by": "citeaudit.decide.routing",
    "bound_review": "citeaudit.decide.reviews",
    "check_contrast": "citeaudit.decide.contrast",
    "contrast_findings": "citeaudit.decide.contrast",
    "decide_answer": ("citeaudit.decide.decision", "decide"),
    "fingerprint": "citeaudit.decide.fingerprints",
    "flags_of": "citeaudit.decide.routing",
    "is_spot_check": "citeaudit.decide.spotcheck",
    "load_calibration": "citeaudit.decide.calibration",
    "load_profile": "citeaudit.decide.calibration",
    "load_reviews": "citeaudit.decide.reviews",
    "open_spot_checks": "citeaudit.decide.spotcheck",
    "precision_warning": "citeaudit.decide.agreements",
    "record_review": "citeaudit.decide.reviews",
    "review_batch": "citeaudit.decide.batch_review",
    "review_row": "citeaudit.decide.reviews",
    "review_store_path": "citeaudit.decide.reviews",
    "route": "citeaudit.decide.routing",
    "row_fingerprint": "citeaudit.decide.reviews",
    "row_state": "citeaudit.decide.decision",
    "save_calibration": "citeaudit.decide.calibration",
    "settle": "citeaudit.decide.decision",
    "spot_draw": "citeaudit.decide.spotcheck",
    "why_it_waits": "citeaudit.decide.decision",
    "wilson_interval": "citeaudit.decide.agreements",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

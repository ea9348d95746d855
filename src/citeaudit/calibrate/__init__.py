"""Fitting per-model calibrations on labelled sets (`fit`), profiles on reviews (`profile`), and the
figures around them: pure functions over stored results, no model calls. The workflows that record
answers in order to fit (`citeaudit.workflows`) sit above the pipeline."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.calibrate.crossval import cross_validate as cross_validate
    from citeaudit.calibrate.crossval import repeated_cross_validation as repeated_cross_validation
    from citeaudit.calibrate.crossval import strategy_metrics as strategy_metrics
    from citeaudit.calibrate.domains import domain_figures as domain_figures
    from citeaudit.calibrate.domains import domain_of as domain_of
    from citeaudit.calibrate.domains import hold_out_sets as hold_out_sets
    from citeaudit.calibrate.domains import leave_one_domain_out as leave_one_domain_out
    from citeaudit.calibrate.domains import side_by_side as side_by_side
    from citeaudit.calibrate.domains import worst_domain_threshold as worst_domain_threshold
    from citeaudit.calibrate.fit import StrategyComparison as StrategyComparison
    from citeaudit.calibrate.fit import compare_strategies as compare_strategies
    from citeaudit.calibrate.fit import fit_calibration as fit_calibration
    from citeaudit.calibrate.maps import coverage_ceiling as coverage_ceiling
    from citeaudit.calibrate.maps import fit_map as fit_map
    from citeaudit.calibrate.profile import ProfileFit as ProfileFit
    from citeaudit.calibrate.profile import ProfileRefused as ProfileRefused
    from citeaudit.calibrate.profile import fit_profile as fit_profile
    from citeaudit.calibrate.profile import save_profile as save_profile
    from citeaudit.calibrate.public_sets import public_labelled_sets as public_labelled_sets
    from citeaudit.calibrate.scoring import advise as advise
    from citeaudit.calibrate.scoring import expected_calibration_error as expected_calibration_error
    from citeaudit.calibrate.scoring import judged_rows as judged_rows
    from citeaudit.calibrate.scoring import lowest_threshold as lowest_threshold
    from citeaudit.calibrate.scoring import pass_fail_right as pass_fail_right
    from citeaudit.calibrate.scoring import reliability as reliability
    from citeaudit.calibrate.scoring import threshold_table as threshold_table

_HOME: Home = {
    "ProfileFit": "citeaudit.calibrate.profile",
    "ProfileRefused": "citeaudit.calibrate.profile",
    "StrategyComparison": "citeaudit.calibrate.fit",
    "advise": "citeaudit.calibrate.scoring",
    "compare_strategies": "citeaudit.calibrate.fit",
    "coverage_ceiling": "citeaudit.calibrate.maps",
    "cross_validate": "citeaudit.calibrate.crossval",
    "domain_figures": "citeaudit.calibrate.domains",
    "domain_of": "citeaudit.calibrate.domains",
    "expected_calibration_error": "citeaudit.calibrate.scoring",
    "fit_calibration": "citeaudit.calibrate.fit",
    "fit_map": "citeaudit.calibrate.maps",
    "fit_profile": "citeaudit.calibrate.profile",
    "hold_out_sets": "citeaudit.calibrate.domains",
    "judged_rows": "citeaudit.calibrate.scoring",
    "leave_one_domain_out": "citeaudit.calibrate.domains",
    "lowest_threshold": "citeaudit.calibrate.scoring",
    "pass_fail_right": "citeaudit.calibrate.scoring",
    "public_labelled_sets": "citeaudit.calibrate.public_sets",
    "reliability": "citeaudit.calibrate.scoring",
    "repeated_cross_validation": "citeaudit.calibrate.crossval",
    "save_profile": "citeaudit.calibrate.profile",
    "side_by_side": "citeaudit.calibrate.domains",
    "strategy_metrics": "citeaudit.calibrate.crossval",
    "threshold_table": "citeaudit.calibrate.scoring",
    "worst_domain_threshold": "citeaudit.calibrate.domains",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

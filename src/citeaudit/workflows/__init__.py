"""Workflows that run audits to fit something: bringing your own judge (`judge_setup`: record the
labelled sets with another model, fit its calibration, compare it with the shipped one) and a
profile fitted on your reviews (`profile_fit`). They sit above `pipeline`, which they drive, and
below the surfaces; `calibrate` stays pure fitting over stored results."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.workflows.judge_setup import LABELLED_SETS as LABELLED_SETS
    from citeaudit.workflows.judge_setup import LabelledTables as LabelledTables
    from citeaudit.workflows.judge_setup import SetupPlan as SetupPlan
    from citeaudit.workflows.judge_setup import SetupResult as SetupResult
    from citeaudit.workflows.judge_setup import labelled_sets as labelled_sets
    from citeaudit.workflows.judge_setup import labelled_tables as labelled_tables
    from citeaudit.workflows.judge_setup import setup_judge as setup_judge
    from citeaudit.workflows.judge_setup import setup_plan as setup_plan
    from citeaudit.workflows.profile_fit import profile_from_reviews as profile_from_reviews

_HOME: Home = {
    "LABELLED_SETS": "citeaudit.workflows.judge_setup",
    "LabelledTables": "citeaudit.workflows.judge_setup",
    "SetupPlan": "citeaudit.workflows.judge_setup",
    "SetupResult": "citeaudit.workflows.judge_setup",
    "labelled_sets": "citeaudit.workflows.judge_setup",
    "labelled_tables": "citeaudit.workflows.judge_setup",
    "profile_from_reviews": "citeaudit.workflows.profile_fit",
    "setup_judge": "citeaudit.workflows.judge_setup",
    "setup_plan": "citeaudit.workflows.judge_setup",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

"""What people see: the command line (`cli`), tables and JSON Lines (`views`), the HTML report
(`report`) and dashboard (`dashboard`), notebook widgets (`widgets`) and figures (`plots`). Surfaces
import the pipeline; nothing in the pipeline imports a surface."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.surfaces.dashboard import answer_cards as answer_cards
    from citeaudit.surfaces.dashboard import citation_table as citation_table
    from citeaudit.surfaces.dashboard import decision_counts as decision_counts
    from citeaudit.surfaces.dashboard import failing_sources as failing_sources
    from citeaudit.surfaces.dashboard import render_dashboard as render_dashboard
    from citeaudit.surfaces.dashboard import score_histogram as score_histogram
    from citeaudit.surfaces.dashboard import verdict_counts as verdict_counts
    from citeaudit.surfaces.dashboard import write_dashboard as write_dashboard
    from citeaudit.surfaces.plots import plot_strategy_comparison as plot_strategy_comparison
    from citeaudit.surfaces.report import explain as explain
    from citeaudit.surfaces.report import render_html as render_html
    from citeaudit.surfaces.report import write_report as write_report
    from citeaudit.surfaces.views import answers_view as answers_view
    from citeaudit.surfaces.views import audit_view as audit_view
    from citeaudit.surfaces.views import contrast_html as contrast_html
    from citeaudit.surfaces.views import highlight_html as highlight_html
    from citeaudit.surfaces.views import how_to_record as how_to_record
    from citeaudit.surfaces.views import lines_view as lines_view
    from citeaudit.surfaces.views import quote_html as quote_html
    from citeaudit.surfaces.views import step1_view as step1_view
    from citeaudit.surfaces.views import step2_view as step2_view
    from citeaudit.surfaces.views import styled as styled
    from citeaudit.surfaces.views import word_diff as word_diff
    from citeaudit.surfaces.widgets import ReviewQueue as ReviewQueue
    from citeaudit.surfaces.widgets import ThresholdExplorer as ThresholdExplorer
    from citeaudit.surfaces.widgets import style_threshold_view as style_threshold_view
    from citeaudit.surfaces.widgets import threshold_view as threshold_view

_HOME: Home = {
    "ReviewQueue": "citeaudit.surfaces.widgets",
    "ThresholdExplorer": "citeaudit.surfaces.widgets",
    "answer_cards": "citeaudit.surfaces.dashboard",
    "answers_view": "citeaudit.surfaces.views",
    "audit_view": "citeaudit.surfaces.views",
    "citation_table": "citeaudit.surfaces.dashboard",
    "contrast_html": "citeaudit.surfaces.views",
    "decision_counts": "citeaudit.surfaces.dashboard",
    "explain": "citeaudit.surfaces.report",
    "failing_sources": "citeaudit.surfaces.dashboard",
    "highlight_html": "citeaudit.surfaces.views",
    "how_to_record": "citeaudit.surfaces.views",
    "lines_view": "citeaudit.surfaces.views",
    "plot_strategy_comparison": "citeaudit.surfaces.plots",
    "quote_html": "citeaudit.surfaces.views",
    "render_dashboard": "citeaudit.surfaces.dashboard",
    "render_html": "citeaudit.surfaces.report",
    "score_histogram": "citeaudit.surfaces.dashboard",
    "step1_view": "citeaudit.surfaces.views",
    "step2_view": "citeaudit.surfaces.views",
    "style_threshold_view": "citeaudit.surfaces.widgets",
    "styled": "citeaudit.surfaces.views",
    "threshold_view": "citeaudit.surfaces.widgets",
    "verdict_counts": "citeaudit.surfaces.dashboard",
    "word_diff": "citeaudit.surfaces.views",
    "write_dashboard": "citeaudit.surfaces.dashboard",
    "write_report": "citeaudit.surfaces.report",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

# %% [markdown]
# # Tuning the auto-accept threshold, and choosing how to ask the judge
#
# What decides an answer is whether each citation passes (verified) or fails (contradicted,
# unsupported, fabricated). So a verdict stands without a human when the judge is sure enough of
# pass or fail: its routing score max(P(supports), 1 - P(supports)), after a per-model calibration,
# reaches the threshold. This notebook compares the judge's strategies (`choice`: one A/B/C question;
# `examples`: that question after six worked examples; `yesno`: two yes/no questions; `panel`: those
# two and "does the passage contradict the claim?"; `panel+examples`: panel's three and examples' one) on
# the labelled sets, from the recorded answers, with figures that are cross-validated (each
# calibration fitted on the other folds, scored on the held-out one, over 20 fold assignments), then
# gives a slider over the default strategy. Moving the threshold re-routes stored results and never
# calls the model.

# %% tags=["parameters"]
# None: every bundled labelled set (workflows.LABELLED_SETS, the Makefile's QUOTE_SETS); else a list of
# (source, citations) pairs, paths from the project root
LABELLED = None
STRATEGIES = ["choice", "examples", "yesno", "panel", "panel+examples"]
WITH_PUBLIC = True  # fit every strategy but choice on the public TRAIN sets too, as the shipped calibrations are
TARGET = 0.95  # accuracy the verdicts that stand must reach
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge

# %% [markdown]
# The yes/no strategies are fitted, as `make calibrate-qwen` fits the shipped calibrations, on these
# sets and on the public TRAIN sets (SciFact, Climate-FEVER, Check-COVID) that `make public-sets`
# builds in `build/public/`; the cell below builds them when the public data is beside the checkout.
# `choice` has no recorded answers for them and is fitted on the project's sets.

# %%
import matplotlib.pyplot as plt
import pandas as pd

import citeaudit as ca
from citeaudit import calibrate, settings, surfaces, workflows

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, use_calibration=False)  # fitted below
# one table per set and strategy
labelled = workflows.labelled_tables(STRATEGIES, options, LABELLED, public=WITH_PUBLIC)
tables = labelled.tables
print(labelled.summary())

# %% [markdown]
# ## Strategies side by side
#
# Accuracy and balanced accuracy (the mean recall of verified, contradicted and unsupported; always
# answering one class scores 0.33) of the held-out verdicts; AUROC of P(supports) for the verified
# citations against the rest; and, at each fold's recommended threshold, the share of judged
# citations whose verdict stands (coverage) and how many of those are right on pass or fail
# (precision), for the first assignment of the citations to folds and as the mean over 20.
#
# Fitting five strategies this way takes about 30 s. A calibration saved for a strategy (the
# shipped one, or your own from `citeaudit calibrate`) that was fitted on exactly these citations
# with this target is used as it is: fitting it again would give it back, and its figures are
# then the very numbers `citeaudit calibrate` printed. The cell says which strategies were fitted
# here.

# %%
saved = [ca.AuditRun(options.with_(strategy=strategy, use_calibration=True, profile=None)).calibration
         for strategy in STRATEGIES]
comparison = calibrate.compare_strategies(tables, options.model, TARGET, saved=saved)
fitted_here = [s for s in STRATEGIES if s not in comparison.reused]
print("saved calibrations, fitted on these citations:", ", ".join(comparison.reused) or "none",
      "| fitted here:", ", ".join(fitted_here) or "none")
figures = comparison.figures()
figures.style.format({"accuracy": "{:.2f}", "balanced_accuracy": "{:.2f}", "auroc": "{:.2f}",
                      "threshold": lambda t: "-" if pd.isna(t) else f"{t:.2f}",
                      "coverage": "{:.0%}", "precision": lambda p: "-" if pd.isna(p) else f"{p:.0%}",
                      "coverage_mean": "{:.1%}", "precision_mean": "{:.1%}"})

# %% [markdown]
# Risk-coverage: as the threshold falls, more verdicts stand and fewer of them are right. Each
# curve is one strategy on its own calibrated score (fitted on the whole set, so these curves are
# in-sample; the table above is not); the star is the recommended threshold.

# %%
surfaces.plot_strategy_comparison(comparison)
plt.show()

# %% [markdown]
# ## Try it
#
# The slider re-routes the default strategy's table with its calibration (the last strategy
# compared, if the default is not among them). Red rows are wrong verdicts that would stand at that
# threshold.

# %%
best = str(settings.DEFAULT_STRATEGY) if str(settings.DEFAULT_STRATEGY) in tables else STRATEGIES[-1]
calibration = comparison.calibrations[best]
explorer = ca.ThresholdExplorer(tables[best], calibration.route_threshold, calibration)
print(f"strategy {best}, recommended threshold {calibration.route_threshold:.2f}")
explorer.widget()

# %% [markdown]
# ## The same, as static output
#
# Every threshold on a 0.05 grid: how many verdicts stand, how many of them are right, how many go
# to review and how many wrong ones would stand.

# %%
grid = explorer.grid
grid.style.format({"threshold": "{:.2f}", "auto_share": "{:.0%}", "auto_accuracy": "{:.0%}",
                   "model_share": "{:.0%}", "model_accuracy": "{:.0%}"}, na_rep="-")  # "-": none stands

# %%
fig = explorer.figure()
plt.show()

# %% [markdown]
# ## Wrong verdicts that would stand
#
# The slider above lists every labelled citation; here are only those whose verdict would stand
# and be wrong at the slider's threshold (the recommended one until you move it): what that
# threshold lets through without a human. Run the cell again after moving the slider.

# %%
view = explorer.view()
print(explorer.summary(view))
surfaces.style_threshold_view(explorer.wrong_standing(view))

# %% [markdown]
# ## Documents the calibration never saw
#
# The figures above are cross-validated over all the labelled sets pooled, so every held-out fold
# still comes from documents the map was fitted on. Here each domain is held out in turn (the
# project's own sets are one domain, each public set another), as `make calibrate-qwen` does: the
# map and threshold are fitted on the other domains only and scored on it, with the check that
# sends a document the map does not cover to review. First every strategy fitted on two domains or
# more, its pooled figures (the mean over the fold assignments, from the table above) beside its
# held-out ones over all domains, and the most verdicts one threshold chosen in hindsight on the
# held-out labels lets stand at the target (a ceiling, not an estimate: when it is below the
# coverage you need, no threshold gets there with this judge); then the slider's strategy domain
# by domain (`said_no_share`: citations answered no to every question). A domain whose standing
# verdicts fall below the target is what a new kind of document may look like.

# %%
from IPython.display import display

held_out = {strategy: held for strategy in STRATEGIES  # leave_one_domain_out's rows, per strategy
            if (held := labelled.held_out(strategy, TARGET)) is not None}
if not held_out:
    print("one domain only: nothing to hold out")
else:
    side_by_side = calibrate.side_by_side(figures, held_out, TARGET)  # `citeaudit calibrate`'s columns, as shares
    display(side_by_side.style.format("{:.1%}", na_rep="-"))
    if best in held_out:
        display(calibrate.domain_figures(held_out[best]).style.format(precision=2, na_rep="-"))

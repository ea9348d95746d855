# %% [markdown]
# # Bring your own judge
#
# Any OpenAI-compatible endpoint can judge, but a verdict should stand only when the judge has been
# measured: every model says "supports" with its own confidence, and a calibration fitted on
# labelled citations maps what it answers to the chance that a citation passes, and recommends the
# threshold at which the verdicts that stand are 95% right. This notebook sets up a judge of your
# own: it prints what recording the bundled labelled sets will cost before anything is asked,
# records them (a rerun asks only what is missing), fits and saves the model's calibration in your
# user cache (`cache/local/`, ignored by git), and sets it beside the shipped Qwen judge. As shipped
# it runs offline for the Qwen judge itself, from its recordings; for your model set `MODEL`,
# `CACHE_MODE = "record"` and, in the environment, `OPENAI_BASE_URL` (and `OPENAI_API_KEY`).
# The same from a shell: `citeaudit judge-setup --model NAME`.

# %% tags=["parameters"]
MODEL = "qwen"  # the judge to set up, as its endpoint names it ("qwen": the shipped local judge)
STRATEGY = None  # None: CITEAUDIT_STRATEGY, else the default (panel)
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only); "record" to ask
SETS = None  # None: every bundled labelled set (the Makefile's QUOTE_SETS); else [(source, citations), ...]
LIMIT = None  # None: every citation of each set; N: the first N (a quick trial)
TARGET = 0.95  # accuracy the verdicts that stand must reach
REPEATS = 20  # fold assignments of the repeated cross-validation

# %%
import matplotlib.pyplot as plt
import pandas as pd

import citeaudit as ca
from citeaudit import settings, surfaces, workflows

options = ca.AuditOptions.from_env(model=MODEL, strategy=STRATEGY, cache_mode=CACHE_MODE)
plan = workflows.setup_plan(options, workflows.labelled_sets(SETS, LIMIT))
print(plan.summary())

# %% [markdown]
# ## Record and calibrate
#
# The progress bar counts the calls still to ask (none when everything is recorded). The
# calibration is fitted by the code `citeaudit calibrate` runs (cross-validated figures, the map,
# the recommended threshold) and saved beside your recordings.

# %%
result = ca.setup_judge(options, SETS, LIMIT, TARGET, repeats=REPEATS, plan=plan)
print(f"{result.plan.to_do} calls asked, {result.plan.cached} reused, in {result.seconds:.0f} s.")
print(result.saved_note())

# %% [markdown]
# ## Beside the shipped Qwen judge
#
# Same strategy, same labelled sets: cross-validated accuracy, balanced accuracy (one class
# always: 0.33), AUROC of P(supports), the recommended threshold, and at the folds' thresholds the
# share of judged citations whose verdict stands (coverage) and how many of those are right
# (precision), first fold assignment and mean over the repeated ones.

# %%
figures = result.comparison.figures().rename_axis("judge")
figures.style.format({"accuracy": "{:.2f}", "balanced_accuracy": "{:.2f}", "auroc": "{:.2f}",
                      "threshold": lambda t: "-" if pd.isna(t) else f"{t:.2f}",
                      "coverage": "{:.0%}", "precision": lambda p: "-" if pd.isna(p) else f"{p:.0%}",
                      "coverage_mean": "{:.1%}", "precision_mean": "{:.1%}"}, na_rep="-")

# %% [markdown]
# Risk-coverage: as the threshold falls, more verdicts stand and fewer of them are right; each
# curve is one judge on its own calibrated score, the star its recommended threshold.

# %%
surfaces.plot_strategy_comparison(result.comparison)
plt.show()

# %% [markdown]
# ## The next audit routes with it
#
# Every surface reads the calibration of the model and strategy it judges with: the worked example
# audited by this judge now says which calibration set its threshold.

# %%
audit = ca.audit_quotes("rfc7519.txt", settings.find_input("data/rfc7519_citations.json"), options=options)
print(audit.routing_note())

# %% [markdown]
# ## Next
#
# - From a shell: `citeaudit judge-setup --model NAME [--strategy S] [--dry-run]`, then
#   `citeaudit audit --model NAME ...` (replay reads your recordings offline).
# - Tune the threshold of a judge with the slider of notebook `04_threshold_tuning` (`MODEL = NAME`).
# - Audit your own answer with it: notebook `00_audit_your_answer`.

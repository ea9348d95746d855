# %% [markdown]
# # A dataset of answers, one dashboard
#
# A team that ships an LLM product audits many answers at once: a JSON Lines file, one answer per
# line, each in any of the three citation formats (quotes over a source, `[L..]` markers over a
# text, source ids). `audit_dataset` audits every line on Dask (a bad line is an error row for that
# answer; the others go on) and gives one table of citations and one decision per answer. The
# dashboard is the page `citeaudit batch DATASET --html PAGE` writes. The judge's verdicts are
# replayed from the recorded Qwen answers.

# %% tags=["parameters"]
DATASET = "data/batch/example.jsonl"
SCHEDULER = "threads"  # or "processes" (a LocalCluster), or "tcp://host:8786"
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge
PAGE = None  # a path (from the project root) also writes the page there, e.g. "out/batch_dashboard.html"

# %%
import html

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, display

import citeaudit as ca
from citeaudit import settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
# the cards of every answer to look at are drawn on the worker that holds its document; the bar counts
# answers and partitions done of the total, answers per second and the time left
result = ca.audit_dataset(settings.find_input(DATASET), options, scheduler=SCHEDULER, cards=surfaces.answer_cards,
                          progress=True)
print(f"{len(result.outcomes)} answers, {len(result.rows)} citation rows; {ca.AuditRun(options).routing.note()}")

# %% [markdown]
# ## One decision per answer

# %%
display(result.decisions)

# %% [markdown]
# ## What the dashboard counts
#
# Verdicts that stand (fabricated, confident, or reviewed) and verdicts that wait for a human;
# the documents with the most failing citations (contradicted, unsupported or fabricated).

# %%
citations = surfaces.citation_table(result)
display(pd.Series(surfaces.decision_counts(result), name="answers").to_frame())
display(surfaces.verdict_counts(citations))
surfaces.failing_sources(citations)

# %% [markdown]
# ## The confidence of the judged citations
#
# Each judged citation's routing score, the one compared with the threshold: the verdicts at or
# above it stand, the others wait for review.

# %%
bins = surfaces.score_histogram(citations)
shown = bins[bins["high"] > 0.5]
ax = shown.set_index(shown["low"].map("{:.2f}".format))[["stands", "waits"]].plot.bar(
    stacked=True, color=["#1a7f37", "#bf8700"], figsize=(7, 3), xlabel="score (bin start)", ylabel="citations")
ax.set_title("Judged citations by routing score")
plt.show()

# %% [markdown]
# ## The page
#
# The same page as `citeaudit batch --html`: the answers to look at link to their cards. Set
# `PAGE` to write it to a file as well, to open in a browser or share.

# %%
if PAGE:
    print(f"wrote {ca.write_dashboard(result, settings.project_dir() / PAGE)}")
# the page inside a frame of its own (its styles stay in it); in a div, which IPython takes for HTML, not a
# stray iframe to warn about
display(HTML(f"<div><iframe srcdoc='{html.escape(surfaces.render_dashboard(result), quote=True)}' "
             "style='width:100%;height:40rem;border:1px solid #ddd'></iframe></div>"))

# %% [markdown]
# ## Next
#
# - The same from a shell: `citeaudit batch data/batch/example.jsonl --cache-mode replay --html
#   out/batch_dashboard.html --output out/batch_rows.jsonl --decisions out/batch_decisions.jsonl`.
# - One answer's citations in detail, with the threshold slider: notebook `04_threshold_tuning`.
# - The citations that wait for review: notebook `05_review_queue`.

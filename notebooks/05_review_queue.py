# %% [markdown]
# # The review queue
#
# Citations the model was unsure of wait for a human. This notebook shows them one at a time: the
# claim, the model's three probabilities, and the quote highlighted in its section. A button stores
# the decision at once in the review store, bound by a fingerprint to the evidence shown; the
# answer's decision updates. After the waiting citations come the spot checks: verdicts that stood,
# drawn at random so that your reviews measure how often standing verdicts are right. Many reviews
# can be recorded in one go from a file, and the last section compares the judge with your reviews.

# %% tags=["parameters"]
SOURCE = "rfc7519.txt"
CITATIONS = "data/rfc7519_citations.json"
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge
REVIEWER = "analyst"
SPOT_CHECK = None  # None: CITEAUDIT_SPOT_CHECK, else 0.1: the share of standing verdicts drawn for review
BATCH = None  # a CSV or JSON Lines file of id, verdict, note recorded in one go, e.g. "data/rfc7519_reviews.csv"
PROFILE = None  # a name, e.g. "my-documents": save the profile fitted on your reviews (when it may be saved)

# %%
from pathlib import Path

from IPython.display import HTML, display

import citeaudit as ca
from citeaudit import calibrate, decide, settings, surfaces, workflows

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD, spot_check=SPOT_CHECK)
print(ca.AuditRun(options).routing.note())
audit = ca.audit_quotes(SOURCE, settings.find_input(CITATIONS), options=options)
store = decide.review_store_path(Path(CITATIONS).stem, settings.review_dir())  # CITEAUDIT_REVIEW_DIR, else reviews/
queue = ca.ReviewQueue(audit, store)
print(f"review store: {store}")
print(f"{len(queue.pending)} citations wait for review; answer is {queue.decision().status}")
spot_ids = [queue.table.at[i, "id"] for i in queue.spot_checks]
print(f"spot checks ({options.spot_check:.0%} of the verdicts that stand, after the waiting ones): "
      f"{', '.join(spot_ids) or 'none'}")
print(f"verdicts that stood and can be overridden: {', '.join(queue.standing()) or 'none'}")

# %% [markdown]
# ## Review
#
# verified / contradicted / unsupported store a review and move to the next citation; skip leaves
# it for later. A review recorded earlier stays current until the claim or its evidence changes.
# Each write is confirmed under the buttons: the verdict, the citation, the store and how many
# reviews it holds.
#
# A verdict that stood without a human (the model's, confident enough) can be overridden below the
# queue: pick the citation, the human verdict, record. The override is a review like any other,
# bound to the same fingerprint, and replaces the verdict. A fabricated quote has no evidence a
# review could be bound to: correct the quote in the citation file and audit again.

# %%
queue.widget(reviewer=REVIEWER)

# %% [markdown]
# ## Static view of the queue
#
# The citation the queue is at and the whole queue with the reviews in the store applied, as they
# were when these cells ran (the widget above stays current; run these again after reviewing).

# %%
display(HTML(queue.card_html()))

# %%
surfaces.styled(queue.overview())

# %% [markdown]
# ## Spot checks
#
# A verdict that stands is never looked at again, so nothing would tell you whether the
# calibration's promise (the share of standing verdicts that are right) holds on your documents.
# A spot check is a standing verdict drawn at random at the rate `SPOT_CHECK`, from its citation's
# fingerprint: the same citation with the same evidence is always drawn or not. The queue lists
# them after the waiting citations, marked "spot check". A spot check holds nothing: the answer's
# decision is what it would be without it, until your review disagrees, which then settles the
# citation like any review. Reviewing them is what makes the precision estimate below unbiased.

# %%
surfaces.styled(queue.overview()[queue.overview()["state"].str.endswith("(spot check)")])

# %% [markdown]
# ## Review where the work is: a batch
#
# Label many citations in a spreadsheet or a script, then record them in one go: a CSV with the
# header `id,verdict,note` (other columns, such as the claim, are ignored) or JSON Lines of
# `{"id", "verdict", "note"}`. Each row becomes a review bound to the evidence its citation shows
# now, exactly as a button's. A bad row (an unknown id, a verdict that is not verified,
# contradicted or unsupported, a citation without evidence, an id given twice) is named with its
# line and the fix, and the other rows still go in; running the file again adds nothing twice.
# From a shell: `citeaudit review --reviews STORE --source ... --citations ... --batch FILE`.

# %%
if BATCH:
    outcome = queue.review_batch(settings.find_input(BATCH), reviewer=REVIEWER)
    print(queue.saved)
    for problem in outcome.problems:
        print(f"  left out: {problem}")
    print(f"answer is now {queue.decision().status}")
else:
    print("no BATCH given: set it to a CSV or JSON Lines file of id, verdict, note (data/rfc7519_reviews.csv "
          "labels this example)")

# %% [markdown]
# ## Judge versus human
#
# Every citation with a current review: the model's verdict against yours, the agreement on pass
# or fail (what decides the answer) per source with a 95% interval, and the precision of the
# standing verdicts estimated from the reviewed spot checks alone (the one sample of standing
# verdicts not chosen by what they say), beside the calibration's promise. Reviews whose evidence
# changed since are stale: listed, and left out. `citeaudit agreement --reviews STORE ...` prints
# the same numbers (one function computes them: `decide.agreement`).

# %%
result = decide.agreement({queue.audit.name: queue.table}, queue.audit.routing)
print(f"{result.counts['reviewed']} current review(s) of {result.counts['citations']} citation(s)")
print(result.spot.line())
if result.stale:
    print(f"stale reviews left out (review them again): {', '.join(result.stale)}")
if result.warning:
    print(f"warning: {result.warning}")
display(surfaces.styled(result.confusion_view()))
surfaces.styled(result.groups_view())

# %% [markdown]
# ## Fit a profile from your reviews
#
# Your reviews are labels on your own documents: a profile refits the model's calibration on them
# (the shipped calibration as prior; each review weighted by how it was selected: a spot check
# stands for the standing verdicts, a waiting review for the waiting ones) and is saved only when
# its cross-validated promise holds and the reviews are enough; otherwise it says how many more of
# which kind it needs. `citeaudit calibrate --reviews STORE --source ... --citations ... --profile
# NAME` prints the same numbers (one function: `workflows.profile_from_reviews`). With `PROFILE` set, a
# profile that may be saved is written to your user cache, and `--profile NAME` (or
# `AuditOptions(profile=NAME)`) routes the next audit with it.

# %%
if not ca.load_reviews(store):
    print("no review in the store yet: review the queue above (or a BATCH) first")
elif ca.AuditRun(options.with_(profile=None)).calibration is None:
    print(f"no calibration of {options.model} / {options.strategy} to start a profile from: "
          f"{ca.AuditRun(options).routing.note()}")
else:
    fit = workflows.profile_from_reviews([(SOURCE, settings.find_input(CITATIONS))], store, PROFILE or "preview",
                                         options)
    print(fit.summary())
    display(surfaces.styled(fit.side_by_side()))
    if fit.problems:
        print("not saved: " + "; ".join(fit.problems))
    elif PROFILE:
        print(f"saved {calibrate.save_profile(fit, options.write_folder)}; audit with --profile {PROFILE}")
    else:
        print("it may be saved: set PROFILE to a name and run this cell again")

# %% [markdown]
# ## Next
#
# - The answer's decision now: run the cell above again after reviewing, or from a shell
#   `citeaudit audit --source rfc7519.txt --citations data/rfc7519_citations.json --reviews STORE`
#   with the store printed at the top.
# - A report with the reviews applied: `citeaudit report ... --reviews STORE --html out/report.html`;
#   reviewed cards are blue ("reviewed by a human").
# - When the warning above appears (the spot checks say fewer standing verdicts are right than the
#   calibration promises): raise the threshold (`THRESHOLD`, `--threshold`), or fit a profile on
#   your own reviews (the section above).
# - Audit another answer: notebook `00_audit_your_answer`.

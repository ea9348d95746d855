# %% [markdown]
# # The review queue
#
# Citations the model was unsure of wait for a human. This notebook shows them one at a time: the
# claim, the model's three probabilities, and the quote highlighted in its section. A button stores
# the decision at once in the review store, bound by a fingerprint to the evidence shown; the
# answer's decision updates.

# %% tags=["parameters"]
SOURCE = "rfc7519.txt"
CITATIONS = "data/rfc7519_citations.json"
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge
REVIEWER = "analyst"

# %%
from pathlib import Path

from IPython.display import HTML, display

import citeaudit as ca

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
print(options.routing().note())
audit = ca.audit_quotes(SOURCE, ca.find_input(CITATIONS), options=options)
store = ca.review_store_path(Path(CITATIONS).stem)
queue = ca.ReviewQueue(audit, store)
print(f"review store: {store}")
print(f"{len(queue.pending)} citations wait for review; answer is {queue.decision().status}")
print(f"verdicts that stood and can be overridden: {', '.join(queue.standing()) or 'none'}")

# %% [markdown]
# ## Review
#
# verified / contradicted / unsupported store a review and move to the next citation; skip leaves
# it for later. A review recorded earlier stays current until the claim or its evidence changes.
# Each write is confirmed under the buttons: the verdict, the citation, the store and how many
# reviews it holds.
#
# A verdict that stood without a human (the model's, confident enough, or a fabricated quote with
# evidence) can be overridden below the queue: pick the citation, the human verdict, record. The
# override is a review like any other, bound to the same fingerprint, and replaces the verdict.

# %%
queue.widget(reviewer=REVIEWER)

# %% [markdown]
# ## Static view of the queue
#
# The first citation waiting, as the widget shows it, and the whole queue with the reviews in the
# store applied.

# %%
display(HTML(queue.card_html()))

# %%
ca.styled(queue.overview())

# %% [markdown]
# ## Next
#
# - The answer's decision now: run the cell above again after reviewing, or from a shell
#   `citeaudit audit --source rfc7519.txt --citations data/rfc7519_citations.json --reviews STORE`
#   with the store printed at the top.
# - A report with the reviews applied: `citeaudit report ... --reviews STORE --html out/report.html`;
#   reviewed cards are blue ("reviewed by a human").
# - Audit another answer: notebook `00_audit_your_answer`.

# %% [markdown]
# # Line citations
#
# An answer about a short document cites line numbers: each fact ends in `[L5]`, `[L2-L3]` or
# `[L2-3]`. citeaudit extracts every marker and the claim it closes, checks that the range exists,
# shows the cited lines beside the claim, and asks the judge whether those lines support it. A range
# outside the document, reversed, or starting at 0 is `fabricated` without asking any model; a
# marker in another form is reported, not dropped.

# %% tags=["parameters"]
DOCUMENT = "data/lines/field_note.txt"
GOOD_ANSWER = "data/lines/good_answer.txt"
BROKEN_ANSWER = "data/lines/broken_answer.txt"
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge

# %%
import pandas as pd

import citeaudit as ca
from citeaudit import settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
print(ca.AuditRun(options).routing.note())
document = settings.find_input(DOCUMENT)

# %% [markdown]
# ## The document, numbered from line 1

# %%
good = ca.load_line_answer(document, settings.find_input(GOOD_ANSWER))
surfaces.styled(pd.DataFrame({"line": [line.number for line in good.document.lines],
                        "text": [line.text for line in good.document.lines]}))

# %% [markdown]
# ## A good answer

# %%
print(good.answer)
print(good.summary)

# %%
good_audit = ca.audit_lines(good, options=options)
surfaces.styled(surfaces.lines_view(good_audit.table))

# %%
surfaces.styled(good_audit, text=False)

# %% [markdown]
# ## A broken answer
#
# `[L8]` points past the end of a 7-line document, `[L3-L2]` is reversed, and `[line 4]` is not in
# the accepted form. The first two are fabricated before any model is asked; the third is listed so
# that a human sees it.

# %%
broken = ca.load_line_answer(document, settings.find_input(BROKEN_ANSWER))
print(broken.answer)
print(broken.summary)
print("unrecognized:", broken.extracted.unrecognized)

# %%
broken_audit = ca.audit_lines(broken, options=options)
surfaces.styled(surfaces.lines_view(broken_audit.table))

# %%
surfaces.styled(broken_audit, text=False)

# %% [markdown]
# ## The decisions
#
# An unrecognized marker keeps the answer in review (`Audit.needs_review`), whatever the rows say.

# %%
for name, audit in (("good", good_audit), ("broken", broken_audit)):
    print(f"{name}: {audit.decision.status}")
    for reason in audit.decision.reasons:
        print("   -", reason)

# %% [markdown]
# ## Next
#
# - The same from a shell: `citeaudit lines --document data/lines/field_note.txt --answer
#   data/lines/broken_answer.txt` (add `--html out/lines.html` for a report).
# - Quote citations over a longer source: notebook `01_rfc7519_audit`, or your own file in
#   notebook `00_audit_your_answer`.
# - Source-id answers and the human review contract: notebook `03_acceptance_contract`.

# %% [markdown]
# # One audit, four kinds of document
#
# Analysts audit answers that cite the documents they work with: a spec in Markdown, a web page
# saved as HTML, a report as PDF, a plain note. citeaudit loads each into the same `Document`
# (the text a reader sees, mapped back to the file, with sections), so the locate, judge and route
# steps are the same for all of them. What changes is how an answer points into the document:
# `§3.2` or a heading title in Markdown, an `#anchor` in HTML, `p. 3` or `pages 3-4` in a PDF,
# `[L9]` in a note. Each document here is the project's own, with a labelled answer; the judge's
# verdicts are replayed from the recorded Qwen answers.

# %% tags=["parameters"]
DOCUMENTS = {
    "markdown": ("data/formats/lantern-sync.md", "data/formats/lantern-sync_citations.json"),
    "html": ("data/formats/token-service.html", "data/formats/token-service_citations.json"),
    "pdf": ("data/formats/reservoir-report.pdf", "data/formats/reservoir-report_citations.json"),
    "text": ("data/formats/field-note.txt", "data/formats/field-note_citations.json"),
}
SHOW = {"markdown": "md_chunk_digest", "html": "html_access_lifetime", "pdf": "pdf_rinse_page_break",
        "text": "txt_departure"}
NUMBERED = "contract"  # one of data/numbered/: contract, privacy-policy, regulation, standard
NUMBERED_SHOW = "contract_misattributed"  # a citation of it whose quote is shown in its clause
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge

# %%
import pandas as pd
from IPython.display import HTML, display

import citeaudit as ca
from citeaudit import settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
print(ca.AuditRun(options).routing.note())

# %% [markdown]
# ## The documents and their sections
#
# Markdown and HTML sections come from headings (their number when they have one, else their
# slug); a PDF's pages are sections too, beside the numbered headings found in its text.

# %%
documents = {kind: ca.load_document(source) for kind, (source, _) in DOCUMENTS.items()}
pd.DataFrame([{"format": kind, "file": doc.name, "characters": len(doc.clean), "sections": ", ".join(doc.sections)}
              for kind, doc in documents.items()]).style.set_properties(**{"text-align": "left"})

# %% [markdown]
# ## Steps 1-3 over each document

# %%
audits = {kind: ca.audit_quotes(documents[kind], settings.find_input(citations), options=options)
          for kind, (_, citations) in DOCUMENTS.items()}
table = pd.concat({kind: surfaces.audit_view(audit).assign(cited=audit.table["cited_section"].values,
                                                    found=audit.table["found_section"].values)
                   for kind, audit in audits.items()}, names=["format", "row"])
table.droplevel("row")[["citation", "cited", "found", "quote", "supports", "P(pass)", "score", "verdict", "route",
                        "expected"]]

# %%
pd.DataFrame({kind: {"decision": audit.decision.status,
                     "verdict = expected": f"{(audit.table['verdict'] == audit.table['expected']).sum()} "
                                           f"of {len(audit.table)}"}
              for kind, audit in audits.items()})

# %% [markdown]
# ## The quote in its section or page
#
# The PDF quote runs from the foot of page 2 on to page 3, where "rin-" and "sed" are joined: it
# matches exactly and is marked in the section it was cited in.

# %%
for kind, cid in SHOW.items():
    row, document = audits[kind].table.set_index("id").loc[cid], audits[kind].document
    assert document is not None
    display(HTML(f"<h4>{kind}: {cid} (cited {row['cited_section']}, found in {row['found_section']})</h4>"
                 + surfaces.highlight_html(document, row["found_section"], row["span"])))

# %% [markdown]
# ## A numbered document: clauses as sections
#
# Contracts, policies, regulations and standards number their own parts ("3.1", "4.2(b)",
# "Article 3(2)(c)"), and an answer cites them that way ("Section 4", "§ 4.2(b)", "Sec. 1b").
# In every format the document's own numbering makes its sections, nested as it nests them, and
# the first line of step 1's report says which reading was used and why (`--sections
# auto|numbered|paragraphs` chooses). The same contract, written as text, Markdown, HTML and PDF:

# %%
numbered = {kind: ca.load_document(f"data/numbered/{NUMBERED}.{ext}")
            for kind, ext in {"text": "txt", "markdown": "md", "html": "html", "pdf": "pdf"}.items()}
pd.DataFrame([{"format": kind, "reading": doc.reading,
               "clauses": ", ".join(sid for sid in doc.sections if sid in doc.parents or sid[:1].isdigit()
                                    or sid.startswith("Article "))}
              for kind, doc in numbered.items()]).style.set_properties(**{"text-align": "left"})

# %% [markdown]
# Step 1 on the contract's labelled citations, in every format (no model: these citations have no
# recorded verdicts, so the judge is not asked here). A quote in a sub-clause cited as its clause
# matches; cited as a sibling it is a `section_mismatch` that names where it is; a clause that does
# not exist is never replaced by other text (with a quote: found elsewhere and flagged; without
# one: fabricated, nothing judged). `judged` is what the judge and a reviewer would read: the clause
# under its parents' captions.

# %%
import json

labels = json.loads(settings.find_input("data/numbered/step1_expected.json").read_text(encoding="utf-8"))
located = {kind: ca.audit_quotes(doc, settings.find_input(f"data/numbered/{NUMBERED}_citations.json"), locate_only=True,
                                 options=options).table.set_index("id")
           for kind, doc in numbered.items()}
steps = pd.concat({kind: pd.DataFrame({
    "cited": t["cited_section"], "quote": t["quote_status"], "found": t["found_section"],
    "match": t["section_match"],
    "as labelled": [labels[i] == {"quote_status": q, "found_section": f if isinstance(f, str) else None,
                                  "section_match": m if isinstance(m, bool) else None}
                    for i, q, f, m in zip(t.index, t["quote_status"], t["found_section"], t["section_match"])],
    "judged": [e if isinstance(e, str) else "(nothing: " + str(r) + ")" for e, r in zip(t["evidence"],
                                                                                        t["fabricated_reason"])]})
    for kind, t in located.items()}, names=["format", "id"])
steps.loc["text"]

# %%
steps.groupby(level="format")["as labelled"].agg(["sum", "size"]).rename(columns={"sum": "as labelled",
                                                                                 "size": "citations"})

# %%
row = located["pdf"].loc[NUMBERED_SHOW]
display(HTML(f"<h4>pdf: {NUMBERED_SHOW} (cited {row['cited_section']}, found in {row['found_section']})</h4>"
             + surfaces.highlight_html(numbered["pdf"], row["found_section"], row["span"])))

# %% [markdown]
# ## Next
#
# - The same from a shell, one format at a time: `citeaudit audit --source
#   data/formats/lantern-sync.md --citations data/formats/lantern-sync_citations.json`
#   (`--html out/report.html` writes the report with every quote marked).
# - Your own document and citations: notebook `00_audit_your_answer` takes any of these formats.
# - Step 1 on all four numbered documents in every format against their labels:
#   `python tools/numbered_statuses.py`.
# - Citations a human should confirm: notebook `05_review_queue`.

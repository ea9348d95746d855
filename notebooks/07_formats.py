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
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge

# %%
import pandas as pd
from IPython.display import HTML, display

import citeaudit as ca

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
print(options.routing().note())

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
audits = {kind: ca.audit_quotes(documents[kind], ca.find_input(citations), options=options)
          for kind, (_, citations) in DOCUMENTS.items()}
table = pd.concat({kind: ca.audit_view(audit).assign(cited=audit.table["cited_section"].values,
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
                 + ca.highlight_html(document, row["found_section"], row["span"])))

# %% [markdown]
# ## Next
#
# - The same from a shell, one format at a time: `citeaudit audit --source
#   data/formats/lantern-sync.md --citations data/formats/lantern-sync_citations.json`
#   (`--html out/report.html` writes the report with every quote marked).
# - Your own document and citations: notebook `00_audit_your_answer` takes any of these formats.
# - Citations a human should confirm: notebook `05_review_queue`.

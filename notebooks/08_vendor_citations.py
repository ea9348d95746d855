# %% [markdown]
# # The citations an API already returned, audited
#
# Answers often arrive with their citations attached by the vendor: Anthropic's `char_location` and
# `page_location`, OpenAI's `file_citation` and `url_citation` annotations, Gemini's grounding
# supports, Cohere's citation sources, the source documents of a LangChain or LlamaIndex chain. The
# vendor asserts them; nobody checks them. Here one saved response of each vendor, written by the
# project over its own documents, goes through the same audit as any citation: the quote is looked
# for in the source, the vendor's offsets and pages are checked against where it really is, the
# source it names is matched to the files given, and the judge reads the claim against the
# evidence. The judge's answers are replayed from the recorded Qwen answers.

# %% tags=["parameters"]
RESPONSES = {  # vendor: (saved response, its sources in the order they were sent)
    "anthropic": ("data/responses/anthropic_messages.json",
                  ["rfc7519.txt", "data/formats/lantern-sync.md", "data/formats/reservoir-report.pdf"]),
    "openai-responses": ("data/responses/openai_responses.json", ["rfc7519.txt", "data/formats/token-service.html"]),
    "openai-chat": ("data/responses/openai_chat.json", ["rfc7519.txt"]),
    "gemini": ("data/responses/gemini_grounding.json",
               ["data/formats/reservoir-report.pdf", "data/formats/token-service.html",
                "data/formats/lantern-sync.md"]),
    "cohere": ("data/responses/cohere_chat.json", ["data/formats/field-note.txt", "data/formats/token-service.html"]),
    "langchain": ("data/responses/langchain_retrievalqa.json",
                  ["data/formats/reservoir-report.pdf", "data/formats/field-note.txt"]),
}
REQUIRE_COVERAGE = True  # answer text outside every citation keeps the answer in REVIEW (False: listed only)
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge

# %%
import pandas as pd

import citeaudit as ca
from citeaudit import pipeline, settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
print(ca.AuditRun(options).routing.note())

# %% [markdown]
# ## What each response cites
#
# Each vendor citation is one record: the answer text it is attached to (the claim), the vendor's
# quote when it gives one, the source it names and its location in that source. Its id is its JSON
# path in the response.

# %%
parsed = {vendor: ca.load_response(settings.find_input(path)) for vendor, (path, _) in RESPONSES.items()}
pd.DataFrame([{"vendor": vendor, "citation": c.id, "claim": c.claim, "quote": c.quote or "-",
               "source named": str(c.source), "location": c.location or "-"}
              for vendor, response in parsed.items() for c in response.citations]).style.hide(axis="index")

# %% [markdown]
# ## The audit, side by side
#
# `found in` is where the quote really is; `findings` are the vendor's locations that do not hold
# (shifted offsets, a wrong page, another source): each one keeps the verdict from standing on its
# own. A citation of a source that was not given is `unchecked`, and its answer cannot be accepted.

# %%
audits = {vendor: ca.audit_response(parsed[vendor], sources, options=options, require_coverage=REQUIRE_COVERAGE)
          for vendor, (_, sources) in RESPONSES.items()}
views = {vendor: pipeline.response_view(audit) for vendor, audit in audits.items()}
surfaces.styled(pd.concat(views, names=["vendor", "row"]).reset_index("vendor").reset_index(drop=True))

# %% [markdown]
# ## The decisions, and the answer text no citation covers

# %%
pd.DataFrame([{"vendor": vendor, "decision": audit.decision.status, "citations": len(audit.table),
               "states": ", ".join(f"{n} {s}" for s, n in audit.table["state"].value_counts().items()),
               "uncited text": " / ".join(audit.uncited) or "-"}
              for vendor, audit in audits.items()])

# %%
for vendor, audit in audits.items():
    print(f"{vendor}: {audit.decision.status}")
    for reason in audit.decision.reasons:
        print(f"  - {reason}")

# %% [markdown]
# ## Next
#
# - The same from a shell, one response at a time: `citeaudit audit --response
#   data/responses/anthropic_messages.json --source rfc7519.txt --source data/formats/lantern-sync.md
#   --source data/formats/reservoir-report.pdf` (`--allow-uncited` lists uncited text without
#   holding the answer for review, `--output rows.jsonl` for the records with their `findings`).
# - Your own response: save the API's response body as JSON and give the documents it cites, in the
#   order they were sent (`--response-format` when its shape is ambiguous).
# - Citations a human should confirm: notebook `05_review_queue`.

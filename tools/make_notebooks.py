"""Write the notebooks from the cell sources below (outputs stripped). Run: python tools/make_notebooks.py"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]


def write(name: str, cells: list) -> None:
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:02d}"
    nbformat.write(nb, ROOT / "notebooks" / name)


md, code = new_markdown_cell, new_code_cell

write("01_rfc7519_audit.ipynb", [
    md("# Auditing eight citations of RFC 7519\n\n"
       "An LLM answered questions about JSON Web Tokens (RFC 7519) and cited the RFC: a claim, a quote and a "
       "section for each fact. Four citations are right; four were planted wrong (a quote that does not exist, "
       "a true quote under a false claim, two claims the cited text does not make). This notebook runs the "
       "four steps of citeaudit on them, offline, from the recorded answers of the local judge model."),
    code("# Parameters\n"
         "SOURCE = \"rfc7519.txt\"            # found in CITEAUDIT_DATA_DIR or data/, else downloaded and checked\n"
         "CITATIONS = \"../data/rfc7519_citations.json\"\n"
         "THRESHOLD = 0.8                    # a verdict at or above this confidence stands without review\n"
         "CACHE_MODE = \"replay\"              # replay: recorded answers only, no network, no key\n"
         "MODEL = \"qwen2.5-coder-1.5b-instruct-q4_k_m\"\n"
         "HIGHLIGHT = \"aud_reject\"           # the citation whose quote is shown in its section"),
    code("import pandas as pd\n"
         "from IPython.display import HTML, display\n\n"
         "import citeaudit as ca"),
    md("## Load the source\n\nPage headers, footers and form feeds are removed; the text is split into numbered "
       "sections, each with its offsets into the raw file."),
    code("doc = ca.load_rfc(SOURCE)\n"
         "citations = ca.load_citations(CITATIONS)\n"
         "print(f\"{len(doc.clean):,} characters of clean text, {len(doc.sections)} numbered sections, \"\n"
         "      f\"{len(citations)} citations\")"),
    md("## Step 1: find each quote\n\nNo model is involved. A quote that is not in the source is `fabricated` "
       "here and never reaches the judge; a claim-only citation (`none`) takes its cited section as evidence."),
    code("located = ca.locate_citations(doc, citations)\n"
         "ca.step1_view(located)"),
    md("## Step 2: ask the judge\n\nOne three-way question per remaining citation: does the section support the "
       "claim, contradict it, or say nothing about it? The probabilities come from the token log-probabilities "
       "of the model's one-letter answer. In replay mode they are read from `cache/`; nothing is called."),
    code("judge = ca.Judge(model=MODEL, cache=ca.CallCache(mode=CACHE_MODE))\n"
         "judged = ca.judge_citations(located, judge, doc.name)\n"
         "routed = ca.route(judged, THRESHOLD)\n"
         "ca.step2_view(routed)"),
    md("## What the recorded model did\n\n"
       "Qwen2.5-Coder-1.5B is the best judge that runs on two CPU cores, and it is weak at this task. The next "
       "cell counts how often its verdict matches the expected one and how confident it was. Read the table "
       "above with that in mind: on this run it leans to `supports` whatever the section says, with confidences "
       "far below 0.8, so its verdicts cannot stand on their own. That is a true result about this model, not a "
       "failure of the pipeline, and it is exactly the case the threshold exists for."),
    code("judged_rows = routed[routed[\"confidence\"].notna()]\n"
         "agree = (judged_rows[\"verdict\"] == judged_rows[\"expected\"]).sum()\n"
         "print(f\"model verdict matches the expected one for {agree} of {len(judged_rows)} judged citations\")\n"
         "print(f\"confidence ranges from {judged_rows['confidence'].min():.2f} to {judged_rows['confidence'].max():.2f}\")"),
    md("## Step 3: routing at the threshold\n\nA verdict at or above the threshold stands (`auto`); the rest go "
       "to a human. A fabricated quote stands without a model. Lowering the threshold lets more verdicts "
       "stand, and with this model that means letting wrong ones stand: compare the routes at a few thresholds."),
    code("pd.DataFrame({t: ca.route(judged, t)[\"route\"].values for t in (0.8, 0.65, 0.5)},\n"
         "             index=routed[\"id\"]).rename_axis(\"threshold\", axis=1)"),
    code("decision = ca.decide(routed)\n"
         "print(decision.status)\n"
         "for reason in decision.reasons:\n"
         "    print(\" -\", reason)"),
    md("## The quote in its section\n\nThe span found in step 1 points into the raw RFC file; here it is "
       "highlighted inside the section the judge read."),
    code("row = routed.set_index(\"id\").loc[HIGHLIGHT]\n"
         "print(row[\"claim\"])\n"
         "display(HTML(ca.highlight_html(doc, row[\"found_section\"], row[\"span\"])))"),
])

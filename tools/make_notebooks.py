"""Write the notebooks from the cell sources below (outputs stripped).

Run `python tools/make_notebooks.py` after changing a cell here; tests check that the committed
notebooks are exactly what this script writes. `NOTEBOOK_DIR` overrides where they go.
"""

import os
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("NOTEBOOK_DIR", ROOT / "notebooks"))


def write(name: str, cells: list) -> None:
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:02d}"
    OUT.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, OUT / name)


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

write("02_line_citations.ipynb", [
    md("# Line citations\n\n"
       "An answer about a short document cites line numbers: each fact ends in `[L5]`, `[L2-L3]` or `[L2-3]`. "
       "citeaudit extracts every marker and the claim it closes, checks that the range exists, shows the cited "
       "lines beside the claim, and asks the judge whether those lines support it. A range outside the document, "
       "reversed, or starting at 0 is `fabricated` without asking any model; a marker in another form is "
       "reported, not dropped."),
    code("# Parameters\n"
         "DOCUMENT = \"../data/lines/field_note.txt\"\n"
         "GOOD_ANSWER = \"../data/lines/good_answer.txt\"\n"
         "BROKEN_ANSWER = \"../data/lines/broken_answer.txt\"\n"
         "THRESHOLD = 0.8\n"
         "CACHE_MODE = \"replay\"\n"
         "MODEL = \"qwen2.5-coder-1.5b-instruct-q4_k_m\""),
    code("import pandas as pd\n\nimport citeaudit as ca\n\n"
         "judge = ca.Judge(model=MODEL, cache=ca.CallCache(mode=CACHE_MODE))"),
    md("## The document, numbered from line 1"),
    code("good = ca.load_line_answer(DOCUMENT, GOOD_ANSWER)\n"
         "pd.DataFrame({\"line\": [l.number for l in good.document.lines],\n"
         "              \"text\": [l.text for l in good.document.lines]}).set_index(\"line\")"),
    md("## A good answer"),
    code("print(good.answer)\n"
         "print(good.summary)"),
    code("good_table = ca.audit_lines(good, judge=judge, threshold=THRESHOLD)\n"
         "ca.lines_view(good_table).style.set_properties(**{\"white-space\": \"pre-wrap\", \"text-align\": \"left\"})"),
    code("ca.step2_view(good_table)"),
    md("## A broken answer\n\n`[L8]` points past the end of a 7-line document, `[L3-L2]` is reversed, and "
       "`[line 4]` is not in the accepted form. The first two are fabricated before any model is asked; the "
       "third is listed so that a human sees it."),
    code("broken = ca.load_line_answer(DOCUMENT, BROKEN_ANSWER)\n"
         "print(broken.answer)\n"
         "print(broken.summary)\n"
         "print(\"unrecognized:\", broken.extracted.unrecognized)"),
    code("broken_table = ca.audit_lines(broken, judge=judge, threshold=THRESHOLD)\n"
         "ca.lines_view(broken_table).style.set_properties(**{\"white-space\": \"pre-wrap\", \"text-align\": \"left\"})"),
    code("ca.step2_view(broken_table)"),
    md("## The decisions"),
    code("for name, table, extra in ((\"good\", good_table, []),\n"
         "                           (\"broken\", broken_table, [f\"unrecognized citation {m!r}\" for m in broken.extracted.unrecognized])):\n"
         "    decision = ca.decide(table, needs_review=extra)\n"
         "    print(f\"{name}: {decision.status}\")\n"
         "    for reason in decision.reasons:\n"
         "        print(\"   -\", reason)"),
])

write("03_acceptance_contract.ipynb", [
    md("# The acceptance contract for source-id answers\n\n"
       "An answer made of claims, each citing a source by id, is accepted only when every claim has a current "
       "human review that found it supported. A review is bound to what the reviewer saw by a fingerprint: the "
       "SHA-256 of the claim id, the claim text, the cited source id and the source content. This notebook starts "
       "from an accepted answer and breaks it three ways."),
    code("# Parameters\n"
         "CONTRACT_DIR = \"../data/contract\""),
    code("import copy\nimport json\nfrom pathlib import Path\n\nimport citeaudit as ca\n\n"
         "answer, sources, reviews = (json.loads((Path(CONTRACT_DIR) / f\"{name}.json\").read_text(encoding=\"utf-8\"))\n"
         "                            for name in (\"answer\", \"sources\", \"reviews\"))\n\n"
         "def show(title, answer, sources, reviews):\n"
         "    result = ca.check_contract(answer, sources, reviews)\n"
         "    print(f\"{title}: {result.status}\")\n"
         "    for reason in result.reasons:\n"
         "        print(\"   -\", reason)"),
    md("## 1. As recorded: ACCEPT\n\nThe stored fingerprint is recomputed from the claim and its source and matches."),
    code("claim, source = answer[\"claims\"][0], sources[\"sources\"][0]\n"
         "print(\"stored  \", reviews[\"reviews\"][0][\"fingerprint\"])\n"
         "print(\"computed\", ca.fingerprint(claim[\"id\"], claim[\"text\"], claim[\"citation_id\"], source[\"content\"]))\n"
         "show(\"as recorded\", answer, sources, reviews)"),
    md("## 2. The review removed: REVIEW\n\nNothing is wrong, but no human has confirmed the claim yet."),
    code("no_review = {\"reviews\": []}\n"
         "show(\"review removed\", answer, sources, no_review)"),
    md("## 3. The verdict flipped to unsupported: REJECT\n\nA current review that found the claim unsupported "
       "rejects the whole answer."),
    code("flipped = copy.deepcopy(reviews)\n"
         "flipped[\"reviews\"][0][\"verdict\"] = \"unsupported\"\n"
         "show(\"verdict flipped\", answer, sources, flipped)"),
    md("## 4. The source edited after review: stale, REVIEW\n\nThe review was of different content; its fingerprint "
       "no longer matches, so it counts as no review."),
    code("edited = copy.deepcopy(sources)\n"
         "edited[\"sources\"][0][\"content\"] += \" (edited)\"\n"
         "show(\"source edited\", answer, edited, reviews)"),
    md("## Malformed input: REJECT with the record named"),
    code("bad = copy.deepcopy(answer)\n"
         "bad[\"claims\"][0][\"citation_id\"] = \"S9\"\n"
         "show(\"unknown source\", bad, sources, reviews)"),
    md("The same store format serves the other citation formats: `citeaudit review` appends a review bound to "
       "the evidence a row shows, and `citeaudit audit --reviews` / `citeaudit lines --reviews` apply it. The "
       "seed's `reviews.json` reads as such a store:"),
    code("ca.load_reviews(Path(CONTRACT_DIR) / \"reviews.json\")"),
])

write("04_threshold_tuning.ipynb", [
    md("# Tuning the auto-accept threshold\n\n"
       "A verdict at or above the threshold stands without a human; the rest go to review. Where to put it "
       "depends on how often the model is right when it is confident. This notebook measures that on a "
       "labelled set (46 citations over RFC 7519 and RFC 6749, each with a gold verdict) from the recorded "
       "answers: moving the threshold re-routes stored results and never calls the model."),
    code("# Parameters\n"
         "LABELLED = [(\"rfc7519.txt\", \"../data/eval_rfc7519.json\"), (\"rfc6749.txt\", \"../data/eval_rfc6749.json\")]\n"
         "THRESHOLD = 0.8\n"
         "TARGET = 0.95          # accuracy the verdicts that stand must reach\n"
         "CACHE_MODE = \"replay\"\n"
         "MODEL = \"qwen2.5-coder-1.5b-instruct-q4_k_m\""),
    code("import matplotlib.pyplot as plt\nimport pandas as pd\nfrom IPython.display import display\n\n"
         "import citeaudit as ca\n\n"
         "judge = ca.Judge(model=MODEL, cache=ca.CallCache(mode=CACHE_MODE))\n"
         "table = pd.concat([ca.audit_quotes(src, cites, judge=judge) for src, cites in LABELLED], ignore_index=True)\n"
         "print(f\"{len(table)} labelled citations; gold verdicts:\", table['expected'].value_counts().to_dict())"),
    md("## Try it\n\nMove the slider: the summary, the plots and the table follow. Red rows are wrong verdicts that "
       "would stand at that threshold."),
    code("explorer = ca.ThresholdExplorer(table, THRESHOLD)\n"
         "explorer.widget()"),
    md("## The same, as static output\n\nEvery threshold on a 0.05 grid: how many verdicts stand, how many of them "
       "are right, how many go to review and how many wrong ones would stand."),
    code("grid = ca.threshold_table(table)\n"
         "grid.style.format({\"threshold\": \"{:.2f}\", \"auto_share\": \"{:.0%}\", \"auto_accuracy\": \"{:.0%}\"})"),
    code("fig = explorer.figure()\nplt.show()"),
    code("advice = ca.advise(table, TARGET)\n"
         "print(f\"expected calibration error: {advice.ece:.3f}\")\n"
         "print(advice.statement)"),
    md("## Reading it\n\nThe recorded model is Qwen2.5-Coder-1.5B on two CPU cores. Its confidence does carry some "
       "signal (the reliability diagram rises with confidence), but it is overconfident at the bottom and its "
       "verdicts rarely reach high confidence at all. So a threshold that keeps the verdicts that stand accurate "
       "sends almost every model verdict to review: with this judge, the threshold protects the answer, and the "
       "human does most of the judging. A stronger judge moves the curve up and to the right."),
    code("ca.style_threshold_view(explorer.view(THRESHOLD))"),
])

write("05_review_queue.ipynb", [
    md("# The review queue\n\n"
       "Citations the model was unsure of wait for a human. This notebook shows them one at a time: the claim, the "
       "model's three probabilities, and the quote highlighted in its section. A button stores the decision at once "
       "in the review store, bound by a fingerprint to the evidence shown; the answer's decision updates."),
    code("# Parameters\n"
         "SOURCE = \"rfc7519.txt\"\n"
         "CITATIONS = \"../data/rfc7519_citations.json\"\n"
         "THRESHOLD = 0.8\n"
         "CACHE_MODE = \"replay\"\n"
         "MODEL = \"qwen2.5-coder-1.5b-instruct-q4_k_m\"\n"
         "REVIEWER = \"analyst\""),
    code("from IPython.display import HTML, display\n\nimport citeaudit as ca\n\n"
         "doc = ca.load_rfc(SOURCE)\n"
         "judge = ca.Judge(model=MODEL, cache=ca.CallCache(mode=CACHE_MODE))\n"
         "table = ca.audit_quotes(doc, CITATIONS, judge=judge, threshold=THRESHOLD)\n"
         "store = ca.review_store_path(\"rfc7519_citations\")\n"
         "queue = ca.ReviewQueue(table, store, document=doc)\n"
         "print(f\"review store: {store}\")\n"
         "print(f\"{len(queue.pending)} citations wait for review; answer is {queue.decision().status}\")"),
    md("## Review\n\nverified / contradicted / unsupported store a review and move to the next citation; skip leaves "
       "it for later. A review recorded earlier stays current until the claim or its evidence changes."),
    code("queue.widget(reviewer=REVIEWER)"),
    md("## Static view of the queue\n\nThe first citation waiting, as the widget shows it, and the whole queue."),
    code("display(HTML(queue.card_html()))"),
    code("ca.apply_reviews(queue.table, ca.load_reviews(store))[[\"id\", \"verdict\", \"confidence\", \"route\", \"review_verdict\", \"review_state\"]]"),
])

"""Which third question the `panel` strategy asks: every recorded candidate, offline, from the recordings.

The local Qwen model was asked five candidate yes/no questions (`judge.PANEL_QUESTIONS` and
`prompts.CANDIDATE_QUESTIONS`, prompt `panel-v1`) over every labelled quote set of the Makefile's
QUOTE_SETS. For each question this prints the AUROC of its P(yes) for citations that pass against
those that fail, then the cross-validated figures of the calibration (`citeaudit calibrate`'s
procedure: a map of the answers' log-odds, its threshold at the target) with yesno's two questions
and that one, and with all seven questions. The candidate was chosen on these same labelled sets,
so its figures are a little optimistic for new citations (docs/measurements/judge-quality.md).

Usage: python tools/question_panel.py [--folds 10] [--repeats 20] [--target 0.95]
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd

from citeaudit import AuditOptions, AuditRun, audit_quotes
from citeaudit import table as C
from citeaudit.calibrate import judged_rows, repeated_cross_validation
from citeaudit.judge.prompts import CANDIDATE_QUESTIONS, PANEL_QUESTIONS, YESNO_QUESTIONS
from citeaudit.settings.environment import project_dir


def labelled_sets() -> list[tuple[str, str]]:
    """(source, citations) of every pair in the Makefile's QUOTE_SETS."""
    makefile = (project_dir() / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^QUOTE_SETS := (.*?)(?<!\\)\n", makefile, flags=re.S | re.M)
    if found is None:
        raise SystemExit("the Makefile lists no QUOTE_SETS")
    pairs = [pair.split(":") for pair in found.group(1).replace("\\\n", " ").split()]
    return [(source, str(project_dir() / cites)) for source, cites in pairs]


def table_of(questions: tuple[str, ...]) -> pd.DataFrame:
    """Every labelled set judged with these yes/no questions, replayed from the recordings."""
    options = AuditOptions.from_env(model="qwen", strategy="panel", cache_mode="replay")
    judge = AuditRun(options, questions=questions).judge
    return pd.concat([audit_quotes(source, cites, judge=judge, calibration=False).table
                      for source, cites in labelled_sets()], ignore_index=True)


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    wins = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return float(wins / (len(positive) * len(negative)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--target", type=float, default=0.95)
    args = parser.parse_args()
    every = (*YESNO_QUESTIONS, *PANEL_QUESTIONS, *CANDIDATE_QUESTIONS)
    table = table_of(every)
    rows = judged_rows(table)
    passes = rows["gold_pass"].to_numpy() > 0.5
    print(f"{len(rows)} judged labelled citations ({int(passes.sum())} pass)\n")
    print("| question | AUROC of P(yes), pass against fail |\n|---|---|")
    wording = {**YESNO_QUESTIONS, **PANEL_QUESTIONS, **CANDIDATE_QUESTIONS}
    for key in every:
        p_yes = np.array([a[key] for a in rows["answers"]], dtype=float)
        print(f"| {key}: {wording[key]} | {auroc(p_yes[passes], p_yes[~passes]):.3f} |")
    print(f"\n{args.folds}-fold cross-validation over {args.repeats} fold assignments, target {args.target:.0%}:\n")
    print("| questions | stand, mean (sd) | right, mean (sd) | right, lowest | balanced accuracy |\n"
          "|---|---|---|---|---|")
    panels = [tuple(YESNO_QUESTIONS)] + [(*YESNO_QUESTIONS, q) for q in (*PANEL_QUESTIONS, *CANDIDATE_QUESTIONS)]
    for questions in [*panels, every]:
        kept = [{q: a[q] for q in questions} if isinstance(a, dict) else None for a in table[C.ANSWERS]]
        subset = table.assign(**{C.ANSWERS: pd.Series(kept, index=table.index, dtype=object)})
        r = repeated_cross_validation(subset, args.target, args.folds, args.repeats, "answers")
        print(f"| {' + '.join(questions)} | {r['coverage_mean']:.1%} ({r['coverage_sd']:.1%}) "
              f"| {r['precision_mean']:.1%} ({r['precision_sd']:.1%}) | {r['precision_min']:.1%} "
              f"| {r['balanced_accuracy_mean']:.2f} |")


if __name__ == "__main__":
    main()

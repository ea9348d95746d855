"""Commands over labelled sets: `thresholds`, `calibrate` and `judge-setup`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from citeaudit.errors import CiteAuditError
from citeaudit.printable import printable_lines
from citeaudit.settings import environment as config
from citeaudit.surfaces.cli.app import EXIT_JUDGE, _fail, _show, main
from citeaudit.surfaces.cli.params import settings_options
from citeaudit.table import (
    THRESHOLD_RULES,
    CacheMode,
)

# the pipeline and the fitting code are imported by each command when it runs (`citeaudit --help`
# starts without them)
if TYPE_CHECKING:
    import pandas as pd

    from citeaudit.decide.calibration import Calibration
    from citeaudit.settings.options import AuditOptions


@main.command()
@click.option("--source", "sources", required=True, multiple=True,
              help="Source text (repeat, paired with --citations).")
@click.option("--citations", "citation_files", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="Labelled quote-citation file (with `expected`).")
@click.option("--target", type=click.FloatRange(0, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@settings_options
def thresholds(sources: tuple[str, ...], citation_files: tuple[str, ...], target: float,
               settings: AuditOptions) -> None:
    """Threshold table of a labelled set: share auto-accepted, their accuracy, review load."""
    import pandas as pd

    from citeaudit.calibrate.scoring import advise, reliability, threshold_table
    from citeaudit.pipeline.audit import audit_quotes

    if len(sources) != len(citation_files):
        raise click.UsageError("give one --source per --citations")
    try:
        from citeaudit.pipeline.run import AuditRun

        judge = AuditRun(settings).judge
        table = pd.concat([audit_quotes(src, cit, judge=judge, calibration=False).table
                           for src, cit in zip(sources, citation_files)], ignore_index=True)
        grid = threshold_table(table)
        advice = advise(table, target, grid)
    except (CiteAuditError, ValueError) as exc:
        _fail(str(exc))
    shown = grid.copy()
    shown["auto_share"] = shown["auto_share"].map("{:.0%}".format)
    for column in ("auto_accuracy", "model_share", "model_accuracy"):
        shown[column] = shown[column].map(lambda v: "-" if pd.isna(v) else f"{v:.0%}")
    shown["threshold"] = shown["threshold"].map("{:.2f}".format)
    click.echo(f"{len(table)} labelled citations, model {judge.model}, strategy {judge.strategy}\n")
    _show(shown)
    click.echo("\nreliability of the model's verdicts (confidence bins):")
    _show(reliability(table).dropna(subset=["confidence"]).round(3))
    click.echo(f"\nexpected calibration error: {advice.ece:.3f}")
    click.echo(advice.statement)




CALIBRATION_HEADER = ("| strategy | calls per citation | judged | accuracy | balanced accuracy (one class: 0.333) "
                      "| AUROC of P(supports) | threshold | verdicts that stand | of them right "
                      "| stand, mean of R fold assignments (sd) | right, mean (sd) |\n"
                      "|---|---|---|---|---|---|---|---|---|---|---|")


def calibration_header(fitted: Calibration) -> str:
    """The strategy table's header, naming how many fold assignments the repeated columns average."""
    repeats = fitted.cross_validated.get("repeated", {}).get("repeats")
    return CALIBRATION_HEADER.replace(" R fold", f" {repeats} fold" if repeats else " repeated fold")


def calibration_row(fitted: Calibration) -> str:
    """One row of the strategy table: cross-validated figures of a fitted `Calibration` (the first
    fold assignment, then the mean and spread over all of them)."""
    from citeaudit.judge.strategies import calls_per_citation

    cv = fitted.cross_validated
    folds = [t for t in cv["fold_thresholds"] if t is not None]
    spread = f"{min(folds):.2f}-{max(folds):.2f}" if folds else "none"
    if len(folds) < len(cv["fold_thresholds"]):
        spread += f" (none in {len(cv['fold_thresholds']) - len(folds)} folds)"
    right = f"{cv['stand_right']}/{cv['stand']} ({cv['precision']:.1%})" if cv["stand"] else "-"
    calls = calls_per_citation(fitted.strategy)
    repeated = cv.get("repeated")
    means = (f"{repeated['coverage_mean']:.1%} ({repeated['coverage_sd']:.1%}) "
             f"| {repeated['precision_mean']:.1%} ({repeated['precision_sd']:.1%})") if repeated else "- | -"
    return (f"| {fitted.strategy} | {calls} | {cv['judged']} | {cv['accuracy_cv']:.2f} "
            f"| {cv['balanced_accuracy_cv']:.2f} | {cv['auroc']:.2f} | {spread} "
            f"| {cv['stand']}/{cv['judged']} ({cv['coverage']:.1%}) | {right} | {means} |")


def repeated_summary(repeated: dict) -> str:
    """The repeated cross-validation's figures in one line: means, spread and extremes."""
    return (f"verdicts that stand {repeated['coverage_mean']:.1%} of the judged (sd {repeated['coverage_sd']:.1%}, "
            f"{repeated['coverage_min']:.1%}-{repeated['coverage_max']:.1%}), of them right "
            f"{repeated['precision_mean']:.1%} (sd {repeated['precision_sd']:.1%}, "
            f"{repeated['precision_min']:.1%}-{repeated['precision_max']:.1%}; pooled "
            f"{repeated['precision_pooled']:.1%}); balanced accuracy {repeated['balanced_accuracy_mean']:.2f}")


def map_formula(fitted: Calibration) -> str:
    """The fitted map as a formula: P(pass) from the log-odds of P(supports) or of each answer."""
    from citeaudit.decide.calibration import EVIDENCE_CHARS, PRODUCT

    if not fitted.weights:
        return f"P(pass) = 1 / (1 + exp(-({fitted.a:.3f} + {fitted.b:.3f} x log-odds of P(supports))))"
    def term(key: str) -> str:
        return " x ".join("ln(evidence chars)" if part == EVIDENCE_CHARS else f"lo({part})"
                          for part in key.split(PRODUCT))

    terms = " ".join(f"{w:+.3f} x {term(key)}" for key, w in fitted.weights.items())
    return f"P(pass) = 1 / (1 + exp(-({fitted.a:.3f} {terms}))), lo(q) the log-odds of P(yes) to question q"


@main.command()
@click.option("--source", "sources", required=True, multiple=True,
              help="Source text (repeat, paired with --citations).")
@click.option("--citations", "citation_files", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="Labelled quote-citation file (with `expected`).")
@settings_options
@click.option("--target", type=click.FloatRange(0.5, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@click.option("--folds", type=click.IntRange(2, 20), default=10, show_default=True, help="Cross-validation folds.")
@click.option("--repeats", type=click.IntRange(0, 200), default=20, show_default=True,
              help="Fold assignments of the repeated cross-validation (0: only the first).")
@click.option("--inputs", type=click.Choice(["supports", "answers", "answers+length"]), default=None,
              help="What the map reads: P(supports); each yes/no question's P(yes); or those and the evidence's "
                   "length (default answers when the strategy asks yes/no questions, else supports).")
@click.option("--no-save", is_flag=True, help="Print the figures only; do not write the calibration file.")
@click.option("--shipped", is_flag=True,
              help="Write the shipped calibration cache/calibration/ (`make calibrate-qwen`) instead of your "
                   "user cache's (cache/local/calibration/, ignored by git), and read only the shipped recordings.")
@click.option("--domain", "domains", multiple=True,
              help="Domain of each --citations file, in order (give one per file, or none: then the project's "
                   "own files under data/ are `project` and any other file is named by its file name without "
                   "`_citations.json`). With two domains or more, leave-one-domain-out figures are printed.")
@click.option("--threshold-rule", type=click.Choice(THRESHOLD_RULES), default="pooled", show_default=True,
              help="pooled: the lowest threshold reaching the target on all the labelled sets together; "
                   "worst-domain: the lowest at which, each domain scored by the map fitted on the others, "
                   "the worst domain still reaches the target (needs two domains).")
@click.option("--reviews", default=None, type=click.Path(dir_okay=False, exists=True),
              help="Fit a profile on the current reviews of this store instead (the --citations need no "
                   "`expected`): the model's calibration is its prior; with --profile NAME.")
@click.option("--profile", "profile_name", default=None, metavar="NAME",
              help="With --reviews: the profile's name; it is saved in the user cache's profiles/ and "
                   "`--profile NAME` (or CITEAUDIT_PROFILE) routes with it.")
@click.option("--spot-check", "spot_check", type=float, default=None,
              help="With --reviews: the spot-check rate the reviewed audits drew at (default CITEAUDIT_SPOT_CHECK, "
                   f"else {config.DEFAULT_SPOT_CHECK}).")
def calibrate(sources: tuple[str, ...], citation_files: tuple[str, ...], settings: AuditOptions, target: float,
              folds: int, repeats: int, inputs: str | None, no_save: bool, shipped: bool, domains: tuple[str, ...],
              threshold_rule: str, reviews: str | None, profile_name: str | None) -> None:
    """Fit a per-model calibration of the routing score on labelled sets and recommend a threshold;
    or, with --reviews and --profile, a profile on your own reviews.

    Prints cross-validated figures (fitted on the other folds, scored on the held-out one), and
    with labelled sets of two domains or more the leave-one-domain-out figures (each domain scored
    by the map and threshold fitted on the other domains), and saves
    <user cache>/calibration/<model>.<strategy>.json (cache/local/ unless CITEAUDIT_USER_CACHE;
    cache/calibration/ with --shipped), which `audit` then applies.

    With --reviews STORE --profile NAME: audits the --source/--citations pairs as they were audited
    (the model's calibration, replayed), fits the profile on the current reviews (docs/how-to/profiles.md),
    prints the calibration and the profile side by side, cross-validated on the reviews, and saves
    <user cache>/profiles/NAME.json, unless its promise does not hold or its reviews are too few
    (exit 2, saying how many more of which kind it needs).
    """
    import pandas as pd

    from citeaudit.calibrate.domains import domain_of, row_labels
    from citeaudit.calibrate.fit import fit_calibration
    from citeaudit.calibrate.probe import refuse_in_sample
    from citeaudit.decide.calibration import save_calibration
    from citeaudit.pipeline.audit import audit_quotes

    if len(sources) != len(citation_files):
        raise click.UsageError("give one --source per --citations")
    if (reviews is None) != (profile_name is None):
        raise click.UsageError("--reviews STORE and --profile NAME go together: a profile is fitted on reviews")
    if reviews is not None:
        assert profile_name is not None
        if shipped or domains or inputs or threshold_rule != "pooled":
            raise click.UsageError("--shipped, --domain, --inputs and --threshold-rule fit a calibration on labelled "
                                   "sets; a profile takes none of them")
        _fit_profile(list(zip(sources, citation_files)), reviews, profile_name, settings, target, folds, no_save)
        return
    settings = settings.with_(shipped=shipped)
    if domains and len(domains) != len(citation_files):
        raise click.UsageError("give one --domain per --citations (in the same order), or none")
    names = list(domains) or [domain_of(c) for c in citation_files]
    if threshold_rule == "worst-domain" and len(set(names)) < 2:
        raise click.UsageError("--threshold-rule worst-domain needs labelled sets of two domains or more "
                               "(see --domain)")
    from citeaudit.pipeline.run import AuditRun

    judge = AuditRun(settings).judge
    refuse_in_sample(judge.strategy)  # an InputError: the command line's message and exit 2
    tables = [audit_quotes(src, cit, judge=judge, calibration=False).table for src, cit in zip(sources, citation_files)]
    table = pd.concat(tables, ignore_index=True)
    row_domains, row_documents = row_labels(names, tables), row_labels(citation_files, tables)
    if table["expected"].isna().all():
        _fail("no citation has a gold `expected` verdict; calibration needs a labelled set")
    errors = sorted({e for e in table["error"] if isinstance(e, str)})
    if errors:  # a calibration fitted on part of a set would be quietly biased
        _fail(f"{len(errors)} kind(s) of judge failure, first: {errors[0]}")
    try:
        fitted = fit_calibration(table, judge.model, judge.strategy, target, folds, [str(c) for c in citation_files],
                                 inputs, repeats, row_documents)
    except ValueError as exc:
        _fail(str(exc))
    click.echo(f"model {judge.model}, strategy {judge.strategy}: {len(table)} labelled citations, "
               f"{fitted.cross_validated['judged']} judged by the model; {folds}-fold cross-validated figures:\n")
    click.echo(calibration_header(fitted))
    click.echo(calibration_row(fitted))
    repeated = fitted.cross_validated.get("repeated")
    if repeated:
        click.echo(f"\nover {repeated['repeats']} fold assignments: " + repeated_summary(repeated))
    shown = "none reaches the target" if fitted.threshold is None else f"{fitted.threshold:.2f}"
    click.echo(f"\nfitted on all of them: {map_formula(fitted)}; recommended threshold: {shown} "
               f"(target {target:.0%}); folds' thresholds {fitted.cross_validated['fold_thresholds']}")
    click.echo(in_sample_ceiling(fitted))
    if len(set(names)) >= 2:
        fitted = _leave_one_domain_out(fitted, table, row_domains, row_documents, target, threshold_rule)
    if not no_save:
        click.echo(f"wrote {save_calibration(fitted, settings.write_folder)}")


def _fit_profile(pairs: list[tuple[str, str]], reviews: str, name: str, settings: AuditOptions, target: float,
                 folds: int, no_save: bool) -> None:
    """`calibrate --reviews STORE --profile NAME`: fit, show before and after, save or refuse (exit 2)."""
    from citeaudit.calibrate.profile import save_profile
    from citeaudit.workflows.profile_fit import profile_from_reviews

    fit = profile_from_reviews(pairs, reviews, name, settings, target, max(2, min(folds, 5)))
    from citeaudit.pipeline.run import AuditRun

    base = AuditRun(settings.with_(profile=None)).routing
    click.echo(f"before: {base.note()}")
    click.echo(fit.summary())
    cv = fit.after
    judged = fit.sample.strata["waiting"] + fit.sample.strata["standing"]
    click.echo(f"\nthe calibration in force and the profile on your reviews, as shares of the {judged} "
               f"judged citations they stand for (inverse-probability weights; the profile cross-validated: "
               f"{cv.get('folds', '-')} folds x {cv.get('repeats', '-')} assignments):\n")
    _show(fit.side_by_side())
    shown = "none reaches the target: every model verdict goes to review" if fit.profile.threshold is None \
        else f"{fit.profile.threshold:.2f}"
    click.echo(f"\nprofile {name}, fitted on all the reviews: {map_formula(fit.profile)}; threshold {shown} "
               f"(target {fit.profile.target:.0%})")
    if no_save:
        refused = f": it would be refused: {'; '.join(fit.problems)}" if fit.problems else ""
        click.echo(f"not saved (--no-save){refused}")
        return
    if fit.problems:
        from citeaudit.decide.calibration import profile_path

        earlier = profile_path(name, settings.write_folder)
        kept = (f". The profile {name} saved earlier ({earlier}) stays in force wherever --profile {name} is given: "
                "leave it out to route with the model's calibration") if earlier.is_file() else ""
        _fail(f"profile {name} not saved: " + "; ".join(fit.problems) + kept)
    path = save_profile(fit, settings.write_folder)
    click.echo(f"wrote {path}; `--profile {name}` (or CITEAUDIT_PROFILE={name}) routes with it")


def _labelled_pair(value: str) -> tuple[str, str]:
    source, sep, citations = value.rpartition(":")
    if not sep or not source or not citations:
        raise click.BadParameter(f"{value!r} is not SOURCE:CITATIONS (e.g. rfc7519.txt:data/eval_rfc7519.json)",
                                 param_hint="--set")
    return source, citations


@main.command("judge-setup")
@settings_options(with_threshold=False, default_mode=CacheMode.RECORD)
@click.option("--set", "pairs", multiple=True, metavar="SOURCE:CITATIONS",
              help="A labelled set to record (repeat; default every bundled one, the Makefile's QUOTE_SETS).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Only the first N citations of each set (a quick trial; a calibration wants them all).")
@click.option("--target", type=click.FloatRange(0.5, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@click.option("--folds", type=click.IntRange(2, 20), default=10, show_default=True, help="Cross-validation folds.")
@click.option("--repeats", type=click.IntRange(0, 200), default=20, show_default=True,
              help="Fold assignments of the repeated cross-validation (0: only the first).")
@click.option("--dry-run", is_flag=True, help="Print the cost estimate and stop: nothing is asked or written.")
def judge_setup(settings: AuditOptions, pairs: tuple[str, ...], limit: int | None, target: float, folds: int,
                repeats: int, dry_run: bool) -> None:
    """Bring your own judge: record every labelled set with the configured endpoint, fit and save
    the model's calibration, and show it beside the shipped Qwen calibration.

    The endpoint is OPENAI_BASE_URL (with OPENAI_API_KEY as it needs). The cost estimate (calls and
    prompt tokens, less what is already recorded) is printed before anything is asked; a rerun asks
    only what is missing. Answers and the calibration go to your user cache (cache/local/, or
    CITEAUDIT_USER_CACHE); the next `citeaudit audit --model NAME` routes with the calibration.
    """
    from citeaudit.errors import JudgeError
    from citeaudit.workflows.judge_setup import labelled_sets, setup_judge, setup_plan

    sets = [_labelled_pair(p) for p in pairs] or None
    if dry_run:
        click.echo(setup_plan(settings, labelled_sets(sets, limit)).summary())
        return
    try:
        result = setup_judge(settings, sets, limit, target, folds, repeats, say=click.echo)
    except JudgeError as exc:  # some citations could not be judged: what was answered is recorded
        click.echo(f"error: {printable_lines(exc)}", err=True)
        sys.exit(EXIT_JUDGE)
    fitted = result.calibration
    click.echo(f"\n{result.plan.to_do} calls asked, {result.plan.cached} reused, in {result.seconds:.0f} s.")
    click.echo(f"\n{fitted.model} / {fitted.strategy} beside the shipped Qwen judge, same labelled sets, "
               f"{folds}-fold cross-validated:\n")
    header, rule = calibration_header(fitted).split("\n")
    click.echo(f"| judge {header}\n|---{rule}")
    for name, calibration in result.comparison.calibrations.items():
        click.echo(f"| {name.rsplit(' / ', 1)[0]}{' (shipped)' if 'shipped' in name else ''} "
                   + calibration_row(calibration))
    shown = "none reaches the target" if fitted.threshold is None else f"{fitted.threshold:.2f}"
    click.echo(f"\nrecommended threshold of {fitted.model} / {fitted.strategy}: {shown} (target {target:.0%}); "
               f"{map_formula(fitted)}")
    click.echo(in_sample_ceiling(fitted))
    click.echo(result.saved_note())


DOMAIN_HEADER = ("| held-out domain | judged | said no to every question | threshold | verdicts that stand "
                 "| of them right | false verified (of the failing) |\n|---|---|---|---|---|---|---|")


def _held_out_cells(f: pd.Series | dict) -> str:
    """Verdicts that stand, of them right, false verified: one domain's (or `all`'s) held-out cells."""
    judged, stand, right, failing, false = (int(f[k]) for k in (
        "judged", "stand", "stand_right", "failing", "false_verified"))
    return (f"{stand}/{judged} ({stand / judged if judged else float('nan'):.1%}) "
            f"| {f'{right}/{stand} ({right / stand:.1%})' if stand else '-'} "
            f"| {f'{false}/{failing} ({false / failing:.1%})' if failing else '-'}")


def domain_rows(figures: pd.DataFrame) -> list[str]:
    """The leave-one-domain-out table's rows, one per domain of `calibrate.domain_figures` and `all`."""
    import pandas as pd

    rows = []
    per_domain = figures.drop(index="all", errors="ignore")["threshold"]
    mixed = per_domain.nunique(dropna=False) > 1
    for name, f in figures.iterrows():
        threshold = "each its own" if name == "all" and mixed else \
            "none" if pd.isna(f["threshold"]) else f"{f['threshold']:.2f}"
        said_no = "-" if pd.isna(f.get("said_no_share", float("nan"))) else f"{f['said_no_share']:.1%}"
        rows.append(f"| {name} | {int(f['judged'])} | {said_no} | {threshold} | {_held_out_cells(f)} |")
    return rows


SIDE_BY_SIDE_HEADER = ("| strategy | pooled: stand, mean of R fold assignments | of them right | held out by domain: "
                       "stand | of them right | false verified (of the failing) | held out, best threshold in "
                       "hindsight: stand |\n|---|---|---|---|---|---|---|")


CEILING_NOTE = ("best threshold in hindsight: the one threshold at which the most held-out verdicts stand at least "
                "{target:.0%} right, chosen on their labels: a ceiling, not an estimate. No single threshold on "
                "these scores does better; below the coverage you need, only better-ranked answers (a stronger judge) "
                "get there.")


def in_sample_ceiling(fitted: Calibration) -> str:
    """The line that says how many verdicts the best threshold in hindsight lets stand on target in
    sample (`cross_validated["ceiling_in_sample"]`): the most favourable reading of the map."""
    ceiling = fitted.cross_validated.get("ceiling_in_sample")
    return ("in sample, best threshold in hindsight (the map scored on the rows it was fitted on): "
            + (f"{_ceiling_cell(ceiling)} stand" if ceiling else "no verdict stands")
            + f" at least {fitted.target:.0%} right")


def _ceiling_cell(ceiling: dict | None) -> str:
    """The most that stand at the target at one threshold, and that threshold (`calibrate.coverage_ceiling`)."""
    if not ceiling:
        return "none reaches the target"
    return f"{ceiling['stand']}/{ceiling['judged']} ({ceiling['coverage']:.1%}) at {ceiling['threshold']:.2f}"


def side_by_side(fitted: Calibration) -> str | None:
    """Header and row of the pooled cross-validation (the mean over its fold assignments, or its one
    assignment) beside leave-one-domain-out over all domains; None without the latter."""
    cv = fitted.cross_validated
    held = cv.get("leave_one_domain_out")
    if not held:
        return None
    everything = next(d for d in held["domains"] if d["domain"] == "all")
    repeated = cv.get("repeated")
    if repeated:
        header = SIDE_BY_SIDE_HEADER.replace(" R fold", f" {repeated['repeats']} fold")
        stand, right = repeated["coverage_mean"], repeated["precision_mean"]
    else:
        header = SIDE_BY_SIDE_HEADER.replace("mean of R fold assignments", "one fold assignment")
        stand, right = cv["coverage"], cv["precision"]
    return (f"{header}\n| {fitted.strategy} | {stand:.1%} | {right:.1%} | {_held_out_cells(everything)} "
            f"| {_ceiling_cell(held.get('ceiling'))} |")


def _leave_one_domain_out(fitted: Calibration, table: pd.DataFrame, row_domains: list[str],
                          row_documents: list[str], target: float, threshold_rule: str) -> Calibration:
    """Print the leave-one-domain-out figures and what the worst-domain rule picks
    (`calibrate.domains.hold_out_calibration`); the calibration it returns."""
    from citeaudit.calibrate.domains import hold_out_calibration

    try:
        result = hold_out_calibration(fitted, table, row_domains, row_documents, target, threshold_rule)
    except ValueError as exc:
        _fail(str(exc))
    click.echo(f"\nleave-one-domain-out (each domain scored by the map and threshold fitted on the other "
               f"domains, target {target:.0%}):\n")
    click.echo(DOMAIN_HEADER)
    for row in domain_rows(result.own):
        click.echo(row)
    for domain, why in result.held[["domain", "uncovered"]].dropna().drop_duplicates().itertuples(index=False):
        click.echo(f"\n{domain} held out, not covered: {why}")
    if result.at_worst is None:
        click.echo(f"\nworst held-out domain ≥{target:.0%} right: no threshold reaches it")
    else:
        click.echo(f"\nworst held-out domain ≥{target:.0%} right: threshold {result.worst:.2f} (one threshold for "
                   "every domain, each scored by the map fitted on the others; chosen on these held-out "
                   "figures, so they are not a further held-out estimate):\n")
        click.echo(DOMAIN_HEADER)
        for row in domain_rows(result.at_worst):
            click.echo(row)
    both = side_by_side(result.calibration)
    if both:
        click.echo(f"\npooled and held out by domain, side by side:\n\n{both}")
        click.echo(f"\n{CEILING_NOTE.format(target=target)}")
    if threshold_rule == "worst-domain":
        worst, pooled = result.worst, result.pooled_threshold
        click.echo(f"threshold rule worst-domain: the calibration's threshold is "
                   f"{'none' if worst is None else f'{worst:.2f}'} (pooled rule: "
                   f"{'none' if pooled is None else f'{pooled:.2f}'})")
    return result.calibration

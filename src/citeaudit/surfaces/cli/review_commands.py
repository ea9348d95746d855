"""Commands on human reviews: `review` (one, or a batch file) and `agreement` (judge versus human).

Both take the audited input as the audit took it, and route it with the same settings (the
recorded answers in replay mode: no model is called), so a review records how its citation came
before the reviewer (a spot check, a waiting citation, or an override of a standing verdict) and
the agreement sees the same spot checks the audit drew.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citeaudit.errors import InputError
from citeaudit.printable import printable, printable_lines
from citeaudit.stores import atomic_write_text
from citeaudit.surfaces.cli.app import EXIT_USAGE, _show, main
from citeaudit.surfaces.cli.audit_commands import _audit_inputs
from citeaudit.surfaces.cli.params import (
    _choice,
    input_options,
    locate_only_option,
    routing_options,
    settings_options,
)
from citeaudit.table import REVIEW_VERDICTS, Selection

SELECTION_WORDS = {Selection.SPOT_CHECK: "spot check", Selection.WAITING: "waiting", Selection.OVERRIDE: "override"}

# the pipeline is imported by each command when it runs (`citeaudit --help` starts without it)
if TYPE_CHECKING:
    from citeaudit.decide.agreements import Agreement
    from citeaudit.pipeline.audit import Audit
    from citeaudit.settings.options import AuditOptions


def _audited(settings: AuditOptions, locate_only: bool, reviews: str | None = None, **inputs: object) -> Audit:
    """The input audited as `audit` would (the judge in the settings' cache mode), reviews applied."""
    return _audit_inputs(**inputs, options=settings, locate_only=locate_only, reviews=reviews)  # type: ignore[arg-type]


@main.command()
@click.option("--reviews", required=True, type=click.Path(dir_okay=False),
              help="Review store (JSON Lines) to append to.")
@input_options
@click.option("--id", "citation_id", default=None, help="The citation reviewed (an id of the audit table).")
@click.option("--verdict", type=_choice(REVIEW_VERDICTS), default=None)
@click.option("--batch", "batch_file", type=click.Path(dir_okay=False), default=None,
              help="Instead of --id and --verdict: a CSV (header id,verdict,note) or JSON Lines file of reviews, "
                   "recorded in one go; a bad row is reported with its line and the others still go in.")
@click.option("--reviewer", default=None, help="Who reviewed (with --batch: for the rows that name no reviewer).")
@click.option("--note", default=None, help="Why.")
@settings_options
@routing_options
@locate_only_option
def review(reviews: str, source: tuple[str, ...], citations: str | None, document: str | None, answer: str | None,
           answer_json: str | None, sources_json: str | None, response: str | None, response_format: str | None,
           sections: str, citation_id: str | None, verdict: str | None, batch_file: str | None, reviewer: str | None,
           note: str | None, settings: AuditOptions, locate_only: bool) -> None:
    """Record a human review of one citation, or a batch of them, bound to the evidence each shows now.

    The input is audited as `audit` audits it (same options; replay mode calls no model), so each
    review records how its citation was selected: a spot check, a waiting citation, or an override.
    """
    from citeaudit.decide.batch_review import review_batch
    from citeaudit.decide.reviews import bound_review, load_reviews, store_review

    if batch_file is None and (citation_id is None or verdict is None):
        raise click.UsageError("give --id and --verdict (one review), or --batch FILE (a CSV or JSON Lines of "
                               "id, verdict, note)")
    if batch_file is not None and (citation_id is not None or verdict is not None or note is not None):
        raise click.UsageError("--batch takes the ids, verdicts and notes from its file: leave out --id, --verdict "
                               "and --note")
    if Path(reviews).suffix.lower() != ".json":
        load_reviews(reviews)  # the store is checked before the input is audited, as `audit` and `agreement` do
    audit = _audited(settings, locate_only, source=source, citations=citations, document=document, answer=answer,
                     answer_json=answer_json, sources_json=sources_json, response=response,
                     response_format=response_format, sections=sections)
    if batch_file is None:
        assert citation_id is not None and verdict is not None
        recorded = store_review(reviews, bound_review(audit.table, citation_id, verdict, reviewer, note))
        how = f", {SELECTION_WORDS[recorded.selection]}" if recorded.selection is not None else ""
        click.echo(f"recorded {recorded.verdict} for {printable(recorded.citation_id)} "
                   f"(fingerprint {recorded.fingerprint[:12]}{how}) in {reviews}")
        return
    outcome = review_batch(audit.table, batch_file, reviews, reviewer)
    for problem in outcome.problems:
        click.echo(f"error: {batch_file}, {printable_lines(problem)}", err=True)
    click.echo(outcome.summary(reviews))
    if outcome.problems:
        sys.exit(EXIT_USAGE)


def show_agreement(result: Agreement) -> None:
    """The agreement on the terminal: the confusion table, agreement per source, the spot checks,
    the stale reviews left out, and the warning when the promise does not hold."""
    reviewed, citations = result.counts["reviewed"], result.counts["citations"]
    click.echo(f"\njudge versus human over the {reviewed} current review(s) of {citations} citation(s):")
    if reviewed:
        _show(result.confusion_view())
        click.echo("\nagreement on pass or fail (what decides the answer), per source:")
        _show(result.groups_view())
    click.echo("\n" + result.spot.line())
    if result.stale:
        click.echo(f"stale reviews left out ({len(result.stale)}: the claim or the evidence changed since; review "
                   f"them again): {', '.join(printable(s) for s in result.stale)}")
    if result.warning:
        click.echo(f"warning: {result.warning}")


@main.command("agreement")
@click.option("--reviews", required=True, type=click.Path(dir_okay=False, exists=True),
              help="Review store (JSON Lines, or a seed-000 reviews.json) whose reviews are compared with the judge "
                   "(`citeaudit review` writes one; a path where none is, a typo most likely, is an error).")
@input_options
@settings_options
@routing_options
@locate_only_option
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the numbers as one JSON object.")
def agreement_command(reviews: str, source: tuple[str, ...], citations: str | None, document: str | None,
                      answer: str | None, answer_json: str | None, sources_json: str | None, response: str | None,
                      response_format: str | None, sections: str, settings: AuditOptions, locate_only: bool,
                      json_path: str | None) -> None:
    """Judge versus human over the current reviews: the confusion table, agreement per source with a
    95% interval, and the precision of standing verdicts from the spot checks beside the promise."""
    from citeaudit.decide.agreements import agreement

    audit = _audited(settings, locate_only, reviews, source=source, citations=citations, document=document,
                     answer=answer, answer_json=answer_json, sources_json=sources_json, response=response,
                     response_format=response_format, sections=sections)
    if audit.table.empty:
        raise InputError("the input has no citation to compare reviews with")
    result = agreement({audit.name: audit.table}, audit.routing)
    click.echo(audit.routing_note())
    show_agreement(result)
    if json_path:
        atomic_write_text(json_path, json.dumps(result.to_dict(), ensure_ascii=False, indent=2, allow_nan=False) + "\n")
        click.echo(f"wrote {json_path}")

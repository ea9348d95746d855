"""Human reviews, bound by a fingerprint to exactly what the reviewer saw.

A review store is a JSON Lines file, one review per line, appended whole (see `stores.append_record`):
`citation_id, fingerprint, verdict (verified | contradicted | unsupported), reviewer, note,
timestamp`, and `selection` when known: how the citation came before the reviewer (`spot_check`,
`waiting` or `override`, `table.Selection`), which a calibration fitted on reviews needs (only
spot checks sample the standing verdicts without bias); stores written before it keep loading.

The fingerprint is `fingerprint(claim_id, claim_text, citation_id, source_content)` over the
citation's id, its claim, what it points at and the evidence text, so editing the claim or the
evidence afterwards makes the review `stale`, which counts as no review. The latest review of a
citation is the one that counts.

Seed 000's `reviews.json` (`{"reviews": [{claim_id, fingerprint, verdict}]}`) is read as a store
too, `supported` meaning `verified`.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from citeaudit import table as C
from citeaudit.citations.sourceid import SeedReview, load_json
from citeaudit.decide.fingerprints import fingerprint
from citeaudit.decide.state import selection_of
from citeaudit.errors import InputError
from citeaudit.stores import append_record, read_records
from citeaudit.table import REVIEW_VERDICTS, Row, Selection, Verdict

# seed 000's review verdicts, in our words
SEED_VERDICTS = {"supported": Verdict.VERIFIED, "unsupported": Verdict.UNSUPPORTED}


class Review(BaseModel):
    """One human review, as stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    citation_id: str = Field(min_length=1)
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    verdict: Verdict
    reviewer: str | None = None
    note: str | None = None
    timestamp: str | None = None
    selection: Selection | None = None  # absent in stores written before spot checks

    @field_validator("verdict")
    @classmethod
    def _reviewable(cls, value: Verdict) -> Verdict:
        if value not in REVIEW_VERDICTS:
            raise ValueError(f"a review says one of {', '.join(REVIEW_VERDICTS)}")
        return value


def review_store_path(name: str, folder: Path) -> Path:
    """`<folder>/<name>.jsonl`: where notebooks keep a review store (`folder`: the settings'
    `review_dir()`, `CITEAUDIT_REVIEW_DIR` or `reviews/`)."""
    return Path(folder) / f"{name}.jsonl"


@dataclass(frozen=True)
class ReviewCommand:
    """How to record a review of one citation from a shell: `citeaudit review` with the audit's
    input options (`(option, value)` pairs, as the audit's command was given them) and the store.

    The verdict is the placeholder `VERDICT` (one of `REVIEW_VERDICTS`): the human decides it,
    so no printed command records a verdict as it stands.

    >>> ReviewCommand((("--source", "rfc7519.txt"), ("--citations", "my cites.json")), "r.jsonl").command("c 1")
    "citeaudit review --reviews r.jsonl --source rfc7519.txt --citations 'my cites.json' --id 'c 1' --verdict VERDICT"
    """

    inputs: tuple[tuple[str, str], ...]
    store: str

    PLACEHOLDER = "VERDICT"

    def command(self, citation_id: str) -> str:
        """The command, quoted for a POSIX shell."""
        args = ["citeaudit", "review", "--reviews", self.store]
        for option, value in self.inputs:
            args += [option, value]
        return shlex.join([*args, "--id", citation_id, "--verdict"]) + f" {self.PLACEHOLDER}"

    def legend(self) -> str:
        """What to put for the placeholder, and what to do after."""
        return (f"{self.PLACEHOLDER}: {', '.join(REVIEW_VERDICTS[:-1])} or {REVIEW_VERDICTS[-1]}; the review is "
                f"bound to the evidence the citation shows now. Then rerun with --reviews {shlex.quote(self.store)}.")


def default_store(inputs: Sequence[tuple[str, str]], given: str | Path | None, folder: Path) -> str:
    """The review store a printed review command names: `given` when it is a JSON Lines store
    (not seed 000's reviews.json, which is read, never appended to), else the store notebook 05
    keeps for the same file (`review_store_path` of the citations' or answer's stem in the review
    folder `folder`), relative to the working directory when it is under it."""
    if given is not None and Path(given).suffix != ".json":
        return str(given)
    named = dict(inputs)
    stem = Path(named.get("--citations") or named.get("--answer") or named.get("--answer-json") or "reviews").stem
    path = review_store_path(stem, folder)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def row_fingerprint(row: Row) -> str | None:
    """The fingerprint of what a reviewer of this row sees; None when there is no evidence."""
    if row[C.EVIDENCE] is None:
        return None
    locator = row[C.FOUND_SECTION] or row[C.CITED_SECTION] or ""
    return fingerprint(str(row[C.ID]), str(row[C.CLAIM]), str(locator), str(row[C.EVIDENCE]))


REVIEW_FIELDS = ("citation_id", "fingerprint", "verdict")  # what makes a line a review


def load_reviews(path: str | Path) -> list[Review]:
    """Reviews of a JSON Lines store, or of a seed-000 `reviews.json`. A missing store is empty.

    A store line cut short by a crash is skipped (it never was a review); a whole line that is
    not a valid review raises `InputError` naming the file, the line and the field.
    """
    path = Path(path)
    if not path.exists():
        return []
    if path.suffix == ".json":  # seed 000's reviews.json; a store is JSON Lines
        return _seed_reviews(path)
    reviews = []
    for n, record in enumerate(read_records(path, REVIEW_FIELDS), start=1):
        try:
            reviews.append(Review.model_validate(record))
        except ValidationError as exc:
            field = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "(line)"
            raise InputError(
                f"{path}: review {n}, field {field!r}: {exc.errors()[0]['msg']}. Fix or remove that line; "
                "reviews are written by `citeaudit review`."
            ) from None
    return reviews


def _seed_reviews(path: Path) -> list[Review]:
    data = load_json(path, "reviews")
    try:
        if not isinstance(data, dict) or set(data) != {"reviews"} or not isinstance(data["reviews"], list):
            raise ValueError('the top level must be {"reviews": [...]}')
        seeds = [SeedReview.model_validate(r) for r in data["reviews"]]
    except (ValueError, ValidationError) as exc:
        raise InputError(f"{path}: not a reviews.json of the seed format ({exc}); run `citeaudit contract` "
                         "on it.") from None
    return [Review(citation_id=r.claim_id, fingerprint=r.fingerprint, verdict=SEED_VERDICTS[r.verdict])
            for r in seeds]


def new_review(citation_id: str, fingerprint_hex: str, verdict: str | Verdict, reviewer: str | None = None,
               note: str | None = None, selection: Selection | None = None) -> Review:
    """A review stamped now (UTC); a verdict a reviewer cannot give is an `InputError`."""
    if verdict not in REVIEW_VERDICTS:
        raise InputError(f"review verdict {verdict!r} is not one of {', '.join(REVIEW_VERDICTS)}.")
    return Review(citation_id=citation_id, fingerprint=fingerprint_hex, verdict=Verdict(verdict), reviewer=reviewer,
                  note=note, timestamp=datetime.now(UTC).isoformat(timespec="seconds"), selection=selection)


def store_review(path: str | Path, review: Review) -> Review:
    """Append one review to the store, at once, as one whole line (`selection` only when known,
    so a review of an unsettled table reads as one of an older store). A store that `load_reviews`
    refuses (a line that is not a valid review) is refused here too, and left untouched."""
    if Path(path).suffix.lower() != ".json":  # a .json is never appended to: `append_record` says so
        load_reviews(path)
    record = review.model_dump(mode="json")
    if record["selection"] is None:
        del record["selection"]
    append_record(Path(path), record, REVIEW_FIELDS)
    return review


def record_review(path: str | Path, citation_id: str, fingerprint_hex: str, verdict: str | Verdict,
                  reviewer: str | None = None, note: str | None = None, selection: Selection | None = None) -> Review:
    """Append one review to the store, at once, as one whole line."""
    return store_review(path, new_review(citation_id, fingerprint_hex, verdict, reviewer, note, selection))


def bound_review(table: pd.DataFrame, citation_id: str, verdict: str | Verdict, reviewer: str | None = None,
                 note: str | None = None) -> Review:
    """A review of the row with `citation_id`, bound to the evidence that row shows, with its
    `selection` when the table is settled (`state.selection_of`); not yet stored. An unknown id,
    a row without evidence or a verdict a reviewer cannot give is an `InputError`."""
    matches = table.index[table[C.ID] == citation_id]
    if len(matches) == 0:
        ids = list(map(str, table[C.ID]))
        shown = ", ".join(ids[:20]) + (f", ... ({len(ids)} in all)" if len(ids) > 20 else "")
        raise InputError(f"no citation {citation_id!r}; ids are: {shown}.")
    row = table.loc[matches[0]]
    digest = row_fingerprint(row)
    if digest is None:
        raise InputError(f"citation {citation_id!r} has no evidence to review ({row[C.FABRICATED_REASON]}).")
    selection = selection_of(row) if C.STATE in row.index else None
    return new_review(citation_id, digest, verdict, reviewer, note, selection)


def review_row(table: pd.DataFrame, citation_id: str, store: str | Path, verdict: str | Verdict,
               reviewer: str | None = None, note: str | None = None) -> Review:
    """Record a review of the row with `citation_id`, bound to the evidence that row shows
    (`bound_review`), in the store."""
    return store_review(store, bound_review(table, citation_id, verdict, reviewer, note))

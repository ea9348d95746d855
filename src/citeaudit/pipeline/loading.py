"""Loading inputs by name from the data folders in force: the public loaders.

A source named without a usable path (`load_rfc("rfc7519.txt")`, a dataset line's `"source"`) is
looked for in the folders the settings name, read here when each loader is called: `source_dirs()`
(`CITEAUDIT_DATA_DIR` first, the working directory, the shipped `data/`, downloaded sources,
`../shared/data/rfc` beside a checkout), `download_dir()` for a pinned RFC found nowhere, and for a
dataset `dataset_dirs()`, where its sources may be by default. The stages below (`sources`,
`citations`) read no setting: each of these passes the folders to the stage function of the same
name, with the same arguments and the same errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from citeaudit.citations import dataset, lines
from citeaudit.citations.dataset import Item
from citeaudit.citations.lines import LineAnswer
from citeaudit.settings import environment as config
from citeaudit.sources import reading, registry, rfc, text
from citeaudit.sources.document import Document


def resolve_source(name_or_path: str | Path, download: bool = True) -> Path:
    """Find a source file the same way wherever citeaudit runs.

    In order: the path as given; the same relative path under the shipped files (the checkout's
    root, or the installed package's); the file's name in each of `config.source_dirs()`
    (`CITEAUDIT_DATA_DIR`, the working directory, `data/`, downloaded sources, `../shared/data/rfc`
    beside a checkout); then, for names in `PINNED_SOURCES` only (when `download`), a download
    checked against the pinned SHA-256 and saved in `config.download_dir()` (the checkout's
    `data/`, else your folder; written to a temporary file and renamed, never half-written). When
    nothing is found the error lists every place looked (`sources.reading.resolve_source`).
    """
    return reading.resolve_source(name_or_path, download, dirs=config.source_dirs(),
                                  download_dir=config.download_dir())


def load_document(source: str | Path, format: str | None = None, sections: str = "auto") -> Document:
    """Load a source document of any registered format; `format` names one (default: detected).

    `source` is a path or a name `resolve_source` finds (a pinned RFC found nowhere is
    downloaded). A text format's file that holds binary data, and a document with no text, are
    refused with a `SourceError` that says what to do. `sections`: for the formats that read a
    document's own numbering (plain text, Markdown, HTML, PDF), `auto` (numbered clauses when
    their numbering is consistent), `numbered` or `paragraphs` (the format's own sections);
    `Document.reading` says which was used and why.
    """
    return registry.load_document(source, format, sections, dirs=config.source_dirs(),
                                  download_dir=config.download_dir())


def load_rfc(source: str | Path = "rfc7519.txt") -> Document:
    """Load a plain-text RFC: page furniture removed, numbered sections split, lines kept.

    `source` is a path or a file name `resolve_source` finds (a pinned RFC found nowhere is
    downloaded).
    """
    return rfc.load_rfc(source, dirs=config.source_dirs(), download_dir=config.download_dir())


def load_text(source: str | Path, sections: str = "paragraphs") -> Document:
    """Load any plain-text file, a path or a name `resolve_source` finds (never downloaded).
    Sections are numbered paragraphs ("1", "2", ...) separated by blank lines; with
    `sections="headings"`, numbered headings as in an RFC ("2.1.  Title"); with `"numbered"` or
    `"auto"`, the document's numbered clauses."""
    return text.load_text(source, sections, dirs=config.source_dirs())


def load_line_answer(document: str | Path, answer: str | Path) -> LineAnswer:
    """Read a plain-text document (a path or a name `resolve_source` finds) and an answer text
    (both UTF-8); a relative answer path that is not in the working folder is looked for among
    the shipped files too (`config.find_input`)."""
    return lines.load_line_answer(document, answer, dirs=config.source_dirs())


def dataset_dirs() -> list[Path]:
    """The data folders a dataset's sources may be in by default (besides the dataset's own folder):
    `CITEAUDIT_DATA_DIR` (when set), the shipped `data/`, the folder pinned sources are downloaded
    to, and `../shared/data/rfc` beside a checkout; not the working directory (a dataset often
    comes from the system under audit)."""
    folders = [config.data_dir(), config.shipped_data_dir(), config.download_dir(), *config.shared_dirs()[:1]]
    return [folder for folder in folders if folder is not None]


def iter_dataset(path: str | Path, allow_outside_sources: bool = False) -> Iterator[Item]:
    """Every non-blank line of a JSON Lines dataset (UTF-8) as an `Item`, read line by line
    (`citations.dataset.iter_dataset`): a source named without a usable path is looked for where
    `resolve_source` looks, and one outside the dataset's folder and `dataset_dirs()` is that
    line's error unless `allow_outside_sources`. An unreadable file raises `InputError`."""
    return dataset.iter_dataset(path, allow_outside_sources, dirs=config.source_dirs(), data_dirs=dataset_dirs())


def read_dataset(path: str | Path, allow_outside_sources: bool = False) -> list[Item]:
    """Every answer of a JSON Lines dataset, in a list: `iter_dataset`'s items (a line's problem is
    its `Item.error`, naming the line; a source outside the dataset's folder and the data folders
    is an error unless `allow_outside_sources`)."""
    return list(iter_dataset(path, allow_outside_sources))

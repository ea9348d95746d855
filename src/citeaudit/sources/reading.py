"""Finding and reading source files: the same places everywhere, a bounded read, a pinned download.

`resolve_source` finds a file by path or by name in the data folders its caller passes
(downloading the pinned RFCs when missing, checked against their SHA-256); `read_bounded` reads
any input without ever taking more than its limit; `read_text` reads a UTF-8 text exactly. Every
format's loader reads through these, so every text has the same limit and the same errors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from citeaudit.errors import InputError, SourceError
from citeaudit.settings import environment as config

# Official RFC texts the loader may download, with the SHA-256 of their text after line endings
# and form feeds are normalized (see `text_digest`).
PINNED_SOURCES = {
    "rfc7519.txt": "67870b397c107d4b819682f95c5fe55c5d7095c6575fb215901b45a017d8c14e",
    "rfc6749.txt": "9356c087799f71841153103ebc7a111d56e779317b823a8890b617de1c34a25b",
}
# the largest source or answer text read (loading and indexing peak near 20 bytes per byte of text)
MAX_TEXT_BYTES = 20_000_000  # every text: a source, an answer, a PDF's extracted text
MAX_FILE_BYTES = 100_000_000  # a file read whole before its text is extracted (a PDF)
RFC_EDITOR_URL = "https://www.rfc-editor.org/rfc/{name}"


def text_digest(text: str) -> str:
    """SHA-256 of a text with CRLF/CR turned into LF and form feeds removed.

    A copy of an RFC saved with other line endings still has the same digest.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "")
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def resolve_source(name_or_path: str | Path, download: bool = True, *, dirs: Sequence[Path] = (),
                   download_dir: Path | None = None) -> Path:
    """Find a source file the same way wherever citeaudit runs, in the folders the caller passes.

    In order: the path as given; the same relative path under the shipped files (the checkout's
    root, or the installed package's); the file's name in each of `dirs`; then, for names in
    `PINNED_SOURCES` only and when `download` and `download_dir` are given, a download checked
    against the pinned SHA-256 and saved in `download_dir` (written to a temporary file and
    renamed, never half-written). When nothing is found the error lists every place looked.

    This stage reads no setting: `citeaudit.pipeline.resolve_source` (`pipeline.loading`) passes the folders
    in force, settings' `source_dirs()` (`CITEAUDIT_DATA_DIR`, the working directory, `data/`,
    downloaded sources, `../shared/data/rfc` beside a checkout) and `download_dir()` (the
    checkout's `data/`, else your folder). Without them only the path as given and the shipped
    files are tried.
    """
    path = Path(name_or_path)
    candidates = [path]
    if not path.is_absolute():
        candidates.append(config.shipped_dir() / path)
    candidates += [folder / path.name for folder in dirs]
    candidates = list(dict.fromkeys(candidates))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = "".join(f"\n  {c.absolute() if not c.is_absolute() else c}" for c in candidates)
    fix = (f"Pass the file's path, or set CITEAUDIT_DATA_DIR to the folder that holds {path.name} "
           f"(`export CITEAUDIT_DATA_DIR=/path/to/folder`).")
    if not download or download_dir is None or path.name not in PINNED_SOURCES:
        raise SourceError(f"Source {str(name_or_path)!r} not found. Looked in:{looked}\n{fix}")
    try:
        return download_source(path.name, download_dir / path.name)
    except SourceError as exc:
        raise SourceError(f"Source {str(name_or_path)!r} not found. Looked in:{looked}\n"
                          f"then tried to download it: {exc}") from exc


def download_source(name: str, dest: Path, url: str | None = None, sha256: str | None = None) -> Path:
    """Download a pinned source to `dest`, verify its digest, and only then move it into place."""
    url = url or RFC_EDITOR_URL.format(name=name)
    expected = sha256 if sha256 is not None else PINNED_SOURCES.get(name)
    if not expected:
        raise SourceError(f"No pinned SHA-256 for {name!r}; refusing to download it unverified.")
    try:
        import urllib.request  # here, not at the top: every start-up would pay for it

        with urllib.request.urlopen(url, timeout=30) as response:
            body = response.read()
    except OSError as exc:
        raise SourceError(
            f"Could not download {name} from {url}: {exc}. Save the file yourself and set "
            f"CITEAUDIT_DATA_DIR to its folder."
        ) from exc
    text = body.decode("utf-8")
    actual = text_digest(text)
    if actual != expected:
        raise SourceError(
            f"Downloaded {name} from {url} has SHA-256 {actual}, expected {expected}; not saved."
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    tmp.write_bytes(body)
    tmp.replace(dest)
    return dest


class TooLargeError(SourceError):
    """An input over its size limit (`read_bounded`)."""


class NotTextError(InputError, SourceError):
    """A text input that its first bytes show is something else: compressed, an archive, an
    office document, or text in UTF-16/32 (`not_text`). Bad input (`InputError`) wherever it is
    read; a `SourceError` too, as the other refusals of a source document are."""


_OFFICE = "export it as text or PDF from the program that made it"
# the first bytes of files that are not UTF-8 text, longest first where one begins another
_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it (`gunzip -k FILE`) and pass the file inside"),
    (b"BZh", "bzip2-compressed", "decompress it (`bunzip2 -k FILE`) and pass the file inside"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it (`unxz -k FILE`) and pass the file inside"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it (`unzstd FILE`) and pass the file inside"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract it and pass the file inside"),
    (b"Rar!\x1a\x07", "a RAR archive", "extract it and pass the file inside"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office file (.doc, .xls or .ppt)", _OFFICE),
    (b"{\\rtf", "an RTF document", _OFFICE),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian) text", ""),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian) text", ""),
    (b"\xff\xfe", "UTF-16 (little-endian) text", ""),
    (b"\xfe\xff", "UTF-16 (big-endian) text", ""),
)
_ZIP = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_ZIPPED_OFFICE = ((b"word/", "a Word document (.docx)"), (b"xl/", "an Excel workbook (.xlsx)"),
                  (b"ppt/", "a PowerPoint presentation (.pptx)"),
                  (b"application/vnd.oasis.opendocument", "an OpenDocument file (.odt, .ods, .odp)"),
                  (b"application/epub+zip", "an EPUB book"))
HEAD_BYTES = 8_192  # what `not_text` needs of a file: a zip names its first entries within it


def not_text(head: bytes) -> tuple[str, str] | None:
    r"""What a file beginning with `head` (its first `HEAD_BYTES`) is, and what to do, when its
    bytes show it is not UTF-8 text whatever its name: compressed (gzip, bzip2, xz, zstd), an
    archive (zip, 7-Zip, RAR), an office document (zipped or not, RTF), or text in UTF-16 or
    UTF-32 with a byte-order mark. None for anything else (UTF-8 text, a UTF-8 byte-order mark,
    a PDF: a format's loader judges those).

    >>> not_text(b"\x1f\x8b\x08\x00")[0], not_text(b"\xff\xfeh\x00i\x00")[0], not_text(b"plain text")
    ('gzip-compressed', 'UTF-16 (little-endian) text', None)
    """
    if head.startswith(_ZIP):
        for mark, kind in _ZIPPED_OFFICE:
            if mark in head:
                return kind, _OFFICE
        return "a zip archive", "extract it (`unzip FILE`) and pass the file inside"
    for magic, kind, fix in _MAGIC:
        if head.startswith(magic):
            encoding = kind.split(" ")[0]
            return kind, fix or (f"save it as UTF-8 (`iconv -f {encoding} -t UTF-8 FILE > FILE.utf8`, or "
                                 "your editor's Save As, encoding UTF-8)")
    return None


def refuse_not_text(path: str | Path, head: bytes, what: str) -> None:
    """`NotTextError` naming `path`, what its bytes show it is and the fix, when `not_text(head)`."""
    found = not_text(head)
    if found is not None:
        kind, fix = found
        raise NotTextError(f"{path} is {kind}, not the UTF-8 text a {what} is: {fix.replace('FILE', str(path))}.")


def read_bounded(path: str | Path, limit: int, what: str = "file", text: bool = False) -> bytes:
    """The bytes of `path`, read in chunks and never more than `limit` of them: a regular file over
    the limit is refused before reading (by its size), anything else (a pipe, a device, a file that
    grows) as soon as the limit is passed. `TooLargeError` names the file, the limit and the fix;
    an `OSError` passes through for the caller to word. `text`: the file must be UTF-8 text, and
    one whose bytes show it is something else is refused first (`NotTextError`, `not_text`)."""
    path = Path(path)
    size = path.stat().st_size
    if path.is_file() and size > limit:
        raise TooLargeError(f"{path} is {size:,} bytes; citeaudit reads a {what} of up to {limit:,} bytes. "
                            "Split it and audit each part on its own.")
    chunks, total = [], 0
    with open(path, "rb") as handle:
        while chunk := handle.read(min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TooLargeError(f"{path} holds more than {limit:,} bytes (it is not a regular file, or it "
                                    f"grew while read); citeaudit reads a {what} of up to {limit:,} bytes. "
                                    "Split it and audit each part on its own.")
    data = b"".join(chunks)
    if text:
        refuse_not_text(path, data[:HEAD_BYTES], what)
    return data


def bounded_lines(path: str | Path, limit: int, line_limit: int, what: str = "file") -> Iterator[tuple[bytes, int]]:
    """The lines of `path` split on `\n` alone (without it), each with its length in bytes, read
    one at a time and never more than `line_limit` + 1 bytes of one line held: a longer line is
    given cut there, with its whole length (the caller refuses it), and the rest of it is skipped
    in chunks. A regular file over `limit` is refused before reading, anything else (a pipe,
    `/dev/zero`, a file that grows) as soon as the bytes read pass `limit` (`TooLargeError`)."""
    path = Path(path)
    fix = f"citeaudit reads a {what} of up to {limit:,} bytes. Split it and audit each part on its own."
    if path.is_file() and path.stat().st_size > limit:
        raise TooLargeError(f"{path} is {path.stat().st_size:,} bytes; {fix}")
    total = 0

    def count(n: int) -> None:
        nonlocal total
        total += n
        if total > limit:
            raise TooLargeError(f"{path} holds more than {limit:,} bytes (it is not a regular file, or it grew "
                                f"while read); {fix}")

    with open(path, "rb") as handle:
        while raw := handle.readline(line_limit + 1):
            count(len(raw))
            length, ended = len(raw), raw.endswith(b"\n")
            while not ended and length > line_limit:  # an over-long line: the rest of it is skipped
                rest = handle.readline(1 << 16)
                if not rest:
                    break
                count(len(rest))
                length, ended = length + len(rest), rest.endswith(b"\n")
            yield raw.removesuffix(b"\n"), length - ended


def read_text(path: Path, limit: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 file exactly (no newline translation), with a clear error if it cannot be.

    A file larger than `limit` bytes is refused (`read_bounded`: before reading, or while reading
    a pipe or a device): indexing costs memory in proportion to the text.
    """
    try:
        return read_bounded(path, limit, "text", text=True).decode("utf-8")
    except (TooLargeError, NotTextError):
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"Cannot read source {path}: {exc}. Check the path and that it is UTF-8.") from exc


def read_head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a file (and no more: a huge file or a device is not read whole)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise SourceError(f"Cannot read source {path}: {exc.strerror or exc}. Check the path.") from exc

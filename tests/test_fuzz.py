"""The fuzzing harness (issue 53): every reader and every command's inputs, given generated and
mutated files (the shipped examples, corrupted), must end in exit 0, 1 or 2 only, never 4 or a
traceback, never ACCEPT where the input was damaged, in bounded time and memory.

Each reader is a command line that reads one kind of file (`READERS`): the shipped example it
starts from is copied to a temporary folder, one file of it replaced by a mutation (`mutations`:
bytes flipped, cut, repeated or spliced from another example, hostile tokens inserted, the file
compressed or re-encoded, or bytes made up whole), and the command run in this process.

The suite runs a small budget per reader: the `classic` corruptions, then `FUZZ_EXAMPLES` mutations
(6 by default, derandomized so that CI sees the same examples every run); `make fuzz` runs many
more, random, with Hypothesis's database keeping any failure for the next run (`FUZZ_EXAMPLES=300`,
`FUZZ_RANDOM=1`).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from citeaudit.judge.hidden_states import probe_weights_path
from citeaudit.judge.localmodel import MODELS
from citeaudit.pipeline import resolve_source
from citeaudit.settings.environment import DEFAULT_STRATEGY
from citeaudit.surfaces import cli

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
RANDOM = os.environ.get("FUZZ_RANDOM", "") == "1"
SECONDS = 120  # one command on one mutated file: a ceiling against a hang, not a speed target
MAX_RSS_KB = 3_000_000  # the test process's peak: a ceiling against a blow-up (/dev/zero took 2.2 GB)
QWEN = MODELS["qwen"].name
# where `make fuzz` keeps failing examples for the next run (the test runs in a temporary folder)
DATABASE = DirectoryBasedExampleDatabase(Path(__file__).resolve().parents[1] / ".hypothesis" / "examples")


@dataclass(frozen=True)
class Reader:
    """A command that reads `target` (the file mutated) among `files` (copied beside it: name ->
    shipped file); `args(folder)` is its command line; `env(folder)` its environment; `json`:
    the target is JSON (damaged when it no longer parses); `prepare(folder)` makes the target
    when no file is shipped as it is (a review store, a user's recordings)."""

    files: dict[str, Path | str]  # a str: a source's name, found as `load_document` finds it
    target: str
    args: Callable[[Path], list[str]]
    env: Callable[[Path], dict[str, str]] = lambda folder: {}
    json: bool = False
    prepare: Callable[[Path], None] | None = None


def _run(args: list[str], env: dict[str, str] | None = None) -> None:
    made = CliRunner().invoke(cli.main, args, env=env)
    assert made.exit_code == 0, made.output


def _recordings(folder: Path) -> None:
    """A user's recordings: the first 200 lines of the shipped recording (real answers; the
    example's are among them)."""
    shipped = (DATA.parent / "cache" / f"{QWEN}.jsonl").read_bytes().split(b"\n")
    (folder / "user").mkdir(parents=True, exist_ok=True)
    (folder / "user" / f"{QWEN}.jsonl").write_bytes(b"\n".join(shipped[:200]) + b"\n")


def _calibration(name: str) -> Path:
    return DATA.parent / "cache" / "calibration" / f"{QWEN}.{name}.json"


FORMATS = DATA / "formats"
CONTRACT = DATA / "contract"
EXAMPLE = DATA / "rfc7519_citations.json"


def _user(folder: Path) -> dict[str, str]:
    return {"CITEAUDIT_USER_CACHE": str(folder / "user")}


def _audit(source: str, citations: str, *more: str) -> Callable[[Path], list[str]]:
    return lambda folder: ["audit", "--source", str(folder / source), "--citations", str(folder / citations), *more]


READERS: dict[str, Reader] = {
    "citations": Reader({"c.json": EXAMPLE, "rfc7519.txt": "rfc7519.txt"}, "c.json",
                        _audit("rfc7519.txt", "c.json"), json=True),
    "rfc source": Reader({"rfc7519.txt": "rfc7519.txt", "c.json": EXAMPLE}, "rfc7519.txt",
                         _audit("rfc7519.txt", "c.json", "--locate-only")),
    "text source": Reader({"note.txt": FORMATS / "field-note.txt", "c.json": FORMATS / "field-note_citations.json"},
                          "note.txt", _audit("note.txt", "c.json", "--locate-only")),
    "markdown source": Reader({"doc.md": FORMATS / "lantern-sync.md",
                               "c.json": FORMATS / "lantern-sync_citations.json"},
                              "doc.md", _audit("doc.md", "c.json", "--locate-only")),
    "html source": Reader({"doc.html": FORMATS / "token-service.html",
                           "c.json": FORMATS / "token-service_citations.json"},
                          "doc.html", _audit("doc.html", "c.json", "--locate-only")),
    "pdf source": Reader({"doc.pdf": FORMATS / "reservoir-report.pdf",
                          "c.json": FORMATS / "reservoir-report_citations.json"},
                         "doc.pdf", _audit("doc.pdf", "c.json", "--locate-only")),
    "e-Gov source": Reader({"law.xml": "unauthorized-access-act-128-1999.egov.xml",
                            "c.json": DATA / "ja" / "unauthorized-access_step1_citations.json"},
                           "law.xml", _audit("law.xml", "c.json", "--locate-only")),
    "line answer": Reader({"doc.txt": DATA / "lines" / "field_note.txt", "a.txt": DATA / "lines" / "good_answer.txt"},
                          "a.txt", lambda f: ["lines", "--document", str(f / "doc.txt"), "--answer", str(f / "a.txt")]),
    "line document": Reader({"doc.txt": DATA / "lines" / "field_note.txt",
                             "a.txt": DATA / "lines" / "good_answer.txt"},
                            "doc.txt", lambda f: ["lines", "--document", str(f / "doc.txt"), "--answer",
                                                  str(f / "a.txt")]),
    **{f"contract {part}": Reader({n: CONTRACT / n for n in ("answer.json", "sources.json", "reviews.json")},
                                  part, lambda f: ["contract", *(str(f / n) for n in
                                                                 ("answer.json", "sources.json", "reviews.json"))],
                                  json=True)
       for part in ("answer.json", "sources.json", "reviews.json")},
    "vendor response": Reader({"r.json": DATA / "responses" / "openai_chat.json",
                               "rfc7519.txt": "rfc7519.txt"},
                              "r.json", lambda f: ["audit", "--response", str(f / "r.json"), "--source",
                                                   str(f / "rfc7519.txt"), "--locate-only"], json=True),
    "dataset": Reader({"d.jsonl": DATA / "batch" / "example.jsonl", "rfc7519.txt": "rfc7519.txt"},
                      "d.jsonl", lambda f: ["batch", str(f / "d.jsonl"), "--output", str(f / "rows.jsonl")]),
    "review store": Reader({"b.csv": DATA / "rfc7519_reviews.csv", "c.json": EXAMPLE},
                           "store.jsonl", lambda f: ["audit", "--source", "rfc7519.txt", "--citations",
                                                     str(f / "c.json"), "--reviews", str(f / "store.jsonl")],
                           prepare=lambda f: _run(["review", "--source", "rfc7519.txt", "--citations",
                                                   str(f / "c.json"), "--reviews", str(f / "store.jsonl"), "--batch",
                                                   str(f / "b.csv")])),
    "recordings": Reader({"c.json": EXAMPLE}, f"user/{QWEN}.jsonl",
                         lambda f: ["audit", "--source", "rfc7519.txt", "--citations", str(f / "c.json")], env=_user,
                         prepare=_recordings),
    "review batch": Reader({"b.csv": DATA / "rfc7519_reviews.csv", "c.json": EXAMPLE},
                           "b.csv", lambda f: ["review", "--source", "rfc7519.txt", "--citations", str(f / "c.json"),
                                               "--reviews", str(f / "store.jsonl"), "--batch", str(f / "b.csv")]),
    "calibration": Reader({f"user/calibration/{QWEN}.{DEFAULT_STRATEGY}.json": _calibration(str(DEFAULT_STRATEGY)),
                           "c.json": EXAMPLE},
                          f"user/calibration/{QWEN}.{DEFAULT_STRATEGY}.json",
                          lambda f: ["audit", "--source", "rfc7519.txt", "--citations", str(f / "c.json")],
                          env=_user, json=True),
    "profile": Reader({"user/profiles/mine.json": _calibration(str(DEFAULT_STRATEGY)), "c.json": EXAMPLE},
                      "user/profiles/mine.json",
                      lambda f: ["audit", "--source", "rfc7519.txt", "--citations", str(f / "c.json"), "--profile",
                                 "mine"], env=_user, json=True),
    "probe weights": Reader({str(probe_weights_path(QWEN, Path("user"))): probe_weights_path(QWEN, DATA.parent / "cache"),
                             "c.json": EXAMPLE},
                            str(probe_weights_path(QWEN, Path("user"))),
                            lambda f: ["audit", "--source", "rfc7519.txt", "--citations", str(f / "c.json"),
                                       "--strategy", "probe", "--model", "qwen"], env=_user, json=True),
}

HOSTILE = [b"NaN", b"Infinity", b"-Infinity", b"1e999999", b"-0", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\r",
           b"\xe2\x80\xa8", b"[" * 3000, b'{"a":' * 2000, b"<a>" * 3000, b"\n" * 2000, b"x" * 200_000,
           b'<!DOCTYPE x [<!ENTITY a "b">]>', b"&#0;", b'"' + b"\\" * 101 + b'"', b"99999999999999999999999999",
           b"\\ud800", b"</LawBody>", b"%PDF-1.4\n", b"endstream", b"[L99999999999]", b"## ", b"#" * 1000,
           b"<a>" * 5000 + b"</a>" * 5000, b"[" * 5000 + b"]" * 5000, b"<Part>" * 3000 + b"</Part>" * 3000,
           b"> " * 3000, b"- " * 3000, b"<div>" * 5000, b"\x1f\x8b\x08\x00"]


BOUNDARY = frozenset(b">\n,[{")


@st.composite
def mutations(draw: st.DrawFn, original: bytes, other: bytes) -> bytes:
    """`original` changed by one to three edits (or made up whole): what a corrupted copy, a wrong
    file or a hostile one gives a reader."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=2_000))
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        if draw(st.booleans()):  # where structure is: after a tag, a line, a comma or an opening bracket
            boundaries = [i + 1 for i, byte in enumerate(data) if byte in BOUNDARY]
            at = draw(st.sampled_from(boundaries)) if boundaries else at
        kind = draw(st.sampled_from(["flip", "cut", "insert", "hostile", "hostile", "hostile", "truncate", "repeat",
                                     "splice", "wrap"]))
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[at:at + draw(st.integers(1, 200))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=64))
        elif kind == "hostile":
            data[at:at] = draw(st.sampled_from(HOSTILE))
        elif kind == "truncate":
            del data[at:]
        elif kind == "repeat":
            data[at:at] = bytes(data[at:at + draw(st.integers(1, 500))]) * draw(st.integers(2, 50))
        elif kind == "splice":
            start = draw(st.integers(0, len(other)))
            data[at:at] = other[start:start + draw(st.integers(1, 400))]
        elif kind == "wrap":
            wrapped = draw(st.sampled_from(["gzip", "utf-16", "utf-32"]))
            data = bytearray(gzip.compress(bytes(data)) if wrapped == "gzip"
                             else bytes(data).decode("utf-8", "replace").encode(wrapped))
    return bytes(data)


def classic(original: bytes) -> dict[str, bytes]:
    """The corruptions every reader is given each run: the file cut in half, compressed, in UTF-16,
    after a NUL byte; and where its structure is, nested 5,000 deep and given NaN: in markup, before
    each of its last six closing tags (so at every depth of its outer elements), elsewhere after the
    first `[` or line end past a third of it, and as the first value of an object past a third."""
    cases = {"cut in half": original[:len(original) // 2], "gzip": gzip.compress(original),
             "UTF-16": original.decode("utf-8", "replace").encode("utf-16"), "NUL first": b"\x00" + original}
    if original.lstrip()[:1] == b"<":
        closing = [i for i in range(len(original) - 1) if original[i:i + 2] == b"</"][-6:]
        for n, at in enumerate(closing):
            cases[f"nested deep {n}"] = original[:at] + b"<Part>" * 5000 + b"</Part>" * 5000 + original[at:]
        return cases
    third = len(original) // 3
    at = next((i + 1 for i in range(third, len(original)) if original[i] in b"[\n"), third)
    after = b"," if original[at - 1:at] == b"[" else b"\n"
    cases["nested deep"] = original[:at] + b"[" * 5000 + b"]" * 5000 + after + original[at:]
    cases["NaN"] = original[:at] + b"NaN" + after + original[at:]
    value = original.find(b'": ', third)  # a value in an object: the nesting goes there, still JSON
    if value >= 0:
        at = value + 3
        cases["nested deep value"] = original[:at] + b"[" * 5000 + b"]" * 5000 + b', "zz": ' + original[at:]
    return cases


def well_formed(data: bytes, is_json: bool) -> bool:
    """Whether a mutated file is still one a reader may take as it is: UTF-8 text (and, for a JSON
    file, JSON). Anything else is damaged: it must never reach ACCEPT."""
    try:
        text = data.decode("utf-8")
        if is_json:
            json.loads(text)
    except ValueError:
        return False
    return True


def lay_out(reader: Reader, folder: Path) -> None:
    """The reader's files copied to `folder` (emptied first), its target made when it is not shipped."""
    if folder.exists():
        shutil.rmtree(folder)
    for name, shipped in reader.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(resolve_source(shipped) if isinstance(shipped, str) else shipped, folder / name)
    if reader.prepare is not None:
        reader.prepare(folder)


def check(reader: Reader, folder: Path, data: bytes) -> None:
    """Run `reader` on `data` in place of its target: exit 0, 1 or 2, no traceback, no ACCEPT on a
    damaged file, within `SECONDS` and `MAX_RSS_KB`."""
    lay_out(reader, folder)
    (folder / reader.target).write_bytes(data)
    began = time.monotonic()
    result = CliRunner().invoke(cli.main, reader.args(folder), env=reader.env(folder))
    took = time.monotonic() - began
    shown = f"exit {result.exit_code}; {result.output[-2000:]}"
    assert result.exception is None or isinstance(result.exception, SystemExit), shown
    assert result.exit_code in (0, 1, 2), shown
    assert "Traceback" not in result.output and "internal error" not in result.output, shown
    if result.exit_code == 0:
        assert well_formed(data, reader.json), f"ACCEPT on a damaged {reader.target}: {shown}"
    assert took < SECONDS, f"{took:.0f} s on one input"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < MAX_RSS_KB


@pytest.mark.parametrize("name", list(READERS))
def test_every_reader_survives_its_example_corrupted(name, recorded_cache, tmp_path, monkeypatch):
    reader = READERS[name]
    monkeypatch.chdir(tmp_path)  # a batch's scratch files, and anything a command writes, stay here
    lay_out(reader, tmp_path / "run")
    original = (tmp_path / "run" / reader.target).read_bytes()
    other = (EXAMPLE if name != "citations" else FORMATS / "field-note_citations.json").read_bytes()

    @settings(max_examples=EXAMPLES, derandomize=not RANDOM, deadline=None, database=DATABASE if RANDOM else None,
              suppress_health_check=list(HealthCheck))
    @given(data=mutations(original, other))
    def run(data: bytes) -> None:
        check(reader, tmp_path / "run", data)

    check(reader, tmp_path / "run", original)  # the example itself runs, so the mutations test something
    for corrupted in classic(original).values():
        check(reader, tmp_path / "run", corrupted)
    run()

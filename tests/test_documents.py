import contextlib
import hashlib
import http.server
import os
import threading
from pathlib import Path

import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import load_rfc, load_text
from citeaudit.errors import SourceError
from citeaudit.sources import canonical_section_id
from citeaudit.sources.reading import download_source, text_digest


def test_rfc7519_has_the_seed_figures(rfc7519):
    assert len(rfc7519.clean) == 58_365
    assert len(rfc7519.sections) == 45
    lengths = {sid: len(rfc7519.sections[sid].text) for sid in ("2", "4.1.3", "4.1.4", "3", "4.1.6", "4")}
    assert lengths == {"2": 3122, "4.1.3": 761, "4.1.4": 529, "3": 1653, "4.1.6": 270, "4": 918}


def test_page_furniture_is_gone_from_clean_text(rfc7519):
    assert "[Page" not in rfc7519.clean
    assert "\f" not in rfc7519.clean
    assert "RFC 7519                  JSON Web Token" not in rfc7519.clean
    assert "[Page 21]" in rfc7519.raw


def test_section_offsets_point_into_the_raw_file(rfc7519):
    section = rfc7519.sections["11.2"]
    assert section.title == "Signing and Encryption Order"
    raw = rfc7519.raw[section.start : section.end]
    assert raw.startswith("11.2.  Signing and Encryption Order")
    assert "[Page 21]" in raw  # the page break lies inside the section
    assert rfc7519.clean_slice(section.start, section.end) == section.text


@pytest.mark.parametrize("written", ["4.1.3", "4.1.3.", "Section 4.1.3", "§4.1.3", "section 4.1.3", "§ 4.1.3"])
def test_section_ids_written_several_ways(rfc7519, written):
    assert rfc7519.section(written).id == "4.1.3"


def test_unknown_or_appendix_section_ids(rfc7519):
    assert rfc7519.section("9.9") is None
    assert canonical_section_id("Appendix A.1") is None


def test_lines_keep_the_raw_text(rfc7519):
    line = rfc7519.lines[489]
    assert line.number == 490
    assert line.text.endswith("is an array of case-")
    assert rfc7519.raw[line.start : line.end] == line.text


def test_digest_ignores_line_endings_and_form_feeds(rfc7519):
    crlf = rfc7519.raw.replace("\n", "\r\n")
    assert text_digest(crlf) == text_digest(rfc7519.raw)


def test_crlf_copy_gives_the_same_sections(tmp_path, rfc7519):
    path = tmp_path / "rfc7519.txt"
    path.write_bytes(rfc7519.raw.replace("\n", "\r\n").encode())
    crlf = load_rfc(path)
    assert len(crlf.sections) == 45
    assert crlf.sections["4.1.3"].text.replace("\r", "") == rfc7519.sections["4.1.3"].text


def test_missing_source_names_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEAUDIT_DATA_DIR", str(tmp_path))
    with pytest.raises(SourceError, match="CITEAUDIT_DATA_DIR"):
        load_text("no-such-document.txt")


@pytest.fixture
def served(tmp_path, rfc7519):
    """Serve a copy of RFC 7519 on 127.0.0.1 (the download path is never tested on the internet)."""
    root = tmp_path / "www"
    root.mkdir()
    (root / "rfc7519.txt").write_text(rfc7519.raw, newline="")
    (root / "tampered.txt").write_text(rfc7519.raw.replace("MUST", "MAY", 1), newline="")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()  # quick shutdown
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_is_verified_and_saved(served, tmp_path, rfc7519):
    dest = tmp_path / "data" / "rfc7519.txt"
    download_source("rfc7519.txt", dest, url=f"{served}/rfc7519.txt")
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == hashlib.sha256(rfc7519.raw.encode()).hexdigest()
    assert len(load_rfc(dest).sections) == 45


def test_download_with_wrong_digest_leaves_nothing(served, tmp_path):
    dest = tmp_path / "data" / "rfc7519.txt"
    with pytest.raises(SourceError, match="expected"):
        download_source("rfc7519.txt", dest, url=f"{served}/tampered.txt")
    assert not dest.exists()
    assert not list(tmp_path.glob("data/*"))


def test_generic_text_paragraph_sections(tmp_path):
    path = tmp_path / "note.txt"
    path.write_text("First paragraph\nstill first.\n\n\nSecond one.\n")
    doc = load_text(path)
    assert [s.text for s in doc.sections.values()] == ["First paragraph\nstill first.", "Second one."]
    assert doc.raw[doc.sections["2"].start : doc.sections["2"].end] == "Second one."


def test_generic_text_heading_sections(tmp_path):
    path = tmp_path / "spec.txt"
    path.write_text("Intro\n\n1.  Scope\n\n   Applies to X.\n\n1.1.  Detail\n\n   Y holds.\n")
    doc = load_text(path, sections="headings")
    assert list(doc.sections) == ["1", "1.1"]
    assert doc.sections["1.1"].text.endswith("Y holds.")


def test_a_source_is_found_the_same_way_from_any_folder(tmp_path, monkeypatch):
    """A bare name is found in CITEAUDIT_DATA_DIR, the working directory, data/ or ../shared/data/rfc."""
    from citeaudit.pipeline import resolve_source
    from citeaudit.settings import environment as config

    shared = (config.project_dir() / config.SHARED_DATA).resolve()
    if not (shared / "rfc7519.txt").is_file():
        pytest.skip("no ../shared/data/rfc beside this checkout")
    monkeypatch.delenv("CITEAUDIT_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_source("rfc7519.txt") == shared / "rfc7519.txt"  # beside the checkout
    (tmp_path / "rfc7519.txt").write_text("local copy")
    assert resolve_source("rfc7519.txt").resolve() == tmp_path.resolve() / "rfc7519.txt"  # the working directory first
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "rfc7519.txt").write_text("env copy")
    monkeypatch.setenv("CITEAUDIT_DATA_DIR", str(other))
    assert resolve_source("rfc7519.txt").resolve() == tmp_path.resolve() / "rfc7519.txt"  # as given comes first
    monkeypatch.chdir(other.parent.parent)
    assert resolve_source("rfc7519.txt") == other / "rfc7519.txt"  # then the environment
    # a path relative to the project root works from any folder (notebooks name data/... this way)
    assert resolve_source("data/lines/field_note.txt") == config.project_dir() / "data/lines/field_note.txt"


def test_the_stages_look_only_in_the_folders_they_are_given(tmp_path, monkeypatch):
    """Below the pipeline nothing reads a setting: `sources.reading.resolve_source` and the loaders
    find a bare name in the folders passed and never in `CITEAUDIT_DATA_DIR`, and download only into
    the folder passed; the public loaders pass the folders in force, so the same name is found
    there as before (issue 51)."""
    import citeaudit
    from citeaudit.citations import lines
    from citeaudit.sources import reading, registry, rfc, text

    name, original = "rfc-copy-issue51.txt", reading.resolve_source("rfc7519.txt", download=False,
                                                                        dirs=[Path(os.environ["CITEAUDIT_DATA_DIR"])])
    given, env = tmp_path / "given", tmp_path / "env"
    for folder, mark in ((given, b""), (env, b"env copy\n")):
        folder.mkdir()
        (folder / name).write_bytes(original.read_bytes() + mark)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEAUDIT_DATA_DIR", str(env))
    assert reading.resolve_source(name, dirs=[given]) == given / name
    assert rfc.load_rfc(name, dirs=[given]).sections["4.1.1"].title.startswith("\"iss\"")
    assert registry.load_document(name, dirs=[given]).format == "rfc" and text.load_text(name, dirs=[given]).sections
    for stage in (reading.resolve_source, rfc.load_rfc, registry.load_document, text.load_text):
        with pytest.raises(SourceError, match="not found") as refused:
            stage(name)
        assert str(env) not in str(refused.value) and "CITEAUDIT_DATA_DIR" in str(refused.value)  # the same fix
    with pytest.raises(SourceError, match="not found"):
        lines.load_line_answer(name, DATA / "lines" / "good_answer.txt")
    assert citeaudit.pipeline.resolve_source(name) == env / name  # the public entry points read the settings
    assert citeaudit.load_rfc(name).raw.endswith("env copy\n")
    assert not rfc.load_rfc(name, dirs=[given]).raw.endswith("env copy\n")
    assert citeaudit.load_document(name).raw.endswith("env copy\n") and citeaudit.load_text(name).raw.endswith("env copy\n")
    assert citeaudit.load_line_answer(name, DATA / "lines" / "good_answer.txt").document.raw.endswith("env copy\n")

    downloads = []
    monkeypatch.setattr(reading, "download_source", lambda pinned, dest: downloads.append(dest) or dest)
    with pytest.raises(SourceError, match="not found"):  # no folder to download to: no download
        reading.resolve_source("rfc6749.txt", dirs=[given])
    assert reading.resolve_source("rfc6749.txt", dirs=[given], download_dir=given) == given / "rfc6749.txt"
    assert downloads == [given / "rfc6749.txt"]


def test_a_missing_source_lists_every_place_looked(tmp_path, monkeypatch):
    from citeaudit.settings import environment as config

    monkeypatch.setenv("CITEAUDIT_DATA_DIR", str(tmp_path / "texts"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError) as caught:
        load_text("notes/no-such-document.txt")
    message = str(caught.value)
    for place in (tmp_path / "notes/no-such-document.txt", tmp_path / "texts/no-such-document.txt",
                  tmp_path / "no-such-document.txt", config.project_dir() / "data/no-such-document.txt",
                  (config.project_dir() / config.SHARED_DATA).resolve() / "no-such-document.txt"):
        assert f"\n  {place}" in message
    assert "export CITEAUDIT_DATA_DIR=" in message


def test_find_input_falls_back_to_the_project_root(tmp_path, monkeypatch):
    from citeaudit.settings import environment as config
    from citeaudit.settings import find_input

    monkeypatch.chdir(tmp_path)
    assert find_input("data/rfc7519_citations.json") == config.project_dir() / "data/rfc7519_citations.json"
    (tmp_path / "data").mkdir()
    (tmp_path / "data/rfc7519_citations.json").write_text("[]")
    assert find_input("data/rfc7519_citations.json") == tmp_path.joinpath("data/rfc7519_citations.json").relative_to(tmp_path)
    assert find_input("nowhere.json") == config.Path("nowhere.json")


def test_inputs_are_read_through_one_bounded_reader(tmp_path):
    """A regular file over the limit is refused by its size before any read; a pipe or device is
    refused as soon as the limit is passed, never read to the end (/dev/zero never ends) (issue 21)."""
    import threading

    from citeaudit.sources.reading import TooLargeError, read_bounded

    big = tmp_path / "big.txt"
    with open(big, "wb") as handle:  # sparse: 600 MB that costs nothing on disk
        handle.truncate(600_000_000)
    with pytest.raises(TooLargeError, match=r"big.txt is 600,000,000 bytes.*up to 1,000 bytes"):
        read_bounded(big, 1_000)
    with pytest.raises(TooLargeError, match="holds more than 4,096 bytes"):
        read_bounded("/dev/zero", 4_096)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    def write() -> None:
        with contextlib.suppress(BrokenPipeError):  # the reader stops at its limit and closes the pipe
            fifo.write_bytes(b"x" * 10_000)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    with pytest.raises(TooLargeError):
        read_bounded(fifo, 5_000)
    exact = tmp_path / "exact.txt"
    exact.write_bytes(b"y" * 1_000)
    assert read_bounded(exact, 1_000) == b"y" * 1_000  # at the limit: read whole


@pytest.mark.cli
@pytest.mark.parametrize("command", [
    ["audit", "--source", "/dev/zero", "--citations", "CITES", "--locate-only"],
    ["audit", "--source", "rfc7519.txt", "--citations", "/dev/zero", "--locate-only"],
    ["lines", "--document", "DOC", "--answer", "/dev/zero", "--locate-only"],
])
def test_an_endless_input_is_exit_2_not_a_memory_error(command):
    from test_cli import run

    args = [str(DATA / "rfc7519_citations.json") if a == "CITES" else str(DATA / "lines" / "field_note.txt")
            if a == "DOC" else a for a in command]
    result = run(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "bytes" in result.stderr or "not found" in result.stderr  # refused by its size, or not a file


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "b", " ", "\t", "\n", "\u00a0", "é"]), max_size=60))
def test_paragraph_spans_are_the_paragraphs_of_the_old_expression(text):
    """The linear splitter finds exactly the paragraphs the old regular expression found."""
    import re

    from citeaudit.sources.text import paragraph_spans

    old = [(m.start(), m.start() + len(m.group().rstrip())) for m in re.finditer(r"\S(?:.|\n(?!\s*\n))*", text)]
    assert list(paragraph_spans(text)) == old


def test_a_text_without_blank_lines_is_split_in_linear_memory():
    import tracemalloc

    from citeaudit.sources.text import paragraph_spans

    text = "a line of a long text without blank lines\n" * 50_000  # 2.1 MB
    tracemalloc.start()
    spans = list(paragraph_spans(text))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert spans == [(0, len(text) - 1)] and peak < len(text)  # the old expression: ~135 bytes per byte

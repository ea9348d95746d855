"""Hostile inputs, round three (issue 53): every file the tool reads is checked where it enters, and
no setting switches a safeguard off by accident. Each test here failed before its fix."""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DATA

from citeaudit.errors import InputError
from citeaudit.judge.hidden_states import ProbeWeights, probe_weights_path
from citeaudit.judge.localmodel import MODELS
from citeaudit.settings.environment import DEFAULT_STRATEGY
from citeaudit.surfaces import cli

EXAMPLE = DATA / "rfc7519_citations.json"
QWEN = MODELS["qwen"]


def invoke(*args: str, env: dict[str, str] | None = None):
    """The command line in this process: (exit code, everything it printed)."""
    result = CliRunner().invoke(cli.main, list(args), env=env)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def _pack(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def shipped_probe(cache: Path) -> tuple[Path, dict]:
    path = probe_weights_path(QWEN.name, cache)
    return path, json.loads(path.read_text(encoding="utf-8"))


# (1) numbers in the files the tool reads: probe weights, profiles, calibrations


def damaged_probes(raw: dict) -> dict[str, dict]:
    d = int(raw["dimensions"])
    ones = np.ones(d)
    return {
        "NaN intercept": {**raw, "intercept": [float("nan"), 0.0, 0.0]},
        "infinite intercept": {**raw, "intercept": [float("inf"), 0.0, 0.0]},
        "NaN in the coefficients": {**raw, "coef": _pack(np.full((3, d), np.nan))},
        "infinite mean": {**raw, "mean": _pack(ones * np.inf)},
        "a zero in the scale": {**raw, "scale": _pack(np.concatenate([[0.0], ones[1:]]))},
        "a negative scale": {**raw, "scale": _pack(-ones)},
        "a scale of the wrong length": {**raw, "scale": _pack(ones[:-1])},
        "two intercepts": {**raw, "intercept": [0.0, 0.0]},
        "no dimensions": {**raw, "dimensions": 0, "mean": "", "scale": "", "coef": ""},
        "a NaN penalty": {**raw, "c": float("nan")},
    }


@pytest.mark.parametrize("damage", list(damaged_probes({"dimensions": 2, "intercept": []})))
def test_a_probe_file_with_numbers_it_cannot_use_is_refused_on_load(damage, recorded_cache):
    path, raw = shipped_probe(recorded_cache)
    path.write_text(json.dumps(damaged_probes(raw)[damage]), encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path.name} is not a probe file .*tools/bench_probe.py --save"):
        ProbeWeights.load(path, QWEN.sha256, "relation-v2", "last")


def test_audit_with_a_damaged_probe_exits_2_naming_the_file_before_any_verdict(recorded_cache, tmp_path):
    path, raw = shipped_probe(recorded_cache)
    path.write_text(json.dumps({**raw, "intercept": [float("nan"), 0.0, 0.0]}), encoding="utf-8")
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--model", "qwen",
                       "--strategy", "probe", "--output", str(tmp_path / "out.jsonl"))
    assert code == 2, out
    assert str(path) in out and "bench_probe.py --save" in out and "verified" not in out


def test_a_probe_of_the_wrong_dimension_names_the_file_and_how_to_refit(recorded_cache, tmp_path):
    path, raw = shipped_probe(recorded_cache)
    d = 8
    small = {**raw, "dimensions": d, "mean": _pack(np.zeros(d)), "scale": _pack(np.ones(d)),
             "coef": _pack(np.zeros((3, d)))}
    path.write_text(json.dumps(small), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--model", "qwen",
                       "--strategy", "probe", "--output", str(output))
    assert code == 1, out  # fails closed: every judged row is an error, routed to review
    errors = [json.loads(line)["error"] for line in output.read_text(encoding="utf-8").splitlines()]
    judged = [e for e in errors if e and "hidden state of 1536 numbers" in e]
    assert judged, errors
    assert all(str(path) in e and "tools/bench_probe.py --save" in e for e in judged)


@pytest.mark.parametrize("field,value", [("a", float("nan")), ("threshold", 0.0), ("b", float("inf")),
                                         ("weights", {"no": float("nan")})])
def test_a_bad_profile_says_a_fix_that_works(field, value, recorded_cache, tmp_path, monkeypatch):
    from citeaudit.decide.calibration import load_calibration, load_profile, profile_path

    calibration = load_calibration(QWEN.name, "choice", recorded_cache)
    assert calibration is not None
    raw = json.loads(calibration.to_json())
    user = tmp_path / "user"
    path = profile_path("mine", user)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**raw, field: value}), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        load_profile("mine", user, QWEN.name, "choice")
    message = str(refused.value)
    assert str(path) in message and "routes uncalibrated" not in message
    assert "--profile mine" in message and "leave out --profile" in message
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--profile", "mine",
                       env={"CITEAUDIT_USER_CACHE": str(user)})
    assert code == 2 and "leave out --profile" in out
    path.unlink()  # the advice followed: without --profile the model's calibration routes
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE),
                       env={"CITEAUDIT_USER_CACHE": str(user)})
    assert code in (0, 1), out


def test_a_calibration_with_a_non_finite_number_exits_2_naming_it(recorded_cache, tmp_path):
    from citeaudit.decide.calibration import calibration_path

    user = tmp_path / "user"
    shipped = calibration_path(QWEN.name, DEFAULT_STRATEGY, recorded_cache)
    mine = calibration_path(QWEN.name, DEFAULT_STRATEGY, user)
    mine.parent.mkdir(parents=True)
    shutil.copy(shipped, mine)
    mine.write_text(json.dumps({**json.loads(shipped.read_text(encoding="utf-8")), "a": float("nan")}),
                    encoding="utf-8")
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE),
                       env={"CITEAUDIT_USER_CACHE": str(user)})
    assert code == 2 and str(mine) in out and "citeaudit calibrate" in out


# (2) deep XML never recurses


@pytest.mark.parametrize("fmt", [None, "egov"])
@pytest.mark.parametrize("nest", ["Part", "Subitem1"])
def test_deeply_nested_xml_is_refused_with_a_clear_error_not_a_recursion(fmt, nest, tmp_path):
    from citeaudit import load_document
    from citeaudit.errors import SourceError

    depth = 10_000
    inner = "<Item Num=\"1\"><ItemTitle>一</ItemTitle><ItemSentence><Sentence>法令</Sentence></ItemSentence>"
    body = (f"<{nest}>" * depth) + "<Sentence>本文</Sentence>" + (f"</{nest}>" * depth)
    xml = (f'<?xml version="1.0" encoding="UTF-8"?><Law><LawBody><LawTitle>深い法</LawTitle><MainProvision>'
           f'<Article Num="1"><ArticleTitle>第一条</ArticleTitle><Paragraph Num="1"><ParagraphSentence>'
           f'<Sentence>条文</Sentence></ParagraphSentence>{inner}{body}</Item></Paragraph></Article>'
           f'{body}</MainProvision></LawBody></Law>')
    path = tmp_path / "deep.xml"
    path.write_text(xml, encoding="utf-8")
    with pytest.raises(SourceError, match=r"deep\.xml.*nested .* deep"):
        load_document(path, format=fmt)
    code, out = invoke("audit", "--source", str(path), "--citations", str(EXAMPLE), "--locate-only",
                       *(["--format", fmt] if fmt else []))
    assert code == 2 and "deep.xml" in out, out


def test_ordinary_nesting_still_loads(tmp_path):
    from citeaudit import load_document

    document = load_document("unauthorized-access-act-128-1999.egov.xml")
    assert document.sections


# (3) an endless input is refused by a bounded line reader


def test_a_line_without_end_is_never_held_whole(tmp_path, monkeypatch):
    import os
    import threading
    import tracemalloc

    from citeaudit.citations import dataset
    from citeaudit.errors import SourceError

    monkeypatch.setattr(dataset, "MAX_DATASET_BYTES", 4_000_000)
    monkeypatch.setattr(dataset, "MAX_TEXT_BYTES", 100_000)
    fifo = tmp_path / "endless.jsonl"
    os.mkfifo(fifo)

    zeros = b"\0" * 1_000_000  # made before memory is traced (the writer's thread is traced too)

    def feed() -> None:  # 8 MB of zeros and no line break, like /dev/zero, then the end
        try:
            with open(fifo, "wb") as pipe:
                for _ in range(8):
                    pipe.write(zeros)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    tracemalloc.start()
    try:
        with pytest.raises(SourceError, match=r"endless\.jsonl holds more than 4,000,000 bytes"):
            list(dataset.iter_dataset(fifo))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak:,} bytes held to read a line that never ends"


def test_a_line_over_the_text_limit_is_that_lines_error_and_the_next_line_is_read(tmp_path, monkeypatch):
    from citeaudit.citations import dataset

    monkeypatch.setattr(dataset, "MAX_TEXT_BYTES", 1_000)
    path = tmp_path / "long.jsonl"
    first = (DATA / "batch" / "example.jsonl").read_text(encoding="utf-8").splitlines()[0]
    path.write_bytes(b"x" * 5_000 + b"\n" + first.encode("utf-8") + b"\n")
    items = list(dataset.iter_dataset(path))
    assert "line 1: 5,000 bytes, over the 1,000-byte limit" in (items[0].error or "")
    assert items[1].line == 2


def test_batch_of_dev_zero_exits_2():
    code, out = invoke("batch", "/dev/zero", "--locate-only")
    assert code == 2 and "/dev/zero holds more than" in out, out


# (4) an empty or blank value never switches a safeguard off


@pytest.mark.parametrize("value", ["", " ", ",", " , "])
def test_an_empty_contrast_checks_value_is_refused_not_read_as_none(value):
    from citeaudit.settings.environment import parse_contrast_checks
    from citeaudit.settings.options import AuditOptions

    with pytest.raises(InputError, match="give .*none"):
        parse_contrast_checks(value)
    with pytest.raises(InputError, match="give .*none"):
        AuditOptions.from_env(contrast=value)
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--contrast-checks", value)
    assert code == 2 and "--contrast-checks" in out and "none" in out, out


def test_none_still_turns_the_contrast_checks_off_and_an_unset_variable_keeps_the_default(monkeypatch):
    from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS, contrast_checks, parse_contrast_checks

    assert parse_contrast_checks("none") == () and parse_contrast_checks(()) == ()
    monkeypatch.setenv("CITEAUDIT_CONTRAST_CHECKS", "")
    assert contrast_checks() == DEFAULT_CONTRAST_CHECKS
    monkeypatch.setenv("CITEAUDIT_CONTRAST_CHECKS", " , ")
    with pytest.raises(InputError, match="CITEAUDIT_CONTRAST_CHECKS"):
        contrast_checks()


@pytest.mark.parametrize("option", ["--threshold", "--spot-check", "--evidence", "--profile", "--strategy",
                                    "--cache-mode"])
@pytest.mark.parametrize("value", ["", "  "])
def test_every_setting_refuses_a_blank_value(option, value):
    code, out = invoke("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), option, value)
    assert code == 2, out


# (5) inputs recognized by their bytes before their names


def packed(kind: str, inner: bytes) -> bytes:
    """`inner` as a file of `kind`, made by the real tools (gzip, zipfile, codecs)."""
    import gzip
    import io
    import zipfile

    if kind == "gzip":
        return gzip.compress(inner)
    if kind in ("zip", "docx", "xlsx"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            if kind == "docx":
                archive.writestr("[Content_Types].xml", "<Types/>")
                archive.writestr("word/document.xml", "<w:document/>")
            elif kind == "xlsx":
                archive.writestr("[Content_Types].xml", "<Types/>")
                archive.writestr("xl/workbook.xml", "<workbook/>")
            else:
                archive.writestr("inside.txt", inner)
        return buffer.getvalue()
    return inner.decode("utf-8").encode(kind)  # utf-16, utf-32: with a byte-order mark


ADVICE = {"gzip": "decompress it", "zip": "extract", "docx": "export it as text or PDF",
          "xlsx": "export", "utf-16": "UTF-16", "utf-32": "UTF-32"}


@pytest.mark.parametrize("kind", list(ADVICE))
@pytest.mark.parametrize("role", ["citations", "answer", "answer-json", "response", "review batch", "dataset",
                                  "source .txt", "source .md", "source (no extension)", "reviews store"])
def test_a_packed_or_wide_input_is_named_for_what_it_is_with_the_fix(kind, role, tmp_path):
    def bad(name: str, inner: Path) -> str:
        path = tmp_path / name
        path.write_bytes(packed(kind, inner.read_bytes()))
        return str(path)

    example = ["--source", "rfc7519.txt", "--citations", str(EXAMPLE)]
    args = {
        "citations": ["audit", "--source", "rfc7519.txt", "--citations", bad("c.json", EXAMPLE), "--locate-only"],
        "answer": ["lines", "--document", str(DATA / "lines" / "field_note.txt"),
                   "--answer", bad("a.txt", DATA / "lines" / "good_answer.txt"), "--locate-only"],
        "answer-json": ["contract", bad("answer.json", DATA / "contract" / "answer.json"),
                        str(DATA / "contract" / "sources.json"), str(DATA / "contract" / "reviews.json")],
        "response": ["audit", "--response", bad("r.json", EXAMPLE), "--source", "rfc7519.txt", "--locate-only"],
        "review batch": ["review", "--reviews", str(tmp_path / "store.jsonl"), *example,
                         "--batch", bad("b.csv", DATA / "rfc7519_reviews.csv"), "--locate-only"],
        "dataset": ["batch", bad("d.jsonl", DATA / "batch" / "example.jsonl"), "--locate-only"],
        "source .txt": ["audit", "--source", bad("s.txt", DATA / "formats" / "field-note.txt"),
                        "--citations", str(DATA / "formats" / "field-note_citations.json"), "--locate-only"],
        "source .md": ["audit", "--source", bad("s.md", DATA / "formats" / "lantern-sync.md"),
                       "--citations", str(DATA / "formats" / "lantern-sync_citations.json"), "--locate-only"],
        "source (no extension)": ["audit", "--source", bad("s", DATA / "formats" / "field-note.txt"),
                                  "--citations", str(DATA / "formats" / "field-note_citations.json"), "--locate-only"],
        "reviews store": ["audit", *example, "--reviews", bad("store.jsonl", DATA / "batch" / "example.jsonl"),
                          "--locate-only"],
    }[role]
    code, out = invoke(*args)
    assert code == 2, out
    assert ADVICE[kind] in out, out
    for wrong in ("fix the syntax", "Fix the syntax", "pass --format", "binary data", "save it as UTF-8 text"):
        assert wrong not in out, out


EGOV_LAW = ('<?xml version="1.0" encoding="UTF-8"?>\n<Law><LawBody><LawTitle>法</LawTitle><MainProvision>'
            '<Article Num="1"><ArticleTitle>第一条</ArticleTitle><Paragraph Num="1"><ParagraphSentence>'
            '<Sentence>この法律は、試験のためのものとする。</Sentence></ParagraphSentence></Paragraph></Article>'
            '</MainProvision></LawBody></Law>\n')


@pytest.mark.parametrize("name,text,said", [
    ("doctype.xml", EGOV_LAW.replace("<Law>", '<!DOCTYPE Law SYSTEM "law.dtd">\n<Law>', 1), "document type"),
    ("error.xml", '<?xml version="1.0" encoding="UTF-8"?>\n<DataRoot><Result><Code>1</Code>'
                  '<Message>法令が存在しません。</Message></Result></DataRoot>\n', "e-Gov API error response"),
    ("feed.xml", '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>t</title></channel></rss>\n',
     "XML (root <rss>), not e-Gov law XML"),
    ("plain", '<!-- a note -->\n<catalog><book id="1">text</book></catalog>\n', "XML (root <catalog>)"),
])
def test_xml_is_recognized_and_said_which(name, text, said, tmp_path):
    from citeaudit import load_document
    from citeaudit.errors import SourceError

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError, match=re.escape(said)):
        load_document(path)
    if "e-Gov" not in said:
        assert load_document(path, format="text").raw == text  # --format text still reads it as text


def test_egov_law_xml_is_still_recognized(tmp_path):
    from citeaudit import load_document

    path = tmp_path / "law.xml"
    path.write_text(EGOV_LAW, encoding="utf-8")
    assert load_document(path).format == "egov"


# (6) `review --id` refuses a store that `audit` and `agreement` refuse


@pytest.mark.parametrize("line", [
    {"citation_id": "aud_reject", "fingerprint": "f" * 64, "verdict": "maybe"},
    {"citation_id": "aud_reject", "fingerprint": "not hex", "verdict": "verified"},
])
def test_review_refuses_a_store_with_an_invalid_review_as_audit_and_agreement_do(line, tmp_path):
    store = tmp_path / "reviews.jsonl"
    store.write_text(json.dumps(line) + "\n", encoding="utf-8")
    before = store.read_bytes()
    example = ["--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--locate-only"]
    for command in (["audit", *example, "--reviews", str(store)], ["agreement", *example, "--reviews", str(store)],
                    ["review", *example, "--reviews", str(store), "--id", "aud_reject", "--verdict", "verified"]):
        code, out = invoke(*command)
        assert code == 2 and "review 1, field" in out and str(store) in out, (command, out)
    assert store.read_bytes() == before


# (7) resume: a moved dataset whose files are the same resumes; otherwise it says why not


def _dataset_folder(folder: Path) -> Path:
    """A dataset with its own sources beside it: quote answers over a copy of field-note.txt and
    line answers over a copy of the field note."""
    folder.mkdir()
    shutil.copy(DATA / "formats" / "field-note.txt", folder / "note.txt")
    shutil.copy(DATA / "lines" / "field_note.txt", folder / "lines.txt")
    quotes = json.loads((DATA / "formats" / "field-note_citations.json").read_text(encoding="utf-8"))
    answer = (DATA / "lines" / "good_answer.txt").read_text(encoding="utf-8")
    lines = [json.dumps({"answer_id": f"q{i}", "source": "note.txt", "citations": quotes}) for i in range(3)]
    lines += [json.dumps({"answer_id": f"l{i}", "document": "lines.txt", "answer": answer}) for i in range(3)]
    path = folder / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_moved_dataset_whose_files_are_the_same_resumes(tmp_path):
    from citeaudit.pipeline.stream import stream_batch

    first = _dataset_folder(tmp_path / "here")
    parts = tmp_path / "rows.jsonl.parts"
    whole = stream_batch(first, parts=parts, locate_only=True, partition_size=2)
    assert whole.partitions == 3
    moved = tmp_path / "there"
    shutil.copytree(first.parent, moved)
    shutil.rmtree(first.parent)
    resumed = stream_batch(moved / first.name, parts=parts, locate_only=True, partition_size=2, resume=True)
    assert resumed.resumed == 3 and resumed.counts == whole.counts


def test_a_batch_that_cannot_resume_says_why(tmp_path):
    from citeaudit.pipeline.stream import stream_batch
    from citeaudit.settings.options import AuditOptions

    path = _dataset_folder(tmp_path / "here")
    parts = tmp_path / "rows.jsonl.parts"
    stream_batch(path, parts=parts, locate_only=True, partition_size=2)
    with pytest.raises(InputError, match=r"partition size 3, not 2"):
        stream_batch(path, parts=parts, locate_only=True, partition_size=3, resume=True)
    with pytest.raises(InputError, match=r"settings differ: contrast"):
        stream_batch(path, AuditOptions.from_env(contrast="none"), parts=parts, locate_only=True, partition_size=2,
                     resume=True)
    (path.parent / "note.txt").write_text("Another note.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"the sources' bytes differ"):
        stream_batch(path, parts=parts, locate_only=True, partition_size=2, resume=True)
    (parts / "manifest.json").unlink()
    with pytest.raises(InputError, match=r"no manifest"):
        stream_batch(path, parts=parts, locate_only=True, partition_size=2, resume=True)


# (8) what the fuzzing found: JSON nested deeper than Python recurses, in the files read outside
# the citation readers (those already caught RecursionError)

DEEP = "[" * 100_000 + "]" * 100_000


def test_json_nested_too_deep_is_a_value_error_of_strictjson():
    from citeaudit import strictjson

    with pytest.raises(strictjson.TooDeepError, match="nested too deeply"):
        strictjson.loads(DEEP)
    assert isinstance(strictjson.TooDeepError("x"), ValueError)


@pytest.mark.parametrize("kind", ["calibration", "profile", "probe", "review batch", "review store"])
def test_deeply_nested_json_in_any_file_read_is_exit_2_or_a_skipped_line(kind, recorded_cache, tmp_path):
    from citeaudit.decide.calibration import calibration_path, profile_path

    user = tmp_path / "user"
    env = {"CITEAUDIT_USER_CACHE": str(user)}
    args = ["audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE)]
    target = {"calibration": calibration_path(QWEN.name, DEFAULT_STRATEGY, user),
              "profile": profile_path("mine", user), "probe": probe_weights_path(QWEN.name, user),
              "review batch": tmp_path / "b.jsonl", "review store": tmp_path / "store.jsonl"}[kind]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('{"citation_id": ' + DEEP + ', "fingerprint": "a", "verdict": "verified"}\n', encoding="utf-8")
    args += {"calibration": [], "profile": ["--profile", "mine"], "probe": ["--strategy", "probe", "--model", "qwen"],
             "review batch": ["--locate-only"], "review store": ["--locate-only"]}[kind]
    if kind == "review batch":
        args = ["review", *args[1:], "--reviews", str(tmp_path / "new.jsonl"), "--batch", str(target)]
    if kind == "review store":
        args = ["review", *args[1:], "--reviews", str(target), "--id", "aud_reject", "--verdict", "verified"]
    code, out = invoke(*args, env=env)
    assert "internal error" not in out, out
    if kind == "review store":  # a store's line that is not JSON is skipped, as a line torn by a crash is
        assert code == 0 and "recorded verified for aud_reject" in out, out
    else:
        assert code == 2 and "nested too deeply" in out, out


def test_a_store_larger_than_its_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from citeaudit import stores
    from citeaudit.errors import StoreError

    monkeypatch.setattr(stores, "MAX_STORE_BYTES", 1_000)
    store = tmp_path / "reviews.jsonl"
    store.write_text('{"citation_id": "a", "fingerprint": "b", "verdict": "verified"}\n' * 100, encoding="utf-8")
    with pytest.raises(StoreError, match=r"reviews\.jsonl is 6,\d{3} bytes; citeaudit reads a store of up to 1,000"):
        stores.read_records(store)


@pytest.mark.parametrize("suffix", [".txt", ".md"])
def test_xml_is_known_by_its_declaration_whatever_its_name(suffix, tmp_path):
    from citeaudit import load_document
    from citeaudit.errors import SourceError

    law = tmp_path / f"law{suffix}"
    law.write_text(EGOV_LAW, encoding="utf-8")
    assert load_document(law).format == "egov"
    feed = tmp_path / f"feed{suffix}"
    feed.write_text('<?xml version="1.0"?>\n<rss version="2.0"><channel><title>t</title></channel></rss>\n',
                    encoding="utf-8")
    with pytest.raises(SourceError, match=r"XML \(root <rss>\)"):
        load_document(feed)
    assert load_document(feed, format="text").format == "text"


def test_an_xhtml_page_is_still_html(tmp_path):
    from citeaudit import load_document

    page = tmp_path / "page.html"
    page.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml">'
                    "<body><h1 id=\"a\">Title</h1><p>Some text here.</p></body></html>\n", encoding="utf-8")
    assert load_document(page).format == "html"

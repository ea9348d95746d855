"""Japanese statutes (issue 35, step 1): e-Gov law XML read into articles, paragraphs and items; the
locators Japanese and English answers write; quotes found whatever numerals, widths, brackets or
line breaks they were written with; misattribution told at the level a citation names; and
malformed, hostile or huge XML refused with a clear error."""

import json
import sys

import pytest
from conftest import DATA, saved_measurement
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import AuditOptions, audit_quotes, load_citations, load_document
from citeaudit.errors import SourceError
from citeaudit.locate.textindex import normalize
from citeaudit.sources import detect_format
from citeaudit.sources.japanese import StatutePlace, kanji_number, place_id, statute_place

APPI = "appi-act-57-2003.egov.xml"
UAA = "unauthorized-access-act-128-1999.egov.xml"  # the Unauthorized Computer Access Act: 14 articles


@pytest.fixture(scope="module")
def appi():
    return load_document(APPI)


@pytest.fixture(scope="module")
def uaa():
    return load_document(UAA)


def kanji(n: int) -> str:
    """A counted kanji numeral (the tests' own writer, to check the reader against)."""
    digits = "〇一二三四五六七八九"
    out = ""
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        q, n = divmod(n, value)
        if q:
            out += ("" if q == 1 else digits[q]) + unit
    return out + (digits[n] if n else "") or "〇"


def test_the_acts_are_read_into_articles_paragraphs_and_items(appi, uaa):
    main = [sid for sid in appi.sections if "項" not in sid and "号" not in sid and not sid.startswith("附則")]
    assert len(main) == 185 and main[0] == "第1条" and appi.format == "egov"
    article = appi.sections["第27条"]
    assert article.title == "第三者提供の制限"
    assert article.text.startswith("（第三者提供の制限）\n第二十七条\u3000個人情報取扱事業者は、")
    assert appi.sections["第27条第1項第1号"].text == "一\u3000法令に基づく場合"
    assert appi.sections["第27条第2項"].text.startswith("２\u3000個人情報取扱事業者は、")
    assert list(uaa.sections)[:3] == ["第1条", "第1条第1項", "第2条"]
    assert "附則第1条" in appi.sections  # the Act's own supplementary provisions, numbered apart
    assert any(sid.startswith("附則(平成二四年三月三一日法律第一二号)第") for sid in uaa.sections)  # an amendment's
    assert uaa.clean.endswith("当該各号に定める日から施行する。\n一\u3000第五百九条の規定\u3000公布の日\n")


def test_every_clean_character_maps_to_itself_in_the_xml(uaa):
    """Every character of the clean text that is in the XML maps to that character (the full-width
    spaces and line breaks the reader adds map to the character before them)."""
    raw, clean, offsets = uaa.raw, uaa.clean, uaa.clean_to_raw
    added = {"\u3000", "\n"}
    wrong = [i for i, ch in enumerate(clean) if ch not in added and raw[offsets[i]] != ch]
    assert wrong == []
    assert all(offsets[i] <= offsets[i + 1] for i in range(len(offsets) - 1))


@pytest.mark.parametrize("written", [
    "第27条第1項第1号", "第二十七条第一項第一号", "27条1項1号", "法27条1項1号", "第２７条第１項第１号",
    "Article 27(1)(i)", "Art. 27 para. 1 item 1", "article 27, paragraph 1, item 1",
])
def test_the_ways_answers_write_one_place(written):
    assert statute_place(written) == StatutePlace("27", paragraph=1, item=1)


@pytest.mark.parametrize("written", ["Section 4.1.3", "4.1.3", "第条", "page 3", "第27条第項", "Article 27(1)(q)"])
def test_what_is_not_a_statute_place(written):
    assert statute_place(written) is None


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 2999), st.integers(1, 99) | st.none(), st.integers(1, 99), st.booleans(), st.booleans())
def test_kanji_arabic_and_full_width_numerals_name_the_same_place(article, branch, paragraph, wide, prefix):
    place = StatutePlace(f"{article}_{branch}" if branch else str(article), paragraph=paragraph)
    arabic = place_id(place)
    written = "第" + kanji(article) + "条" + (f"の{kanji(branch)}" if branch else "") + f"第{kanji(paragraph)}項"
    width = arabic.translate(str.maketrans("0123456789", "０１２３４５６７８９")) if wide else arabic
    assert kanji_number(kanji(article)) == article
    assert statute_place(arabic) == statute_place(written) == statute_place(width) == place
    assert statute_place(("法" if prefix else "") + arabic.removeprefix("第")) == place


# step 1 on both Acts (data/ja/*_step1_citations.json): id -> (status, found section, section match),
# as data/ja/step1_expected.json labels them (tools/statute_statuses.py prints them against the audit)
STEP1 = {cid: (label["quote_status"], label["found_section"], label["section_match"])
         for cid, label in json.loads((DATA / "ja" / "step1_expected.json").read_text(encoding="utf-8")).items()}
CITATIONS = {APPI: DATA / "ja" / "appi_step1_citations.json", UAA: DATA / "ja" / "unauthorized-access_step1_citations.json"}


@pytest.fixture(scope="module")
def located():
    rows = {}
    for act, citations in CITATIONS.items():
        table = audit_quotes(act, load_citations(citations), locate_only=True, options=AuditOptions(contrast=())).table
        rows |= {row["id"]: row for row in table.to_dict("records")}
    return rows


def test_the_labelled_statute_citations_are_each_located_as_labelled(located):
    assert len(STEP1) >= 30 and located.keys() == STEP1.keys()
    got = {cid: (row["quote_status"], row["found_section"], row["section_match"]) for cid, row in located.items()}
    assert {cid: g for cid, g in got.items() if g != STEP1[cid]} == {}
    assert located["uaa_same_article_paragraph"]["cited_section"] == "同条第4項"  # shown as the answer wrote it
    # the judge reads a cited item in its article: the item alone ("一　第四条の規定に違反した者") says nothing
    assert located["uaa_item"]["evidence"].startswith("第十二条\u3000次の各号のいずれかに該当する者は")
    assert "一\u3000第四条の規定に違反した者" in located["uaa_item"]["evidence"]


def test_a_missing_quote_is_fabricated_and_a_found_one_is_not(located):
    for cid, (status, _, _) in STEP1.items():
        assert (located[cid]["verdict"] == "fabricated") == (status == "missing"), cid


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_quote_of_the_act_written_differently_is_found_exactly(uaa, data):
    """Any sentence of the Act, with its reference numerals in Arabic (full-width or not), its
    brackets written otherwise and a line break or space inserted, normalizes to the Act's own text."""
    import re
    import unicodedata

    sentences = [s for s in uaa.clean.replace("\u3000", "\n").split("\n") if len(s) > 12]
    sentence = data.draw(st.sampled_from(sentences))
    wide = data.draw(st.booleans())

    def arabic(match):
        digits = str(kanji_number(match.group(2)))
        return match.group(1) + (digits.translate(str.maketrans("0123456789", "０１２３４５６７８９")) if wide else digits)

    written = re.sub(r"(第)([一二三四五六七八九十百千]+)", arabic, sentence)
    written = written.replace("「", "『").replace("」", "』") if data.draw(st.booleans()) else written
    # a break anywhere but inside an Arabic number ("1\n3" may be two numbers: it stays a space)
    ascii_ = [unicodedata.normalize("NFKC", c).isascii() for c in written]
    cuts = [i for i in range(1, len(written)) if not (ascii_[i - 1] and ascii_[i])]
    cut = data.draw(st.sampled_from(cuts))
    written = written[:cut] + data.draw(st.sampled_from(["\n", "\n   ", " "])) + written[cut:]
    assert normalize(sentence) in normalize(uaa.clean)
    assert normalize(written) == normalize(sentence)


def test_xml_files_are_recognized_by_their_root(tmp_path, uaa):
    copy = tmp_path / "act.xml"
    copy.write_text(uaa.raw, encoding="utf-8")
    assert detect_format(copy) == "egov"
    other = tmp_path / "feed.xml"
    other.write_text('<?xml version="1.0"?><rss><channel><title>x</title></channel></rss>', encoding="utf-8")
    with pytest.raises(SourceError, match=r"is XML \(root <rss>\), not e-Gov law XML"):  # not read as plain text
        detect_format(other)


@pytest.mark.parametrize("text, says", [
    ('<?xml version="1.0"?><DataRoot><ApplData><LawFullText><Law><LawBody><Article>', "not well-formed XML"),
    ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
     "<DataRoot><Law><LawBody>&lol2;</LawBody></Law></DataRoot>", "document type or entities"),
    ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]><DataRoot><Law><LawBody>&ext;'
     "</LawBody></Law></DataRoot>", "document type or entities"),
    ('<?xml version="1.0"?><DataRoot><Law><Other/></Law></DataRoot>', "no <LawBody>"),
])
def test_malformed_or_hostile_xml_is_refused_naming_the_file(tmp_path, text, says):
    path = tmp_path / "act.xml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError, match=says) as refused:
        load_document(path, format="egov")
    assert str(path) in str(refused.value)


def test_a_200_mb_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.xml"
    with open(path, "wb") as handle:  # sparse: 200 MB on paper, nothing on disk
        handle.write(('<?xml version="1.0"?><DataRoot><Law><LawBody>' + "あ" * 30_000).encode())
        handle.truncate(200_000_000)
    with pytest.raises(SourceError, match="huge.xml"):
        load_document(path, format="egov")


def test_the_japanese_worked_example_replays_as_the_readme_says(recorded_cache):
    """data/ja/appi_answer_citations.json from the local Qwen's recorded answers (docs/how-to/japanese-statutes.md, notebook 10)."""
    from citeaudit.settings import find_input

    audit = audit_quotes(APPI, find_input("data/ja/appi_answer_citations.json"),
                         options=AuditOptions.from_env(cache_mode="replay"))
    table = audit.table.set_index("id")
    assert table["error"].isna().all()  # every judged citation recorded
    assert (table["verdict"] == table["expected"]).sum() == 8 and str(audit.decision.status) == "REJECT"
    standing = table[(table["route"] == "auto") & (table["verdict"] != "fabricated")]
    assert sorted(standing.index) == ["breach_report_optional", "purpose_change_free"]
    assert set(table.loc[table["flags"].map(lambda f: "section_mismatch" in f)].index) == {
        "improper_acquisition_wrong_article", "succession_wrong_paragraph"}


def test_the_documented_table_of_statute_statuses_is_what_the_tool_prints():
    """The table of step-1 statuses on both Acts that docs/how-to/japanese-statutes.md shows is
    `tools/statute_statuses.py`'s saved output (--save-docs), and every labelled citation is located as
    labelled."""
    sys.path.insert(0, str(DATA.parent / "tools"))
    import statute_statuses

    rows = statute_statuses.located()
    assert rows["as labelled"].all() and len(rows) == len(STEP1)
    saved = saved_measurement("statute_statuses")
    assert saved["command"] == "python tools/statute_statuses.py"
    assert saved["output"] == statute_statuses.summary(rows).to_string() + "\n"

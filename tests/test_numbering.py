"""A document's own numbering read as its sections (`sources.numbering`), in text, Markdown and HTML.

Property tests: random clause trees rendered in each numbering style and format read back to the
same ids and parents; lines that only start with numbers (dates, amounts, wrapped sentences) never
become clauses.
"""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import load_document
from citeaudit.errors import SourceError
from citeaudit.sources.numbering import marks_of_line, read_numbering

WORDS = ["licensee", "software", "party", "notice", "fee", "data", "agreement", "term", "right", "use", "copy"]
ROMAN = ["i", "ii", "iii", "iv", "v", "vi"]

words = st.lists(st.sampled_from(WORDS), min_size=3, max_size=9).map(lambda ws: " ".join(ws))
sentence = words.map(lambda s: s[0].upper() + s[1:] + ".")
caption = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(lambda ws: " ".join(ws).title())
# a tree: top-level clauses, each with children, each with grandchildren (counts only)
tree = st.lists(st.lists(st.integers(0, 3), max_size=4), min_size=3, max_size=6)


def _letters(n: int) -> list[str]:
    return [chr(ord("a") + i) for i in range(n)]


def render(shape: list[list[int]], style: str, fill: st.DataObject) -> tuple[list[str], dict[str, str | None]]:
    """The lines of a document numbered in `style`, and the ids (with parents) it must read back to."""
    lines: list[str] = ["Sample agreement", "", fill.draw(sentence), ""]
    expected: dict[str, str | None] = {}
    for n, children in enumerate(shape, start=1):
        if style == "article":
            top = f"Article {n}"
            lines += [top, fill.draw(caption)]
        elif style == "keyword":  # "Section 3 - Caption", "§ 3. Caption" or "Clause 3: Caption"
            top = str(n)
            word = fill.draw(st.sampled_from(["Section {} - ", "§ {}. ", "Clause {}: "]))
            lines += [word.format(n) + fill.draw(caption)]
        else:
            top = str(n)
            lines += [f"{n}. {fill.draw(caption)}. {fill.draw(sentence)}"]
        expected[top] = None
        for m, grand in enumerate(children, start=1):
            if style == "decimal":
                child, mark = f"{n}.{m}", f"{n}.{m} {fill.draw(caption)}."
                sub, subs = [f"{child}({x})" for x in _letters(grand)], [f"({x})" for x in _letters(grand)]
            elif style == "article":
                child, mark = f"{n}({m})", f"{m}."
                sub, subs = [f"{child}({x})" for x in _letters(grand)], [f"({x})" for x in _letters(grand)]
            elif style == "keyword":  # numbered sub-clauses with items (1), (2)
                child, mark = f"{n}.{m}", f"{n}.{m}. {fill.draw(caption)}."
                sub, subs = [f"{child}({k})" for k in range(1, grand + 1)], [f"({k})" for k in range(1, grand + 1)]
            else:  # items: (a) under a clause, (i) under an item, one parenthesis for the letters
                letter = _letters(m)[-1]
                child, mark = f"{n}({letter})", f"{letter})"
                sub, subs = [f"{child}({x})" for x in ROMAN[:grand]], [f"({x})" for x in ROMAN[:grand]]
            lines.append(f"{mark} {fill.draw(sentence)}")
            # a wrapped sentence whose next line starts with a number is text, never a clause
            lines += ["The terms of Section", f"{n}.{m} of this Agreement apply to the {fill.draw(words)}."]
            expected[child] = top
            for sid, label in zip(sub, subs):
                lines.append(f"{label} {fill.draw(words)};")
                expected[sid] = child
        lines.append("")
    return lines, expected


def as_markdown(lines: list[str]) -> str:
    """Top-level clauses (an article, or "3. Caption" where there are no articles) as headings."""
    articles = any(line.startswith("Article ") for line in lines)
    out = []
    for line in lines:
        first = line.split(" ", 1)[0]
        top = line.startswith("Article ") or (first.rstrip(".").isdigit() and first.endswith(".") and not articles)
        out.append(("## " + line if top else line) + "\n\n")  # a paragraph per line
    return "".join(out)


def as_html(lines: list[str]) -> str:
    body = "".join(f"<p>{html.escape(line)}</p>\n" for line in lines if line)
    return f"<!doctype html><html><body><main>{body}</main></body></html>"


def read_back(tmp_path, lines: list[str], fmt: str):
    text = "\n".join(lines) + "\n"
    path = tmp_path / f"doc.{fmt}"
    if fmt == "pdf":
        _pdf(lines, path)
    else:
        path.write_text({"txt": text, "md": as_markdown(lines), "html": as_html(lines)}[fmt], encoding="utf-8")
    return load_document(path)


def _pdf(lines: list[str], path) -> None:
    from fpdf import FPDF

    # one tall page: a page break can put "Article 5" at the foot of two pages, which the PDF loader
    # may then take for a running footer (tests/test_formats.py covers page furniture)
    pdf = FPDF(format=(210, 1500))
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.add_page()
    pdf.set_font("Helvetica", size=9)
    for line in lines:
        pdf.cell(0, 4, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


trees = {"shape": tree, "style": st.sampled_from(["decimal", "article", "items", "keyword"]),
         "fmt": st.sampled_from(["txt", "md", "html", "pdf"]), "contents": st.booleans(), "fill": st.data()}


@settings(max_examples=25, deadline=None)
@given(**trees)
def test_random_clause_trees_read_back_to_their_ids(tmp_path_factory, shape, style, fmt, contents, fill):
    read_back_the_tree(tmp_path_factory, shape, style, fmt, contents, fill)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(**trees)
def test_many_random_clause_trees_read_back_to_their_ids(tmp_path_factory, shape, style, fmt, contents, fill):
    read_back_the_tree(tmp_path_factory, shape, style, fmt, contents, fill)


def read_back_the_tree(tmp_path_factory, shape, style, fmt, contents, fill):
    """A clause tree rendered in `style` and written as `fmt` (after a table of contents when
    `contents`) is read back to the same ids and parents."""
    lines, expected = render(shape, style, fill)
    if contents and style != "keyword":  # a table of contents before the clauses is not the outline
        entries = [f"Article {n}" if style == "article" else f"{n}. Part {n}" for n in range(1, len(shape) + 1)]
        lines[3:3] = ["", "Contents", *entries]
    document = read_back(tmp_path_factory.mktemp("n"), lines, fmt)
    if fmt == "md" and not any(shape) and style != "keyword":  # only headings are numbered: they stay
        assert document.reading.startswith("headings"), document.reading
        return
    clauses = {sid: document.parents.get(sid) for sid in document.sections if sid in expected or sid in
               document.parents or sid[:1].isdigit() or sid.startswith("Article ")}
    assert clauses == expected, document.reading
    assert document.reading.startswith("numbered clauses")


month = st.sampled_from(["January", "March", "May", "October", "Dec"])
number_led = st.one_of(
    st.builds(lambda d, m, y, w: f"{d} {m} {y} {w}.", st.integers(1, 28), month, st.integers(1990, 2030), words),
    st.builds(lambda n, w: f"{n},000 units of {w}.", st.integers(1, 999), words),
    st.builds(lambda a, b, w: f"{a}.{b} {w}.", st.integers(1, 9), st.integers(0, 9), words),  # 2.5 million ...
    st.builds(lambda n, w: f"{n} {w}.", st.integers(1, 99), words),  # 3 copies of ...
    st.builds(lambda y, w: f"{y}. {w.capitalize()}.", st.integers(1990, 2030), words),  # 2024. Revenue ...
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.one_of(number_led, sentence), min_size=1, max_size=4), min_size=1, max_size=8))
def test_lines_that_only_start_with_numbers_never_become_clauses(paragraphs):
    clean = "\n\n".join("\n".join(lines) for lines in paragraphs)
    for line in clean.split("\n"):
        assert marks_of_line(0, line) == [], line
    assert read_numbering(clean).clauses == {}


def test_a_licence_reads_as_its_clauses(tmp_path):
    path = tmp_path / "licence.txt"
    path.write_text(
        "Licence\n\nThis Agreement is made on 1 March 2024.\n\n"
        "1. Definitions.\n(a) \"Software\" means the programs.\n(b) \"You\" means the licensee.\n\n"
        "2. Grant of Licence. The Licensor grants a licence under Section\n"
        "2.1 of the Order Form shall terminate.\n"
        "2.1 Scope. Up to five computers.\n2.2 Restrictions. You shall not:\n(a) sublicense it;\n(b) copy it.\n\n"
        "3. Fees.\n2024 fees are payable in advance.\n15 March 2025 is the first due date.\n", encoding="utf-8")
    document = load_document(path)
    assert document.reading == "numbered clauses: 3, with 6 sub-clauses"
    assert [sid for sid in document.sections] == ["1(a)", "1(b)", "1", "2.1", "2.2(a)", "2.2(b)", "2.2", "2", "3"]
    assert document.sections["2"].title == "Grant of Licence"
    assert document.parents["2.2(b)"] == "2.2" and document.parents["2.2"] == "2"
    assert "2.1 of the Order Form" in document.sections["2"].text  # the wrapped line is text of clause 2
    assert document.sections["3"].text.endswith("first due date.")
    paragraphs = load_document(path, sections="paragraphs")
    assert paragraphs.reading == "paragraphs: chosen (--sections paragraphs)" and list(paragraphs.sections) == ["1", "2", "3", "4", "5"]


def test_a_table_of_contents_is_not_the_outline(tmp_path):
    path = tmp_path / "policy.txt"
    contents = "Contents\n1. Scope\n2. Data we collect\n3. Your rights\n\n"
    body = ("1. Scope\nThis policy covers the service.\n\n2. Data we collect\n2.1 Account data. Your name.\n"
            "2.2 Usage data. Pages you visit.\n\n3. Your rights\n(a) You may ask for a copy.\n(b) You may object.\n")
    path.write_text(contents + body, encoding="utf-8")
    document = load_document(path)
    assert document.sections["1"].clean_start == document.clean.index("1. Scope\nThis")
    assert set(document.parents) == {"2.1", "2.2", "3(a)", "3(b)"}


def test_articles_and_their_paragraphs(tmp_path):
    path = tmp_path / "regulation.txt"
    path.write_text("Regulation\n\nArticle 1\nSubject matter\n1. This Regulation lays down rules.\n\n"
                    "Article 2\nDefinitions\n1. For the purposes of this Regulation:\n(a) 'data' means information;\n"
                    "(b) 'controller' means the body.\n2. Member States may add rules.\n", encoding="utf-8")
    document = load_document(path)
    assert list(document.sections) == ["1(1)", "Article 1", "2(1)(a)", "2(1)(b)", "2(1)", "2(2)", "Article 2"]
    assert document.sections["Article 2"].title == "Definitions"
    assert document.parents["2(1)(a)"] == "2(1)" and document.parents["2(1)"] == "Article 2"


def test_inconsistent_numbering_keeps_paragraphs(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("Notes\n\n3. Third thing first.\n\n1. Then the first.\n\n7. And a seventh.\n\n2. Then two.\n",
                    encoding="utf-8")
    assert load_document(path).reading.startswith("paragraphs:")
    assert list(load_document(path).sections) == ["1", "2", "3", "4", "5"]


def test_an_unknown_reading_is_refused(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("1. One.\n2. Two.\n", encoding="utf-8")
    with pytest.raises(SourceError, match="auto, numbered or paragraphs"):
        load_document(path, sections="clauses")


def test_step_one_says_which_reading_it_used_and_takes_the_users_choice(tmp_path):
    from click.testing import CliRunner

    from citeaudit.surfaces import cli

    source = tmp_path / "terms.txt"
    source.write_text("Terms\n\n1. Scope.\nThese terms apply.\n\n2. Fees.\n2.1 Fees are due monthly.\n"
                      "2.2 Fees are not refundable.\n\n3. End.\nEither side may end it.\n", encoding="utf-8")
    citations = tmp_path / "c.json"
    citations.write_text('[{"id": "a", "claim": "Fees are monthly.", "quote": "Fees are due monthly.", '
                         '"section": "2.1"}]', encoding="utf-8")
    args = ["audit", "--source", str(source), "--citations", str(citations), "--locate-only"]
    numbered = CliRunner().invoke(cli.main, args)
    assert "sections of terms.txt: numbered clauses: 3, with 2 sub-clauses" in numbered.output
    assert " 2.1 " in numbered.output.split("sections of", 1)[1]  # found in clause 2.1
    paragraphs = CliRunner().invoke(cli.main, [*args, "--sections", "paragraphs"])
    assert "sections of terms.txt: paragraphs: chosen (--sections paragraphs)" in paragraphs.output
    refused = CliRunner().invoke(cli.main, [*args, "--sections", "clauses"])
    assert refused.exit_code == 2 and "--sections" in refused.output


def test_a_schedule_numbers_its_own_list_without_breaking_the_outline(tmp_path):
    path = tmp_path / "contract.txt"
    path.write_text("Contract\n\n1. Term.\nOne year.\n\n2. Fees.\n2.1 Monthly.\n2.2 In advance.\n\n"
                    "3. Law.\nEnglish law.\n\nSchedule 1 - Services\n1. Hosting.\n2. Support.\n3. Backups.\n",
                    encoding="utf-8")
    document = load_document(path)
    assert document.reading == "numbered clauses: 4, with 2 sub-clauses"
    assert document.sections["Schedule 1"].text.endswith("3. Backups.")
    assert document.sections["3"].text == "3. Law.\nEnglish law."


def test_an_indented_licence_with_roman_items(tmp_path):
    """Headings indented as in many licence texts, definitions that open with a quote, items i. ii."""
    path = tmp_path / "licence.txt"
    path.write_text(
        "                         SAMPLE LICENSE\n\n"
        "   1. Definitions.\n\n      \"Work\" shall mean the work of authorship.\n\n"
        "      \"You\" shall mean the person exercising permissions granted by\n"
        "      Section 2 of this License.\n\n"
        "   2. Grant of Rights. The rights granted include:\n\n"
        "        i. the right to copy the Work;\n       ii. the right to adapt the Work; and\n"
        "      iii. the right to share the Work.\n\n"
        "   3. Redistribution. You may redistribute the Work provided that You meet\n"
        "      the following conditions:\n\n"
        "      (a) You must give a copy of this License; and\n\n"
        "      (b) You must keep all notices, as required by subsection\n"
        "      4b of the Notice File.\n\n"
        "   4. Disclaimer. The Work is provided as is.\n", encoding="utf-8")
    document = load_document(path)
    assert document.reading == "numbered clauses: 4, with 5 sub-clauses"
    assert document.parents == {"2(i)": "2", "2(ii)": "2", "2(iii)": "2", "3(a)": "3", "3(b)": "3"}
    assert document.sections["2"].title == "Grant of Rights"
    assert document.sections["1"].text.endswith("Section 2 of this License.")


def test_a_pdf_article_at_the_foot_of_one_page_and_the_next_at_the_top_are_not_furniture(tmp_path):
    from fpdf import FPDF

    pdf = FPDF(format=(148, 210))
    pdf.set_auto_page_break(auto=False)
    pdf.set_font("Helvetica", size=9)
    pages = [["Allotment rules", "Rules of the site.", "Article 1", "Scope", "1. These rules apply to all plots.",
              "Article 2", "Rent"],
             ["Allotment rules", "Article 3", "Water", "1. Hosepipes are not allowed.", "2. Butts are."]]
    for lines in pages:
        pdf.add_page()
        for line in lines:
            pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "rules.pdf"
    pdf.output(str(path))
    document = load_document(path)
    assert "Allotment rules" not in document.clean  # the running header is furniture
    assert {"Article 1", "Article 2", "Article 3", "3(2)"} <= set(document.sections), document.reading


def test_a_clause_in_a_box_of_asterisks_is_a_clause(tmp_path):
    path = tmp_path / "licence.txt"
    path.write_text("Licence\n\n1. Grant.\nYou may use it.\n\n2. Conditions.\nKeep the notice.\n\n"
                    + "*" * 40 + "\n*" + " " * 38 + "*\n*  3. Disclaimer of Warranty          *\n"
                    "*  The work is provided as is.         *\n" + "*" * 40 + "\n\n4. Law.\nEnglish law applies.\n",
                    encoding="utf-8")
    document = load_document(path)
    assert document.reading == "numbered clauses: 4"
    assert document.sections["3"].title == "Disclaimer of Warranty"


def test_a_review_is_bound_to_the_reading_it_was_made_under(tmp_path):
    """`audit --sections paragraphs` prints review commands with the same reading; the review made
    with it stands under that reading and is stale under another (its evidence differs)."""
    from click.testing import CliRunner

    from citeaudit.surfaces import cli

    source = tmp_path / "terms.txt"
    source.write_text("Terms\n\n1. Scope.\nThese terms apply.\n\n2. Fees.\n2.1 Fees are due monthly.\n"
                      "2.2 Fees are not refundable.\n\n3. End.\nEither side may end it.\n", encoding="utf-8")
    citations = tmp_path / "c.json"
    citations.write_text('[{"id": "a", "claim": "Fees are monthly.", "quote": "Fees are due monthly.", '
                         '"section": "2.1"}]', encoding="utf-8")
    store = tmp_path / "reviews.jsonl"
    inputs = ["--source", str(source), "--citations", str(citations)]
    audit = ["audit", *inputs, "--locate-only", "--reviews", str(store)]
    first = CliRunner().invoke(cli.main, [*audit, "--sections", "paragraphs"])
    assert "--sections paragraphs --id a --verdict VERDICT" in first.output
    recorded = CliRunner().invoke(cli.main, ["review", "--reviews", str(store), *inputs, "--sections", "paragraphs",
                                             "--id", "a", "--verdict", "verified", "--locate-only"])
    assert recorded.exit_code == 0, recorded.output
    assert "verified (current)" in CliRunner().invoke(cli.main, [*audit, "--sections", "paragraphs"]).output
    assert "verified (stale)" in CliRunner().invoke(cli.main, audit).output
    refused = CliRunner().invoke(cli.main, ["report", "--document", str(source), "--answer", str(citations),
                                            "--sections", "numbered", "--html", str(tmp_path / "r.html")])
    assert refused.exit_code == 2 and "--sections" in refused.output


def nested_lists(shape: list[list[int]], fmt: str, fill: st.DataObject) -> tuple[str, dict[str, str | None]]:
    """Clauses written as ordered lists nested in ordered list items (Markdown or HTML), three deep,
    and the ids (with parents) they must read back to: "2", "2.1", "2.1.3"."""
    expected: dict[str, str | None] = {}

    def item(label: str, depth: int) -> str:
        text = f"{fill.draw(caption)}. {fill.draw(sentence)}"
        return text if fmt == "html" else "   " * depth + f"{label.rsplit('.', 1)[-1]}. {text}\n"

    md, page = ["Sample agreement\n\n", f"{fill.draw(sentence)}\n\n"], ["<h1>Sample agreement</h1>",
                                                                      f"<p>{fill.draw(sentence)}</p>", "<ol>"]
    for n, children in enumerate(shape, start=1):
        expected[f"{n}"] = None
        md.append(item(f"{n}", 0))
        page.append(f"<li>{item(str(n), 0)}" + ("<ol>" if children else ""))
        for m, grand in enumerate(children, start=1):
            expected[f"{n}.{m}"] = f"{n}"
            md.append(item(f"{n}.{m}", 1))
            page.append(f"<li>{item(f'{n}.{m}', 1)}" + ("<ol>" if grand else ""))
            for k in range(1, grand + 1):
                expected[f"{n}.{m}.{k}"] = f"{n}.{m}"
                md.append(item(f"{n}.{m}.{k}", 2))
                page.append(f"<li>{item(f'{n}.{m}.{k}', 2)}</li>")
            page.append("</ol></li>" if grand else "</li>")
        page.append("</ol></li>" if children else "</li>")
    page.append("</ol>")
    return ("".join(md) if fmt == "md" else f"<!doctype html><html><body>{''.join(page)}</body></html>"), expected


@settings(max_examples=25, deadline=None)
@given(shape=tree, fmt=st.sampled_from(["md", "html"]), fill=st.data())
def test_nested_ordered_lists_read_as_sub_clauses(tmp_path_factory, shape, fmt, fill):
    """An ordered list inside an item of an ordered list is that item's sub-clauses, numbered as a
    reader cites them ("2.1", "2.1.3"); the items of a bullet list inside one stay text."""
    text, expected = nested_lists(shape, fmt, fill)
    path = tmp_path_factory.mktemp("nested") / f"terms.{fmt}"
    path.write_text(text, encoding="utf-8")
    document = load_document(path, sections="numbered")
    clauses = {sid: document.parents.get(sid) for sid in document.sections if sid[:1].isdigit()}
    assert clauses == expected, document.reading


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_a_bullet_list_inside_a_clause_is_text(tmp_path, fmt):
    text = {"md": "Terms\n\n1. Scope. It applies.\n   - Staff badge in.\n     1. Visitors sign.\n2. Fees. Due monthly.\n",
            "html": "<h1>Terms</h1><ol><li>Scope. It applies.<ul><li>Staff badge in.<ol><li>Visitors sign.</li></ol>"
                    "</li></ul></li><li>Fees. Due monthly.</li></ol>"}[fmt]
    path = tmp_path / f"terms.{fmt}"
    path.write_text(text, encoding="utf-8")
    document = load_document(path, sections="numbered")
    assert [sid for sid in document.sections if sid[:1].isdigit()] == ["1", "2"]

"""`citeaudit.testing`, the scripted judge: served in process and over a socket it answers alike
and records alike, and the documentation's example of it runs (docs/extending/scripted-judge.md)."""

import httpx2
import pytest
from conftest import docs_text

from citeaudit.testing import HANG, Endpoint, Reply, answer_by_claim, completion, scripted_endpoint


def ask(client, url, content):
    return client.post(f"{url}/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": content}]})


def test_in_process_and_over_a_socket_it_answers_and_records_alike():
    def script():
        return [503, Reply(200, b"not json", {"Retry-After": "0"}), answer_by_claim]

    claims = ["one", "two", "three answer=C. Answer Yes or No.", "four status=429"]
    in_process = Endpoint(*script())
    with in_process.client() as client:
        here = [ask(client, in_process.url, claim) for claim in claims]
    with scripted_endpoint(*script()) as served, httpx2.Client() as client:
        there = [ask(client, served.url, claim) for claim in claims]
    assert [r.status_code for r in here] == [r.status_code for r in there] == [503, 200, 200, 429]
    assert [r.content for r in here] == [r.content for r in there]
    assert here[1].headers["retry-after"] == there[1].headers["retry-after"] == "0"
    assert here[2].json() == completion("No")
    assert in_process.bodies == served.bodies and [a.path for a in served.asked] == ["/v1/chat/completions"] * 4
    assert served.requests == 4 and served.most_in_flight == 1


def test_hanging_and_dripping_need_a_socket():
    with Endpoint(HANG).client() as client, pytest.raises(ValueError, match="needs a socket"):
        ask(client, "http://scripted.invalid/v1", "claim")


def test_the_documented_example_runs(tmp_path, monkeypatch):
    page = docs_text("extending/scripted-judge.md")
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)  # its cache folder
    exec(compile(code, "docs/extending/scripted-judge.md", "exec"), {})
    assert (tmp_path / "tmp-cache" / "stub.jsonl").is_file()

"""The autouse `processes_only_where_marked` fixture (conftest.py): a test that starts a process
without one of the markers `make check` leaves out is refused the process and fails, even when the
code under test swallows the refusal; a marked test starts its processes."""

import multiprocessing
import subprocess
import sys

import pytest
from conftest import ROOT, SPAWNING, UnmarkedProcessError

pytest_plugins = ["pytester"]


def test_an_unmarked_test_is_refused_every_way_of_starting_a_process(request):
    with pytest.raises(UnmarkedProcessError, match="starts a process .*carries none of the markers integration"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    with pytest.raises(UnmarkedProcessError, match="multiprocessing start"):
        multiprocessing.get_context("spawn").Process(target=print).start()
    assert len(request.node.refused_processes) == 2
    request.node.refused_processes.clear()  # this test's own refusals, expected: its teardown would fail it


def test_a_swallowed_refusal_still_fails_the_test(pytester):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n" + "".join(f"    {name}: a kind\n" for name in SPAWNING))
    pytester.makepyfile(test_spawns="""
        import subprocess, sys

        def test_swallows():
            try:
                subprocess.run([sys.executable, "-c", "pass"])
            except Exception:
                pass  # as a command line's catch-all would
        """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*test_swallows starts a process (subprocess.Popen(*) but carries none of the markers*"])


@pytest.mark.cli
def test_a_marked_test_starts_its_processes():
    assert subprocess.run([sys.executable, "-c", "print('started')"], capture_output=True, text=True,
                          check=True).stdout == "started\n"

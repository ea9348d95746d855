"""`veto`: panel's three yes/no questions, read with a rule of this plugin's own.

It sends exactly the requests `panel` sends (the same messages under the same prompt versions, so
the same cache keys: the recordings of `panel` answer it in replay), and reads the answers its own
way: the contradiction question vetoes support. With q_t, q_f, q_c the P(yes) of "does the passage
state the claim or imply it is true?", "... false?" and "does it contradict the claim?":

    P(supports) = q_t (1 - q_c),  P(contradicts) = (1 - P(supports)) q_f,
    P(says nothing) = (1 - P(supports)) (1 - q_f).
"""

from __future__ import annotations

from collections.abc import Mapping

from citeaudit.judge.strategies import Panel, Reading


class Veto(Panel):
    name = "veto"
    summary = "panel's three answers, the contradiction question as a veto"

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        answers = {key: reading.p_yes for key, reading in readings.items()}
        true, false, contradicts = answers["true"], answers["false"], answers["contradict"]
        supports = true * (1.0 - contradicts)
        rest = 1.0 - supports
        return {"supports": supports, "contradicts": rest * false, "says_nothing": rest * (1.0 - false)}, answers

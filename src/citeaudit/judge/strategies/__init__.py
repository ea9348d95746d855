"""Judge strategies: how the judge asks for the three probabilities, one object per strategy,
registered by name.

A strategy (`JudgeStrategy`, `base`) owns its requests for one citation (messages, answer kind,
sampling parameters, each under its prompt version), how their answers become the three
probabilities and the `answers`, its confidence when answers had to be sampled, its
`calls_per_citation` and its `calibration_inputs`. The `Judge` sends what it asks and hands it the
readings; it never branches on a strategy's name.

The shipped ones, registered below (one line each) in `citeaudit.registry.STRATEGIES`: `choice` and
`examples` (`choice`), `yesno` and `panel` (`yesno`), `panel+examples` (`panel_examples`), `probe`
and `stacked` (`probe`: the local model's hidden state read by a probe). Adding one from another
package: a `JudgeStrategy` subclass named in the entry-point group `citeaudit.strategies` of that
package's `pyproject.toml` (`citeaudit.registry` has the contract; tests/plugins/ has an example).
"""

from citeaudit.judge.strategies.base import (
    LETTERS,
    YES_NO,
    AnswerKind,
    Ask,
    JudgeStrategy,
    Outcome,
    Reading,
)
from citeaudit.judge.strategies.choice import Choice, Examples
from citeaudit.judge.strategies.panel_examples import PanelExamples
from citeaudit.judge.strategies.probe import Probe, Stacked
from citeaudit.judge.strategies.registry import (
    PROMPT_VERSIONS,
    STRATEGIES,
    calls_per_citation,
    get_strategy,
    register_strategy,
    unregister_strategy,
)
from citeaudit.judge.strategies.yesno import Panel, YesNo

# in the order every list of choices shows them (plugins' come after)
register_strategy(Choice())
register_strategy(YesNo())
register_strategy(Panel())
register_strategy(Examples())
register_strategy(PanelExamples())
register_strategy(Probe())
register_strategy(Stacked())

__all__ = ["LETTERS", "PROMPT_VERSIONS", "STRATEGIES", "YES_NO", "AnswerKind", "Ask", "Choice", "Examples",
           "JudgeStrategy", "Outcome", "Panel", "PanelExamples", "Probe", "Reading", "Stacked", "YesNo",
           "calls_per_citation", "get_strategy", "register_strategy", "unregister_strategy"]

"""Step 2, judge: the `Judge` (`judge`), the ways of asking it, one object per strategy registered by
name (`strategies`), the words asked (`prompts`), numbers read off answers (`answers`), the call
cache (`cache`), request deadlines (`deadline`) and the offline llama.cpp backend (`localmodel`,
`llamaserver`)."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.judge.cache import CallCache as CallCache
    from citeaudit.judge.judge import Judge as Judge
    from citeaudit.judge.judge import Judgement as Judgement
    from citeaudit.judge.localmodel import local_server as local_server
    from citeaudit.judge.localmodel import model_path as model_path
    from citeaudit.judge.prompts import PROMPT_VERSION as PROMPT_VERSION
    from citeaudit.judge.prompts import build_messages as build_messages
    from citeaudit.judge.strategies import PROMPT_VERSIONS as PROMPT_VERSIONS

_HOME: Home = {
    "PROMPT_VERSION": "citeaudit.judge.prompts",
    "PROMPT_VERSIONS": "citeaudit.judge.strategies",
    "CallCache": "citeaudit.judge.cache",
    "Judge": "citeaudit.judge.judge",
    "Judgement": "citeaudit.judge.judge",
    "build_messages": "citeaudit.judge.prompts",
    "local_server": "citeaudit.judge.localmodel",
    "model_path": "citeaudit.judge.localmodel",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

"""Settings, read once: the environment variables (`environment`) and `AuditOptions` (`options`)."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS as DEFAULT_CONTRAST_CHECKS
    from citeaudit.settings.environment import DEFAULT_MODEL as DEFAULT_MODEL
    from citeaudit.settings.environment import DEFAULT_SPOT_CHECK as DEFAULT_SPOT_CHECK
    from citeaudit.settings.environment import DEFAULT_STRATEGY as DEFAULT_STRATEGY
    from citeaudit.settings.environment import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
    from citeaudit.settings.environment import find_input as find_input
    from citeaudit.settings.environment import project_dir as project_dir
    from citeaudit.settings.environment import review_dir as review_dir
    from citeaudit.settings.environment import source_dirs as source_dirs
    from citeaudit.settings.options import AuditOptions as AuditOptions

_HOME: Home = {
    "DEFAULT_CONTRAST_CHECKS": "citeaudit.settings.environment",
    "DEFAULT_MODEL": "citeaudit.settings.environment",
    "DEFAULT_SPOT_CHECK": "citeaudit.settings.environment",
    "DEFAULT_STRATEGY": "citeaudit.settings.environment",
    "DEFAULT_THRESHOLD": "citeaudit.settings.environment",
    "AuditOptions": "citeaudit.settings.options",
    "find_input": "citeaudit.settings.environment",
    "project_dir": "citeaudit.settings.environment",
    "review_dir": "citeaudit.settings.environment",
    "source_dirs": "citeaudit.settings.environment",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

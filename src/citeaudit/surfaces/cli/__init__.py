"""The `citeaudit` command line: thin calls on the library's `Audit` (`citeaudit --help`).

  app                 the command group, exit codes, errors turned into messages
  params              the options shared by commands (one `AuditOptions` from the judge's settings)
  audit_commands      audit, lines, contract, review, report, batch
  calibrate_commands  thresholds, calibrate, judge-setup
  model_commands      record, serve-local, models install
"""

from citeaudit.surfaces.cli import audit_commands, calibrate_commands, model_commands  # noqa: F401  (they register their commands)
from citeaudit.surfaces.cli.app import main

__all__ = ["main"]

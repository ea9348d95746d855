"""The `citeaudit` command line: thin calls on the library's `Audit` (`citeaudit --help`).

  app                 the command group, exit codes, errors turned into messages
  params              the options shared by commands (one `AuditOptions` from the judge's settings)
  audit_commands      audit, lines, contract, report, batch
  review_commands     review (one, or a batch file), agreement
  calibrate_commands  thresholds, calibrate, judge-setup
  model_commands      record, serve-local, models install
  where_command       where: the folders and settings in force, and where each came from
"""

from citeaudit.surfaces.cli import (  # noqa: F401  (they register their commands)
    audit_commands,
    calibrate_commands,
    model_commands,
    review_commands,
    where_command,
)
from citeaudit.surfaces.cli.app import main

__all__ = ["main"]

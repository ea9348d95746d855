"""The `citeaudit` command group: exit codes, and every error turned into a message and an exit code.

Exit codes: 0 ACCEPT, 1 REVIEW or REJECT (`Decision.exit_code`), 2 usage, unreadable input or
unusable path, 3 the judge could not be reached or is not configured (the message names the
setting), 4 an internal error (a bug: the message says where to report it). No input ends in
a traceback.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, NoReturn

import click

from citeaudit.errors import CiteAuditError, JudgeUnavailableError, LocalModelError
from citeaudit.printable import printable, printable_lines

if TYPE_CHECKING:
    import pandas as pd

EXIT_USAGE, EXIT_JUDGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 2, 3, 4, 130


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a reader that closed the pipe


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {printable_lines(message)}", err=True)
    sys.exit(EXIT_USAGE)


def _show(frame: pd.DataFrame) -> None:
    """A table on the terminal; text from the answer under audit is shown `printable`."""
    import pandas as pd

    shown = frame.map(lambda v: printable(v) if isinstance(v, str) else v)
    # Japanese text is two columns wide; measuring every cell's width that way is slow, and for an
    # ASCII table (most) it gives the same widths
    wide = not all(v.isascii() for column in shown.columns for v in shown[column] if isinstance(v, str))
    with pd.option_context("display.width", 200, "display.max_columns", None, "display.max_colwidth", 40,
                           "display.unicode.east_asian_width", wide):
        click.echo(shown.to_string(index=False))


def _interrupted() -> NoReturn:
    """Ctrl-C: say so and exit 130 at once. Outputs are written whole at the end of a command, so
    none is half-written; judge requests still in flight are abandoned, not awaited (their worker
    threads would otherwise keep the process alive until every request timed out)."""
    click.echo("\ninterrupted: stopped before the end; no output was written after this point", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)


class _Guarded(click.Group):
    """Every error becomes a message and an exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _interrupted()
        except BrokenPipeError:  # `citeaudit ... | head`: the reader left; nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except (JudgeUnavailableError, LocalModelError) as exc:
            click.echo(f"error: {printable_lines(exc)}", err=True)
            sys.exit(EXIT_JUDGE)
        except CiteAuditError as exc:
            _fail(str(exc))
        except OSError as exc:
            _fail(f"{exc.filename or 'a file'}: {exc.strerror or exc}. Check the path and its permissions.")
        except Exception as exc:
            from importlib.metadata import version

            click.echo(f"internal error: {type(exc).__name__}: {exc}\nThis is a bug in citeaudit, not in your input: "
                       "please report it in the project's issue tracker with the command you ran and this message "
                       f"(citeaudit {version('citeaudit')}).", err=True)
            sys.exit(EXIT_INTERNAL)


@click.group(cls=_Guarded)
@click.version_option(package_name="citeaudit")
def main() -> None:
    """Audit the citations in an LLM's answer against the source they cite."""

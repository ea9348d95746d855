"""Errors raised by citeaudit. Every message says what went wrong, where, and how to fix it."""


class CiteAuditError(Exception):
    """Base class of every error citeaudit raises on purpose."""


class InputError(CiteAuditError):
    """Bad or unreadable input; the message names the file, the record and the fix."""


class StoreError(InputError):
    """A path given as a JSON Lines store (recordings, reviews) is not one; it was left untouched."""


class SourceError(CiteAuditError):
    """A source document could not be found, downloaded or verified."""


class CacheMissError(CiteAuditError):
    """Replay mode was asked for a call that no recording holds. `lookup` says what was looked for
    where (model, prompt version, key, folders), without the advice on recording it."""

    def __init__(self, message: str, lookup: str = "") -> None:
        super().__init__(message)
        self.lookup = lookup or message


class JudgeError(CiteAuditError):
    """The judge endpoint failed or answered outside the three options."""


class LocalModelError(CiteAuditError):
    """The local llama.cpp server or its model could not be set up."""


class JudgeUnavailableError(JudgeError):
    """The judge endpoint cannot be used at all (unreachable, no answer in time, key refused,
    model unknown): the whole run stops instead of turning every row into an error."""


class MissingExtraError(CiteAuditError):
    """A feature needs a package that the base install leaves out; the message names the extra
    that adds it (`pip install 'citeaudit[dask]'`). The command line exits 2."""

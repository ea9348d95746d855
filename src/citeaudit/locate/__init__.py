"""Step 1, locate: normalized text index (`textindex`), locators as LLMs write them (`locators`),
and the quote matching that sets `quote_status` (`quotes`). Deterministic, no model."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.locate.quotes import Location as Location
    from citeaudit.locate.quotes import locate as locate_quote  # noqa: F401 (public under this name: _HOME)
    from citeaudit.locate.quotes import locate_citations as locate_citations
    from citeaudit.locate.textindex import DocumentIndex as DocumentIndex
    from citeaudit.locate.textindex import index_document as index_document
    from citeaudit.locate.textindex import normalize as normalize

_HOME: Home = {
    "DocumentIndex": "citeaudit.locate.textindex",
    "Location": "citeaudit.locate.quotes",
    "index_document": "citeaudit.locate.textindex",
    "locate_citations": "citeaudit.locate.quotes",
    "locate_quote": ("citeaudit.locate.quotes", "locate"),
    "normalize": "citeaudit.locate.textindex",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)

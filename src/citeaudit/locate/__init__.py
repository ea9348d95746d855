"""Step 1, locate: normalized text index (`textindex`), locators as LLMs write them (`locators`),
and the quote matching that sets `quote_status` (`quotes`). Deterministic, no model."""

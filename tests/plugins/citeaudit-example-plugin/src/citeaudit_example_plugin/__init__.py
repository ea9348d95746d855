"""An example citeaudit plugin: a judge strategy (`veto`) and a source format (`glossary`), each
one module, registered through the entry points of this package's pyproject.toml."""

"""`python -m citeaudit.surfaces.cli`."""

from citeaudit.surfaces.cli import main

main()

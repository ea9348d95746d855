"""Build the public TRAIN sets into labelled sets: `python tools/public_sets.py --help` (what
`make public-sets` runs). The code is the library's `citeaudit.calibrate.public_sets`."""

import sys

from citeaudit.calibrate.public_sets import main

if __name__ == "__main__":
    sys.exit(main())

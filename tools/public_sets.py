"""Build the public TRAIN sets into labelled sets: `python tools/public_sets.py --help` (what
`make public-sets` runs). The code is the library's `citeaudit.calibrate.public_sets`."""

import sys

from citeaudit.calibrate.public_sets import main
from citeaudit.settings import environment as config

if __name__ == "__main__":
    sys.exit(main(public_dir=config.public_dir(), out=config.build_dir() / "public"))

"""Allow ``python -m players NAME --port N``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())

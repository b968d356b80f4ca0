"""Allow ``python -m players NAME --port N``."""

import sys

from .cli import main

sys.exit(main())

"""Allow ``python -m server.cli``."""

import sys

from . import main

sys.exit(main())

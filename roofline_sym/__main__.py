"""``python -m roofline_sym``: the ``roofline-sym`` command."""

import sys

from .cli import main

sys.exit(main())

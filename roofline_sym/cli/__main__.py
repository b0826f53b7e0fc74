"""``python -m roofline_sym.cli``: the ``roofline-sym`` command."""

import sys

from . import main

sys.exit(main())

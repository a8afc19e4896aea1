"""``python -m holdem.harness.soak`` (``make soak``)."""

import sys

from holdem.harness.soak.run import main

sys.exit(main())

"""``python -m agentx``."""

import sys

from agentx.cli import main

sys.exit(main())

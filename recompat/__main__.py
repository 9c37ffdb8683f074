import sys

from recompat.cli import main

sys.exit(main())

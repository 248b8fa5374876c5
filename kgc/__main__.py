"""`python -m kgc` runs the command line."""
import sys

from kgc.cli import main

sys.exit(main())

"""``python -m evalframe.cli ...`` runs the ``evalframe`` command."""
import sys

from . import main

sys.exit(main())

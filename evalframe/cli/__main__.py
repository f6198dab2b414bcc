"""``python -m evalframe.cli ...`` runs the ``evalframe`` command."""
from . import console_main

console_main()

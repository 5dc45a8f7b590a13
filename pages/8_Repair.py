"""Repair: decision thresholds that make the specification pass, chosen on part of the rows and certified on the rest
(``fairaudit.ui.repair``)."""
from fairaudit.ui import repair

repair.page()

"""Groups: every intersection of the protected attributes at once (``fairaudit.ui.groups``)."""
from fairaudit.ui import groups

groups.page()

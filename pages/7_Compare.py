"""Compare: the current model beside other models or logged decisions, on the same rows (``fairaudit.ui.compare``)."""
from fairaudit.ui import compare

compare.page()

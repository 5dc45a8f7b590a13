"""The leaf utilities every layer of fairaudit may import, and which import nothing of fairaudit above them: the
errors (``errors``), the resource limits (``limits``), JSON-safe numbers (``numbers``), progress reporting
(``progress``), where the bundled files are (``paths``), writing a file safely (``files``) and the "did you mean"
hints of error messages (``text``). The architecture (``.importlinter``) keeps this package at the bottom.
"""

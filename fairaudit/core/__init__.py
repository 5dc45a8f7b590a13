"""The engine-neutral heart of fairaudit: what every engine and every front end shares.

The engine contract (``engine``) and the registry (``registry``); what an engine audits (``inputs``,
``observations``) and what is checked before anything is computed (``preflight``); the driver (``driver``) that
turns an engine's leaf intervals into every node's interval and verdict (``evaluate``) and an ``AuditResult``
(``trace``, ``fulltrace``); what a verdict is worth and may claim (``guarantee``, ``claim``), in plain words
(``explain``), with what else was found (``findings``, ``counterexamples`` and their ``*_view``) and what to try
next (``suggest``); the allocation of the error budget δ over the leaves (``allocation``); and the small shared
rules (``outputs``, ``group_metrics``). The leaf utilities below every layer (errors, limits, numbers, progress,
paths) are ``fairaudit.base``.
"""

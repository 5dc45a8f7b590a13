"""fairaudit: iterative fairness auditing with guarantees.

The library works without Streamlit. Entry points:

* ``fairaudit.data.load(name)`` / ``fairaudit.data.from_csv(...)`` -> ``Dataset``
* ``fairaudit.models.train(dataset, kind)`` -> ``Model``
* ``fairaudit.spec.parse(text)`` -> ``Spec``
"""
__version__ = "0.1.0"

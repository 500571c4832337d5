"""UI — draw and interact: the only modules that import matplotlib, ipywidgets and anywidget.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``plots``: figures from plain arguments, one function per figure, one namespace
- ``widgets``: the chapters' explorers, one namespace (``widgets.<Name>``)
"""

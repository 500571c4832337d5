"""Core — what every module may use.

The map of the whole package is ``labkit/__init__.py``'s docstring; this part's modules:

- ``args``: one set of argument checks, errors that name the argument and the fix
- ``files``: paths and text files read once, with clear errors
- ``cache``: the user cache folder (embeddings, model weights)
- ``guard``: no model call while an explorer computes ahead (``no_model_calls``, ``ModelCallRefused``)
"""

"""Local document QA with honest citations: the library (never imports streamlit).

One module per pipeline stage (see ``DESIGN.md``): ``extract``, ``chunk``,
``embed``, ``store``, ``retrieve``, ``gate``, ``cite``, ``generate``,
``answer``, ``evaluate``; plus ``settings``, ``models`` and ``errors``.
"""

__version__ = "0.1.0"

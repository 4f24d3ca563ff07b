"""After the install: the user's PyTorch environments, cared for.

* :mod:`.discover`: the environments list (the registry's, conda's, venvs in the usual places,
  the interpreters detection found), each with its torch build, Python, size and status.
* :mod:`.check`: doctor + verify on one env, recorded in the registry.
* :mod:`.repair`: reinstall the right torch build for this machine into an env, keeping the
  user's other packages (snapshot and restore on failure, the per-env lock).
* :mod:`.upgrade`: build a new stack in a staging env next to it, verify it, swap it in; undo
  until confirmed. :mod:`.companions` checks installed extensions against the new torch first.
* :mod:`.remove`: delete an environment safely; :mod:`.cache`: uv / pip cache sizes and pruning.
* :mod:`.kernel`: Jupyter kernels per env; :mod:`.terminal`: a terminal with the env activated.

The registry (:mod:`app.core.env.registry`), the guard (:mod:`app.core.env.guard`) and the dist-info
reader (:mod:`app.core.env.distinfo`) are modules of their own: the doctor reads them too.
"""

"""From one verified machine to a room of them: the hand-off formats labs already use.

* :mod:`app.core.pylock` — a PEP 751 ``pylock.toml``: the model, its writer and its bounded reader,
  and the hash-pinned requirements an install from it runs;
* :mod:`.export` — what an environment holds, each file with its origin and sha256, and the
  machine it was verified on (``torch-setup export``);
* :mod:`app.core.pylock.fit` — can a lock's torch build run on a machine (platform tags, Python, the GPU's
  generation against the build's architectures, the driver floor), and if not, the nearest
  choice that can (the recommendation engine decides both);
* :mod:`.lockbundle` — an offline bundle made from a lock (``bundle --lock``);
* :mod:`.recipes` — container recipes (Apptainer, Dockerfile) that install a lock;
* :mod:`.modules` — Lmod and Environment Modules modulefiles for an environment;
* :mod:`.fleet` — a plan for many machines from their detect reports (``fleet plan``).

The install itself stays the one install: :mod:`app.core.install.lockplan` turns a plan whose
request names a lock into the hash-pinned plan the pre-flight checks and the installer runs.
"""

"""Locks: a PEP 751 ``pylock.toml`` (:mod:`.lockfile`) and whether its build runs on a machine (:mod:`.fit`).

Apart from :mod:`app.core.lab` because the install reads locks too
(:mod:`app.core.install.lockplan`), and the lab's modules stand on the install and the list of
environments: this package stands only on the compatibility data and the recommendation engine.
"""

"""Plan, pre-flight and a transactional install of PyTorch into a new (or existing) env.

``plan(request)`` decides everything that can be decided without writing anything (the
Python, the backend, the packages and indexes, the size estimate). ``preflight(plan)`` checks
it against the machine: the Python fits, the target is writable and not someone's folder,
the disk has room, the indexes (or bundle) are reachable. ``install(plan)`` then creates the
env and installs, streaming typed events; a new env that fails or is cancelled is removed
completely (only what we created), an existing env is restored from a ``pip freeze``
snapshot.

Index rules (never mix one index's torch with another's):

* uv: the torch index goes in as ``--extra-index-url`` (uv ranks extra indexes above the
  default one) with ``--index-strategy first-index``: every package comes from the first
  index that has it at all, so torch / torchvision / torchaudio all come from the torch
  index; packages it lacks come from the user's default index (PyPI, ``UV_DEFAULT_INDEX``,
  or ``default_index_url``/mirror).
* pip merges all indexes and picks the best version; the torch index's builds carry a local
  version label (``+cu126``) that outranks PyPI's plain build of the same version, and the
  recommendation pins torch packages to one variant. After every install we read the env's
  ``*.dist-info`` and refuse a mix of variants (``torch 2.13.0+cpu`` with
  ``torchvision 0.28.0+cu126``).

The modules: :mod:`.request` (the frozen values), :mod:`.config` (pip / uv configuration, the
default index), :mod:`.sizing` (disk estimates), :mod:`.planning` (``plan``), :mod:`.checks`
(``preflight``, one function per check), :mod:`.transaction` (snapshot, rollback, restore),
:mod:`.run` (``install``). Reachability lives in :mod:`app.core.net.indexes` and the installer
output -> remedy catalogue in :mod:`app.core.remedies` (the bundle builder uses both).
"""
from __future__ import annotations

from app.core.base.events import ProgressEvent
from app.core.install.checks import preflight, raise_for_checks
from app.core.install.config import default_index_for
from app.core.install.interpreter import ensure_own_interpreter
from app.core.install.planning import plan
from app.core.install.request import Check, InstallPlan, InstallRequest, InstallResult
from app.core.install.run import TORCH_FAMILY, install, mixed_variants
from app.core.install.sizing import INSTALLED_MB
from app.core.install.transaction import Rollback, Snapshot, restore, rollback, take_snapshot
from app.core.net.indexes import check_url, probe_index

__all__ = [
    "INSTALLED_MB", "TORCH_FAMILY", "Check", "InstallPlan", "InstallRequest", "InstallResult", "ProgressEvent",
    "Rollback", "Snapshot", "check_url", "default_index_for", "ensure_own_interpreter", "install", "mixed_variants",
    "plan", "preflight", "probe_index", "raise_for_checks", "restore", "rollback", "take_snapshot",
]

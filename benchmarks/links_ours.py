#!/usr/bin/env python3
"""The "ours" side of ``benchmarks/links.py``: the assistant's install path, in a process of its
own, as ``torch-setup install`` runs it (a child of the benchmark; not meant to be run by hand).

It imports the product and nothing of the link laboratory (``tests/netlab``: its servers, TLS and
wheel generation are the benchmark's, and a third of a second of imports that a user's
``torch-setup`` never pays). The machine it installs for is :data:`CUDA_BOX`: the recommendation for
it, pinned to torch 2.13.0, with the lab's mirrors and package index; then plan, pre-flight and
install. Its last line is JSON: the torch installed, the sources that took over, when the install
returned ("Installed") and where a download resumed.

    python benchmarks/links_ours.py ENV DEFAULT_INDEX MIRROR...
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CUDA_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64",
            "python": {"version": f"{sys.version_info[0]}.{sys.version_info[1]}.0"},
            "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "driver_version": "580.65",
                      "compute_capability": "8.9", "memory_mb": 24564}]}


def main(argv: Sequence[str]) -> int:
    from app.core.detection.system import SystemReport
    from app.core.install import InstallRequest, install, plan, preflight
    from app.core.recommend import Choices, recommend
    from app.core.sources import SourceSettings

    env, default_index, *mirrors = argv
    rec = recommend(SystemReport.from_dict(CUDA_BOX), None, Choices(torch="2.13.0"))
    request = InstallRequest(Path(env), recommendation=rec, python=sys.executable,
                             sources=SourceSettings(mirrors=tuple(mirrors), default_index=default_index))
    p = plan(request)
    result = install(p, checks=preflight(p))
    installed_at = time.time()  # "Installed": the environment is ready (its downloads are freed after)
    served = [f"{s.filename.split('-')[0]} from {s.source_id}" + (f" (after {', '.join(s.earlier)})" if s.earlier
                                                                   else "") for s in result.downloads if s.earlier]
    print(json.dumps({"torch": result.torch_version, "switched": served, "installed_at": installed_at,
                      "resumed": [s.resumed_at for s in result.downloads if s.resumed_at]}))
    return 0 if result.torch_version == "2.13.0+cu132" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

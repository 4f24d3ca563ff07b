"""The :class:`Recommendation` from the engine's decision: the pins and commands, the words,
the alternatives, the GPUs served and not."""
from __future__ import annotations

from app.core.enums import Backend
from app.core.recommend import explain
from app.core.recommend.choices import alternatives
from app.core.recommend.commands import install_commands
from app.core.recommend.decide import Decision
from app.core.recommend.types import Recommendation, UnservedGpu


def build(d: Decision) -> Recommendation:
    eng, e = d.eng, d.chosen
    rel, v, data = e.release, e.variant, eng.data
    install = install_commands(rel, v, d.torch_version, eng.wishes, eng.platform_for_wheels(),
                               tuple(g.gfx for g in e.served if g.gfx))
    return Recommendation(
        backend=Backend(v.backend), variant=v.name, torch_version=d.torch_version, python_ok=d.python.ok,
        env_python=d.python.env_python, index_url=v.index_url, packages=install.packages,
        command=install.commands["pip"], reasons=tuple(explain.reasons(d)), warnings=tuple(explain.warnings(d)),
        alternatives=alternatives(eng, e, d.all_evals), compat_data_version=data.version,
        compat_data_date=data.date, env_vars=dict(e.env_vars), served_gpus=tuple(g.ref() for g in e.served),
        unserved_gpus=tuple(UnservedGpu(g.ref(), why) for g, why in explain.unserved(d)),
        driver_upgrade=d.upgrade, commands=install.commands, platform=eng.m.platform, torch_release=rel.torch,
        unknowns=tuple(explain.unknowns(d)), choices=eng.choices, summary=explain.summary(d),
        install_size_mb=v.install_mb, facts_assumed=bool(rel.assumed or v.assumed),
        compat_data_origin=data.origin, availability=explain.availability(d))

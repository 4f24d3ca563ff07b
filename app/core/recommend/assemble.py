"""The :class:`Recommendation` from the engine's decision: the pins and commands, the words,
the alternatives, the GPUs served and not, what the wishes cost, and where it installs from."""
from __future__ import annotations

from collections.abc import Sequence

from app.core.base.enums import Backend
from app.core.base.text import Text
from app.core.base.wheels import PYTORCH_INDEX
from app.core.compat.data import version_tuple
from app.core.recommend import explain
from app.core.recommend.choices import alternatives
from app.core.recommend.commands import install_commands
from app.core.recommend.decide import Decision
from app.core.recommend.types import Recommendation, UnservedGpu

#: PyPI's simple index: where its standard builds come from
PYPI_SIMPLE = "https://pypi.org/simple"


def build(d: Decision, costs: Sequence[Text] = ()) -> Recommendation:
    eng, e = d.eng, d.chosen
    rel, v, data = e.release, e.variant, eng.data
    av = eng.available
    no_index = eng.sources_bound
    find_links = av.folders if av is not None else ()
    install = install_commands(rel, v, d.torch_version, eng.wishes, eng.platform_for_wheels(),
                               tuple(g.gfx for g in e.served if g.gfx), held=e.pins if no_index else (),
                               pypi_build=e.on_cpu, find_links=find_links, no_index=no_index)
    if no_index:
        index_url = ""  # the sources hold it: no index is asked
    elif e.on_cpu and v.index_url.startswith(PYTORCH_INDEX):
        index_url = PYPI_SIMPLE
    else:
        index_url = v.index_url
    return Recommendation(
        backend=Backend(e.backend), variant=v.name, torch_version=d.torch_version, python_ok=d.python.ok,
        env_python=d.python.env_python, index_url=index_url, packages=install.packages,
        command=install.commands["pip"], reasons=tuple(explain.reasons(d)), warnings=tuple(explain.warnings(d)),
        alternatives=alternatives(eng, e, d.all_evals), compat_data_version=data.version,
        compat_data_date=data.date, env_vars=dict(e.env_vars), served_gpus=tuple(g.ref() for g in e.served),
        unserved_gpus=tuple(UnservedGpu(g.ref(), why) for g, why in explain.unserved(d)),
        driver_upgrade=d.upgrade, commands=install.commands, platform=eng.m.platform, torch_release=rel.torch,
        unknowns=tuple(explain.unknowns(d)), choices=eng.choices, summary=explain.summary(d), costs=tuple(costs),
        install_size_mb=v.install_mb, facts_assumed=bool(rel.assumed or v.assumed),
        compat_data_origin=data.origin, availability=explain.availability(d),
        pythons=_pythons(d), python_range=v.python_range(rel), find_links=tuple(find_links),
        no_index=no_index, needs_pip=install.needs_pip)


def _pythons(d: Decision) -> tuple[str, ...]:
    """The Pythons the new environment may use: the wished one, else the release's (narrowed by the sources)."""
    if d.eng.fixed_python:
        return (d.eng.fixed_python,)
    rel, v, held = d.chosen.release, d.chosen.variant, d.chosen.pythons
    return tuple(sorted((p for p in rel.pythons() if v.python_ok(rel, p) and (held is None or p in held)),
                        key=version_tuple))

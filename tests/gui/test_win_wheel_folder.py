"""The wizard's "Local wheels folder" and "Offline bundle folder" fields take a folder in every
form a user has it: as the OS writes it (``C:\\Users\\张伟\\wheels``), as the folder dialog gives
it (Qt's ``C:/Users/...`` on Windows) and as a ``file:///`` URL; the pre-flight of the plan the
page builds finds them (before, every absolute Windows folder was "unsupported URL scheme 'c'").
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QDir

from app.core.base.text import render
from app.core.install import plan, preflight
from app.gui.state import WizardState
from tests.netlab import build_wheel
from tests.test_bundle_closed import make_bundle

pytestmark = pytest.mark.gui


def _page(qtbot):
    from app.gui.pages.environment import EnvironmentPage

    page = EnvironmentPage(WizardState())
    qtbot.addWidget(page)
    return page


def test_the_wheel_folder_field_takes_the_dialogs_form_and_a_file_url(qtbot, tmp_path):
    folder = tmp_path / "张伟 wheels"
    build_wheel(folder, "netlab-demo", "1.0")
    page = _page(qtbot)
    page.location.setText(str(tmp_path / "envs"))
    page.find_links.setText(f"{QDir.fromNativeSeparators(str(folder))}; {folder.as_uri()}; {folder}")
    req = dataclasses.replace(page.build_request(), packages=("netlab-demo",))
    assert [Path(f) for f in req.sources.folders] == [folder] * 3
    checks = preflight(plan(req))
    reach = [c for c in checks if c.name.startswith("reach:")]
    assert reach and all(c.ok for c in reach), [render(c.message) for c in reach]


def test_the_bundle_field_takes_a_file_url(qtbot, tmp_path):
    wheels = tmp_path / "wh"
    bundle = make_bundle(tmp_path / "bundle 包", [build_wheel(wheels, "netlab-demo", "1.0")])
    page = _page(qtbot)
    page.location.setText(str(tmp_path / "envs"))
    page.bundle.setText(bundle.as_uri())
    req = page.build_request()
    assert req.sources.bundle == bundle
    reach = [c for c in preflight(plan(req)) if c.name.startswith("reach:")]
    assert reach and all(c.ok for c in reach), [render(c.message) for c in reach]

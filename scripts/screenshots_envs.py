#!/usr/bin/env python3
"""Screenshots of the wizard's second path (the environments list, check, repair, upgrade), both languages.

    .venv/bin/python scripts/screenshots_envs.py [--out docs/screenshots]

Nothing is faked: two real environments are made in a temporary folder from the local wheel
folder (torch 2.13.0+cpu), the wizard lists them, checks one (verify + doctor), repairs it
(from the local wheels), and upgrades it to the second local torch build (PyPI's 2.14.1 from
pip's configured local index, as tests/second_torch.py finds it). Runs under xvfb-run when it
is installed (the real X11 code path), else offscreen. Takes a few minutes (three verifications).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

NAMES = {"welcome": "9-welcome-existing", "list": "10-environments", "check": "11-check", "repair": "12-repair",
         "upgrade-plan": "13-upgrade-plan", "upgrade": "14-upgrade"}


def _setup(work: Path, wheels: Path) -> dict[str, object]:
    """Two real envs: one this app made (torch 2.13.0+cpu, recorded), one found in the current folder."""
    from tests.second_torch import find

    from app.core.env import registry
    from app.core.install import InstallRequest, install, plan
    from app.core.sources.settings import SourceSettings

    second = find(work / "sources")
    if second is None:
        raise SystemExit("no second torch build in the local indexes")
    default_index = second.indexes[1] if len(second.indexes) > 1 else second.indexes[0]
    made = work / "envs" / "torch-env"
    p = plan(InstallRequest(env_path=made, packages=("torch==2.13.0+cpu", "six"),
                            sources=SourceSettings(find_links=(str(wheels),), default_index=default_index)))
    registry.record_install(install(p), p, None)
    found = work / "project" / ".venv"
    p2 = plan(InstallRequest(env_path=found, packages=("torch==2.13.0+cpu",),
                             sources=SourceSettings(find_links=(str(wheels),), default_index=default_index)))
    install(p2)  # not recorded: found by the discovery (the current folder's .venv)
    return {"made": made, "found": found, "second": second, "default_index": default_index, "wheels": wheels}


def run(out: Path, langs: list[str]) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from app.gui import i18n
    from app.gui.pages import PageId
    from app.gui.screenshots import SIZE, local_wheels, wait, wait_until
    from app.gui.wizard import SetupWizard

    app = QApplication.instance() or QApplication(["torch-setup"])
    work = Path(tempfile.gettempdir()) / "torch-setup-envs-demo"
    shutil.rmtree(work, ignore_errors=True)
    (work / "project").mkdir(parents=True)
    os.environ["TORCH_SETUP_HOME"] = str(work / "home")
    os.chdir(work / "project")
    wheels = local_wheels()
    if not wheels:
        raise SystemExit("no local torch wheel folder")
    env = _setup(work, Path(wheels))
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    wiz = SetupWizard(lang=langs[0])
    wiz.resize(SIZE)
    wiz.show()
    wait(300)

    def grab(key: str) -> None:
        for lang in langs:
            if i18n.current_language() != lang:
                wiz.welcome.select_language(lang)
                wait(200)
            path = out / f"{NAMES[key]}-{lang}.png"
            wiz.grab().save(str(path))
            saved.append(path)
        if i18n.current_language() != langs[0]:
            wiz.welcome.select_language(langs[0])
            wait(200)

    try:
        wiz.welcome.choose_existing(True)
        wait(100)
        grab("welcome")
        wiz.next()
        envs = wiz.currentPage()
        wait_until(lambda: envs._loaded and not envs.is_busy(), 120, "the environments list")

        def task(kind: str, fill=None, start: bool = True, key: str | None = None) -> None:
            if wiz.currentId() == int(PageId.ENV_TASK):
                wiz.back()
                wait_until(lambda: envs._loaded and not envs.is_busy(), 120, "the list again")
            envs.select(env["made"])
            envs.choose(kind)
            page = wiz.currentPage()
            wait_until(lambda: page.status() in ("ready", "succeeded", "failed"), 300, f"the {kind} page")
            if fill is not None:
                page.advanced.set_expanded(True)
                fill(page)
                page.make_plan()
                wait_until(lambda: page.status() in ("ready", "failed"), 300, f"the {kind} plan")
                page.advanced.set_expanded(False)
                if key == "upgrade-plan":
                    grab("upgrade-plan")
            if start and page.status() == "ready":
                page.start()
                wait_until(lambda: page.status() in ("succeeded", "failed", "cancelled"), 900, f"the {kind}")
            wait(200)
            grab(kind)

        task("check")
        wiz.back()  # the list again: the check is recorded there
        wait_until(lambda: envs._loaded and not envs.is_busy(), 120, "the list again")
        envs.select(env["made"])
        wait(100)
        grab("list")

        def repair_sources(page) -> None:
            page.torch_edit.setText("torch==2.13.0+cpu")
            page.index_edit.setText(str(env["default_index"]))
            page.links_edit.setText(str(env["wheels"]))

        task("repair", repair_sources)
        second = env["second"]

        def upgrade_sources(page) -> None:
            page.torch_edit.setText(f"torch=={second.version}")
            page.index_edit.setText(second.indexes[0])
            page.extra_edit.setText(" ".join(second.indexes[1:]))
            page.links_edit.setText(str(second.links))

        task("upgrade", upgrade_sources, key="upgrade-plan")
    finally:
        for p in wiz.busy_pages():
            p.cancel_and_wait(60)
        wiz.hide()
        wiz.deleteLater()
        app.processEvents()
        os.chdir(REPO)
        shutil.rmtree(work, ignore_errors=True)  # the demo envs (a few GB)
    return saved


def _xcb_works() -> bool:
    """Qt's xcb plugin starts under xvfb-run here (it needs libxcb-cursor and friends); else offscreen."""
    probe = [sys.executable, "-c", "from PySide6.QtWidgets import QApplication; QApplication([])"]
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    res = subprocess.run(["xvfb-run", "-a", *probe], env=env, capture_output=True, timeout=60)
    return res.returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    ap.add_argument("--lang", default=None)
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inner:
        cmd = [sys.executable, __file__, "--inner", "--out", args.out] + (["--lang", args.lang] if args.lang else [])
        env = dict(os.environ)
        if shutil.which("xvfb-run") and _xcb_works():
            env["QT_QPA_PLATFORM"] = "xcb"
            cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x900x24", *cmd]
        else:
            env["QT_QPA_PLATFORM"] = "offscreen"
        return subprocess.run(cmd, cwd=REPO, env=env).returncode
    saved = run(Path(args.out).resolve(), [args.lang] if args.lang else ["en", "zh_CN"])
    for p in saved:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Drive the real wizard through a real run and save a PNG of every page, in each language.

``torch-setup gui --screenshot-dir DIR`` (and ``scripts/screenshots.py``, which runs it
under Xvfb) use this. Nothing is faked: detection and the recommendation are this
machine's, the environment is a new uv venv in a temporary folder, PyTorch is really
installed (from a local wheels folder when one is given, as the Environment page's
"Local wheels folder" setting), verified and measured with a short speed test. Each page is
captured once its work is done, first in English, then switched live to Chinese (which is
also a check that every page retranslates its results).

``offline=True`` (or ``TORCH_SETUP_SCREENSHOT_OFFLINE=1``) shows the issue-12 run: the PyTorch
index out of reach (``TORCH_SETUP_TORCH_INDEX`` pointed at a port where nothing listens, unless
set), only the local wheels field filled with a folder that holds torch and everything it
needs; the Environment page makes the recommendation fit the folder, and the Recommendation
page is captured again (after Back) with the build the folder holds and why. The files get an
``-offline`` suffix (``3-recommendation-offline-en.png``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QSize, QTimer

from app.core.base.locations import folder_path
from app.gui import i18n
from app.gui.pages import PageId

SIZE = QSize(980, 720)
LANGS = ("en", "zh_CN")
FILE_NAMES = {
    PageId.WELCOME: "1-welcome", PageId.SYSTEM: "2-system", PageId.RECOMMENDATION: "3-recommendation",
    PageId.ENVIRONMENT: "4-environment", PageId.INSTALL: "5-install", PageId.VERIFY: "6-verify",
    PageId.SPEEDTEST: "7-speedtest", PageId.DONE: "8-done",
}


def wait(ms: int) -> None:
    """Let the event loop run for ``ms`` (a script, not the app: the app never blocks)."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(pred, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        wait(50)


def local_wheels() -> str | None:
    """A folder holding a torch wheel: $TORCH_SETUP_WHEELS, else pip's configured find-links."""
    for var in ("TORCH_SETUP_WHEELS", "TORCH_SETUP_TEST_WHEELS", "PIP_FIND_LINKS"):
        for part in (os.environ.get(var) or "").replace(os.pathsep, " ").split():
            p = folder_path(part)
            if p.is_dir() and any(p.glob("torch-*.whl")):
                return str(p)
    for cfg in (Path("/etc/pip.conf"), Path.home() / ".config/pip/pip.conf", Path.home() / ".pip/pip.conf"):
        try:
            text = cfg.read_text(encoding="utf-8")
        except OSError:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "find-links":
                for part in value.split():
                    p = folder_path(part)
                    if p.is_dir() and any(p.glob("torch-*.whl")):
                        return str(p)
    return None


def wheel_version(folder: str) -> str | None:
    """"2.13.0" from the newest torch-2.13.0+cpu-...whl in ``folder``."""
    wheels = sorted(Path(folder).glob("torch-*.whl"))
    return wheels[-1].name.split("-")[1].split("+")[0] if wheels else None


# long: one real run through every page, with the offline variant's extra Back to page 3
def save_all(out_dir: str | os.PathLike, languages=None, *, wheels: str | None = None,
             index_url: str | None = None, stop_after: PageId | None = None, offline: bool = False) -> list[Path]:
    from app.gui.state import WizardState
    from app.gui.wizard import SetupWizard

    offline = offline or os.environ.get("TORCH_SETUP_SCREENSHOT_OFFLINE", "") == "1"
    suffix = "-offline" if offline else ""
    if offline:
        os.environ.setdefault("TORCH_SETUP_TORCH_INDEX", "http://127.0.0.1:9/whl/")  # the discard port: refused
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    languages = list(languages or LANGS)
    wheels = wheels or local_wheels()
    saved: list[Path] = []
    # A short, stable folder name: it shows in the pictures.
    work = Path(tempfile.gettempdir()) / "torch-setup-demo"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ.setdefault("TORCH_SETUP_HOME", str(work / "home"))  # logs and reports stay in there
    state = WizardState(bench_sizes=[256, 512, 1024], bench_dtypes=["fp32"], bench_budget_s=20)
    wiz = SetupWizard(state=state, lang=languages[0])
    wiz.resize(SIZE)
    wiz.show()
    wait(200)

    def grab(pid: PageId) -> None:
        for lang in languages:
            if i18n.current_language() != lang:
                wiz.welcome.select_language(lang)
                wait(150)  # LanguageChange events are posted; let every page retranslate
            path = out / f"{FILE_NAMES[pid]}{suffix}-{lang}.png"
            wiz.grab().save(str(path))
            saved.append(path)
        if i18n.current_language() != languages[0]:
            wiz.welcome.select_language(languages[0])
            wait(150)

    timeouts = {PageId.SYSTEM: 30, PageId.RECOMMENDATION: 30, PageId.ENVIRONMENT: 60, PageId.INSTALL: 900,
                PageId.VERIFY: 300, PageId.SPEEDTEST: 300, PageId.DONE: 30}
    try:
        for pid in PageId:
            wait_until(lambda pid=pid: wiz.currentId() == int(pid), 10, f"the {pid.name} page")
            page: Any = wiz.currentPage()  # the driver sets each page's own widgets
            if pid == PageId.ENVIRONMENT:
                page.location.setText(str(work / "envs"))
                page.name.setText("torch-env")
                if wheels:
                    # Only the local wheels field: what the folder holds bounds the recommendation
                    # (the Environment page makes it fit), and when it holds everything no index is used.
                    page.advanced.set_expanded(True)
                    page.find_links.setText(wheels)
                    if index_url:
                        page.index_url.setText(index_url)
            if pid != PageId.WELCOME:
                wait_until(lambda page=page: page.isComplete() and not page.is_busy(), timeouts.get(pid, 60),
                           f"the {pid.name} page to finish")
            wait(100)
            if pid == PageId.ENVIRONMENT and offline:
                wiz.back()  # the Recommendation page, now with the build the folder holds and why
                wait_until(lambda: wiz.currentId() == int(PageId.RECOMMENDATION), 10, "the Recommendation page")
                wait(150)
                grab(PageId.RECOMMENDATION)
                wiz.next()
                wait_until(lambda page=page: wiz.currentId() == int(PageId.ENVIRONMENT) and page.isComplete()
                           and not page.is_busy(), 120, "the Environment page to finish again")
                wait(100)
            if not (pid == PageId.RECOMMENDATION and offline):  # offline: captured after Back (above)
                grab(pid)
            if pid == PageId.ENVIRONMENT:
                page.advanced.set_expanded(False)  # the install page's screenshot shows the default look
            if (stop_after is not None and pid == stop_after) or pid == PageId.DONE:
                break
            wiz.next()
    finally:
        for p in wiz.busy_pages():
            p.cancel_and_wait(60)
        wiz.hide()
        wiz.deleteLater()
        shutil.rmtree(work, ignore_errors=True)
    return saved

"""``torch-setup --self-test``: is this copy of the assistant whole and working?

Runs from source and in the frozen (PyInstaller) app alike, with no display needed
(offscreen Qt when there is none). Each step prints one line; the exit code is 0 when all
passed, 1 otherwise, and a failed step prints what went wrong.

Steps: the bundled resources and probe scripts are real files where the app looks for them;
the bundled uv runs; a child process gets the user's library search path, not the bundle's;
detection runs; the recommendation engine answers for this machine; a session report
renders; Qt starts with fonts; the wizard is built and every page renders.

Nothing is written into the user's folders: logs and caches go to a temporary
``TORCH_SETUP_HOME`` unless one is set.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable


class _Missing(Exception):
    """A part of the app is not there (a module that is not installed or not bundled)."""


def _import(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (exc.name == name or name.startswith(exc.name + ".")):
            raise _Missing(f"{name} is missing from this build") from None
        raise


class SelfTest:
    def __init__(self, out=None) -> None:
        self.out = out or sys.stdout
        self.failures: list[str] = []
        self.context: dict = {}

    def step(self, name: str, fn: Callable[[], str | None]) -> None:
        started = time.perf_counter()
        try:
            detail = fn() or ""
            status = "ok  "
        except Exception as exc:  # report every failure, keep going
            status = "FAIL"
            if isinstance(exc, (_Missing, AssertionError)):
                detail = str(exc) or type(exc).__name__
            else:
                tb = traceback.extract_tb(exc.__traceback__)[-1:]
                where = f" at {tb[0].filename.rsplit(os.sep, 1)[-1]}:{tb[0].lineno}" if tb else ""
                detail = f"{type(exc).__name__}: {exc}{where}"
            self.failures.append(f"{name}: {detail}")
        took = time.perf_counter() - started
        print(f"  {status} {name:<22} {took:6.2f} s  {detail}", file=self.out, flush=True)

    # ------------------------------------------------------------------ steps
    def resources(self) -> str:
        from app.core.base.paths import probes_dir, resources_dir

        res = resources_dir()
        assert res.is_dir(), f"resources folder {res} is missing"
        missing = [p for p in ("compat", "icons", "i18n", "answers.example.toml") if not (res / p).exists()]
        assert not missing, f"missing in {res}: {', '.join(missing)}"
        probes = sorted(p.name for p in probes_dir().glob("*.py") if p.is_file() and p.name != "__init__.py")
        assert probes, f"no probe scripts in {probes_dir()} (they must be real .py files)"
        from app.core.pipeline.answers import load_answers

        load_answers(res / "answers.example.toml")
        return f"{res}; probes: {', '.join(probes)}"

    def compat(self) -> str:
        compat = _import("app.core.compat.data")
        data = compat.load_compat()
        version = getattr(data, "version", None) or getattr(data, "data_version", None) or "?"
        return f"compat data {version}"

    def uv(self) -> str:
        from uv import find_uv_bin

        from app.core.proc.runner import run

        exe = find_uv_bin()
        res = run([exe, "--version"], timeout=30)
        assert res.ok, f"{exe} --version: {res.describe()}"
        return res.stdout.strip()

    def child_env(self) -> str:
        from app.core.base.paths import app_root
        from app.core.proc.runner import clean_env

        env = clean_env()
        bundle = str(app_root())
        leaked = [v for v in ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH")
                  if bundle in env.get(v, "")]
        assert not leaked, f"children would inherit the bundle's {', '.join(leaked)}"
        for var in ("PYTHONPATH", "PYTHONHOME"):
            assert var not in env, f"children would inherit {var}"
        frozen = "frozen" if getattr(sys, "frozen", False) else "from source"
        return f"{frozen}; LD_LIBRARY_PATH for children: {env.get('LD_LIBRARY_PATH', '(unset)')}"

    def detect(self) -> str:
        detect = _import("app.core.detection.detect")
        report = detect.detect(timeout_s=3.0)
        self.context["report"] = report
        gpus = ", ".join(g.name for g in report.gpus) or "no GPU"
        return f"{report.os.family} {report.arch}, Python {report.python.version}, {gpus}"

    def recommend(self) -> str:
        assert "report" in self.context, "needs detection"
        rec_mod = _import("app.core.recommend")
        rec = rec_mod.recommend(self.context["report"])
        self.context["recommendation"] = rec
        return f"{rec.backend} / {rec.variant}, torch {rec.torch_version}"

    def report(self) -> str:
        from app.core.pipeline.report import SessionReport

        rep = SessionReport(system=self.context.get("report"),
                            recommendation=self.context.get("recommendation"), source="self-test")
        html = rep.to_html()
        assert "<html" in html and rep.hostname in html
        rep.to_markdown()
        rep.to_json()
        return f"{len(html) // 1024} KiB of HTML"

    def qt(self) -> str:
        pyside_support = _import("app.gui.pyside_support")  # first: PySide6 loads as the wizard loads it
        from PySide6.QtGui import QFontDatabase, QGuiApplication
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance() or QApplication(["torch-setup", "--self-test"])
        assert isinstance(app, QGuiApplication)
        self.context["app"] = app
        families = QFontDatabase.families()
        assert families, "Qt found no fonts: every text would render as empty boxes " \
                         "(install fonts, e.g. fontconfig-config / fonts-dejavu-core)"
        support = {True: "from its cache", False: "compiled"}.get(pyside_support.loaded_from_cache,
                                                                   "loaded before the wizard's package")
        return f"platform {app.platformName()}, {len(families)} font families, PySide6 support code {support}"

    def wizard(self) -> str:
        assert "app" in self.context, "needs Qt"
        wiz_mod = _import("app.gui.wizard")
        app = self.context["app"]
        wizard = wiz_mod.SetupWizard()
        try:
            wizard.show()
            app.processEvents()
            ids = list(wizard.pageIds())
            assert ids, "the wizard has no pages"
            rendered = []
            for pid in ids:
                page = wizard.page(pid)
                assert page is not None, f"page {pid} is missing"
                # Render the page without entering it: entering the Install page would
                # start work. A blank grab means the page drew nothing.
                page.resize(wizard.size())
                img = page.grab().toImage()
                assert not img.isNull() and img.width() > 0, f"page {pid} did not render"
                title = page.title() or type(page).__name__
                assert _not_blank(img), f"page {title!r} rendered blank"
                rendered.append(title)
            app.processEvents()
            return f"{len(rendered)} pages: " + " | ".join(rendered)
        finally:
            wizard.close()
            wizard.deleteLater()
            app.processEvents()

    def run(self) -> int:
        print(f"torch-setup self-test ({'frozen' if getattr(sys, 'frozen', False) else 'source'}, "
              f"{sys.platform}, Python {sys.version.split()[0]})", file=self.out, flush=True)
        self.step("resources and probes", self.resources)
        self.step("compat data", self.compat)
        self.step("uv", self.uv)
        self.step("child environment", self.child_env)
        self.step("detection", self.detect)
        self.step("recommendation", self.recommend)
        self.step("session report", self.report)
        self.step("Qt", self.qt)
        self.step("wizard pages", self.wizard)
        if self.failures:
            print(f"self-test FAILED ({len(self.failures)}):", file=self.out)
            for f in self.failures:
                print(f"  - {f}", file=self.out)
            return 1
        print("self-test OK", file=self.out)
        return 0


#: A page that drew fewer pixels than this apart from its background drew nothing: the smallest
#: thing a page shows (one glyph of a label, a check box's box) covers more.
MIN_DRAWN_PIXELS = 16


def _background(img, data: bytes, stride: int) -> bytes:
    """The page's background: the most common of the pixels on a 32 x 32 grid and at the corners
    (the 4 bytes of one pixel, as they are in ``data``). Only the choice of colour is sampled; the
    judgement counts every pixel (:func:`_drawn_pixels`)."""
    w, h = img.width(), img.height()
    points = {(x, y) for x in range(0, w, max(1, w // 32)) for y in range(0, h, max(1, h // 32))}
    points |= {(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)}
    counts: dict[bytes, int] = {}
    for x, y in points:
        pixel = data[y * stride + 4 * x: y * stride + 4 * x + 4]
        counts[pixel] = counts.get(pixel, 0) + 1
    return max(counts, key=lambda c: counts[c])


def _drawn_pixels(img, enough: int = MIN_DRAWN_PIXELS) -> int:
    """How many pixels of the whole image differ from its background colour (counting stops at
    ``enough``). Each scanline is compared whole against a line of background (fast: most lines of
    a sparse page are plain); only the lines that differ are counted pixel by pixel."""
    from PySide6.QtGui import QImage

    img = img.convertToFormat(QImage.Format.Format_ARGB32)  # 4 bytes a pixel, whatever was grabbed
    w, h, stride = img.width(), img.height(), img.bytesPerLine()
    if w <= 0 or h <= 0:
        return 0
    data = img.constBits().tobytes()
    bg = _background(img, data, stride)
    plain = bg * w
    drawn = 0
    for y in range(h):
        line = data[y * stride: y * stride + 4 * w]
        if line == plain:
            continue
        drawn += sum(1 for x in range(0, 4 * w, 4) if line[x:x + 4] != bg)
        if drawn >= enough:
            break
    return drawn


def _not_blank(img) -> bool:
    """True when the page drew something: at least :data:`MIN_DRAWN_PIXELS` pixels that differ from
    its background, counted over the whole image. (A sample of the image misses a sparse page,
    such as one "Change..." button on the plain white of Windows' windowsvista style.)"""
    return _drawn_pixels(img) >= MIN_DRAWN_PIXELS


def _prepare_env() -> None:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(argv: list[str] | None = None) -> int:
    _prepare_env()
    if os.environ.get("TORCH_SETUP_HOME"):
        return SelfTest().run()
    with tempfile.TemporaryDirectory(prefix="torch-setup-selftest-") as home:
        os.environ["TORCH_SETUP_HOME"] = home
        try:
            return SelfTest().run()
        finally:
            os.environ.pop("TORCH_SETUP_HOME", None)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

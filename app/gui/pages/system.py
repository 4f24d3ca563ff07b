"""Page 2: what was found on this computer, in plain words, and what looks wrong.

Detection (the session's ``detect``) runs in a :class:`Task`; the page shows a busy line
until it ends and is not complete before. The same Task also asks the recommendation engine
for its warnings (e.g. a driver too old for current CUDA builds), so that "what looks wrong"
uses the engine's facts instead of a second copy of them.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.core.base.secrets import write_private
from app.core.base.serial import dumps
from app.core.base.visible import parse_visible
from app.core.pipeline.session import Session, Stage
from app.gui.build import add_all, button, clear_layout, set_texts, text_label
from app.gui.i18n import current_language, render_hint
from app.gui.pages.base import BasePage
from app.gui.state import WizardState
from app.gui.widgets import Banner, BusyLine, CopyButton, StatusRow, heading, human_mb, muted, set_icon
from app.gui.worker import Task

if TYPE_CHECKING:  # the page is built before first paint; detection loads later
    from app.core.detection.system import SystemReport

LOW_DISK_MB = 10 * 1024  # a CUDA build with its runtime libraries needs about 5-10 GB
LOW_MEMORY_MB = 4 * 1024


def scan(on_event, cancel, session: Session):
    """The session's detect() then recommend() (for its warnings); runs on the worker thread.
    The session keeps both; a recommendation that failed is asked again (and explained) by
    the next page."""
    session.detect()
    cancel.raise_if_cancelled()
    rec_error = None
    try:
        session.recommend()
    except Exception as exc:  # shown on the Recommendation page; here only its warnings matter
        rec_error = exc
    return rec_error


class SystemPage(BasePage):

    #: the page's title and subtitle (translated by :meth:`BasePage.titles`)
    TITLES = (QT_TRANSLATE_NOOP("SystemPage", "Your system"),
              QT_TRANSLATE_NOOP("SystemPage", "This is what the assistant found on this computer. Nothing has been "
                                              "changed."))
    scan_finished = Signal()

    def __init__(self, state: WizardState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._task: Task | None = None
        self._pending = False  # from start_scan() until the result is on the GUI thread
        self._error = None  # UserError from the last scan
        self.problems: list[tuple[str, str, str]] = []  # (status, title, detail)

        self.busy = BusyLine()
        self.error_banner = Banner("error")
        self.error_banner.hide()

        self.facts_title = heading()
        self.facts = QGridLayout()
        self.facts.setHorizontalSpacing(12)
        self.facts.setVerticalSpacing(6)
        self.facts.setColumnStretch(2, 1)
        self.facts_box = QWidget()
        self.facts_box.setLayout(self.facts)

        self.problems_title = heading()
        self.problems_box = QVBoxLayout()
        self.problems_box.setSpacing(4)

        self.rescan = button(self.start_scan)
        self.copy = CopyButton(self.report_json)
        self.save = button(self._ask_save)
        self.saved_label = muted(QLabel())
        self.saved_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        add_all(buttons, self.rescan, self.copy, self.save, (self.saved_label, 1))
        add_all(self.body, self.busy, self.error_banner, self.facts_title, self.facts_box, self.problems_title,
                self.problems_box, 1, buttons)
        self.retranslate()

    # ---- scanning ----
    def initializePage(self) -> None:
        if self.state.session.system is None and not self.is_busy():
            self.start_scan()
        else:
            self._render()

    def start_scan(self) -> None:
        if self.is_busy():
            return
        self._error = None
        session = self.state.session
        session.invalidate(Stage.SYSTEM)
        self.start_task(Task(lambda e, c: scan(e, c, session), self, name="detect"), failed=self._on_failed,
                        finished=self._on_finished, redraw=self._render)

    def _on_failed(self, err) -> None:
        self._error = err

    def _on_finished(self) -> None:
        self._pending = False
        self._render()
        self.completeChanged.emit()
        self.scan_finished.emit()

    def isComplete(self) -> bool:
        return self.state.session.system is not None and not self.is_busy()

    # ---- report export ----
    def report_json(self) -> str:
        """The report as ``detect --json`` writes it: the one masker's JSON (:func:`app.core.base.serial.dumps`),
        so Copy and Save give what the CLI gives, credentials and device identifiers hidden."""
        if self.state.session.system is None:
            return ""
        return dumps(self.state.session.system.to_dict())

    def save_report(self, path: str | Path) -> Path:
        path = Path(path)
        write_private(path, self.report_json() + "\n")  # masked, mode 0600
        self.saved_label.setText(self.tr("Saved to {path}").format(path=path))
        return path

    def _ask_save(self) -> None:
        start = str(Path.home() / "system-report.json")
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save the system report"), start,
                                              self.tr("JSON files (*.json)"))
        if path:
            try:
                self.save_report(path)
            except OSError as exc:
                self.saved_label.setText(self.tr("Could not save: {error}").format(error=exc.strerror or exc))

    # ---- what looks wrong ----
    def find_problems(self) -> list[tuple[str, str, str]]:
        r = self.state.session.system
        if r is None:
            return []
        out: list[tuple[str, str, str]] = []
        for p in r.probes:
            if p.status == "timeout":
                out.append(("warning", self.tr("{tool} did not answer in time").format(tool=p.name),
                            p.detail or self.tr("The tool may be hung; its answer is missing from the report.")))
            elif p.status == "garbage":
                out.append(("warning", self.tr("{tool} printed something that could not be read").format(tool=p.name),
                            p.detail))
            elif p.status == "error":
                out.append(("warning", self.tr("{tool} failed").format(tool=p.name), p.detail))
        env = r.env or {}
        for var, vendor in (("CUDA_VISIBLE_DEVICES", "NVIDIA"), ("HIP_VISIBLE_DEVICES", "AMD"),
                            ("ROCR_VISIBLE_DEVICES", "AMD")):
            if var in env and parse_visible(env[var]).hides_all:  # app.core.base.visible's reading of the value
                out.append(("warning", self.tr("{var} is set to \"{value}\"").format(var=var, value=env[var]),
                            self.tr("PyTorch will not see any {vendor} graphics card while this variable is "
                                    "set this way.").format(vendor=vendor)))
        if r.disk_free_mb is not None and r.disk_free_mb < LOW_DISK_MB:
            out.append(("warning", self.tr("Only {free} of free disk space").format(free=human_mb(r.disk_free_mb)),
                        self.tr("PyTorch for a graphics card needs about 5 to 10 GB; for the processor about "
                                "1 GB.")))
        if r.memory_mb is not None and r.memory_mb < LOW_MEMORY_MB:
            out.append(("warning", self.tr("Only {mem} of memory").format(mem=human_mb(r.memory_mb)),
                        self.tr("PyTorch will work, but large models will not fit.")))
        rec = self.state.session.recommendation  # app.core.recommend.Recommendation, or None
        upgrade = rec.driver_upgrade if rec is not None else None
        if upgrade is not None:  # the engine's facts: the driver floor of the newer CUDA builds
            out.append(("warning",
                        self.tr("NVIDIA driver {current} is too old for current PyTorch CUDA builds").format(
                            current=upgrade.current or "?"),
                        self.tr("Updating it to {driver} or newer would unlock {unlocks}. The assistant can "
                                "still install a build that works with the driver you have.").format(
                            driver=upgrade.driver or "?", unlocks=upgrade.unlocks or "?")))
        seen = {t for _, t, _ in out}
        for w in rec.texts(current_language()).warnings if rec is not None else ():  # in the wizard's language
            if w not in seen:
                out.append(("warning", w, ""))
        return out

    # ---- rendering ----
    def _fact(self, row: int, icon_name: str, label: str, value: str, detail: str = "") -> None:
        ic = QLabel()
        set_icon(ic, icon_name, 22)
        name = QLabel(label)
        f = name.font()
        f.setBold(True)
        name.setFont(f)
        val = text_label(None, value, selectable=True)
        val.setAccessibleName(f"{label}: {value}")
        self.facts.addWidget(ic, row, 0, Qt.AlignmentFlag.AlignTop)
        self.facts.addWidget(name, row, 1, Qt.AlignmentFlag.AlignTop)
        if detail:
            box = QVBoxLayout()
            box.setSpacing(0)
            box.addWidget(val)
            box.addWidget(muted(text_label(None, detail)))
            holder = QWidget()
            box.setContentsMargins(0, 0, 0, 0)
            holder.setLayout(box)
            self.facts.addWidget(holder, row, 2)
        else:
            self.facts.addWidget(val, row, 2, Qt.AlignmentFlag.AlignTop)

    def _os_text(self, report: SystemReport) -> str:
        o = report.os
        family = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}.get(o.family or "", self.tr("Unknown"))
        text = o.version or family
        if o.family == "linux" and o.version and "linux" not in o.version.lower():
            text = f"{family}: {o.version}"
        if o.wsl:
            text += " " + self.tr("(inside WSL2 on Windows)")
        if report.arch:
            text += f", {report.arch}"
        return text

    def _gpu_text(self, g) -> tuple[str, str]:
        vendor = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}.get(g.vendor, g.vendor)
        name = g.name if g.name.lower().startswith(vendor.lower()) else f"{vendor} {g.name}".strip()
        bits = []
        if g.memory_mb:
            bits.append(self.tr("{mem} of graphics memory").format(mem=human_mb(g.memory_mb)))
        if g.driver_version:
            bits.append(self.tr("driver {version}").format(version=g.driver_version))
        if g.compute_capability:
            bits.append(self.tr("compute capability {cc}").format(cc=g.compute_capability))
        if g.gfx_target:
            bits.append(g.gfx_target)
        if g.integrated:
            bits.append(self.tr("built into the processor"))
        return name, ", ".join(bits)

    def _render(self) -> None:
        busy = self.is_busy()
        self.busy.setVisible(busy)
        self.rescan.setEnabled(not busy)
        have = self.state.session.system is not None
        self.copy.setEnabled(have and not busy)
        self.save.setEnabled(have and not busy)
        if self._error is not None and not busy:
            lang = current_language()
            self.error_banner.set_text(self.tr("Looking at this computer failed: {message}").format(
                message=self._error.text(lang)) + ("\n" + render_hint(self._error.hint, lang, "gui")
                                                   if self._error.hint else ""), "error")
            self.error_banner.show()
        else:
            self.error_banner.hide()
        clear_layout(self.facts)
        clear_layout(self.problems_box)
        self.facts_title.setVisible(have and not busy)
        self.problems_title.setVisible(have and not busy)
        if not have or busy:
            return
        r = self.state.session.system
        if r is None:
            return
        row = 0
        self._fact(row, "os", self.tr("System"), self._os_text(r))
        row += 1
        cpu = r.cpu
        cores = ""
        if cpu.cores or cpu.threads:
            cores = self.tr("{cores} cores, {threads} threads").format(cores=cpu.cores or "?",
                                                                       threads=cpu.threads or "?")
        self._fact(row, "cpu", self.tr("Processor"), cpu.model or self.tr("Unknown processor"), cores)
        row += 1
        self._fact(row, "memory", self.tr("Memory"), human_mb(r.memory_mb))
        row += 1
        disk_detail = self.tr("at {path}").format(path=r.target) if r.target else ""
        self._fact(row, "disk", self.tr("Free disk space"), human_mb(r.disk_free_mb), disk_detail)
        row += 1
        py = r.python
        others = [i for i in r.interpreters if i.executable != py.executable]
        py_detail = self.tr("{n} more Python versions found").format(n=len(others)) if others else ""
        self._fact(row, "python", self.tr("Python"), f"{py.version or '?'} ({py.executable or '?'})", py_detail)
        row += 1
        if r.gpus:
            for g in r.gpus:
                name, detail = self._gpu_text(g)
                self._fact(row, "gpu", self.tr("Graphics card"), name, detail)
                row += 1
        else:
            self._fact(row, "gpu", self.tr("Graphics card"), self.tr("None that PyTorch can use"),
                       self.tr("PyTorch will run on the processor. That works everywhere, only slower for "
                               "large models."))
            row += 1
        if r.nvidia_cuda_version:
            self._fact(row, "info", self.tr("NVIDIA driver"),
                       self.tr("supports CUDA up to {version}").format(version=r.nvidia_cuda_version),
                       self.tr("PyTorch brings its own CUDA; only the driver must be new enough."))
            row += 1
        self.problems = self.find_problems()
        if self.problems:
            for status, title, detail in self.problems:
                self.problems_box.addWidget(StatusRow(status, title, detail))
        else:
            self.problems_box.addWidget(StatusRow("ok", self.tr("Nothing looks wrong."), ""))

    def retranslate_page(self) -> None:
        self.busy.set_text(self.tr("Looking at your computer…"))
        self.facts_title.setText(self.tr("What was found"))
        self.problems_title.setText(self.tr("What looks wrong"))
        set_texts(self.rescan, self.tr("&Re-scan"), name=self.tr("Look at this computer again"))
        set_texts(self.save, self.tr("&Save report…"), name=self.tr("Save the system report as a JSON file"))
        set_texts(self.copy, self.tr("&Copy report"), tip=self.tr("Copy the system report (JSON) to the clipboard"))
        self._render()  # the engine's warnings too, rendered in the new language


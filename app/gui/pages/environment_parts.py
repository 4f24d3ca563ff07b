"""Parts of the Environment page (:mod:`app.gui.pages.environment`), each a mixin of
:class:`~app.gui.pages.environment.EnvironmentPage` with the widgets it builds and the methods
that fill them: the network fields under "Advanced" (:class:`NetworkFields`), where PyTorch
comes from and the mirror check (:class:`MirrorChoice`), and the pre-flight's checklist, its
buttons and the commands the plan runs (:class:`PreflightView`). Their strings are translated
under their own class names (PySide's ``tr`` looks along the page's classes).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.base.disk import existing_ancestor
from app.core.base.errors import UserError
from app.core.base.locations import folder_path
from app.core.base.text import Text, render
from app.core.install import Check
from app.core.pipeline.session import Planned
from app.core.sources.routing import Route
from app.core.sources.settings import SourceSettings
from app.gui.build import (
    add_all,
    button,
    clear_layout,
    command_view,
    no_wheel_unless_focused,
    set_field_texts,
    set_texts,
)
from app.gui.early import early_downloads
from app.gui.i18n import current_language
from app.gui.pages._commands import commands_text
from app.gui.widgets import Banner, BusyLine, Collapsible, CopyButton, StatusRow, heading, human_mb, muted
from app.gui.worker import Task

if TYPE_CHECKING:
    from PySide6.QtWidgets import QScrollArea, QWizardPage

    from app.gui.state import WizardState

    _Base = QWizardPage
else:
    _Base = object


class _Page(_Base):
    """What the parts use of the page they are mixed into (for the type checker only: at run time a
    plain class, the page itself is the QWizardPage)."""

    if TYPE_CHECKING:
        state: WizardState
        check_results: list[Check]
        existing: QCheckBox
        location: QLineEdit
        name: QLineEdit
        python: QComboBox
        python_note: QLabel
        _pythons_for: object  # the recommendation the Python list was made for
        _released_python: str | None
        _unfit_pythons: list[tuple[str, str]]
        _open_list: bool
        find_links: QLineEdit
        bundle: QLineEdit
        files_box: QWidget
        scroll_area: QScrollArea
        _tasks: list[Task]
        _passed: bool
        _planned: Planned | None
        _generation: int
        _result_generation: int
        _debounce: QTimer
        body: QVBoxLayout
        body_widget: QWidget | None
        vcredist_result: object

        # the page's methods the parts call (attributes here: lupdate reads no method stub)
        build_request: Callable[[], Any]  # the InstallRequest of the fields
        mirrors_setting: Callable[[], Any]
        inputs_changed: Callable[..., None]
        apply_action: Callable[[Any], None]
        _task_finished: Callable[[Task], None]
        is_busy: Callable[[], bool]
        _open_list_when_idle: Callable[[], None]
        _early_toggled: Callable[[bool], None]


class NetworkFields(_Page):
    """Under "Advanced": the torch index, extra indexes, a package mirror, a proxy, a CA file."""

    def sources(self) -> SourceSettings:
        """Where the packages come from, as the page's fields say (the one sources value of the core):
        the wheel folders and the bundle, and these fields."""
        # Folders may hold spaces ("C:\\Users\\Jane Doe\\wheels"): several are separated by ";" only.
        find_links = tuple(p.strip() for p in self.find_links.text().split(";") if p.strip())
        extra = tuple(p for p in re.split(r"[\s,;]+", self.extra_index.text().strip()) if p)
        bundle = self.bundle.text().strip() or None
        return SourceSettings(torch_index=self.index_url.text().strip() or None,
                              default_index=self.mirror.text().strip() or None, extra_index_urls=extra,
                              find_links=find_links, bundle=folder_path(bundle) if bundle else None,
                              mirrors=self.mirrors_setting(), proxy=self.proxy.text().strip() or None,
                              ca_bundle=self.ca_bundle.text().strip() or None)

    def _build_network(self) -> Collapsible:
        adv = QWidget()
        af = QFormLayout(adv)
        af.setContentsMargins(18, 0, 0, 0)
        self.index_url = QLineEdit()
        self.extra_index = QLineEdit()
        self.l_index, self.l_extra = QLabel(), QLabel()
        for lab, w in ((self.l_index, self.index_url), (self.l_extra, self.extra_index)):
            lab.setBuddy(w)
        af.addRow(self.l_index, self.index_url)
        af.addRow(self.l_extra, self.extra_index)
        # Networks of labs and campuses: a PyPI mirror for everything else, a proxy, a CA file.
        self.mirror = QLineEdit()
        self.proxy = QLineEdit()
        self.ca_bundle = QLineEdit()
        self.browse_ca = button(self._browse_ca)
        ca_row = QHBoxLayout()
        ca_row.addWidget(self.ca_bundle, 1)
        ca_row.addWidget(self.browse_ca)
        self.l_mirror, self.l_proxy, self.l_ca = QLabel(), QLabel(), QLabel()
        for lab, w in ((self.l_mirror, self.mirror), (self.l_proxy, self.proxy), (self.l_ca, self.ca_bundle)):
            lab.setBuddy(w)
        af.addRow(self.l_mirror, self.mirror)
        af.addRow(self.l_proxy, self.proxy)
        af.addRow(self.l_ca, ca_row)
        # early downloads: the build comes while the pages are read (a setting kept in settings.toml)
        self.early_box = QCheckBox()
        self.early_box.setChecked(early_downloads(self.state).enabled)
        self.early_box.toggled.connect(self._early_toggled)
        af.addRow("", self.early_box)
        self.advanced = Collapsible(content=adv)
        return self.advanced

    def _browse_ca(self) -> None:
        start = str(existing_ancestor(Path(self.ca_bundle.text() or Path.home())))
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose the CA certificates file"), start,
                                              self.tr("Certificates (*.pem *.crt *.cer);;All files (*)"))
        if path:
            self.ca_bundle.setText(path)

    def _retranslate_network(self) -> None:
        self.advanced.set_title(self.tr("Advanced: package index, mirror and proxy"))
        set_texts(self.early_box, self.tr("Download the build early w&hile I read these pages (never on a metered "
                                          "connection)"), name=self.tr("Early downloads"))
        set_field_texts(self.l_index, self.tr("Inde&x URL:"), self.index_url, name=self.tr("Index URL"),
                        placeholder=self.tr("default: the PyTorch index for the chosen build"))
        set_field_texts(self.l_extra, self.tr("Ex&tra index URLs:"), self.extra_index, name=self.tr("Extra index URLs"),
                        placeholder=self.tr("separated by spaces"))
        set_field_texts(self.l_mirror, self.tr("Package mi&rror:"), self.mirror, name=self.tr("Package mirror"),
                        placeholder=self.tr("replaces PyPI for the other packages, e.g. a university mirror"))
        set_field_texts(self.l_proxy, self.tr("Pr&oxy:"), self.proxy, name=self.tr("Proxy"),
                        placeholder=self.tr("http://proxy.example.org:3128 (default: HTTPS_PROXY)"))
        set_field_texts(self.l_ca, self.tr("CA certificate&s:"), self.ca_bundle, name=self.tr("CA certificates file"),
                        placeholder=self.tr("a .pem file, or \"system\" for this computer's certificates"))
        set_texts(self.browse_ca, self.tr("Browse…"), name=self.tr("Choose the CA certificates file"))


class MirrorChoice(_Page):
    """Where PyTorch comes from: why this version, "Download PyTorch from" (the mirrors as a
    choice) and "Check the mirrors" (every mirror of the build verified, in a Task)."""

    def _build_sources(self) -> list[QWidget | QHBoxLayout]:
        """The section's widgets and rows, in the page's order."""
        self.sources_title = heading()
        self.sources_note = QLabel()
        self.sources_note.setWordWrap(True)
        self.sources_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sources_note.hide()
        self.offer_banner = Banner("info")
        self.offer_banner.hide()
        self.mirror_choice = QComboBox()
        no_wheel_unless_focused(self.mirror_choice)
        self.mirror_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.check_mirrors = button(self.run_mirror_check)
        self.l_mirror_choice = QLabel()
        self.l_mirror_choice.setBuddy(self.mirror_choice)
        choice_row = QHBoxLayout()
        add_all(choice_row, self.l_mirror_choice, (self.mirror_choice, 1), self.check_mirrors)
        self.mirror_results = muted(QLabel())
        self.mirror_results.setWordWrap(True)
        self.mirror_results.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.mirror_results.hide()
        self.mirror_route: Route | None = None  # the last mirror check's verdicts
        self._mirror_task: Task | None = None
        self._mirror_checked_for: str | None = None  # the torch pin the check ran for
        self._mirror_ids: list[str] = []
        return [self.sources_title, self.sources_note, self.offer_banner, choice_row, self.mirror_results]

    def _variant_mirrors(self) -> list[tuple[str, str]]:
        """``(id, name)`` of the catalogue's mirrors of the recommended build's index."""
        from app.core.sources import variant_of_index
        from app.core.sources.mirrors import default_catalogue

        rec = self.state.session.recommendation
        variant = variant_of_index(rec.index_url) if rec is not None else None
        if variant is None:
            return []
        return [(m.id, render(m.label, current_language())) for m in default_catalogue().torch_mirrors_for(variant)]

    def _fill_mirrors(self) -> None:
        """Automatic, the PyTorch server only, then each mirror; verified mirrors (fastest first)
        lead the list after a check, and under a Chinese locale the mirrors come before the rest."""
        prev = self.mirror_choice.currentData()
        mirrors = self._variant_mirrors()
        route = self.mirror_route
        if route is not None:
            speed = {v.source.id: (v.speed_bps or 0.0) for v in route.verdicts if v.ok}
            mirrors.sort(key=lambda m: (m[0] not in speed, -speed.get(m[0], 0.0)))
        self._mirror_ids = [m for m, _ in mirrors]
        plain = [(self.tr("Automatic: the PyTorch server, then verified mirrors"), "auto"),
                 (self.tr("The PyTorch server only"), "off")]
        items = [(self.tr("{mirror}, then the PyTorch server").format(mirror=name), mid) for mid, name in mirrors]
        first = current_language() == "zh_CN" or self._origin_failed()
        ordered = items + plain if first and items else plain + items
        self.mirror_choice.blockSignals(True)
        self.mirror_choice.clear()
        for label, data in ordered:
            self.mirror_choice.addItem(label, data)
        idx = self.mirror_choice.findData(prev if prev is not None else "auto")
        self.mirror_choice.setCurrentIndex(idx if idx >= 0 else self.mirror_choice.findData("auto"))
        self.mirror_choice.blockSignals(False)
        self.mirror_choice.setEnabled(bool(items))
        self.check_mirrors.setEnabled(bool(items) and self._mirror_task is None)

    def mirrors_setting(self) -> str | tuple[str, ...]:
        data = self.mirror_choice.currentData()
        if data in (None, "auto", "off"):
            return data or "auto"
        return (str(data), "origin")  # the chosen mirror first, the PyTorch server after it

    def _origin_failed(self) -> bool:
        """The pre-flight found the PyTorch server out of reach (not: missing a file)."""
        for c in self.check_results:
            if c.route is not None:
                first = c.route.verdicts[0] if c.route.verdicts else None
                return (first is not None and first.source.kind == "origin" and not first.ok
                        and first.failure is not None
                        and first.failure.kind in ("dns", "refused", "timeout", "reset", "tls", "tls_verify"))
        return False

    def run_mirror_check(self) -> None:
        """Verify every mirror of the recommended build (in a Task); the results are a choice."""
        rec = self.state.session.recommendation
        if rec is None or not rec.packages or self._mirror_task is not None or not self._variant_mirrors():
            return
        import dataclasses

        from app.core.sources.routing import verify

        settings = dataclasses.replace(self.build_request().sources, torch_index=None, mirrors="auto")
        pins = tuple(p for p in rec.packages if p.startswith("torch=="))
        pyver = rec.env_python or (self.state.session.system.python.minor if self.state.session.system else None)

        def fn(_on_event: object, _cancel: object) -> Route:
            return verify(settings, rec.index_url, pins, pyver, prefer_mirrors=True)

        task = Task(fn, self, name="mirror-check")
        task.succeeded.connect(self._on_mirrors_checked)
        task.finished.connect(self._mirror_task_finished)
        self._mirror_task = task
        self._mirror_checked_for = pins[0] if pins else None
        self.check_mirrors.setEnabled(False)
        self._render_sources()
        task.start()

    def _on_mirrors_checked(self, route: Route) -> None:
        self.mirror_route = route
        self._fill_mirrors()
        self._render_sources()

    def _mirror_task_finished(self) -> None:
        self._mirror_task = None
        self._fill_mirrors()
        self._render_sources()
        self._render_checks()  # the verdict may now offer the verified mirrors
        self.completeChanged.emit()
        self._open_list_when_idle()

    def _render_sources(self) -> None:
        lang = current_language()
        session = self.state.session
        rec = session.recommendation
        why = render(rec.availability, lang) if rec is not None else ""
        lines = [self.tr("Why this version: {why}").format(why=why)] if why else []
        if session.bound_folders is not None and rec is not None:  # the folders' wheels decided: what it cost
            lines += [render(c, lang) for c in rec.costs]
        self.sources_note.setText("\n".join(lines))
        self.sources_note.setVisible(bool(lines))
        route = self.mirror_route
        lines = []
        if self._mirror_task is not None:
            lines.append(self.tr("Checking the mirrors…"))
        elif route is not None:
            for v in sorted(route.verdicts, key=lambda v: (not v.ok, -(v.speed_bps or 0.0))):
                name = render(v.source.name, lang)
                if v.ok:
                    lines.append("✓ " + self.tr("{source}: has the exact file, {speed:.1f} MB/s").format(
                        source=name, speed=(v.speed_bps or 0.0) / 1e6))
                else:
                    lines.append("✗ " + self.tr("{source}: {reason}").format(source=name,
                                                                               reason=render(v.reason, lang)))
        self.mirror_results.setText("\n".join(lines))
        self.mirror_results.setVisible(bool(lines))
        verified = [v for v in route.verdicts if v.ok and v.source.kind == "mirror"] if route is not None else []
        offer = bool(verified) and (self._origin_failed() or lang == "zh_CN")
        if offer:
            self.offer_banner.set_text(self.tr(
                "Verified mirrors are listed first under \"Download PyTorch from\": each has the exact file with "
                "the PyTorch server's SHA-256. Choose one to use it; nothing changes until you do."), "info")
        self.offer_banner.setVisible(offer)

    def _retranslate_sources(self) -> None:
        self.sources_title.setText(self.tr("Where PyTorch comes from"))
        set_field_texts(self.l_mirror_choice, self.tr("&Download PyTorch from:"), self.mirror_choice,
                        name=self.tr("Download PyTorch from"))
        set_texts(self.check_mirrors, self.tr("Chec&k the mirrors"),
                  tip=self.tr("Ask every mirror of this build whether it has the exact file, with the same SHA-256, "
                              "and how fast it answers"))

    if TYPE_CHECKING:
        _render_checks: Callable[[], None]


class PreflightView(_Page):
    """The pre-flight's checklist and verdict, the buttons of a failed check's actions, and the
    exact commands the approved plan runs."""

    def _build_checks(self) -> list[QWidget | QVBoxLayout]:
        """The section's widgets, in the page's order."""
        self._way_out: str = ""  # the verdict "PyTorch cannot be downloaded: install from files", when it is shown
        # ... and kept in view while the page's content grows or shrinks above it, until the user scrolls
        self._follow_way_out = False
        self._landed: QWidget | None = None  # the control a remedy's button sent the user to (kept in view)
        self._open_list = False  # ... and its list opened ("Choose another Python…")
        self._way_out_timer: QTimer = QTimer(self)  # (the page's child: it goes with the page, never fires after it)
        self._way_out_timer.setSingleShot(True)
        self._way_out_timer.setInterval(0)
        self._way_out_timer.timeout.connect(self._show_way_out)
        self.checks_title = heading()
        self.busy = BusyLine()
        self.checks_box = QVBoxLayout()
        self.checks_box.setSpacing(2)
        self.result_banner = Banner("ok")
        self.result_banner.hide()
        self.plan_label = muted(QLabel())
        self.plan_label.setWordWrap(True)
        self.plan_label.hide()
        # the exact commands the approved plan runs (credentials masked)
        self.cmd_title = heading()
        self.command = command_view(4)
        self.copy_command = CopyButton(lambda: self.command.toPlainText())
        cmd_row = QHBoxLayout()
        cmd_row.addWidget(self.copy_command)
        cmd_row.addStretch(1)
        self.cmd_row = QWidget()
        self.cmd_row.setLayout(cmd_row)
        cmd_row.setContentsMargins(0, 0, 0, 0)
        return [self.checks_title, self.busy, self.checks_box, self.plan_label, self.cmd_title, self.command,
                self.cmd_row, self.result_banner]

    @property
    def checks(self) -> list[tuple[str, str, str, str]]:
        """``(name, status ok|warning|error, message, hint)`` of each check, in the wizard's language
        (the hints as the wizard tells them: its own fields, not command-line options)."""
        lang = current_language()
        return [(c.name, c.status, render(c.message, lang), self._gui_hint(c) or render(c.hint, lang))
                for c in self.check_results]

    def _gui_hint(self, check: Check) -> str:
        """The wizard's words for the hints that name command-line options in the core ("" : the core's)."""
        if not check.blocking:
            return ""
        if check.name == "reach:torch index" and check.code == "preflight.reach_failed":
            return self.tr("Check the network, or the proxy under \"Advanced\"; choose a verified mirror under "
                           "\"Download PyTorch from\" (\"Check the mirrors\"); or install from files: the wheel "
                           "folder or offline bundle fields below.")
        if check.name in ("reach:package index", "reach:extra index") and check.code == "preflight.reach_failed":
            return self.tr("Check the network, or the proxy and package mirror under \"Advanced\"; or install from "
                           "files: an offline bundle (fields below) needs no network at all.")
        if check.name == "closure":
            return self.tr("Put those wheel files into the folder, or choose an offline bundle below (made by this "
                           "assistant on a computer with internet).")
        return ""

    def _download_blocked(self) -> bool:
        """A server the plan downloads from cannot be reached (or has no file for this computer)."""
        return any(c.blocking and c.name in ("reach:torch index", "reach:package index", "reach:extra index")
                   for c in self.check_results)

    def _render_checks(self) -> None:
        clear_layout(self.checks_box)
        # the verdict waits for the pre-flight only: the mirror check has its own line ("Checking the mirrors…")
        pending = self._debounce.isActive() or bool(self._tasks) or self._result_generation != self._generation
        self.busy.setVisible(pending)
        self._render_command(None if pending else self._planned)
        if pending:
            self.result_banner.hide()
            self.plan_label.hide()
            return
        for check, (name, status, message, hint) in zip(self.check_results, self.checks, strict=True):
            self.checks_box.addWidget(StatusRow(status, message or name, hint if status != "ok" else ""))
            if status != "ok" and check.actions:
                self.checks_box.addWidget(self._action_buttons(check))
        way_out = (not self._passed and self._download_blocked() and not self.find_links.text().strip()
                   and not self.bundle.text().strip())
        if self._passed:
            self.result_banner.set_text(self.tr("Everything is ready. Press Install to create the environment "
                                                "and install PyTorch."), "ok")
        elif way_out:
            text = self.tr("PyTorch cannot be downloaded from this computer now (the checks above say why). Install "
                           "it from files instead: choose a folder with the PyTorch wheel files, or an offline "
                           "bundle, in \"Install from files on this computer\" just below.")
            if self._mirror_task is not None:
                text += " " + self.tr("The mirrors are being checked meanwhile.")
            elif self.offer_banner.isVisible():
                text += " " + self.tr("Or choose a verified mirror under \"Download PyTorch from\".")
            self.result_banner.set_text(text, "error")
        else:
            self.result_banner.set_text(self.tr("Fix the problems above (or change the choices) to go on."), "error")
        self.result_banner.setVisible(bool(self.check_results))
        verdict = self.result_banner.text() if way_out else ""
        if verdict and verdict != self._way_out and self._landed is None:  # the way out comes into view (anew)
            self._follow_way_out = True
            self._way_out_timer.start()
        self._way_out = verdict
        plan = self._planned.plan if self._planned is not None else None
        estimate_mb = plan.estimate_mb if plan is not None else 0
        notes: list[Text] = [*plan.notes, *plan.python_notes] if plan is not None else []
        # "Why torch X" is said once, under "Where PyTorch comes from" (it was there and here, twice)
        notes = [n for n in notes if getattr(n, "code", "") != "install.note_why_version"]
        lines = []
        if estimate_mb:
            lines.append(self.tr("About {size} will be installed.").format(size=human_mb(estimate_mb)))
        lines += [render(n, current_language()) for n in notes]
        self.plan_label.setText("\n".join(lines))
        self.plan_label.setVisible(bool(lines) and self._passed)

    def _action_buttons(self, check: Check) -> QWidget:
        """The buttons of a failed check's actions (a shorter folder, the VC++ runtime's installer)."""
        from PySide6.QtWidgets import QPushButton

        box = QWidget()
        box.setObjectName(f"actions:{check.name}")
        row = QHBoxLayout(box)
        row.setContentsMargins(26, 0, 0, 4)  # under the row's text, past its icon
        lang = current_language()
        for action in check.actions:
            b = QPushButton(render(action.label(), lang))
            b.setToolTip(render(action.tooltip(), lang))
            b.setAccessibleName(render(action.label(), lang))
            b.clicked.connect(lambda _=False, a=action: self.apply_check_action(a))
            row.addWidget(b)
        row.addStretch(1)
        return box

    def apply_check_action(self, action) -> None:
        """A pre-flight check's button: use the folder offered, open the official page, or run the
        Visual C++ runtime's installer the user picks (after asking)."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from app.core.remedies import ActionKind

        if action.kind is ActionKind.CHOOSE_OTHER_LOCATION and action.value and not self.existing.isChecked():
            offered = Path(action.value)
            self.location.setText(str(offered.parent))
            self.name.setText(offered.name)
        elif action.kind is ActionKind.RUN_VCREDIST:
            self.run_vcredist(action.value or None)
        elif action.step == "outside" and action.url:
            QDesktopServices.openUrl(QUrl(action.url))
        else:
            self.apply_action(action)

    def run_vcredist(self, path: str | None = None) -> None:
        """Ask for Microsoft's vc_redist.x64.exe (unless given), confirm the exact command, run it
        in a Task, then check again."""
        from PySide6.QtWidgets import QMessageBox

        from app.core.base.shells import CMD, join
        from app.core.install.winchecks import VCREDIST_ARGS, VCREDIST_URL, run_vcredist

        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, self.tr("Choose vc_redist.x64.exe (from {url})").format(url=VCREDIST_URL),
                str(Path.home() / "Downloads"), self.tr("Visual C++ runtime installer (vc_redist*.exe);;Programs "
                                                         "(*.exe)"))
        if not path:
            return
        answer = QMessageBox.question(
            self, self.tr("Install the Visual C++ runtime"),
            self.tr("The assistant will run:\n\n{command}\n\nWindows asks for an administrator's permission. "
                    "Go on?").format(command=join([path, *VCREDIST_ARGS], CMD)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        if answer != QMessageBox.StandardButton.Yes:
            return

        def fn(_on_event: object, cancel) -> object:
            return run_vcredist(path, cancel=cancel)

        task = Task(fn, self, name="vcredist")
        task.succeeded.connect(self._vcredist_done)
        task.finished.connect(lambda t=task: self._task_finished(t))
        self._tasks.append(task)
        task.start()
        self._render_checks()

    def _vcredist_done(self, result) -> None:
        self.vcredist_result = result
        self.result_banner.set_text(render(result.message, current_language()), "ok" if result.ok else "error")
        self.inputs_changed()  # check again: the runtime's check reads the machine anew

    def _render_command(self, planned: Planned | None) -> None:
        """The full commands the plan runs, exactly as the Install page will run them."""
        lines: list[tuple[str, ...]] = []
        if planned is not None:
            try:
                lines = planned.plan.shown_commands()
            except UserError:  # no interpreter yet: the checks say why
                lines = []
        self.command.setPlainText(commands_text(lines))
        for w in (self.cmd_title, self.command, self.cmd_row):
            w.setVisible(bool(lines))

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.body_widget and self._way_out \
                and self._follow_way_out and shiboken6.isValid(self._way_out_timer):  # (not while the page goes)
            self._way_out_timer.start()  # rows came or went above the verdict
        return super().eventFilter(watched, event)

    def _user_scrolled(self, _action: int) -> None:
        self._follow_way_out = False
        self._landed = None

    def _show_way_out(self) -> None:
        self.body.activate()  # the banner and the fields have their places before they are scrolled to
        landed = self._landed
        if landed is not None and shiboken6.isValid(landed):  # a remedy sent the user to this control: it stays
            self.scroll_area.ensureWidgetVisible(self.python_note if landed is self.python else landed, 0, 0)
            self.scroll_area.ensureWidgetVisible(landed, 0, 40)
            return
        self.scroll_area.ensureWidgetVisible(self.files_box, 0, 0)
        self.scroll_area.ensureWidgetVisible(self.result_banner, 0, 0)

    def _retranslate_checks(self) -> None:
        self.checks_title.setText(self.tr("Checks before installing"))
        self.cmd_title.setText(self.tr("The command that will run"))
        self.command.setAccessibleName(self.tr("The commands the installation runs"))
        set_texts(self.copy_command, self.tr("Copy command"), tip=self.tr("Copy the command to the clipboard"))
        self.busy.set_text(self.tr("Checking…"))

    if TYPE_CHECKING:
        offer_banner: Banner
        _mirror_task: Task | None


class PythonChoice(_Page):
    """The Python list: the interpreters that fit the build, why the others are not offered, and
    the list opened for the user when a remedy sends them to it ("Choose another Python…")."""

    def _fill_pythons(self) -> None:
        """The interpreters found, each offered only if it can install the recommended build: the
        others are greyed with the engine's reason and never the default."""
        report = self.state.session.system
        rec = self.state.session.recommendation
        self._pythons_for = rec  # the list (and its "Not offered" note) speaks of this build
        lang = current_language()
        want = str(rec.env_python or "") if rec is not None else ""
        if not want and rec is not None and report is not None and report.python.version:
            want = ".".join(report.python.version.split(".")[:2])
        prev = self.python.currentData()
        self.python.blockSignals(True)
        self.python.clear()
        model = self.python.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        seen = set()
        interpreters = list(report.interpreters) if report is not None else []
        running = report.python if report is not None else None
        if running is not None and running.executable and all(i.executable != running.executable for i in interpreters):
            interpreters.insert(0, running)
        best = -1
        unfit: list[tuple[str, str]] = []  # (version, why) of the interpreters not offered
        for info in interpreters:
            if not info.executable or info.executable in seen or info.can_venv is False:
                continue
            seen.add(info.executable)
            label = f"Python {info.version or '?'}  ({info.executable})"
            why = rec.python_problem(info.version) if rec is not None and info.version else None
            fits = why is None and bool(want) and (info.version or "").startswith(want + ".")
            if fits:
                label += "  " + self.tr("(recommended)")
            self.python.addItem(label, info.executable)
            item = model.item(self.python.count() - 1)
            if why is not None:
                text = render(why, lang)
                item.setEnabled(False)
                item.setToolTip(text)
                item.setData(text, Qt.ItemDataRole.AccessibleDescriptionRole)
                unfit.append((info.version or "?", text))
            if fits and best < 0:
                best = self.python.count() - 1
        usable = [i for i in range(self.python.count()) if model.item(i).isEnabled()]
        if best < 0 and usable and not want:
            best = usable[0]
        if want and best < 0:
            # No interpreter of that version here: uv can look for (or fetch) one by version.
            label = self.tr("Python {version} (found or downloaded by uv)").format(version=want)
            self.python.insertItem(0, label, want)
            best = 0
        idx = self.python.findData(prev) if prev else -1
        if idx < 0 or not model.item(idx).isEnabled():
            idx = max(best, 0)
        self.python.setCurrentIndex(idx)
        self.python.blockSignals(False)
        self._unfit_pythons = unfit
        self._show_unfit()

    def _show_unfit(self) -> None:
        """The interpreters not offered, and why, under the selector."""
        unfit = self._unfit_pythons
        lines = []
        released = self._released_python
        chosen = self.state.session.choices
        if released and not (chosen is not None and chosen.python):  # (not once another is chosen there)
            lines.append(self.tr("Your choice of Python {version} under \"Change…\" is set aside: every Python "
                                 "that fits the build is offered again.").format(version=released))
        if unfit:
            whys = sorted({why for _, why in unfit})
            versions = ", ".join(v for v, _ in unfit)
            lines.append(self.tr("Not offered: Python {versions} ({why}). To use one of them, choose its "
                                 "Python under \"Change…\" on the Recommendation page.").format(
                versions=versions, why=self.tr("; ").join(whys)))
        self.python_note.setText("\n".join(lines))
        self.python_note.setVisible(bool(lines))

    def _open_list_when_idle(self) -> None:
        """"Choose another Python…": the list opens once it is filled for the new checks and the page's work
        has ended (the wizard redraws its buttons at each end of work, which closes an open list)."""
        if self._open_list and not self.is_busy() and self.isVisible():
            self._open_list = False
            self.python.setFocus()
            self.python.showPopup()

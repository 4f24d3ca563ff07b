"""Small functions the pages build and word their plain Qt widgets with: a wrapped label, a button
wired to its slot, a thin busy bar, the checklist's table, a command box; adding a row of parts to a
box layout and emptying one; a control's text, accessible name, tooltip and placeholder in one call.

Light to import (the Welcome page uses it before the first paint): no Qt namespace, and each
widget class only one function needs is imported in that function (PySide6 builds a class's
Python type on first use: QHeaderView alone costs ~3 ms).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QBoxLayout, QLabel, QLayout, QWidget

from app.gui.widgets import BusyLine, Collapsible, CopyButton, monospace_font

if TYPE_CHECKING:
    from PySide6.QtWidgets import QFormLayout, QPlainTextEdit, QProgressBar, QPushButton, QTreeWidget


def text_label(parent: QWidget | None = None, text: str = "", *, bold: bool = False,
               selectable: bool = False) -> QLabel:
    """A word-wrapped label: ``bold`` for a page's summary line, ``selectable`` for text worth copying."""
    label = QLabel(text, parent)
    label.setWordWrap(True)
    if bold:
        f = label.font()
        f.setBold(True)
        label.setFont(f)
    if selectable:
        from PySide6.QtCore import Qt  # the Qt namespace costs ~14 ms: the Welcome page does without

        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def button(on_click: Callable[[], object], parent: QWidget | None = None) -> QPushButton:
    """A push button that calls ``on_click`` (its text comes with the page's retranslate)."""
    from PySide6.QtWidgets import QPushButton

    b = QPushButton(parent)
    b.clicked.connect(on_click)
    return b


def busy_bar(parent: QWidget | None = None, *, height: int = 8) -> QProgressBar:
    """A thin indeterminate progress bar without text: "something runs", with no count to show."""
    from PySide6.QtWidgets import QProgressBar

    bar = QProgressBar(parent)
    bar.setRange(0, 0)
    bar.setTextVisible(False)
    bar.setMaximumHeight(height)
    return bar


def checklist(parent: QWidget | None = None) -> QTreeWidget:
    """The verification checklist's table: a check and its result a row, no tree, the first column
    as wide as its content and the second taking the rest."""
    from PySide6.QtWidgets import QHeaderView, QTreeWidget

    tree = QTreeWidget(parent)
    tree.setColumnCount(2)
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
    tree.header().setStretchLastSection(True)
    return tree


def command_view(lines: int) -> QPlainTextEdit:
    """A read-only monospace box ``lines`` lines high for commands to read and copy (long lines wrap;
    Tab moves the focus on instead of typing)."""
    from PySide6.QtWidgets import QPlainTextEdit

    view = QPlainTextEdit()
    view.setReadOnly(True)
    view.setFont(monospace_font())
    view.setFixedHeight(view.fontMetrics().lineSpacing() * lines + 14)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    view.setTabChangesFocus(True)
    return view


def clear_layout(layout: QLayout) -> None:
    """Empty a layout that is drawn anew: every widget in it leaves the layout and the screen at once
    (hidden) and is deleted later, by Qt, once the events queued for it are delivered.

    Never ``setParent(None)``: that hands the widget to Python, which deletes it as soon as the last
    reference goes, possibly while Qt is still inside one of its event handlers (a button whose click
    redraws its own row) or with events queued for it: the segfault seen about one run in nine of
    test_torchvision_pair. The parent keeps it until its deferred deletion. Only widgets (and stretches) are
    redrawn: a nested layout is refused (Python would own it once taken out, and delete it at once)."""
    while layout.count():
        item = layout.takeAt(0)
        w = item.widget() if item is not None else None
        if w is not None:
            retire(w)
        elif item is not None and item.layout() is not None:
            # a layout taken out belongs to Python, which would delete it (and its wrapper) at once: the
            # QBoxLayout::~QBoxLayout -> releaseWrapper crash. Redrawn rows are widgets, by construction
            raise TypeError("clear_layout: a redrawn row must be a widget (put the sub-layout in a QWidget)")


#: the retired widgets' Python wrappers, each kept until Qt has deleted its widget (see ``retire``)
_RETIRED: dict[int, QWidget] = {}


def retire(w: QWidget) -> None:
    """Take a widget off the screen now and delete it later, safely (see ``clear_layout``): hidden, its
    accessible name cleared (screen readers and findChildren-by-name stop seeing it), Qt's deferred
    deletion; its parent owns it until then.

    Its Python wrapper is kept (here) until Qt has deleted the widget: once taken out of its layout,
    nothing else held it, and Python's cyclic garbage collector could free it, and with it the wrappers
    of its children (a row's labels and buttons), while Qt still held them; Qt's deletion then ran
    Shiboken's releaseWrapper on a freed wrapper (a segfault about one run in thirteen of
    test_torchvision_pair, seen with gdb after the setParent(None) fix)."""
    w.hide()
    w.setAccessibleName("")
    w.setObjectName("retired")
    key = id(w)
    if key not in _RETIRED:
        _RETIRED[key] = w
        w.destroyed.connect(partial(_RETIRED.pop, key, None))  # (holds the number only, never the widget)
    w.deleteLater()


def retire_row(form: QFormLayout, field: QWidget) -> None:
    """Take the row of ``field`` out of a form layout, its label and field retired (see ``retire``):
    ``QFormLayout.removeRow`` deletes them at once."""
    row = form.takeRow(field)
    for item in (row.labelItem, row.fieldItem):
        w = item.widget() if item is not None else None
        if w is not None:
            retire(w)


LayoutPart = QWidget | QLayout | int | tuple[QWidget | QLayout, int]


def add_all(layout: QBoxLayout, *parts: LayoutPart) -> None:
    """Add widgets and layouts to a box layout in order: a ``(part, stretch)`` pair gives its stretch
    factor, a number alone is a stretch (``add_all(body, title, box, 1, buttons)``)."""
    for part in parts:
        item, factor = part if isinstance(part, tuple) else (part, 0)
        if isinstance(item, int):
            layout.addStretch(item)
        elif isinstance(item, QLayout):
            layout.addLayout(item, factor)
        else:
            layout.addWidget(item, factor)


def set_texts(widget: QWidget, text: str | None = None, *, name: str | None = None, tip: str | None = None,
              placeholder: str | None = None) -> None:
    """A control's words in one call (those given): its visible ``text``, the ``name`` a screen reader
    says, its tooltip ``tip`` and the ``placeholder`` of a line edit. The visible text goes where the
    widget keeps it (a CopyButton's label, a Collapsible's title, a BusyLine's message)."""
    from PySide6.QtWidgets import QAbstractButton, QLineEdit

    if text is not None:
        if isinstance(widget, CopyButton):
            widget.set_label(text)
        elif isinstance(widget, Collapsible):
            widget.set_title(text)
        elif isinstance(widget, BusyLine):
            widget.set_text(text)
        elif isinstance(widget, QLabel | QAbstractButton | QLineEdit):
            widget.setText(text)
        else:
            raise TypeError(f"set_texts: {type(widget).__name__} has no text")
    if name is not None:
        if isinstance(widget, CopyButton):
            widget.set_name(name)  # (kept across its own retranslation)
        else:
            widget.setAccessibleName(name)
    if tip is not None:
        widget.setToolTip(tip)
    if placeholder is not None:
        if not isinstance(widget, QLineEdit):
            raise TypeError(f"set_texts: {type(widget).__name__} has no placeholder")
        widget.setPlaceholderText(placeholder)


def set_field_texts(label: QLabel, text: str, field: QWidget, *, name: str | None = None, tip: str | None = None,
                    placeholder: str | None = None) -> None:
    """A form row's words: the ``label``'s text, then the ``field``'s name, tooltip and placeholder
    (those given; see ``set_texts``)."""
    label.setText(text)
    set_texts(field, name=name, tip=tip, placeholder=placeholder)


_wheel_guard_type: type | None = None


def no_wheel_unless_focused(*combos: QWidget) -> None:
    """The mouse wheel over a combo box scrolls the page, as over any other part of it; it changes
    the choice only once the box has the focus (clicked or tabbed to). A beginner scrolling down the
    Environment page changed the download source without noticing.

    Each box gets its own filter, a child of the box (Qt deletes it with the box): one shared
    filter without a parent outlived the application and hung a windowed exit on Windows."""
    global _wheel_guard_type
    from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt

    if _wheel_guard_type is None:
        class _WheelGuard(QObject):
            def eventFilter(self, obj: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.Wheel and isinstance(obj, QWidget) and not obj.hasFocus():
                    parent = obj.parentWidget()
                    if parent is not None:  # on up to the scroll area around it, as if the box were not there
                        QCoreApplication.sendEvent(parent, event)
                    return True
                return False

        _wheel_guard_type = _WheelGuard
    for combo in combos:
        combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel does not give it the focus
        combo.installEventFilter(_wheel_guard_type(combo))

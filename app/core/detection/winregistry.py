"""The Windows registry, read into plain values: the one place detection touches ``winreg``.

:func:`read_key` copies a key and its subkeys (to a given depth) into :class:`RegKey` values, so
what is made of them (PEP 514's Python installs, the display adapters' driver keys) is a pure
function that tests feed on any OS. Reading never raises: a key that is missing or may not be
read (a driver key's ``Properties`` is the system's alone) is left out. Sizes are bounded, so a
damaged or hostile registry cannot make detection slow.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HIVES", "RegKey", "read_key"]

HIVES = ("HKCU", "HKLM")
MAX_SUBKEYS = 512
MAX_VALUES = 256


@dataclass(frozen=True)
class RegKey:
    """A key's values (name -> str, int, bytes or list of str; ``""`` is the default value) and its
    subkeys, as far as they were read."""
    values: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, RegKey] = field(default_factory=dict)

    def text(self, name: str) -> str | None:
        """A string value, stripped; None when missing, empty or not a string."""
        v = self.values.get(name)
        return v.strip() or None if isinstance(v, str) else None


def read_key(hive: str, path: str, depth: int = 1, *, view: int | None = None) -> RegKey | None:
    """``hive\\path`` (``HKCU`` or ``HKLM``) with ``depth`` levels of subkeys, or None when it
    cannot be opened (or off Windows). ``view``: 64 or 32 for that registry view of HKLM."""
    if sys.platform != "win32":
        return None
    try:
        import winreg
    except ImportError:  # pragma: no cover
        return None
    root = {"HKCU": winreg.HKEY_CURRENT_USER, "HKLM": winreg.HKEY_LOCAL_MACHINE}.get(hive)
    if root is None:
        return None
    access = winreg.KEY_READ | {64: winreg.KEY_WOW64_64KEY, 32: winreg.KEY_WOW64_32KEY}.get(view or 0, 0)
    try:
        key = winreg.OpenKey(root, path, 0, access)
    except OSError:
        return None
    with key:
        return _copy(winreg, key, depth, access)


def _copy(winreg: Any, key: Any, depth: int, access: int) -> RegKey:
    values: dict[str, Any] = {}
    for i in range(MAX_VALUES):
        try:
            name, value, _kind = winreg.EnumValue(key, i)
        except OSError:
            break
        values[name] = value
    keys: dict[str, RegKey] = {}
    if depth > 0:
        for i in range(MAX_SUBKEYS):
            try:
                name = winreg.EnumKey(key, i)
            except OSError:
                break
            try:
                sub = winreg.OpenKey(key, name, 0, access)
            except OSError:  # access denied (a driver key's Properties): left out
                continue
            with sub:
                keys[name] = _copy(winreg, sub, depth - 1, access)
    return RegKey(values, keys)

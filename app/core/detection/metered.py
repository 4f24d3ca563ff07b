"""Does this computer's connection look metered (a phone's hotspot, a mobile plan, a capped line)?

Asked before the wizard downloads anything on its own initiative (early downloads): a metered
connection is never used for that. What the operating system says:

* Linux: NetworkManager, ``nmcli -t -f GENERAL.STATE,GENERAL.METERED device show``: a connected
  device whose ``GENERAL.METERED`` is ``yes`` or ``yes (guessed)`` (NetworkManager guesses from
  the device: a mobile modem, a phone's hotspot announcing itself);
* Windows: the internet profile's connection cost
  (``Windows.Networking.Connectivity.NetworkInformation``, through PowerShell):
  ``NetworkCostType`` ``Fixed`` or ``Variable`` (a data plan), or roaming, or near its limit;
* elsewhere, or when the tool is missing or says nothing: not known (None), which the caller
  treats as not metered.

The answer is remembered for a minute (a tool start per page change would cost more than it
tells).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from app.core.proc import runner

__all__ = ["Metered", "metered", "parse_nmcli", "parse_windows_cost"]

REMEMBER_S = 60.0
PS_COST = ("$p = [Windows.Networking.Connectivity.NetworkInformation,Windows.Networking.Connectivity,"
           "ContentType=WindowsRuntime]::GetInternetConnectionProfile(); if ($p) { $c = $p.GetConnectionCost(); "
           "\"$($c.NetworkCostType) $($c.Roaming) $($c.ApproachingDataLimit) $($c.OverDataLimit)\" }")


@dataclass(frozen=True)
class Metered:
    value: bool | None  # None: not known
    how: str = ""  # what said so ("nmcli: wlan0 metered: yes (guessed)")


def parse_nmcli(text: str) -> Metered:
    """``nmcli -t -f GENERAL.DEVICE,GENERAL.STATE,GENERAL.METERED device show`` output."""
    found: Metered = Metered(None)
    device, connected = "", False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "GENERAL.DEVICE":
            device, connected = value, False
        elif key == "GENERAL.STATE":
            connected = value.startswith("100")  # 100 (connected)
        elif key == "GENERAL.METERED" and connected:
            if value.startswith("yes"):
                return Metered(True, f"nmcli: {device} metered: {value}")
            if value.startswith("no"):
                found = Metered(False, f"nmcli: {device} metered: {value}")
    return found


def parse_windows_cost(text: str) -> Metered:
    """``<NetworkCostType> <Roaming> <ApproachingDataLimit> <OverDataLimit>`` from PowerShell."""
    words = text.split()
    if len(words) < 4:
        return Metered(None)
    cost, flags = words[0], [w.lower() == "true" for w in words[1:4]]
    if cost in ("Fixed", "Variable") or any(flags):
        return Metered(True, f"Windows: connection cost {cost}" + (", roaming or near its limit" if any(flags)
                                                                   else ""))
    if cost == "Unrestricted":
        return Metered(False, "Windows: connection cost Unrestricted")
    return Metered(None)


def _ask() -> Metered:
    if sys.platform.startswith("linux"):
        nmcli = runner.which("nmcli")
        if nmcli is None:
            return Metered(None)
        res = runner.run([nmcli, "-t", "-f", "GENERAL.DEVICE,GENERAL.STATE,GENERAL.METERED", "device", "show"],
                         timeout=5)
        return parse_nmcli(res.stdout) if res.ok else Metered(None)
    if sys.platform == "win32":
        from app.core.detection.windows import system_program

        ps = system_program("powershell", "System32", "WindowsPowerShell", "v1.0", "powershell.exe")
        if ps is None:
            return Metered(None)
        res = runner.run([ps, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", PS_COST], timeout=10)
        return parse_windows_cost(res.stdout) if res.ok else Metered(None)
    return Metered(None)


_LAST: tuple[float, Metered] | None = None


def metered(*, fresh: bool = False) -> Metered:
    """Whether the connection looks metered (remembered for a minute unless ``fresh``)."""
    global _LAST
    now = time.monotonic()
    if not fresh and _LAST is not None and now - _LAST[0] < REMEMBER_S:
        return _LAST[1]
    found = _ask()
    _LAST = (now, found)
    return found

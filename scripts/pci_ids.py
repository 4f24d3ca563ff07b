#!/usr/bin/env python3
"""Read GPU device ids out of a pci.ids file, for the ``[[nvidia_pci]]`` / ``[[amd_pci]]`` rows of
``resources/compat/hardware.toml`` (maintainers only).

    python scripts/pci_ids.py /path/to/pci.ids nvidia      # chip code -> runs of device ids
    python scripts/pci_ids.py /path/to/pci.ids amd         # pci.ids chip name -> device ids

pci.ids is kept at github.com/pciutils/pciids (the data's rows name the commit they were read
from). NVIDIA names each GPU ``<chip code>[GL|M|B…] [<product>]`` (``GP102 [GeForce GTX 1080
Ti]``); a run is a stretch of consecutive listed ids of one chip, so an id pci.ids does not list
yet is told only when it lies between two listed ids of the same chip (NVIDIA hands out ids in
blocks per chip). Audio, USB and bridge functions of a GPU board are skipped: they are never a
display device. AMD's ids are not in blocks: each listed id is printed, under the chip name pci.ids
gives it (``Navi 31``, ``Phoenix1``); which gfx target a chip is comes from elsewhere (the rows'
sources), so nothing is printed as a gfx here.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

_NOT_GPU = re.compile(r"audio|usb|ucsi|bridge|root (port|complex)|pcie host|nvswitch|switch|endpoint|"
                      r"controller|serial|crypto", re.IGNORECASE)
_NV_CHIP = re.compile(r"^(G[KMPVAHB]\d{3}|G[KMPVAHB]\d{2}[A-Z]|TU\d{3}|AD\d{3})([A-Z]*)\b")


def devices(path: Path, vendor: str) -> Iterator[tuple[int, str]]:
    """(device id, name) of each device listed under ``vendor`` (4 lowercase hex digits)."""
    inside = False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            if not line.startswith("\t"):
                inside = line.startswith(vendor + " ")
                continue
            if inside and not line.startswith("\t\t"):
                dev, _, name = line.strip().partition(" ")
                if re.fullmatch(r"[0-9a-f]{4}", dev):
                    yield int(dev, 16), name.strip()


def nvidia_runs(path: Path) -> list[tuple[str, int, int]]:
    """(chip, first id, last id) for each run of one chip's GPU ids, in id order."""
    runs: list[list[object]] = []
    for dev, name in sorted(devices(path, "10de")):
        m = _NV_CHIP.match(name)
        product = name.partition("[")[2]
        # not a GPU function (audio, USB, a switch), or pci.ids itself unsure ("GM204 [GM107 INT52]")
        chip = None if m is None or _NOT_GPU.search(name) or _NV_CHIP.match(product) else m.group(1)
        if runs and runs[-1][0] == chip:
            runs[-1][2] = dev
        else:
            runs.append([chip, dev, dev])
    return [(str(c), int(str(lo)), int(str(hi))) for c, lo, hi in runs if c is not None]


def amd_chips(path: Path) -> dict[str, list[int]]:
    """pci.ids chip name (the text before a bracket) -> its listed GPU device ids."""
    out: dict[str, list[int]] = {}
    for dev, name in devices(path, "1002"):
        head = name.split("[")[0].strip()
        if head and not _NOT_GPU.search(head):
            out.setdefault(head, []).append(dev)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in ("nvidia", "amd"):
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0])
    if argv[1] == "nvidia":
        by_chip: dict[str, list[str]] = {}
        for chip, lo, hi in nvidia_runs(path):
            by_chip.setdefault(chip, []).append(f"{lo:04x}" if lo == hi else f"{lo:04x}-{hi:04x}")
        for chip, ranges in sorted(by_chip.items()):
            print(f"{chip}: {', '.join(ranges)}")
    else:
        for chip, ids in sorted(amd_chips(path).items()):
            print(f"{chip}: {', '.join(f'{i:04x}' for i in ids)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

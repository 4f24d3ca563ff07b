"""One entry per physical GPU from several detection sources (``merge_gpus``)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields, replace

from app.core.detection import read_text, to_int
from app.core.detection.amd import amd_is_integrated
from app.core.detection.gpu_ids import amd_gfx, compat_or_none, nvidia_cc
from app.core.detection.intel import intel_family, intel_is_integrated
from app.core.detection.pci import PCIDevice
from app.core.detection.system import GPU
from app.core.detection.vendors import brand as brand_of

__all__ = ["BRAND", "identify", "merge_gpus"]

_SOURCE_RANK = {"nvml": 0, "nvidia-smi": 1, "rocminfo": 1, "amd-smi": 1, "system_profiler": 1,
                "sysctl": 2, "rocm-smi": 2, "rocm_agent_enumerator": 3, "win32-videocontroller": 2,
                "pci": 5}
BRAND = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}  # others: vendors.brand()
_VENDOR_ORDER = {"nvidia": 0, "amd": 1, "intel": 2, "apple": 3}

Found = tuple[GPU, "str | None"]  # a GPU and its PCI address when the source knows it


def merge_gpus(found: Iterable[Found], pci_devices: Iterable[PCIDevice] = (), *,
               kfd: Mapping[str, str] | None = None, nvidia_driver: str | None = None,
               told: list[str] | None = None) -> list[GPU]:
    """One entry per physical GPU from several sources.

    Sources that know a PCI address are matched on it; a PCI-bus-only device is added only
    when no richer source accounts for it (e.g. an Intel iGPU, or an NVIDIA card whose driver
    does not answer). Richer sources win per field; PCI fills gaps (device id, names). A GPU whose
    compute capability (NVIDIA) or gfx target (AMD) no source reported gets it from its PCI id,
    chip code or name (:mod:`app.core.detection.gpu_ids`); ``told`` collects a line per such GPU saying
    from what, or that nothing told it.
    """
    kfd = kfd or {}
    merged = _merge_sources(found)
    devices = list(pci_devices)
    for dev in devices:
        _add_pci(merged, dev, devices, kfd, nvidia_driver)
    chips = {d.bus: d.chip for d in devices if d.bus and d.chip}
    out = []
    for g, b in merged:  # AMD rows without a gfx target get it from KFD when the bus matches
        if g.vendor == "amd" and not g.gfx_target and b and kfd.get(b):
            g = replace(g, gfx_target=kfd[b], integrated=g.integrated or amd_is_integrated(kfd[b], g.name))
        out.append(identify(g, chips.get(b) if b else None, told))
    # discrete first, then by vendor order, keeping each source's index order
    out.sort(key=lambda g: (g.integrated, _VENDOR_ORDER.get(g.vendor, 9)))
    return out


def identify(g: GPU, chip: str | None = None, told: list[str] | None = None) -> GPU:
    """``g`` with the compute capability / gfx target its sources left unknown, told from its PCI
    id, ``chip`` code or name; ``told`` gets a line saying from what (or that nothing told it)."""
    if g.vendor == "nvidia" and not g.compute_capability:
        got = nvidia_cc(compat_or_none(), pci_id=g.pci_id, chip=chip, name=g.name)
        what, field = "compute capability", "compute_capability"
    elif g.vendor == "amd" and not g.gfx_target:
        got = amd_gfx(compat_or_none(), pci_id=g.pci_id, name=g.name)
        what, field = "gfx target", "gfx_target"
    else:
        return g
    if told is not None:
        told.append(f"{g.name}: {what} {got}" if got is not None else
                    f"{g.name}: {what} unknown (no driver tool reported it; neither its PCI id "
                    f"{g.pci_id or '(none)'} nor its name tells it)")
    if got is None:
        return g
    if field == "gfx_target":
        return replace(g, gfx_target=got.value, integrated=g.integrated or amd_is_integrated(got.value, g.name))
    return replace(g, compute_capability=got.value)


def _merge_sources(found: Iterable[Found]) -> list[Found]:
    merged: list[Found] = []
    ordinals: dict[tuple[str | None, str], int] = {}
    for gpu, bus in sorted(found, key=lambda gb: _SOURCE_RANK.get(gb[0].source or "", 4)):
        # the n-th GPU of this vendor in this source (bus-less sources are matched by it)
        ordinal = ordinals.get((gpu.source, gpu.vendor), 0)
        ordinals[(gpu.source, gpu.vendor)] = ordinal + 1
        match = next((i for i, (g, b) in enumerate(merged)
                      if g.vendor == gpu.vendor and bus and b and bus == b), None)
        if match is None:
            others = [i for i, (g, b) in enumerate(merged)
                      if g.vendor == gpu.vendor and g.source != gpu.source and (not bus or not b)]
            if ordinal < len(others):
                match = others[ordinal]
        if match is None:
            merged.append((gpu, bus))
        else:
            g, b = merged[match]
            merged[match] = (_fill(g, gpu), b or bus)
    return merged


def _add_pci(merged: list[Found], dev: PCIDevice, devices: list[PCIDevice], kfd: Mapping[str, str],
             nvidia_driver: str | None) -> None:
    vendor = dev.vendor
    if vendor is None:
        return
    hit = next((i for i, (g, b) in enumerate(merged) if b and b == dev.bus), None)
    if hit is None:
        same = [i for i, (g, b) in enumerate(merged) if g.vendor == vendor and not b]
        n_pci_same = sum(1 for d in devices if d.vendor == vendor)
        n_rich_same = sum(1 for g, _ in merged if g.vendor == vendor)
        if same and n_rich_same >= n_pci_same:
            hit = same[0]
    if hit is not None:
        g, b = merged[hit]
        merged[hit] = (replace(g, pci_id=g.pci_id or dev.pci_id), b or dev.bus)
        return
    merged.append((_pci_gpu(dev, vendor, kfd, nvidia_driver), dev.bus))


def _pci_gpu(dev: PCIDevice, vendor: str, kfd: Mapping[str, str], nvidia_driver: str | None) -> GPU:
    """A GPU seen only on the PCI bus."""
    brand = BRAND.get(vendor) or brand_of(vendor)
    name = dev.name or (f"{brand} GPU {dev.pci_id}" if dev.pci_id else f"{brand} GPU")
    if name.lower() in ("device", "intel corporation device") or name.endswith(" Device"):
        name = f"{brand} GPU {dev.pci_id}"
    if not name.lower().startswith(vendor) and not name.startswith(brand):
        name = f"{brand} {name}"
    integrated = False
    gfx = None
    memory = None
    if vendor == "intel":
        integrated = intel_is_integrated(dev.device_id, name)
        fam = intel_family(dev.device_id)
        if fam and "GPU " in name:
            name = f"Intel {fam}"
    elif vendor == "amd":
        gfx = kfd.get(dev.bus) if dev.bus else None
        integrated = amd_is_integrated(gfx, name)
        memory = _amd_vram_mb(dev.bus)
    return GPU(vendor=vendor, name=name, gfx_target=gfx, memory_mb=memory, integrated=integrated,
               driver_version=nvidia_driver if vendor == "nvidia" else None, pci_id=dev.pci_id, source="pci")


def _fill(primary: GPU, other: GPU) -> GPU:
    changes: dict[str, object] = {}
    for f in fields(primary):
        if f.name in ("source", "integrated", "vendor"):
            continue
        if getattr(primary, f.name) in (None, "") and getattr(other, f.name) not in (None, ""):
            changes[f.name] = getattr(other, f.name)
    if primary.name.endswith("...") and other.name and not other.name.endswith("..."):
        changes["name"] = other.name
    return replace(primary, **changes) if changes else primary  # type: ignore[arg-type]  # fields of GPU


def _amd_vram_mb(bus: str | None) -> int | None:
    if not bus:
        return None
    v = to_int((read_text(f"/sys/bus/pci/devices/{bus}/mem_info_vram_total", 64) or "").strip())
    return v // (1024 * 1024) if v else None

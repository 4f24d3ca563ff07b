"""What Windows and macOS are told about the frozen app: the exe's version resource and the
.app's Info.plist. build.spec uses both; tests/test_installers.py checks them without PyInstaller.

PyInstaller reads a version file as the text of a VSVersionInfo(...) expression (it evaluates it
with its own classes), so the text is written here and needs nothing from PyInstaller to make.
"""
from __future__ import annotations

import re
from pathlib import Path

PRODUCT = "Torch Setup Assistant"
COMPANY = "Torch Setup Assistant team"
BUNDLE_ID = "org.torchsetup.assistant"
# Qt 6.8 and later (PySide6 >= 6.8, what pip installs today) support macOS 12 Monterey and newer:
# doc.qt.io/qt-6.8/macos.html (Qt 6.7 still ran on 11). A Mac on 11 would start the .app and
# crash in Qt; with this key Finder says which macOS the app needs instead.
MACOS_MINIMUM = "12.0"

# The two Windows executables build.spec makes: Task Manager and the "Details" tab show
# FileDescription, so each says what it is.
EXECUTABLES = {
    "torch-setup.exe": f"{PRODUCT} (command line)",
    "torch-setup-gui.exe": PRODUCT,
}


def version_tuple(version: str) -> tuple[int, int, int, int]:
    """'0.1.0' -> (0, 1, 0, 0); '1.2rc1' / '1.2.0.dev3' -> (1, 2, 0, 0): a version resource holds
    four 16-bit numbers, so only the release part goes there (the full text is in the strings)."""
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    if not m:
        raise ValueError(f"not a version: {version!r}")
    parts = [int(p) for p in m.group(1).split(".")][:4]
    if any(p > 0xFFFF for p in parts):
        raise ValueError(f"a version resource number is at most 65535: {version!r}")
    a, b, c, d = [*parts, 0, 0, 0][:4]
    return a, b, c, d


def version_info_text(version: str, exe_name: str) -> str:
    """The VSVersionInfo text for one executable (PyInstaller's EXE(version=<file>))."""
    nums = version_tuple(version)
    strings = [
        ("CompanyName", COMPANY),
        ("FileDescription", EXECUTABLES.get(exe_name, PRODUCT)),
        ("FileVersion", version),
        ("InternalName", exe_name.removesuffix(".exe")),
        ("LegalCopyright", f"(c) {COMPANY}, MIT licence"),
        ("OriginalFilename", exe_name),
        ("ProductName", PRODUCT),
        ("ProductVersion", version),
    ]
    table = ",\n".join(f"          StringStruct({k!r}, {v!r})" for k, v in strings)
    # 0x040904B0: US English, Unicode (the code page Windows expects with a Unicode table);
    # OS 0x40004: VOS_NT_WINDOWS32; fileType 0x1: VFT_APP
    return (
        "VSVersionInfo(\n"
        f"  ffi=FixedFileInfo(filevers={nums!r}, prodvers={nums!r}, mask=0x3f, flags=0x0,\n"
        "                    OS=0x40004, fileType=0x1, subtype=0x0, date=(0, 0)),\n"
        "  kids=[\n"
        "    StringFileInfo([\n"
        "      StringTable('040904B0', [\n"
        f"{table}\n"
        "      ])\n"
        "    ]),\n"
        "    VarFileInfo([VarStruct('Translation', [0x0409, 1200])])\n"
        "  ]\n"
        ")\n"
    )


def write_version_files(version: str, folder: Path) -> dict[str, str]:
    """One version file per executable in `folder`; {exe name: file path} for build.spec."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for exe in EXECUTABLES:
        path = folder / f"version-{exe.removesuffix('.exe')}.txt"
        path.write_text(version_info_text(version, exe), encoding="utf-8")
        paths[exe] = str(path)
    return paths


def info_plist(version: str) -> dict[str, object]:
    """The keys build.spec gives BUNDLE(info_plist=...); PyInstaller adds them to its own
    (CFBundleExecutable, CFBundleIconFile, ...), ours win on a clash."""
    return {
        "CFBundleName": "Torch Setup",
        "CFBundleDisplayName": "Torch Setup",
        "CFBundleShortVersionString": version,
        "CFBundleVersion": version,
        "LSMinimumSystemVersion": MACOS_MINIMUM,
        "NSHighResolutionCapable": True,
        # the wizard speaks English and Simplified Chinese: the system's own dialogs follow
        "CFBundleDevelopmentRegion": "en",
        "CFBundleLocalizations": ["en", "zh-Hans"],
        "LSApplicationCategoryType": "public.app-category.developer-tools",
        "NSHumanReadableCopyright": f"(c) {COMPANY}, MIT licence",
    }

"""The installers, checked without their platforms (issue 24, "The installers").

* The icons: resources/icons/app.ico and app.icns parse (every size, the PNG and BMP entries, the
  ICNS chunk headers), were made from the app.svg in the tree, and the renderer makes them again.
* The Inno Setup script: Inno Setup cannot be had here (its compiler is a 32-bit Windows program;
  the Windows lane's Wine is 64-bit only), so the script is run through a small model of Inno's
  preprocessor for each edition (online/offline, signed/unsigned, with/without
  ChineseSimplified.isl) and its sections are checked for what issue 24 asks. Its [Code] (the PATH
  entry) is compiled with Free Pascal and run against a model registry where fpc is installed.
* macOS: the Info.plist build.spec gives the .app says 12.0; the entitlements parse; the packaging
  script signs, self-tests, notarises and staples in that order, with fake tools on PATH.
* The exe's version resource: the text build.spec gives PyInstaller evaluates to a VSVersionInfo.
"""
from __future__ import annotations

import ast
import hashlib
import itertools
import json
import os
import plistlib
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ICONS = REPO / "resources" / "icons"
ISS = REPO / "installer" / "windows" / "torch-setup.iss"
sys.path.insert(0, str(REPO / "installer"))

import app_info  # noqa: E402  (installer/app_info.py, as build.spec imports it)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ICO_SIZES = {16, 24, 32, 48, 64, 128, 256}
ICNS_SIZES = {"icp4": 16, "icp5": 32, "icp6": 64, "ic07": 128, "ic08": 256, "ic09": 512, "ic10": 1024,
              "ic11": 32, "ic12": 64, "ic13": 256, "ic14": 512}


# ------------------------------------------------------------------ icons

def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC, "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    return struct.unpack(">II", data[16:24])


def read_ico(data: bytes) -> dict[int, tuple[str, bytes]]:
    """{size: ("png"|"bmp", blob)}, checking the ICONDIR and every entry's header."""
    reserved, kind, count = struct.unpack_from("<HHH", data)
    assert (reserved, kind) == (0, 1), "not an icon file (ICONDIR)"
    out = {}
    for i in range(count):
        w, h, colors, res, planes, bits, size, offset = struct.unpack_from("<BBBBHHII", data, 6 + 16 * i)
        w, h = w or 256, h or 256
        assert w == h and colors == 0 and res == 0 and planes == 1 and bits == 32
        blob = data[offset:offset + size]
        assert len(blob) == size, f"entry {w} runs past the end of the file"
        if blob[:8] == PNG_MAGIC:
            assert _png_size(blob) == (w, h)
            out[w] = ("png", blob)
        else:
            hdr, bw, bh, bplanes, bbits, comp = struct.unpack_from("<IiiHHI", blob)
            assert (hdr, bw, bh, bplanes, bbits, comp) == (40, w, 2 * h, 1, 32, 0), f"bad DIB header at {w}"
            mask = ((w + 31) // 32) * 4 * h
            assert len(blob) == 40 + w * h * 4 + mask, f"the {w} px entry is not pixels + AND mask"
            out[w] = ("bmp", blob)
    return out


def read_icns(data: bytes) -> dict[str, bytes]:
    assert data[:4] == b"icns", "not an icns file"
    total = struct.unpack(">I", data[4:8])[0]
    assert total == len(data), "the icns header's length is not the file's"
    chunks, pos = {}, 8
    while pos < total:
        kind = data[pos:pos + 4].decode("ascii")
        length = struct.unpack(">I", data[pos + 4:pos + 8])[0]
        assert length > 8 and pos + length <= total, f"chunk {kind} runs past the end"
        chunks[kind] = data[pos + 8:pos + length]
        pos += length
    return chunks


def test_app_ico_holds_every_windows_size():
    entries = read_ico((ICONS / "app.ico").read_bytes())
    assert set(entries) == ICO_SIZES
    assert entries[256][0] == "png"  # a 256 px BMP would be 256 KiB alone
    assert all(entries[s][0] == "bmp" for s in ICO_SIZES - {256})


def test_app_icns_holds_every_png_type_at_its_size():
    chunks = read_icns((ICONS / "app.icns").read_bytes())
    assert set(chunks) == set(ICNS_SIZES)
    for kind, px in ICNS_SIZES.items():
        assert _png_size(chunks[kind]) == (px, px), kind


def test_platform_icons_were_made_from_the_svg_in_the_tree():
    record = json.loads((ICONS / "app-icons.json").read_text(encoding="utf-8"))
    assert record["source"] == "app.svg"
    svg = (ICONS / "app.svg").read_bytes().replace(b"\r\n", b"\n")  # a Windows checkout's CRLF is the same SVG
    assert record["source_sha256"] == hashlib.sha256(svg).hexdigest(), (
        "resources/icons/app.svg changed: run scripts/render_icons.py and commit app.ico, app.icns, app-icons.json")


def _bmp_pixels(blob: bytes, size: int) -> list[bytes]:
    """Top-down BGRA rows of an ICO BMP entry."""
    rows = [blob[40 + y * size * 4:40 + (y + 1) * size * 4] for y in range(size)]
    return rows[::-1]


@pytest.mark.gui
def test_renderer_makes_the_same_icons_again(tmp_path):
    """The build's step (render_icons.py --platform-only) writes parseable files whose pixels are
    the committed ones (up to a Qt version's antialiasing: renders differ in the last bits)."""
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "render_icons.py"), "--platform-only",
                          "--out", str(tmp_path)], capture_output=True, text=True, encoding="utf-8", timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert res.returncode == 0, res.stderr
    fresh, kept = read_ico((tmp_path / "app.ico").read_bytes()), read_ico((ICONS / "app.ico").read_bytes())
    assert set(fresh) == ICO_SIZES
    assert set(read_icns((tmp_path / "app.icns").read_bytes())) == set(ICNS_SIZES)
    for size in (16, 48):
        a = b"".join(_bmp_pixels(fresh[size][1], size))
        b = b"".join(_bmp_pixels(kept[size][1], size))
        mean = sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a)
        assert mean < 3, f"the committed {size} px icon is not app.svg's ({mean:.1f} levels apart on average)"
    record = json.loads((tmp_path / "app-icons.json").read_text(encoding="utf-8"))
    assert record["source_sha256"] == json.loads((ICONS / "app-icons.json").read_text(encoding="utf-8"))["source_sha256"]


def test_icon_pixels_are_the_app_not_blank():
    """The 32 px BMP: transparent corners (the rounded square), the orange body, an AND mask
    that marks the transparent corner (for tools that ignore alpha)."""
    blob = read_ico((ICONS / "app.ico").read_bytes())[32][1]
    rows = _bmp_pixels(blob, 32)
    corner, body = rows[0][0:4], rows[16][4 * 4:4 * 4 + 4]
    assert corner[3] == 0
    b, _g, r, a = body
    assert a == 255 and r > 200 and b < 100  # #ff7a3d .. #e8451f
    mask_top_row = blob[40 + 32 * 32 * 4 + 31 * 4:40 + 32 * 32 * 4 + 32 * 4]  # bottom-up: last row is the top
    assert mask_top_row[0] & 0x80


def test_build_spec_gives_the_icons_to_the_exe_and_the_app():
    spec = (REPO / "build.spec").read_text(encoding="utf-8")
    tree = ast.parse(spec)
    assert 'ICON = str(icon_dir / "app.ico")' in spec and 'ICON = str(icon_dir / "app.icns")' in spec
    bundle = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "BUNDLE"]
    assert len(bundle) == 1
    kw = {k.arg: k.value for k in bundle[0].keywords}
    assert ast.unparse(kw["icon"]) == "ICON"
    assert "render_icons.py" in spec and '"--if-stale"' in spec  # a changed app.svg is rendered by the build


# ------------------------------------------------------------------ macOS: Info.plist, entitlements

def test_app_info_plist_says_macos_12():
    plist = plistlib.loads(plistlib.dumps(app_info.info_plist("0.1.0")))
    assert plist["LSMinimumSystemVersion"] == "12.0"
    assert plist["CFBundleShortVersionString"] == "0.1.0" and plist["NSHighResolutionCapable"] is True


def test_build_spec_gives_bundle_the_app_info_plist():
    """The .app's Info.plist is PyInstaller's own keys updated with BUNDLE(info_plist=...):
    build.spec must pass app_info.info_plist(__version__), which says 12.0."""
    tree = ast.parse((REPO / "build.spec").read_text(encoding="utf-8"))
    bundle = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "BUNDLE")
    kw = {k.arg: ast.unparse(k.value) for k in bundle.keywords}
    assert kw["info_plist"] == "app_info.info_plist(__version__)"
    assert kw["bundle_identifier"] == "app_info.BUNDLE_ID"
    # what PyInstaller writes (osx.py: its defaults, then info_plist.update) keeps our 12.0
    written = {"CFBundleExecutable": "torch-setup-gui", "CFBundlePackageType": "APPL",
               "NSHighResolutionCapable": True, **app_info.info_plist("0.1.0")}
    assert plistlib.loads(plistlib.dumps(written))["LSMinimumSystemVersion"] == "12.0"


def test_entitlements_are_the_hardened_runtime_exceptions_a_pyinstaller_app_needs():
    ent = plistlib.loads((REPO / "installer/macos/entitlements.plist").read_bytes())
    assert ent == {"com.apple.security.cs.allow-unsigned-executable-memory": True,
                   "com.apple.security.cs.disable-library-validation": True}


# ------------------------------------------------------------------ Windows: version resource

class _Rec:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


_VS = {name: type(name, (_Rec,), {}) for name in
       ("VSVersionInfo", "FixedFileInfo", "StringFileInfo", "StringTable", "StringStruct", "VarFileInfo", "VarStruct")}


def test_version_resource_text_is_a_vsversioninfo_with_the_fields_windows_shows():
    text = app_info.version_info_text("1.2.0rc1", "torch-setup-gui.exe")
    info = eval(text, {"__builtins__": {}}, dict(_VS))  # what PyInstaller does with the file
    assert type(info).__name__ == "VSVersionInfo"
    ffi = info.kwargs["ffi"].kwargs
    assert ffi["filevers"] == ffi["prodvers"] == (1, 2, 0, 0)
    strings = {s.args[0]: s.args[1] for s in info.kwargs["kids"][0].args[0][0].args[1]}
    assert strings["CompanyName"] == "Torch Setup Assistant team"
    assert strings["ProductName"] == "Torch Setup Assistant" == strings["FileDescription"]
    assert strings["FileVersion"] == strings["ProductVersion"] == "1.2.0rc1"
    assert strings["OriginalFilename"] == "torch-setup-gui.exe"
    cli = eval(app_info.version_info_text("1.2.0rc1", "torch-setup.exe"), {"__builtins__": {}}, dict(_VS))
    assert "command line" in {s.args[0]: s.args[1] for s in cli.kwargs["kids"][0].args[0][0].args[1]}["FileDescription"]


@pytest.mark.parametrize(("text", "nums"), [("0.1.0", (0, 1, 0, 0)), ("2", (2, 0, 0, 0)),
                                            ("1.2.3.4.5", (1, 2, 3, 4)), ("0.3.0.dev7", (0, 3, 0, 0))])
def test_version_numbers(text, nums):
    assert app_info.version_tuple(text) == nums


def test_build_spec_puts_the_version_resource_on_both_exes():
    tree = ast.parse((REPO / "build.spec").read_text(encoding="utf-8"))
    exes = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "EXE"]
    assert len(exes) == 3  # onefile, onedir console, onedir windowed
    versions = {ast.unparse(k.value) for n in exes for k in n.keywords if k.arg == "version"}
    assert versions == {"VERSION_FILES.get(NAME + '.exe')", "VERSION_FILES.get(NAME + '-gui.exe')"}


def test_version_files_are_written_for_both_exes(tmp_path):
    paths = app_info.write_version_files("0.1.0", tmp_path / "v")
    assert set(paths) == {"torch-setup.exe", "torch-setup-gui.exe"}
    for exe, path in paths.items():
        assert f"'OriginalFilename', '{exe}'" in Path(path).read_text(encoding="utf-8")


# ------------------------------------------------------------------ Inno Setup: a preprocessor model

class Ispp:
    """The part of Inno Setup's preprocessor (ISPP) the script uses: #define/#undef, #if/#elif/
    #else/#endif, #ifdef/#ifndef, #ifexist/#ifnexist, {#expr} in lines, string literals without escapes (ISPP's
    default Pascal-style strings), + == != && || !, and the built-in functions below. A directive
    it does not know fails the test: the model must grow with the script."""

    def __init__(self, defines: dict[str, str], files: dict[str, str], env: dict[str, str]):
        self.defines: dict[str, object] = dict(defines)
        self.files = files  # Windows path -> ProductVersion ("" for a file without one)
        self.env = env
        self.funcs = {
            "AddBackslash": lambda s: s if s.endswith("\\") else s + "\\",
            "FileExists": self.exists,
            "GetEnv": lambda n: self.env.get(n, ""),
            "GetStringFileInfo": lambda p, _name: self.files.get(p, ""),
            "GetVersionNumbersString": lambda p: _numbers(self.files.get(p, "")),
        }

    def exists(self, path: str) -> bool:
        """The model's files, and the checkout's resources/ and installer/ (C:\\src is the checkout);
        relative paths are relative to the script's folder. Inno's "compiler:" prefix means nothing
        to the preprocessor."""
        if path in self.files:
            return True
        if not re.match(r"[A-Za-z]:\\", path):
            path = "C:\\src\\installer\\windows\\" + path
        rel = Path(os.path.normpath(path[len("C:\\src\\"):].replace("\\", "/"))) if path.startswith("C:\\src\\") else None
        return bool(rel and rel.parts and rel.parts[0] in ("resources", "installer") and (REPO / rel).is_file())

    def eval(self, expr: str):
        py = re.sub(r'"([^"]*)"', lambda m: repr(m.group(1)), expr)
        py = py.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py)
        ns = {**self.funcs, "SourcePath": "C:\\src\\installer\\windows\\", "CompilerPath": "C:\\Inno\\",
              "PRODUCT_VERSION": "ProductVersion", **self.defines}
        return eval(py, {"__builtins__": {}}, ns)

    def run(self, text: str) -> str:
        out: list[str] = []
        stack: list[list[bool]] = []  # [this branch active, some branch taken]
        for raw in text.splitlines():
            line = raw.strip()
            active = all(s[0] for s in stack)
            if line.startswith("#"):
                word, _, rest = line[1:].partition(" ")
                rest = rest.strip()
                parent = all(s[0] for s in stack[:-1]) if word in ("elif", "else", "endif") else active
                if word in ("if", "ifdef", "ifndef", "ifexist", "ifnexist"):
                    cond = False
                    if parent:
                        if word == "if":
                            cond = bool(self.eval(rest))
                        elif word in ("ifexist", "ifnexist"):
                            cond = self.exists(self.eval(rest)) == (word == "ifexist")
                        else:
                            cond = (rest in self.defines) == (word == "ifdef")
                    stack.append([parent and cond, cond])
                elif word == "elif":
                    taken = stack[-1][1]
                    cond = parent and not taken and bool(self.eval(rest))
                    stack[-1] = [cond, taken or cond]
                elif word == "else":
                    stack[-1] = [parent and not stack[-1][1], True]
                elif word == "endif":
                    stack.pop()
                elif word == "define":
                    if active:
                        name, _, expr = rest.partition(" ")
                        self.defines[name] = self.eval(expr) if expr.strip() else ""
                elif word == "undef":
                    if active:
                        self.defines.pop(rest, None)
                else:
                    raise AssertionError(f"the ISPP model does not know #{word}: {raw}")
                continue
            if active:
                out.append(re.sub(r"\{#([^}]*)\}", lambda m: str(self.eval(m.group(1))), raw))
        assert not stack, "unbalanced #if/#endif"
        return "\n".join(out)


def _numbers(version: str) -> str:
    nums = re.findall(r"\d+", version.split("rc")[0].split(".dev")[0])[:4]
    return ".".join(nums + ["0"] * (4 - len(nums)))


def sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            current = m.group(1)
            out.setdefault(current, [])
            continue
        if current is None or not line or (current != "Code" and line.startswith(";")):
            continue
        out[current].append(raw if current == "Code" else line)
    return out


def directives(lines: list[str]) -> dict[str, str]:
    """key=value lines ([Setup], [Messages], [CustomMessages], [LangOptions]); a key set twice
    fails (Inno takes the last: a silent override)."""
    out: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition("=")
        assert sep, f"not key=value: {line}"
        assert key.strip() not in out, f"{key.strip()} set twice"
        out[key.strip()] = value.strip()
    return out


def entries(lines: list[str]) -> list[dict[str, str]]:
    """'Name: "x"; Flags: a b' lines ([Languages], [Files], [Tasks], [Registry], ...)."""
    out = []
    for line in lines:
        entry = {}
        for part in re.findall(r'(\w+):\s*("(?:[^"]|"")*"|[^;]*)', line):
            entry[part[0]] = part[1].strip().strip('"')
        out.append(entry)
    return out


DIST = "C:\\src\\installer\\windows\\..\\..\\dist\\torch-setup"
THUMB = "0123456789abcdef0123456789abcdef01234567"
EDITIONS = list(itertools.product(("online", "offline"), ("unsigned", "signed"), ("zh-isl", "no-zh-isl")))


def compile_model(offline: bool, signed: bool, zh_isl: bool, version: str = "0.1.0") -> dict[str, list[str]]:
    files = {DIST + "\\torch-setup.exe": version}
    if zh_isl:
        files["C:\\Inno\\Languages\\ChineseSimplified.isl"] = ""
    defines = {"BundleDir": "C:\\bundles\\cu126-cp312"} if offline else {}
    env = {"TORCH_SETUP_SIGN_SHA1": THUMB} if signed else {}
    text = ISS.read_text(encoding="utf-8-sig")
    return sections(Ispp(defines, files, env).run(text))


@pytest.mark.parametrize(("edition", "signing", "zh"), EDITIONS)
def test_inno_script_setup_section(edition, signing, zh):
    secs = compile_model(edition == "offline", signing == "signed", zh == "zh-isl")
    setup = directives(secs["Setup"])
    assert setup["MinVersion"] == "10.0"  # Windows 10
    assert setup["ChangesEnvironment"] == "yes"  # the PATH entry reaches Explorer and new terminals
    icon = (ISS.parent / setup["SetupIconFile"].replace("\\", "/")).resolve()
    assert icon == (ICONS / "app.ico").resolve() and icon.is_file()
    assert setup["UninstallDisplayIcon"] == "{app}\\torch-setup-gui.exe"
    assert setup["AppVersion"] == "0.1.0" and setup["VersionInfoVersion"] == "0.1.0.0"  # from the exe's resource
    if edition == "offline":
        assert setup["DiskSpanning"] == "yes"
        assert 262144 <= int(setup["DiskSliceSize"]) < 2**31  # Inno's minimum; under 2 GiB per file
        assert setup["OutputBaseFilename"] == "TorchSetup-0.1.0-offline-setup"
    else:
        assert "DiskSpanning" not in setup and setup["OutputBaseFilename"] == "TorchSetup-0.1.0-setup"
    files = entries(secs["Files"])
    exes = [f for f in files if f["Source"].endswith((".exe",))]
    assert {Path(f["Source"].replace("\\", "/")).name for f in exes} == {"torch-setup.exe", "torch-setup-gui.exe"}
    if signing == "signed":
        tool = setup["SignTool"]
        assert tool.startswith("tsasign signtool.exe sign ") and tool.endswith("$f")
        assert f"/sha1 {THUMB}" in tool and "/fd sha256" in tool and "/tr " in tool
        assert setup["SignedUninstaller"] == "yes"
        assert all("signonce" in f["Flags"].split() for f in exes)
    else:
        assert "SignTool" not in setup and "SignedUninstaller" not in setup
        assert not any("signonce" in f.get("Flags", "") for f in files)
    wildcard = next(f for f in files if f["Source"].endswith("\\*") and f["DestDir"] == "{app}")
    assert wildcard["Excludes"] == "\\torch-setup-gui.exe,\\torch-setup.exe"  # each exe installed once
    bundle = [f for f in files if f["DestDir"] == "{app}\\torch-bundle"]
    assert len(bundle) == (1 if edition == "offline" else 0)


def test_inno_version_falls_back_when_the_exe_has_none():
    secs = compile_model(offline=False, signed=False, zh_isl=False, version="")
    setup = directives(secs["Setup"])
    assert setup["AppVersion"] == "0.0.0" and setup["OutputBaseFilename"] == "TorchSetup-0.0.0-setup"


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# names and placeholders of Inno Setup 6's Default.isl messages the script overrides for zh_CN
DEFAULT_ISL = {
    "SetupAppTitle": "", "SetupWindowTitle": "%1", "UninstallAppTitle": "", "UninstallAppFullTitle": "%1",
    "WinVersionTooLowError": "%1 %2", "PrivilegesRequiredOverrideTitle": "",
    "PrivilegesRequiredOverrideInstruction": "", "PrivilegesRequiredOverrideText1": "%1",
    "PrivilegesRequiredOverrideText2": "%1", "PrivilegesRequiredOverrideAllUsers": "&",
    "PrivilegesRequiredOverrideAllUsersRecommended": "&", "PrivilegesRequiredOverrideCurrentUser": "&",
    "PrivilegesRequiredOverrideCurrentUserRecommended": "&", "ExitSetupTitle": "", "ExitSetupMessage": "%n",
    "ButtonBack": "&", "ButtonNext": "&", "ButtonInstall": "&", "ButtonOK": "", "ButtonCancel": "",
    "ButtonYes": "&", "ButtonNo": "&", "ButtonFinish": "&", "ButtonBrowse": "&", "ButtonWizardBrowse": "&",
    "ClickNext": "", "WizardSelectDir": "", "SelectDirDesc": "[name]", "SelectDirLabel3": "[name]",
    "SelectDirBrowseLabel": "", "DiskSpaceGBLabel": "[gb]", "DiskSpaceMBLabel": "[mb]", "WizardSelectTasks": "",
    "SelectTasksDesc": "", "SelectTasksLabel2": "[name]", "WizardReady": "", "ReadyLabel1": "[name]",
    "ReadyLabel2a": "", "ReadyMemoDir": "", "ReadyMemoTasks": "", "WizardInstalling": "",
    "InstallingLabel": "[name]", "FinishedHeadingLabel": "[name]", "FinishedLabelNoIcons": "[name]",
    "FinishedLabel": "[name]", "ClickFinish": "", "SetupAborted": "%n", "ConfirmUninstall": "%1",
    "UninstallStatusLabel": "%1", "UninstalledAll": "%1", "UninstalledMost": "%1 %n", "WizardUninstalling": "",
    "StatusUninstalling": "%1",
}
# the custom messages Default.isl defines (English) that a script may use without defining them
DEFAULT_ISL_CUSTOM = {"CreateDesktopIcon", "AdditionalIcons", "LaunchProgram", "UninstallProgram"}


@pytest.mark.parametrize("zh_isl", [True, False], ids=["zh-isl", "no-zh-isl"])
def test_inno_chinese_works_with_and_without_chinese_simplified_isl(zh_isl):
    """Inno Setup 6 does not ship ChineseSimplified.isl. Without it the zh_CN language still exists
    (Default.isl's English plus our own Chinese), and every message the script uses is defined for
    every language: a zh_CN.X entry for a language that is not defined fails the compile."""
    secs = compile_model(offline=False, signed=False, zh_isl=zh_isl)
    langs = {e["Name"]: e["MessagesFile"] for e in entries(secs["Languages"])}
    assert set(langs) == {"en", "zh_CN"}
    custom = directives(secs["CustomMessages"])
    messages = directives(secs.get("Messages", []))
    options = directives(secs.get("LangOptions", []))
    for key in [*custom, *messages, *options]:
        if "." in key:
            assert key.split(".")[0] in langs, f"{key}: no such language"
    used = set(re.findall(r"\{cm:(\w+)", "\n".join(line for s, ls in secs.items() if s != "Code" for line in ls)))
    used |= set(re.findall(r"CustomMessage\('(\w+)'\)", "\n".join(secs.get("Code", []))))
    assert {"AddToPath", "LaunchNow", "CreateDesktopIcon"} <= used
    for name in used:
        for lang in langs:
            has = f"{lang}.{name}" in custom or name in custom or name in DEFAULT_ISL_CUSTOM
            assert has, f"{{cm:{name}}} has no {lang} text"
            if lang == "zh_CN" and (not zh_isl or name not in DEFAULT_ISL_CUSTOM):
                assert _cjk(custom[f"zh_CN.{name}"]), f"zh_CN.{name} is not Chinese"
    if zh_isl:
        assert langs["zh_CN"] == "C:\\Inno\\Languages\\ChineseSimplified.isl"
        assert not messages and not options  # the translation's own texts are used, none overridden
    else:
        assert langs["zh_CN"] == "compiler:Default.isl"
        assert options == {"zh_CN.LanguageName": "简体中文", "zh_CN.LanguageID": "$0804"}  # chosen on a Chinese Windows
        assert {k.split(".", 1)[1] for k in messages} <= set(DEFAULT_ISL), "a message name Inno does not have"
        for key, text in messages.items():
            name = key.split(".", 1)[1]
            assert key.startswith("zh_CN.") and _cjk(text), key
            for token in DEFAULT_ISL[name].split():
                assert token in text, f"{key} lost {token}"
        for page in ("ButtonNext", "ButtonInstall", "ButtonFinish", "PrivilegesRequiredOverrideCurrentUser",
                     "WizardSelectDir", "WizardReady", "FinishedHeadingLabel", "ConfirmUninstall"):
            assert f"zh_CN.{page}" in messages


def test_inno_script_is_utf8_with_bom():
    """Inno Setup before 6.3 reads a script without a BOM as ANSI: the Chinese would be garbled."""
    raw = ISS.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    raw.decode("utf-8")


def test_inno_path_entry_is_added_by_task_and_removed_only_when_ours():
    secs = compile_model(offline=False, signed=False, zh_isl=False)
    for entry in entries(secs.get("Registry", [])):
        # the [Registry] way with uninsdeletevalue on Environment\Path deletes the user's whole PATH
        assert "Environment" not in entry.get("Subkey", ""), entry
    code = "\n".join(secs["Code"])
    assert re.search(r"procedure CurUninstallStepChanged\(CurUninstallStep: TUninstallStep\);\s*begin\s*"
                     r"if CurUninstallStep = usUninstall then\s*RemovePathEntry;", code)
    assert re.search(r"\(CurStep = ssPostInstall\) and WizardIsTaskSelected\('addtopath'\)", code)
    tasks = {e["Name"]: e for e in entries(secs["Tasks"])}
    assert tasks["addtopath"]["Flags"] == "unchecked"


# ------------------------------------------------------------------ Inno's [Code] under Free Pascal

FPC_HARNESS = r"""
program pathtest;
{$mode delphi}{$H+}
uses SysUtils, Classes;
type
  TSetupStep = (ssPreInstall, ssInstall, ssPostInstall, ssDone);
  TUninstallStep = (usAppMutexCheck, usUninstall, usPostUninstall, usDone);
const
  HKEY_LOCAL_MACHINE = 2;
  HKEY_CURRENT_USER = 1;
var
  Reg: TStringList;  { 'root|key|name' = value: the model registry }
  AppDir: String;
  AdminMode, PathTask: Boolean;

function K(Root: Integer; Key, Name: String): String;
begin
  Result := IntToStr(Root) + '|' + LowerCase(Key) + '|' + LowerCase(Name);
end;
function RegQueryStringValue(Root: Integer; Key, Name: String; var Value: String): Boolean;
var I: Integer;
begin
  I := Reg.IndexOfName(K(Root, Key, Name));
  Result := I >= 0;
  if Result then Value := Reg.ValueFromIndex[I];
end;
function RegWriteStringValue(Root: Integer; Key, Name, Value: String): Boolean;
begin
  Reg.Values[K(Root, Key, Name)] := Value;
  if Value = '' then Reg.Add(K(Root, Key, Name) + '=');
  Result := True;
end;
function RegWriteExpandStringValue(Root: Integer; Key, Name, Value: String): Boolean;
begin
  Result := RegWriteStringValue(Root, Key, Name, Value);
end;
function RegDeleteValue(Root: Integer; Key, Name: String): Boolean;
var I: Integer;
begin
  I := Reg.IndexOfName(K(Root, Key, Name));
  Result := I >= 0;
  if Result then Reg.Delete(I);
end;
function RegDeleteKeyIfEmpty(Root: Integer; Key: String): Boolean;
begin
  Result := True;
end;
function IsAdminInstallMode: Boolean;
begin
  Result := AdminMode;
end;
function ExpandConstant(S: String): String;
begin
  if S <> '{app}' then raise Exception.Create('unexpected constant ' + S);
  Result := AppDir;
end;
function WizardIsTaskSelected(Name: String): Boolean;
begin
  Result := (Name = 'addtopath') and PathTask;
end;

{CODE}

procedure Show(Label_: String);
var V: String;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', V) then V := '<none>';
  WriteLn(Label_, ' user=', V);
  if not RegQueryStringValue(HKEY_LOCAL_MACHINE, MachineEnvKey, 'Path', V) then V := '<none>';
  WriteLn(Label_, ' machine=', V);
end;

var
  I: Integer;
  Cmd, Arg: String;
begin
  Reg := TStringList.Create;
  AppDir := 'C:\Users\Tom\AppData\Local\Programs\Torch Setup Assistant';
  I := 1;
  while I < ParamCount do
  begin
    Cmd := ParamStr(I); Arg := ParamStr(I + 1); I := I + 2;
    if Cmd = 'user-path' then RegWriteStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Arg)
    else if Cmd = 'machine-path' then RegWriteStringValue(HKEY_LOCAL_MACHINE, MachineEnvKey, 'Path', Arg)
    else if Cmd = 'app' then AppDir := Arg
    else if Cmd = 'admin' then AdminMode := Arg = '1'
    else if Cmd = 'task' then PathTask := Arg = '1'
    else if Cmd = 'install' then begin CurStepChanged(ssInstall); CurStepChanged(ssPostInstall); Show(Arg); end
    else if Cmd = 'uninstall' then begin CurUninstallStepChanged(usUninstall); CurUninstallStepChanged(usPostUninstall); Show(Arg); end;
  end;
end.
"""


@pytest.fixture(scope="module")
def path_code(tmp_path_factory):
    """The script's [Code], compiled by Free Pascal (Delphi mode) against a model registry."""
    fpc = shutil.which("fpc")
    if not fpc:
        pytest.skip("fpc (Free Pascal, Debian package fp-compiler) is not installed: the PATH code is not run")
    code = "\n".join(compile_model(offline=False, signed=False, zh_isl=False)["Code"])
    tmp = tmp_path_factory.mktemp("fpc")
    (tmp / "pathtest.pas").write_text(FPC_HARNESS.replace("{CODE}", code), encoding="utf-8")
    res = subprocess.run([fpc, "-v0", "-FE" + str(tmp), str(tmp / "pathtest.pas")], capture_output=True,
                         text=True, encoding="utf-8", errors="replace", timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return tmp / "pathtest"


def _run_code(exe: Path, *args: str) -> dict[str, str]:
    res = subprocess.run([str(exe), *args], capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    out = {}
    for line in res.stdout.splitlines():
        label, _, value = line.partition("=")
        out[label] = value
    return out


APP = "C:\\Users\\Tom\\AppData\\Local\\Programs\\Torch Setup Assistant"


def test_path_entry_added_then_removed_leaving_the_users_path(path_code):
    user = "C:\\Users\\Tom\\bin;%USERPROFILE%\\.cargo\\bin"
    out = _run_code(path_code, "user-path", user, "task", "1", "install", "after-install",
                    "uninstall", "after-uninstall")
    assert out["after-install user"] == user + ";" + APP
    assert out["after-uninstall user"] == user  # exactly as it was, %VARS% unexpanded


def test_path_entry_the_user_already_had_is_not_removed(path_code):
    user = "C:\\tools;" + APP.lower() + "\\"  # the same folder: another case, a trailing backslash
    out = _run_code(path_code, "user-path", user, "task", "1", "install", "i", "uninstall", "u")
    assert out["i user"] == user and out["u user"] == user


def test_no_path_task_no_change_and_uninstall_touches_nothing(path_code):
    out = _run_code(path_code, "user-path", "C:\\a;" + APP, "task", "0", "install", "i", "uninstall", "u")
    assert out["i user"] == out["u user"] == "C:\\a;" + APP  # an entry we did not add stays


def test_path_created_by_the_setup_is_deleted_again(path_code):
    out = _run_code(path_code, "task", "1", "install", "i", "uninstall", "u")
    assert out["i user"] == APP and out["u user"] == "<none>"


def test_admin_install_uses_the_machine_path(path_code):
    machine = "C:\\Windows\\system32;C:\\Windows"
    out = _run_code(path_code, "admin", "1", "app", "C:\\Program Files\\Torch Setup Assistant",
                    "machine-path", machine, "user-path", "C:\\mine", "task", "1", "install", "i", "uninstall", "u")
    assert out["i machine"] == machine + ";C:\\Program Files\\Torch Setup Assistant"
    assert out["i user"] == out["u user"] == "C:\\mine"
    assert out["u machine"] == machine


def test_reinstall_does_not_add_twice_and_uninstall_still_removes(path_code):
    out = _run_code(path_code, "user-path", "C:\\x;", "task", "1", "install", "a", "install", "b", "uninstall", "u")
    assert out["a user"] == out["b user"] == "C:\\x;" + APP  # a trailing ';' is not doubled
    assert out["u user"] == "C:\\x"


# ------------------------------------------------------------------ macOS packaging, with fake tools

FAKE = r"""#!/usr/bin/env bash
printf '%s\n' "$(basename "$0") $*" >> "$FAKE_LOG"
case "$(basename "$0") $1" in
  "xcrun notarytool")
    if [ "$2" = submit ]; then printf '{"id": "sub-1", "status": "%s", "message": "done"}\n' "${FAKE_STATUS:-Accepted}"; fi ;;
  "hdiutil create") for a in "$@"; do last=$a; done; : > "$last" ;;
  "ditto -c") for a in "$@"; do last=$a; done; : > "$last" ;;
esac
exit 0
"""


@pytest.fixture
def mac_tools(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("codesign", "xcrun", "hdiutil", "ditto", "spctl"):
        (bin_dir / tool).write_text(FAKE, encoding="utf-8")
        (bin_dir / tool).chmod(0o755)
    app = tmp_path / "dist" / "Torch Setup.app"
    (app / "Contents" / "MacOS").mkdir(parents=True)
    exe = app / "Contents" / "MacOS" / "torch-setup"
    exe.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "app $*" >> "$FAKE_LOG"\necho "self-test OK"\n', encoding="utf-8")
    exe.chmod(0o755)
    log = tmp_path / "log"
    log.touch()

    def run(extra_env: dict[str, str]):
        env = {k: v for k, v in os.environ.items()
               if k not in ("CODESIGN_IDENTITY", "NOTARY_PROFILE", "NOTARY_KEY", "APPLE_ID")}
        env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", FAKE_LOG=str(log), **extra_env)
        res = subprocess.run(["bash", str(REPO / "installer/macos/package_app.sh"), str(app),
                              str(tmp_path / "dist" / "T.dmg")], capture_output=True, text=True,
                             encoding="utf-8", env=env, timeout=60)
        return res, log.read_text(encoding="utf-8").splitlines()
    return run


@pytest.mark.posix_only("package_app.sh is a macOS bash script; its tools are faked as bash scripts")
def test_mac_unsigned_build_makes_the_image_and_signs_nothing(mac_tools):
    res, calls = mac_tools({})
    assert res.returncode == 0, res.stderr
    assert [c.split()[0] for c in calls] == ["app", "hdiutil"]
    assert "not signing" in res.stdout


@pytest.mark.posix_only("package_app.sh is a macOS bash script; its tools are faked as bash scripts")
def test_mac_signed_and_notarised_in_order(mac_tools):
    secret = "abcd-efgh-ijkl-mnop"
    res, calls = mac_tools({"CODESIGN_IDENTITY": "Developer ID Application: T (TEAM123)",
                            "APPLE_ID": "dev@example.org", "APPLE_TEAM_ID": "TEAM123", "APPLE_APP_PASSWORD": secret})
    assert res.returncode == 0, res.stderr
    steps = [" ".join(c.split()[:2]) for c in calls]
    assert steps == ["codesign --force", "codesign --verify", "app --self-test", "ditto -c",
                     "xcrun notarytool", "xcrun stapler", "hdiutil create", "codesign --force",
                     "xcrun notarytool", "xcrun stapler", "xcrun stapler", "spctl --assess"]
    sign_app = calls[0]
    assert "--options runtime" in sign_app and "--timestamp" in sign_app
    assert f"--entitlements {REPO / 'installer/macos/entitlements.plist'}" in sign_app
    assert calls[4].startswith("xcrun notarytool submit ") and "--wait" in calls[4] and ".zip" in calls[4]
    assert calls[5].endswith("Torch Setup.app") and calls[9] == f"xcrun stapler staple {Path(calls[6].split()[-1])}"
    assert secret not in res.stdout + res.stderr  # given to notarytool, never printed


@pytest.mark.posix_only("package_app.sh is a macOS bash script; its tools are faked as bash scripts")
def test_mac_rejected_notarisation_fails_the_build(mac_tools):
    res, calls = mac_tools({"CODESIGN_IDENTITY": "Developer ID Application: T (TEAM123)",
                            "NOTARY_PROFILE": "ci", "FAKE_STATUS": "Invalid"})
    assert res.returncode != 0
    assert "did not accept" in res.stderr and "sub-1" in res.stderr
    assert any(c.startswith("xcrun notarytool log sub-1") for c in calls)
    assert not any(c.startswith("hdiutil") for c in calls)


@pytest.mark.posix_only("package_app.sh is a macOS bash script; its tools are faked as bash scripts")
def test_mac_notarisation_without_identity_is_refused(mac_tools):
    res, calls = mac_tools({"NOTARY_PROFILE": "ci"})
    assert res.returncode == 2 and "CODESIGN_IDENTITY" in res.stderr and calls == []


# ------------------------------------------------------------------ what an unsigned build means, in the docs

@pytest.mark.parametrize("doc", ["README.md", "docs/packaging.md"])
def test_unsigned_build_is_explained_in_english_and_chinese(doc):
    text = (REPO / doc).read_text(encoding="utf-8")
    for words in ("More info", "Run anyway", "Privacy & Security", "Open Anyway",  # SmartScreen, Gatekeeper
                  "更多信息", "仍要运行", "隐私与安全性", "仍要打开"):  # what a Chinese Windows / macOS shows
        assert words in text, f"{doc} does not say {words!r}"


def test_readme_quick_start_is_still_two_lines():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = quick.split("```", 2)[1].strip("\n").splitlines()
    assert len(block) == 2 and block[0].endswith(".venv/bin/torch-setup")

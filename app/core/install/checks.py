"""``preflight(plan)``: cheap, read-only checks of a plan against this machine.

Each check is a small function of the plan returning a :class:`~app.core.install.request.Check`
(the reachability checks one per index or folder). Messages and hints are texts with stable
codes (``preflight.*``); the presenter renders them in its language. The install may go ahead
when no check is blocking; :func:`raise_for_checks` turns the first blocking one into a
:class:`~app.core.base.errors.BadInput` (nothing was done).
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.base import disk, locks
from app.core.base.actions import Action, ActionKind, Remedy
from app.core.base.errors import BadInput
from app.core.base.locations import local_path
from app.core.base.oserrors import os_error_text
from app.core.base.paths import new_log_path
from app.core.base.requirements import requirement_name
from app.core.base.secrets import mask, open_private
from app.core.base.text import Msg, Text, msg, render
from app.core.install.config import CONDA_FORGE, default_index_for
from app.core.install.planning import TORCH_FAMILY, python_version
from app.core.install.request import Check, InstallPlan
from app.core.install.sizing import fmt_mb
from app.core.install.winchecks import check_cloud_folder, check_path_budget, check_vc_runtime
from app.core.net.indexes import NET_TIMEOUT_S, check_url, display_url, probe_index, proxy_problem
from app.core.sources import closure, scan, torch_origin, variant_of_index
from app.core.sources.routing import Route, verify
from app.core.sources.settings import python_mirror_env

__all__ = ["PYTHON_DOWNLOADS", "REACH_LABELS", "check_backend", "check_closure", "check_disk", "check_indexes",
           "check_lock", "check_proxy", "check_python", "check_python_download", "check_reach", "check_route",
           "check_target", "free_sibling", "index_targets", "preflight", "python_download_url", "python_unfit",
           "raise_for_checks", "route_of", "routed_requirements"]

_MINOR = re.compile(r"^\d+\.\d+$")

#: What each reachability target is called in sentences; the keys name the checks (``reach:<key>``).
REACH_LABELS: dict[str, Msg] = {
    "bundle": msg("preflight.label_bundle", "bundle"),
    "conda channel": msg("preflight.label_conda_channel", "conda channel"),
    "torch index": msg("preflight.label_torch_index", "torch index"),
    "package index": msg("preflight.label_package_index", "package index"),
    "extra index": msg("preflight.label_extra_index", "extra index"),
    "find-links": msg("preflight.label_find_links", "wheel folder"),
}


# --------------------------------------------------------------------------- backend

def check_backend(p: InstallPlan) -> Check:
    why = p.backend.unavailable()
    if why is not None:
        return Check("backend", False, why, hint=msg("preflight.backend_hint", "Choose --kind venv / --installer pip, "
                                                     "which need nothing extra."))
    return Check("backend", True, _backend_words(p), code="preflight.backend_ok")


def _backend_words(p: InstallPlan) -> Msg:
    """Who makes the environment and who installs into it, in words ("uv venv with uv" said it twice)."""
    if p.kind == "conda":
        return msg("preflight.backend_ok_conda", "{tool} makes the conda environment; {installer} installs the "
                   "packages", tool=os.path.basename(p.backend.tool or "conda"), installer=p.installer)
    if p.installer == "uv":
        return msg("preflight.backend_ok_uv", "uv makes the environment and installs the packages")
    return msg("preflight.backend_ok_venv", "Python's venv makes the environment; {installer} installs the packages",
               installer=p.installer)


# --------------------------------------------------------------------------- python

def _python_missing(p: InstallPlan) -> Check:
    want = p.python_request or "3"
    # uv can download a Python VERSION; a path that did not answer like a Python is never handed to it
    # (uv would run it and read its output without a limit)
    if p.installer == "uv" and p.kind == "venv" and p.python_request and _MINOR.match(p.python_request):
        return Check("python", True,
                     msg("preflight.python_download", "No Python {want} was found on this machine; uv will try to "
                         "download a uv-managed Python {want} (this needs internet).", want=want),
                     hint=msg("preflight.python_download_hint", "If that fails, install Python {want} (python.org, "
                              "your package manager or pyenv) or pass --python PATH.", want=want),
                     severity="warning")
    if p.kind == "conda":
        return Check("python", True, msg("preflight.python_conda", "conda will install Python {want} into the env.",
                                         want=want), severity="warning")
    tried = "; ".join(p.python_notes[-3:])
    message = (msg("preflight.python_missing_tried", "No usable Python {want} was found. Tried: {tried}",
                   want=want, tried=tried) if tried
               else msg("preflight.python_missing", "No usable Python {want} was found.", want=want))
    return Check("python", False, message,
                 hint=msg("preflight.python_missing_hint", "Install Python {want} or pass --python with the path of "
                          "an interpreter; with --installer uv a Python can also be downloaded.", want=want))


def check_python(p: InstallPlan) -> Check:
    if p.python is None:
        return _python_missing(p)
    unfit = python_unfit(p)
    if unfit is not None:
        return unfit
    if p.request.existing:
        return Check("python", True, msg("preflight.python_existing", "Python {version} of the existing environment",
                                         version=p.python.version))
    if p.kind == "venv" and p.installer == "pip" and not p.python.can_venv:
        return Check("python", False,
                     msg("preflight.python_no_venv", "{path} (Python {version}) cannot create virtual environments: "
                         "its venv/ensurepip modules are missing.", path=p.python.executable, version=p.python.version),
                     hint=msg("preflight.python_no_venv_hint", "On Debian/Ubuntu: sudo apt install python3-venv "
                              "(or python3.X-venv); or use --installer uv, which does not need them."))
    return Check("python", True, msg("preflight.python_ok", "Python {version} at {path}", version=p.python.version,
                                     path=p.python.executable))


def python_unfit(p: InstallPlan) -> Check | None:
    """A blocking check when the interpreter cannot install the recommended build: outside the
    release's Python range, not the Python chosen for it, or one the sources hold no wheel for
    (None: it fits)."""
    rec = p.recommendation
    why = rec.python_problem(p.python.version) if rec is not None and p.python is not None and p.python.version \
        else None
    if why is None or p.python is None or rec is None:
        return None
    return Check("python", False, msg("preflight.python_unfit", "Python {have} ({path}) cannot install this build: "
                                      "{why}.", have=p.python.minor, path=p.python.executable, why=why),
                 hint=msg("preflight.python_unfit_hint", "Choose a Python {fits} for the environment, or another "
                          "PyTorch version for Python {have}.", fits=", ".join(rec.pythons),
                          have=p.python.minor))


#: where uv downloads a Python from, unless UV_PYTHON_INSTALL_MIRROR (or a Python-builds mirror) says otherwise
PYTHON_DOWNLOADS = "https://github.com/astral-sh/python-build-standalone/releases/download"


def python_download_url(p: InstallPlan) -> str | None:
    """Where uv will download the env's Python from (None: no download, a Python is at hand): the
    Python-builds mirror the user chose, else ``UV_PYTHON_INSTALL_MIRROR``, else uv's own host."""
    if p.python is not None or p.installer != "uv" or p.kind != "venv" or not p.python_request \
            or not _MINOR.match(p.python_request):
        return None
    chosen = python_mirror_env(p.request.sources.mirrors).get("UV_PYTHON_INSTALL_MIRROR")
    return chosen or os.environ.get("UV_PYTHON_INSTALL_MIRROR", "").strip() or PYTHON_DOWNLOADS


def check_python_download(p: InstallPlan, url: str, error: Text | None) -> Check:
    """A Python uv must download is only ready when its download host answers."""
    want = p.python_request or "3"
    if error is None:
        return Check("reach:python download", True, msg("preflight.python_download_ok", "Python {want} can be "
                                                        "downloaded from {url}", want=want, url=display_url(url)))
    return Check("reach:python download", False,
                 msg("preflight.python_download_unreachable", "No Python {want} is on this computer, and uv cannot "
                     "download one: {url} cannot be reached ({why}). Nothing was changed.", want=want,
                     url=display_url(url), why=error),
                 hint=msg("preflight.python_download_unreachable_hint", "Choose a Python that is on this computer, "
                          "or install Python {want} (python.org, your package manager or pyenv) and check again.",
                          want=want))


# --------------------------------------------------------------------------- no index: the whole closure

def check_closure(p: InstallPlan) -> Check | None:
    """An install that uses no index (a bundle, or wheel folders alone) must find everything it needs
    in its folders: each package's best wheel for the target Python, then its ``Requires-Dist`` from
    the wheel's METADATA, recursively, with the markers evaluated for the target Python and this
    platform. Torch from the folders with the rest from an index: says what the index must give.
    None when no folder is involved."""
    folders = tuple(p.index.find_links)
    if not folders or not p.packages:
        return None
    wheels = scan(folders)
    found = closure(list(p.packages), wheels, python_version(p.python, p.python_request))
    shown = ", ".join(folders)
    if found.complete:
        if not p.index.offline:
            return None
        return Check("closure", True, msg("preflight.closure_ok", "{folders} holds all {count} packages the install "
                                          "needs (torch's dependencies included); no index is used", folders=shown,
                                          count=len(found.chosen)))
    names = tuple(dict.fromkeys(requirement_name(x) or x for x in found.missing))
    if not p.index.offline:  # an index gives the rest: the reachability checks say whether it answers
        return Check("closure", True, msg("preflight.closure_from_index", "{folders} lacks {missing}: the install "
                                          "takes them from the index", folders=shown, missing=", ".join(names)))
    return Check("closure", False,
                 msg("preflight.closure_missing", "The install would use no index, but {folders} lacks {count} "
                     "package(s) it needs: {missing}. It would fail. Nothing was changed.", folders=shown,
                     count=len(names), missing=", ".join(names)),
                 hint=msg("preflight.closure_missing_hint", "Put those wheels into the folder (on a computer with "
                          "internet: pip download torch==VERSION -d FOLDER), or install from an offline bundle made "
                          "there with torch-setup bundle."),
                 severity="warning" if p.request.existing else "error")  # an env may have them already


# --------------------------------------------------------------------------- target

def _target_existing_env(p: InstallPlan) -> Check:
    env = str(p.env_path)
    if not os.access(p.env_path, os.W_OK | os.X_OK):
        return Check("target", False, msg("preflight.env_not_writable", "The environment {env} is not writable.",
                                          env=env),
                     hint=msg("preflight.env_not_writable_hint", "Run as a user who owns it, or choose another "
                              "environment."))
    return Check("target", True, msg("preflight.env_existing", "Adding to the existing {kind} at {env} (a snapshot "
                                     "is taken first and restored if anything fails)", kind=p.kind, env=env))


def _target_in_the_way(env: Path) -> Check | None:
    """A blocking check when something already at ``env`` must not be written into, else None."""
    if not (env.exists() or env.is_symlink()):
        return None
    if not env.is_dir():
        return Check("target", False, msg("preflight.target_not_folder", "{env} exists and is not a folder.",
                                          env=str(env)),
                     hint=msg("preflight.target_not_folder_hint", "Choose a new folder name for the environment."))
    try:
        non_empty = any(env.iterdir())
    except OSError as exc:
        return Check("target", False, msg("preflight.target_unreadable", "{env} cannot be read: {error}",
                                          env=str(env), error=os_error_text(exc)),
                     hint=msg("preflight.target_unreadable_hint", "Choose another folder."))
    if not non_empty:
        return None
    offered = (Action(ActionKind.CHOOSE_OTHER_LOCATION, value=str(free_sibling(env)), path=str(env)),)
    return Check("target", False,
                 msg("preflight.target_not_empty", "{env} is a folder with files in it, and not a Python "
                     "environment. Nothing was changed.", env=str(env)),
                 hint=msg("preflight.target_not_empty_hint", "Choose a new or empty folder; the assistant never "
                          "writes into a folder that holds other files."), actions=offered)


def free_sibling(path: Path) -> Path:
    """``path`` when nothing is there, else the first ``<name>-2``, ``<name>-3``, … beside it that is free."""
    n = 1
    candidate = path
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _is_read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _target_parent(env: Path) -> Check:
    """Whether the env can be created under its nearest existing folder."""
    anc = disk.existing_ancestor(env)
    if not anc.is_dir():
        return Check("target", False, msg("preflight.parent_not_folder", "{folder} is not a folder, so {env} cannot "
                                          "be created.", folder=str(anc), env=str(env)),
                     hint=msg("preflight.parent_not_folder_hint", "Choose another location."))
    if not os.access(anc, os.W_OK | os.X_OK):
        message = (msg("preflight.parent_read_only_fs", "{folder} is on a read-only file system, so the environment "
                       "cannot be created there. Nothing was changed.", folder=str(anc)) if _is_read_only_fs(anc)
                   else msg("preflight.parent_not_writable", "{folder} is not writable, so the environment cannot be "
                            "created there. Nothing was changed.", folder=str(anc)))
        return Check("target", False, message,
                     hint=msg("preflight.parent_not_writable_hint", "Choose a folder you can write to (for example "
                              "in your home folder)."))
    return Check("target", True, msg("preflight.target_ok", "{env} will be created", env=str(env)))


def check_target(p: InstallPlan) -> Check:
    """The env's folder: ours to create (new, or empty), or an existing env we may write to."""
    if p.request.existing:
        return _target_existing_env(p)
    return _target_in_the_way(p.env_path) or _target_parent(p.env_path)


# --------------------------------------------------------------------------- disk

def check_disk(p: InstallPlan) -> Check:
    free = disk.free_mb(p.env_path)
    where = str(disk.existing_ancestor(p.env_path))
    if free is None:
        return Check("disk", True, msg("preflight.disk_unknown", "Free space at {where} is unknown", where=where),
                     severity="warning")
    need = p.estimate_mb
    if free < need:
        return Check("disk", False,
                     msg("preflight.disk_short", "Not enough disk space: {free} free at {where}; the installed "
                         "packages need about {need} ({why}). Nothing was changed.", free=fmt_mb(free), where=where,
                         need=fmt_mb(need), why=p.estimate_why),
                     hint=msg("preflight.disk_short_hint", "Free at least {more} there, or choose a location on a "
                              "disk with more room.", more=fmt_mb(need - free)))
    return Check("disk", True, msg("preflight.disk_ok", "{free} free at {where}; the installed packages need about "
                                   "{need} ({why})", free=fmt_mb(free), where=where, need=fmt_mb(need),
                                   why=p.estimate_why))


# --------------------------------------------------------------------------- reachability

def index_targets(p: InstallPlan) -> list[tuple[str, str]]:
    """``(label key, url)`` of every index, channel and folder the install will read from."""
    if p.index.offline:  # a bundle, or the wheel folders a recommendation was made from
        if p.request.sources.bundle is not None:
            return [("bundle", str(p.request.sources.bundle))]
        return [("find-links", str(f)) for f in p.index.find_links]
    out = []
    if p.new_env and p.kind == "conda":  # conda create fetches Python from conda-forge
        out.append(("conda channel", CONDA_FORGE))
    if p.index.torch_index:
        out.append(("torch index", p.index.torch_index))
    out.append(("package index", p.index.default_index or default_index_for(p.installer)))
    out += [("extra index", u) for u in p.index.extra_index_urls]
    out += [("find-links", str(f)) for f in p.index.find_links]
    return out


def _reach_hint(key: str) -> Msg:
    if key == "torch index":
        return msg("preflight.reach_torch_hint", "Check the network or proxy (HTTPS_PROXY), use a mirror of the "
                   "PyTorch index with --index-url, or install from an offline bundle (torch-setup bundle on a "
                   "connected machine, then --from-bundle).")
    if key in ("find-links", "bundle"):
        return msg("preflight.reach_folder_hint", "Check the folder path.")
    return msg("preflight.reach_index_hint", "Check the network or proxy (HTTPS_PROXY / HTTP_PROXY), the index URL, "
               "or use a reachable mirror; an offline bundle needs no network at all.")


def check_reach(key: str, url: str, error: Text | None, warning: Text | None = None) -> Check:
    """The check for one target from what :func:`~app.core.net.indexes.check_url` / ``probe_index`` said."""
    label = REACH_LABELS.get(key, key)
    name, shown = f"reach:{key}", display_url(url)
    if error is None and warning is not None:
        return Check(name, False, msg("preflight.reach_warning", "The {label} {warning}.", label=label,
                                      warning=warning),
                     hint=msg("preflight.reach_warning_hint", "Check the index URL; if it is right, this can be "
                              "ignored."), severity="warning")
    if error is None and local_path(url) is not None:  # a folder on this computer is there, not "reachable"
        return Check(name, True, msg("preflight.folder_ok", "The {label} {path} is there", label=label, path=shown))
    if error is None:
        return Check(name, True, msg("preflight.reach_ok", "{label} {url} is reachable", label=label, url=shown))
    return Check(name, False, msg("preflight.reach_failed", "The {label} {url} cannot be reached: {why}. Nothing "
                                  "was changed.", label=label, url=shown, why=error),
                 hint=_reach_hint(key))


def check_proxy(p: InstallPlan) -> Check | None:
    """The proxy setting, when one was given: a usable http(s) URL (None: no proxy given)."""
    proxy = p.request.sources.proxy
    if not proxy:
        return None
    why = proxy_problem(proxy)
    if why is None:
        return Check("proxy", True, msg("preflight.proxy_ok", "proxy {proxy}", proxy=display_url(proxy)))
    return Check("proxy", False, msg("preflight.proxy_invalid", "The proxy setting cannot be used: {why}. Nothing "
                                     "was changed.", why=why),
                 hint=msg("preflight.proxy_invalid_hint", "Give the proxy as http://HOST:PORT (the port a number "
                          "from 1 to 65535), or leave it out."))


def _reach_answer(p: InstallPlan, url: str, named: bool) -> tuple[Text | None, Text | None]:
    if named and not p.index.offline:
        return probe_index(url, proxy=p.request.sources.proxy, ca_bundle=p.request.sources.ca_bundle)
    return check_url(url, proxy=p.request.sources.proxy), None


def routed_requirements(p: InstallPlan) -> tuple[str, ...]:
    """The torch pins the verified routing must find a source for (torch first); empty when the
    installer needs no torch index: offline, packages named by the user, an index that is not
    the PyTorch server's (PyPI's macOS builds, AMD's index) unless the user named it, or every
    torch wheel in the folders."""
    rec = p.request.recommendation
    if p.index.offline or p.request.packages is not None or rec is None or not p.index.torch_index:
        return ()
    if not p.index.torch_index.startswith(("http://", "https://")):
        return ()
    if not p.request.sources.torch_index and variant_of_index(rec.index_url) is None:
        return ()
    pins = [x for x in p.packages if requirement_name(x) in TORCH_FAMILY]
    wheels = scan(p.request.sources.folders)
    if wheels:
        pyver = python_version(p.python, p.python_request)
        pins = [x for x in pins if x in closure([x], wheels, pyver).missing]
    pins.sort(key=lambda x: requirement_name(x) != "torch")
    return tuple(pins)


def _route_hint(route: Route) -> Text:
    fix = next((v.failure.fix for v in route.verdicts if v.failure is not None and v.failure.fix), "")
    return fix or _reach_hint("torch index")


_NETWORK = ("dns", "refused", "timeout", "reset", "proxy_refused")


def check_route(p: InstallPlan, wanted: tuple[str, ...]) -> list[Check]:
    """The verified routing of the pinned torch wheels: the chosen source (its check carries the
    route to the install), and one warning per source skipped, with its reason."""
    rec = p.request.recommendation
    assert rec is not None  # routed_requirements() gave pins
    route = verify(p.request.sources, rec.index_url, wanted, python_version(p.python, p.python_request))
    chosen = route.chosen
    out: list[Check] = []
    if chosen is not None:
        how = (msg("sources.verified_hash", "the exact file is there and its SHA-256 is the PyTorch server's")
               if chosen.hash_checked else
               msg("sources.verified_nohash", "the exact file is there (its SHA-256 could not be compared with "
                   "the PyTorch server's)"))
        out.append(Check("reach:torch index", True, msg(
            "sources.route_chosen", "{files} will come from {source}: {how}; {speed} MB/s, the fastest of {count} "
            "verified source(s)", files=tuple(f.filename for f in chosen.files),
            source=chosen.source.label(variant_of_index(rec.index_url)),
            how=how, speed=round((chosen.speed_bps or 0) / 1e6, 1), count=len(route.verified)), route=route))
    else:
        first = route.verdicts[0]
        if first.failure is not None and first.failure.kind in _NETWORK:  # the index itself is out of reach
            variant = variant_of_index(rec.index_url)
            base = check_reach("torch index", first.source.url_for(variant), first.failure.text)
            out.append(Check(base.name, False, base.message, _route_hint(route), code=base.code, route=route))
        else:
            out.append(Check("reach:torch index", False, msg(
                "sources.route_none", "No source has {want} for this computer: {why}. Nothing was changed.",
                want=tuple(wanted), why=msg("sources.route_skipped_why", "skipped {source}: {reason}",
                                            source=first.source.label(variant_of_index(rec.index_url)),
                                            reason=first.reason)),
                hint=_route_hint(route), route=route))
    for v in route.skipped:
        if chosen is None and v is route.verdicts[0]:
            continue  # said by the blocking check above
        out.append(Check(f"source:{v.source.id}", False, msg("sources.route_skipped", "Skipped {source}: {reason}.",
                                                              source=v.source.label(variant_of_index(rec.index_url)),
                                                              reason=v.reason),
                         hint=v.failure.fix if v.failure is not None else "", severity="warning"))
    return out


def route_of(checks: Sequence[Check]) -> Route | None:
    """The verified route the pre-flight found (None: the installer fetches everything itself)."""
    return next((c.route for c in checks if c.route is not None and c.ok), None)


def _unused_torch_index(p: InstallPlan) -> list[Check]:
    """A warning, not a refusal, when the torch index cannot be reached and nothing is needed from it."""
    rec = p.request.recommendation
    if rec is None or p.request.packages is not None or p.index.torch_index or p.request.sources.bundle is not None:
        return []
    url = p.request.sources.torch_index or torch_origin(rec.index_url)
    if not url.startswith(("http://", "https://")):
        return []
    why = check_url(url, proxy=p.request.sources.proxy)
    if why is None:
        return []
    return [Check("reach:torch index", False, msg(
        "preflight.reach_not_needed", "The torch index {url} cannot be reached: {why}. Nothing is needed from it: "
        "the torch wheels are in your folder.", url=display_url(url), why=why), severity="warning")]


def check_indexes(p: InstallPlan) -> list[Check]:
    """One check per target, probed in parallel (each costs up to the network timeout); the
    torch index's check is the verified routing when the torch wheels come from the network. A
    probe that raises or does not answer in time is a failed check, never a passed one."""
    wanted = routed_requirements(p)
    targets = [t for t in index_targets(p) if not (wanted and t[0] == "torch index")]
    download = python_download_url(p)
    if download is not None:  # a Python uv must fetch: its host must answer too
        targets.append(("python download", download))
    wait_s = NET_TIMEOUT_S + 2
    no_answer = msg("preflight.reach_no_answer", "no answer within {seconds:g} s", seconds=wait_s)
    answers: list[tuple[Text | None, Text | None]] = [(no_answer, None)] * len(targets)
    named = {p.index.torch_index, p.index.default_index, *p.index.extra_index_urls} - {None}
    routed: list[Check] = []
    unused: list[Check] = []

    def work(i: int, url: str) -> None:
        try:
            answers[i] = _reach_answer(p, url, url in named)
        except Exception as exc:  # a probe's bug is a failed check, not a thread traceback
            answers[i] = (msg("preflight.reach_crashed", "the check could not run ({error})",
                              error=type(exc).__name__), None)

    threads = [threading.Thread(target=work, args=(i, u), daemon=True) for i, (_, u) in enumerate(targets)]
    slow = [threading.Thread(target=lambda: unused.extend(_unused_torch_index(p)), daemon=True)]
    if wanted:
        slow.append(threading.Thread(target=lambda: routed.extend(check_route(p, wanted)), daemon=True))
    for t in threads + slow:
        t.start()
    deadline = time.monotonic() + wait_s
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    for t in slow:
        t.join(120)
    found = [check_python_download(p, url, err) if key == "python download" else check_reach(key, url, err, warn)
             for (key, url), (err, warn) in zip(targets, answers, strict=True)]
    at = next((i for i, (key, _) in enumerate(targets) if key != "conda channel"), len(found))
    return found[:at] + routed + found[at:] + unused


def check_lock(p: InstallPlan) -> Check:
    """Nobody else is changing this environment now (the lock of :mod:`app.core.base.locks`)."""
    holder = locks.holder_of(p.env_path)
    if holder is None or holder.pid == os.getpid():
        return Check("lock", True, msg("preflight.lock_free", "no other run is changing {env}", env=str(p.env_path)))
    return Check("lock", False, msg("preflight.lock_held", "{env} is being changed by {holder}; two runs must not "
                                    "change one environment at once. Nothing was changed.", env=str(p.env_path),
                                    holder=holder.describe()),
                 hint=msg("preflight.lock_held_hint", "Wait for that run to finish (or cancel it), then try again."))


# --------------------------------------------------------------------------- all of them

def _crashed(name: str, exc: Exception) -> Check:
    return Check(name, False, msg("preflight.check_crashed", "The {name} check could not run: {error}. Nothing was "
                                  "changed.", name=name, error=f"{type(exc).__name__}: {exc}"[:300]),
                 hint=msg("preflight.check_crashed_hint", "Check the value given for {name}; if it is right, this "
                          "is a bug: please report it with the log.", name=name))


def _guarded(name: str, check: Callable[[InstallPlan], Check | None], p: InstallPlan) -> Check | None:
    """``check(p)``; an exception in it is a failed check naming what was checked, never a pass."""
    try:
        return check(p)
    except Exception as exc:
        return _crashed(name, exc)


_LOCAL_CHECKS: tuple[tuple[str, Callable[[InstallPlan], Check | None]], ...] = (
    ("backend", check_backend), ("python", check_python), ("target", check_target),
    # Windows only (None elsewhere): the env folder's path budget and cloud folder, the VC++ runtime
    ("path", check_path_budget), ("cloud", check_cloud_folder), ("vcruntime", check_vc_runtime),
    ("disk", check_disk), ("proxy", check_proxy), ("lock", check_lock),
    ("closure", check_closure))


def preflight(p: InstallPlan) -> list[Check]:
    """Every check, cheap and read-only; the install may go ahead if none is blocking."""
    net: list[Check] = []

    def network() -> None:
        try:
            net.extend(check_indexes(p))
        except Exception as exc:
            net.append(_crashed("reach", exc))

    t = threading.Thread(target=network, daemon=True)
    t.start()  # network checks overlap the local ones
    checks = [c for name, fn in _LOCAL_CHECKS if (c := _guarded(name, fn, p)) is not None]
    t.join()
    return checks + net


def _log_refusal(plan: InstallPlan, checks: Sequence[Check]) -> Path | None:
    try:
        log_path = new_log_path("install")
        with open_private(log_path) as fh:
            fh.write(mask(f"# plan: {plan.to_dict()!r}\n"))
            for c in checks:
                fh.write(mask(f"# check {c.name}: {'ok' if c.ok else 'FAILED'}: {render(c.message)}\n"))
            fh.write("# refused by the pre-flight; nothing was changed\n")
    except OSError:
        return None
    return log_path


def raise_for_checks(checks: Sequence[Check], log_path: Path | None = None,
                     plan: InstallPlan | None = None) -> None:
    """Raise BadInput (exit 2, nothing was done) for the first blocking check; with ``plan``
    and no ``log_path``, the plan and every check are written to a new log first."""
    # another run holding the env explains the other refusals (its half-made folder): it comes first
    bad = sorted((c for c in checks if c.blocking), key=lambda c: c.name != "lock")
    if not bad:
        return
    if log_path is None and plan is not None:
        log_path = _log_refusal(plan, checks)
    first = bad[0]
    # the first check's words stay a message (each face renders them in its language); a check
    # with actions carries them as a remedy (the wizard's buttons, the command line's commands)
    remedies = (Remedy(first.code, first.hint, first.actions, source="preflight"),) if first.actions else ()
    raise BadInput(first.message, hint="" if remedies else first.hint,
                   lines=[render(c.message) for c in bad[1:]], log_path=log_path, remedies=remedies)

"""What can be done about a failure (:class:`Action`) and one diagnosed cause with its actions
(:class:`Remedy`): the values :class:`~app.core.base.errors.UserError` carries and the remedy
catalogue (:mod:`app.core.remedies`) produces.

An action is data, not a sentence: its kind and the values it needs (a torch version, a Python,
a number of GB and the folder, an environment variable, an official URL). Each face renders it
its own way: the wizard as a button speaking of its controls (:meth:`Action.label`,
:meth:`Action.tooltip`), the command line as the option that applies it (:meth:`Action.cli_option`,
see :mod:`app.core.remedies.commands`), an answer-file run as the key to set
(:meth:`Action.answer_key`) in its report.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from app.core.base.text import Msg, Text, msg, render, texts

__all__ = ["Action", "ActionKind", "Remedy", "Step"]

#: Where in the wizard an action is applied: the Recommendation page, the Environment page, the
#: page that failed ("here": try again there), or outside the assistant (a web page, the log).
Step = Literal["recommendation", "environment", "here", "outside"]


class ActionKind(str, Enum):
    SET_TORCH_VERSION = "set_torch_version"  # value: "2.14.1" ("" = let the assistant choose); variant optional
    SET_VARIANT = "set_variant"  # variant: "cu126" ("" = the build for this machine's accelerator)
    CHOOSE_PYTHON = "choose_python"  # value: "3.12" ("" = let the user pick)
    SWITCH_SOURCE = "switch_source"  # value: an index URL to use ("" = let the user pick)
    USE_INSTALLER = "use_installer"  # value: "uv" | "pip"
    FREE_SPACE = "free_space"  # gb, path
    CHOOSE_OTHER_LOCATION = "choose_other_location"  # path: the folder that failed; value: a folder offered ("")
    SET_PROXY = "set_proxy"
    SET_CA_BUNDLE = "set_ca_bundle"  # value: "system" or a file ("" = let the user pick)
    ENABLE_LONG_PATHS = "enable_long_paths"  # url
    INSTALL_VCREDIST = "install_vcredist"  # url
    RUN_VCREDIST = "run_vcredist"  # value: the vc_redist.x64.exe to run ("" = the user picks it), url: where to get it
    UPDATE_DRIVER = "update_driver"  # value: the minimum driver ("" = unknown), url
    UNSET_ENV = "unset_env"  # value: the variable, path: its value now
    RETRY = "retry"
    OPEN_LOG = "open_log"  # path


_STEP: dict[ActionKind, Step] = {
    ActionKind.SET_TORCH_VERSION: "recommendation", ActionKind.SET_VARIANT: "recommendation",
    ActionKind.CHOOSE_PYTHON: "environment", ActionKind.SWITCH_SOURCE: "environment",
    ActionKind.USE_INSTALLER: "environment", ActionKind.FREE_SPACE: "environment",
    ActionKind.CHOOSE_OTHER_LOCATION: "environment", ActionKind.SET_PROXY: "environment",
    ActionKind.SET_CA_BUNDLE: "environment", ActionKind.ENABLE_LONG_PATHS: "outside",
    ActionKind.INSTALL_VCREDIST: "outside", ActionKind.RUN_VCREDIST: "environment", ActionKind.UPDATE_DRIVER: "outside",
    ActionKind.UNSET_ENV: "here", ActionKind.RETRY: "here", ActionKind.OPEN_LOG: "outside",
}

#: The command-line option each kind sets (None: no option applies it).
_OPTION: dict[ActionKind, str] = {
    ActionKind.SET_TORCH_VERSION: "--torch", ActionKind.SET_VARIANT: "--variant",
    ActionKind.CHOOSE_PYTHON: "--python", ActionKind.SWITCH_SOURCE: "--index-url",
    ActionKind.USE_INSTALLER: "--installer", ActionKind.CHOOSE_OTHER_LOCATION: "--env",
    ActionKind.SET_PROXY: "--proxy", ActionKind.SET_CA_BUNDLE: "--ca-bundle", ActionKind.RUN_VCREDIST: "--vcredist",
}

#: The answer-file key each kind sets (resources/answers.example.toml).
_ANSWER_KEY: dict[ActionKind, tuple[str, str]] = {
    ActionKind.SET_TORCH_VERSION: ("torch", "version"), ActionKind.SET_VARIANT: ("torch", "variant"),
    ActionKind.CHOOSE_PYTHON: ("environment", "python"), ActionKind.SWITCH_SOURCE: ("sources", "torch_index"),
    ActionKind.USE_INSTALLER: ("environment", "installer"), ActionKind.CHOOSE_OTHER_LOCATION: ("environment", "path"),
    ActionKind.SET_PROXY: ("sources", "proxy"), ActionKind.SET_CA_BUNDLE: ("sources", "ca_bundle"),
}


#: the buttons whose words do not depend on the action's value
_FIXED_LABELS: dict[ActionKind, Msg] = {
    ActionKind.SWITCH_SOURCE: msg("remedy.act_source", "Choose another package source…"),
    ActionKind.RUN_VCREDIST: msg("remedy.act_run_vcredist", "Install the Visual C++ runtime…"),
    ActionKind.SET_PROXY: msg("remedy.act_proxy", "Set the proxy…"),
    ActionKind.ENABLE_LONG_PATHS: msg("remedy.act_long_paths", "How to allow long paths (Microsoft)"),
    ActionKind.INSTALL_VCREDIST: msg("remedy.act_vcredist", "Download the Visual C++ runtime (Microsoft)"),
    ActionKind.RETRY: msg("remedy.act_retry", "Try again"),
}
# the labels of the kinds that name the action's value (a version) when it has one, and their
# value-free labels: kind -> (the label with it, the label without)
_VERSION_LABELS = texts("remedy.act_", {
    "python": "Use Python {version}",
    "choose_python": "Choose another Python…",
    "driver_min": "Get NVIDIA driver {version} or newer",
    "driver": "Get a newer NVIDIA driver",
})
_BY_VERSION: dict[ActionKind, tuple[str, str]] = {
    ActionKind.CHOOSE_PYTHON: ("python", "choose_python"),
    ActionKind.UPDATE_DRIVER: ("driver_min", "driver"),
}


@dataclass(frozen=True)
class Action:
    """One thing the user can do about a failure; ``kind`` says which, the other fields its values."""

    kind: ActionKind
    value: str = ""
    variant: str = ""
    path: str = ""
    gb: float | None = None
    url: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ActionKind):
            object.__setattr__(self, "kind", ActionKind(self.kind))

    @property
    def step(self) -> Step:
        """Where the wizard applies it (see :data:`Step`)."""
        return _STEP[self.kind]

    def label(self) -> Msg:
        """The wizard's button: what pressing it does, in the words of the wizard's controls."""
        k, v = self.kind, self.value
        fixed = _FIXED_LABELS.get(k)
        if fixed is not None:
            return fixed
        if k is ActionKind.SET_TORCH_VERSION:
            if not v:
                return msg("remedy.act_any_torch", "Let the assistant choose the torch version")
            if self.variant:
                return msg("remedy.act_torch_variant", "Use torch {version} ({variant})", version=v,
                           variant=self.variant)
            return msg("remedy.act_torch", "Use torch {version}", version=v)
        if k is ActionKind.SET_VARIANT:
            if not self.variant:
                return msg("remedy.act_gpu_build", "Install the build for this computer's GPU")
            return msg("remedy.act_variant", "Use the {variant} build", variant=self.variant)
        if k in _BY_VERSION:
            with_it, without = _BY_VERSION[k]
            return _VERSION_LABELS.msg(with_it, version=v) if v else _VERSION_LABELS.msg(without)
        if k is ActionKind.USE_INSTALLER:
            return msg("remedy.act_installer", "Create the environment with {installer}", installer=v)
        if k is ActionKind.CHOOSE_OTHER_LOCATION:
            if self.value:
                return msg("remedy.act_location_offered", "Use {folder}", folder=self.value)
            return msg("remedy.act_location", "Choose another folder…")
        if k is ActionKind.FREE_SPACE:
            if self.gb is not None:
                return msg("remedy.act_free_gb", "Free {gb:.1f} GiB, then check again", gb=self.gb)
            return msg("remedy.act_free", "Free some space, then check again")
        if k is ActionKind.SET_CA_BUNDLE:
            if v == "system":
                return msg("remedy.act_ca_system", "Trust this computer's certificates")
            return msg("remedy.act_ca", "Choose a certificates file…")
        if k is ActionKind.UNSET_ENV:
            return msg("remedy.act_unset", "Ignore {name} and try again", name=v)
        return msg("remedy.act_open_log", "Open the log")

    # long: one sentence per kind, each a literal the catalogue test can read
    def tooltip(self) -> Msg:
        """What the button will do, one sentence longer than its label (the wizard's tooltip)."""
        k = self.kind
        if k in (ActionKind.SET_TORCH_VERSION, ActionKind.SET_VARIANT):
            return msg("remedy.tip_recommendation", "Goes back to the Recommendation page with this choice "
                       "applied; the assistant then checks it again.")
        if k is ActionKind.FREE_SPACE:
            where = self.path or "?"
            return msg("remedy.tip_free", "Delete files you do not need on the disk of {path}, then press this: "
                       "the Environment page measures the free space again.", path=where)
        if k is ActionKind.SET_PROXY:
            return msg("remedy.tip_proxy", "Goes back to the Environment page: enter the proxy under Proxy, "
                       "with the user name and password if it asks for them.")
        if k is ActionKind.SET_CA_BUNDLE:
            return msg("remedy.tip_ca", "Goes back to the Environment page: the certificates file is set under "
                       "CA certificates.")
        if k is ActionKind.SWITCH_SOURCE:
            return msg("remedy.tip_source", "Goes back to the Environment page: set another index or mirror, "
                       "or an offline bundle, under Sources.")
        if k in (ActionKind.CHOOSE_PYTHON, ActionKind.USE_INSTALLER, ActionKind.CHOOSE_OTHER_LOCATION):
            return msg("remedy.tip_environment", "Goes back to the Environment page with this choice applied.")
        if k in (ActionKind.ENABLE_LONG_PATHS, ActionKind.INSTALL_VCREDIST, ActionKind.UPDATE_DRIVER):
            return msg("remedy.tip_web", "Opens the official page {url} in the browser; come back and press "
                       "Try again afterwards.", url=self.url)
        if k is ActionKind.RUN_VCREDIST:
            return msg("remedy.tip_run_vcredist", "Asks for Microsoft's vc_redist.x64.exe (downloaded from {url}), "
                       "then, once you confirm, runs it with /install /quiet /norestart and checks again.",
                       url=self.url)
        if k is ActionKind.UNSET_ENV:
            return msg("remedy.tip_unset", "{name} is set to \"{value}\" for this program; this clears it for "
                       "the assistant and the programs it starts, then tries again.", name=self.value,
                       value=self.path)
        if k is ActionKind.RETRY:
            return msg("remedy.tip_retry", "Runs the failed step again.")
        return msg("remedy.tip_open_log", "Opens the full log in the default viewer.")

    def cli_option(self) -> tuple[str, str | None] | None:
        """``(option, value)`` that applies this action on the command line (value None: drop the
        option); None when no option does (the CLI then prints :func:`instruction`)."""
        option = _OPTION.get(self.kind)
        if option is None:
            return None
        k = self.kind
        if k is ActionKind.SET_TORCH_VERSION:
            return option, self.value or None
        if k is ActionKind.SET_VARIANT:
            return option, self.variant or None
        if k is ActionKind.SET_CA_BUNDLE:
            return (option, self.value) if self.value else None
        if k in (ActionKind.CHOOSE_PYTHON, ActionKind.USE_INSTALLER, ActionKind.CHOOSE_OTHER_LOCATION,
                 ActionKind.RUN_VCREDIST):
            return (option, self.value) if self.value else None
        return None  # a value only the user knows (another folder, a proxy, an index)

    def answer_key(self) -> tuple[str, str, str | None] | None:
        """``(section, key, value)`` of the answer file that applies it (value None: remove the key,
        ``""``: the user's value goes there); None when no key does."""
        key = _ANSWER_KEY.get(self.kind)
        if key is None:
            return None
        opt = self.cli_option()
        if opt is not None:
            return key[0], key[1], opt[1]
        if self.kind in (ActionKind.SET_TORCH_VERSION, ActionKind.SET_VARIANT):
            return key[0], key[1], None
        return key[0], key[1], ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind.value}
        for name in ("value", "variant", "path", "url"):
            if getattr(self, name):
                d[name] = getattr(self, name)
        if self.gb is not None:
            d["gb"] = self.gb
        d["label"] = render(self.label())
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Action:
        gb = d.get("gb")
        return cls(ActionKind(str(d["kind"])), value=str(d.get("value") or ""), variant=str(d.get("variant") or ""),
                   path=str(d.get("path") or ""), gb=float(gb) if gb is not None else None,
                   url=str(d.get("url") or ""))


@dataclass(frozen=True)
class Remedy:
    """One diagnosed cause: a plain ``explanation``, the ``details`` the tool gave for it (its
    own reasoning, e.g. uv's "Because …" lines, each as a sentence), the ``actions`` that fix it,
    the ``evidence`` (the output lines that showed it) and the catalogue entry's ``source``."""

    code: str
    explanation: Text
    actions: tuple[Action, ...] = ()
    details: tuple[Text, ...] = ()
    evidence: tuple[str, ...] = ()
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """English texts (the JSON contract) with the codes; the actions as values."""
        return {"code": self.code, "explanation": render(self.explanation),
                "explanation_code": self.explanation.code if isinstance(self.explanation, Msg) else None,
                "details": [render(d) for d in self.details], "actions": [a.to_dict() for a in self.actions],
                "evidence": list(self.evidence), "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Remedy:
        """A remedy read back from a report (its texts as the English they were written in)."""
        return cls(str(d.get("code", "")), str(d.get("explanation", "")),
                   tuple(Action.from_dict(a) for a in d.get("actions") or () if isinstance(a, Mapping)),
                   tuple(str(x) for x in d.get("details") or ()), tuple(str(x) for x in d.get("evidence") or ()),
                   str(d.get("source", "")))

"""Only what pyproject.toml cannot say: resources/ (beside app/) travels in the wheel as data
files under <prefix>/share/torch-setup-assistant/resources, every file and subfolder, found
at build time. ``app.core.paths.resources_dir()`` looks there when installed from a wheel."""
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def resource_files() -> list[tuple[str, list[str]]]:
    groups: dict[str, list[str]] = {}
    for path in sorted((ROOT / "resources").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith("."):
            dest = "share/torch-setup-assistant/" + path.parent.relative_to(ROOT).as_posix()
            groups.setdefault(dest, []).append(path.relative_to(ROOT).as_posix())
    return sorted(groups.items())


setup(data_files=resource_files())

"""The Python SDK's build backend (PEP 517 and PEP 660), in the standard library alone.

The package is pure Python, so a wheel is a zip of ``src/cellar_sdk`` plus its metadata. Keeping
the backend in the tree means ``pip install ./sdks/python`` needs nothing from a package index
(``requires = []`` in pyproject.toml): it works offline in a fresh ``python3 -m venv`` with
whatever pip and setuptools that venv has, and with ``--no-build-isolation`` too.

Metadata comes from pyproject.toml's ``[project]`` table (read with ``tomllib`` where Python has it,
3.11+, else with the small reader below for the plain keys this file uses) and the version from
``src/cellar_sdk/_version.py``, its single source.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "cellar_sdk"
TAG = "py3-none-any"
# Files of the sdist besides the package: what a build from the sdist needs, and the docs.
SDIST_EXTRA = ["pyproject.toml", "README.md", "CHANGELOG.md", "backend/cellar_build.py"]
# Zip entries get a fixed date so a wheel's bytes depend on its contents alone.
FIXED_DATE = (2026, 1, 1, 0, 0, 0)


def _read_pyproject() -> Dict[str, Any]:
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        import tomllib  # Python 3.11+

        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    except ImportError:
        return _read_project_table(open(path, encoding="utf-8").read())


def _read_project_table(text: str) -> Dict[str, Any]:
    """``[project]``'s ``key = "string"`` and ``key = ["string", ...]`` lines (older Pythons)."""
    table: Dict[str, Any] = {}
    section = None
    lines = iter(text.splitlines())
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip()
            continue
        if section != "project" or "=" not in stripped or stripped.startswith("#"):
            continue
        key, value = (part.strip() for part in stripped.split("=", 1))
        if value.startswith("[") and not value.endswith("]"):
            for more in lines:
                value += " " + more.strip()
                if more.strip().endswith("]"):
                    break
        if value.startswith("["):
            table[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith('"'):
            table[key] = value[1 : value.rindex('"')]
    return table


def _version() -> str:
    text = open(os.path.join(ROOT, "src", PACKAGE, "_version.py"), encoding="utf-8").read()
    match = re.search(r'__version__\s*=\s*"([^"]+)"', text)
    if not match:
        raise RuntimeError("src/cellar_sdk/_version.py has no __version__")
    return match.group(1)


def _name_version() -> Tuple[str, str]:
    project = _read_pyproject()
    return project["name"], _version()


def _metadata() -> str:
    project = _read_pyproject()
    name, version = _name_version()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
    ]
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    license_text = project.get("license")
    if isinstance(license_text, dict):
        license_text = license_text.get("text")
    if license_text:
        lines.append(f"License: {license_text}")
    for classifier in project.get("classifiers", []):
        lines.append(f"Classifier: {classifier}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    urls = project.get("urls") or {}
    for label, url in urls.items():
        lines.append(f"Project-URL: {label}, {url}")
    lines.append("Description-Content-Type: text/markdown")
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    return "\n".join(lines) + "\n\n" + readme


def _dist_info(name: str, version: str) -> str:
    return f"{_normalize(name)}-{version}.dist-info"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: cellar_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _package_files() -> List[Tuple[str, str]]:
    """(path in the wheel, path on disk) of every file of the package, sorted."""
    src = os.path.join(ROOT, "src")
    found = []
    for folder, dirs, files in os.walk(os.path.join(src, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for file in sorted(files):
            if file.endswith((".pyc", ".pyo")):
                continue
            disk = os.path.join(folder, file)
            found.append((os.path.relpath(disk, src).replace(os.sep, "/"), disk))
    return found


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, entries: List[Tuple[str, bytes]]) -> str:
    name, version = _name_version()
    info = _dist_info(name, version)
    entries = entries + [
        (f"{info}/METADATA", _metadata().encode("utf-8")),
        (f"{info}/WHEEL", _wheel_file().encode("utf-8")),
        (f"{info}/top_level.txt", f"{PACKAGE}\n".encode()),
    ]
    record = [_record_line(path, data) for path, data in entries] + [f"{info}/RECORD,,"]
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    filename = f"{_normalize(name)}-{version}-{TAG}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in entries:
            entry = zipfile.ZipInfo(path, FIXED_DATE)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return filename


# PEP 517 hooks.


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _name_version()
    info = _dist_info(name, version)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(metadata_directory, info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    entries = []
    for path, disk in _package_files():
        with open(disk, "rb") as f:
            entries.append((path, f.read()))
    return _write_wheel(wheel_directory, entries)


def build_editable(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    """PEP 660: a wheel whose .pth puts this checkout's ``src`` on ``sys.path``."""
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (os.path.join(ROOT, "src") + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _name_version()
    base = f"{_normalize(name)}-{version}"
    files = [(rel, os.path.join(ROOT, rel)) for rel in SDIST_EXTRA]
    files += [(f"src/{path}", disk) for path, disk in _package_files()]
    os.makedirs(sdist_directory, exist_ok=True)
    filename = f"{base}.tar.gz"
    mtime = time.mktime(FIXED_DATE + (0, 0, -1))
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:

        def add(path: str, data: bytes) -> None:
            entry = tarfile.TarInfo(f"{base}/{path}")
            entry.size, entry.mtime, entry.mode = len(data), mtime, 0o644
            tar.addfile(entry, io.BytesIO(data))

        for rel, disk in files:
            with open(disk, "rb") as f:
                add(rel, f.read())
        # PKG-INFO: the metadata, as sdists carry it.
        add("PKG-INFO", _metadata().encode("utf-8"))
    return filename


if __name__ == "__main__":
    # `python3 sdks/python/backend/cellar_build.py OUT_DIR`: the wheel and the sdist into OUT_DIR
    # (what `npm run release` runs; no pip, no index).
    import sys

    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "dist"))
    for built in (build_wheel(out), build_sdist(out)):
        print(os.path.join(out, built))

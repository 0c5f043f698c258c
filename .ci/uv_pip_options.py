"""Print pip's index settings as `uv pip install` options, one shell word per line.

uv reads neither pip.conf nor PIP_* variables. Without this, `make` would install from other
indexes than `pip install` does on the same machine: for example the CUDA torch from PyPI instead
of the CPU wheel a machine keeps in its find-links folder. With only PIP_FIND_LINKS=/opt/wheels set:

    $ python .ci/uv_pip_options.py
    --index-strategy
    unsafe-best-match
    --find-links
    /opt/wheels
"""

from __future__ import annotations

import ast
import subprocess
import sys

# pip's own precedence: environment over [install] over [global].
_SECTIONS = (":env:", "install", "global")
_LISTS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}


def main() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: dict[tuple[str, str], str] = {}
    for line in listing.splitlines():
        key, sep, raw = line.partition("=")
        section, _, name = key.rpartition(".")
        if sep and section in _SECTIONS and name in _LISTS:
            found[(section, name)] = ast.literal_eval(raw)
    # pip takes the best version across all its indexes; uv's default takes a package from the
    # first index that has it, which can be an older release than pip would choose.
    options = ["--index-strategy", "unsafe-best-match"]
    for name, flag in _LISTS.items():
        value = next((found[(s, name)] for s in _SECTIONS if (s, name) in found), None)
        for item in (value or "").split():
            options += [flag, item]
    print("\n".join(options))


if __name__ == "__main__":
    main()

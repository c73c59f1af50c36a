#!/usr/bin/env python3
"""Builds the GNOME Shell extension (data/gnome-shell-extension/) twice from one source:

  <out>/45/  GNOME 45+: the ES modules as written (src/*.js), metadata.json as is.
  <out>/43/  GNOME 43-44: src/legacy/extension.js as entry point, the shared modules
             (gearshift.js, ui.js) converted to legacy imports, shell-version 43 and 44.

and packs each into <out>/gearshift@gearshift.github.io.shell-<45|43>.zip with
`gnome-extensions pack` when gnome-shell is installed, else with `zip` in the same layout
(the files at the root of the archive).

usage: tools/build-shell-extension.py [--no-pack] [OUT_DIR]   (default: target/gnome-shell-extension)

--no-pack stops after the two unpacked builds (what tools/install.sh installs).
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "data/gnome-shell-extension"
SHARED = ["gearshift.js", "ui.js"]
LEGACY_VERSIONS = ["43", "44"]

GI = re.compile(r"^import (\w+) from 'gi://(\w+)';$")
SHELL_NS = re.compile(r"^import \* as (\w+) from 'resource:///org/gnome/shell/(\w+)/(\w+)\.js';$")
SHELL_NAMED = re.compile(r"^import (\{[\w, ]+\}) from 'resource:///org/gnome/shell/(\w+)/(\w+)\.js';$")
LOCAL_NAMED = re.compile(r"^import (\{[\w, ]+\}) from '\./(\w+)\.js';$")


def to_legacy(text: str, name: str) -> str:
    """ES module -> GJS legacy module: imports become `imports.*`, exports top-level `var`s
    and functions (what legacy imports export)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if m := GI.match(line):
            line = f"const {m[1]} = imports.gi.{m[2]};"
        elif m := SHELL_NS.match(line):
            line = f"const {m[1]} = imports.{m[2]}.{m[3]};"
        elif m := SHELL_NAMED.match(line):
            line = f"const {m[1]} = imports.{m[2]}.{m[3]};"
        elif m := LOCAL_NAMED.match(line):
            line = (f"const {m[1]} = imports.misc.extensionUtils.getCurrentExtension()"
                    f".imports.{m[2]};")
        elif line.startswith("export const "):
            line = "var " + line[len("export const "):]
        elif line.startswith("export function "):
            line = line[len("export "):]
        elif line.startswith(("import ", "export ")):
            sys.exit(f"{name}:{number}: no legacy form for: {line}")
        out.append(line)
    return "\n".join(out) + "\n"


def pack(build: Path, out: Path, tag: str) -> Path:
    metadata = json.loads((build / "metadata.json").read_text())
    zip_path = out / f"{metadata['uuid']}.shell-{tag}.zip"
    zip_path.unlink(missing_ok=True)
    extra = sorted(p.name for p in build.iterdir() if p.name not in ("metadata.json", "extension.js"))
    if shutil.which("gnome-extensions"):
        packed = out / f"{metadata['uuid']}.shell-extension.zip"
        args = ["gnome-extensions", "pack", "--force", f"--out-dir={out}"]
        args += [f"--extra-source={name}" for name in extra] + [str(build)]
        subprocess.run(args, check=True)
        packed.rename(zip_path)
    else:
        files = ["metadata.json", "extension.js"] + extra
        subprocess.run(["zip", "-q", "-X", str(zip_path), *files], cwd=build, check=True)
    return zip_path


def main() -> None:
    args = sys.argv[1:]
    no_pack = "--no-pack" in args
    args = [a for a in args if a != "--no-pack"]
    out = Path(args[0]) if args else ROOT / "target/gnome-shell-extension"
    out = out.resolve()
    metadata = json.loads((SRC / "metadata.json").read_text())

    modern = out / "45"
    legacy = out / "43"
    for build in (modern, legacy):
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir(parents=True)

    for name in SHARED + ["extension.js"]:
        shutil.copy(SRC / "src" / name, modern / name)
    (modern / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")

    for name in SHARED:
        text = (SRC / "src" / name).read_text()
        (legacy / name).write_text(to_legacy(text, name))
    shutil.copy(SRC / "src/legacy/extension.js", legacy / "extension.js")
    metadata["shell-version"] = LEGACY_VERSIONS
    (legacy / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")

    if no_pack:
        return
    for build, tag in ((modern, "45"), (legacy, "43")):
        print(pack(build, out, tag))


if __name__ == "__main__":
    main()

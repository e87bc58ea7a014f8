"""Runs every ```python block of a Markdown file on its own, as a user pasting it would:
each in a fresh empty directory, as its own script, in a fresh interpreter.

    python tests/readme_blocks.py README.md                 # every block
    python tests/readme_blocks.py README.md --without datafusion --without polars
    python tests/readme_blocks.py README.md --only datafusion

A block needing an optional part (`--only` / `--without` WORD: the blocks whose text
holds `rpcscan.WORD`) runs where that part is installed (python/ci.sh's `datafusion` step).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("markdown", type=pathlib.Path)
    parser.add_argument("--only", help="run only the blocks that use rpcscan.ONLY")
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        help="skip the blocks that use rpcscan.WITHOUT (repeatable)",
    )
    args = parser.parse_args()
    text = args.markdown.read_text()
    blocks = BLOCK.findall(text)
    if not blocks:
        print(f"{args.markdown}: no python blocks", file=sys.stderr)
        return 1
    ran = failed = 0
    for number, block in enumerate(blocks, 1):
        line = text[: text.index(block)].count("\n") + 1
        uses = lambda word: f"rpcscan.{word}" in block  # noqa: E731
        if (args.only and not uses(args.only)) or any(uses(w) for w in args.without):
            continue
        ran += 1
        with tempfile.TemporaryDirectory() as tmp:
            script = pathlib.Path(tmp) / f"block_{number}.py"
            script.write_text(block)
            done = subprocess.run([sys.executable, str(script)], cwd=tmp, capture_output=True, text=True)
        status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        print(f"{args.markdown}:{line}: block {number}: {status}")
        if done.returncode != 0:
            failed += 1
            print(done.stdout + done.stderr, file=sys.stderr)
    if ran == 0:
        print("no block selected", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

# Sourced by run.sh and http.sh: the rpcscan binary under test ($RPCSCAN, built when not
# given), the pinned npm packages (npm ci) and the Python venv with the pinned SDK ($py).
cd "$(dirname "${BASH_SOURCE[0]}")"
here=$PWD

if [ -z "${RPCSCAN:-}" ]; then
  cargo build --quiet -p rpcscan-cli
  target_dir=$(cargo metadata --format-version 1 --no-deps |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')
  RPCSCAN="$target_dir/debug/rpcscan"
fi
echo "rpcscan: $RPCSCAN"

npm ci --no-audit --no-fund --loglevel=error
venv=${INTEROP_VENV:-$HOME/.cache/rpcscan/interop-venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r requirements.txt
py=$venv/bin/python

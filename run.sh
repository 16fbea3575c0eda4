#!/usr/bin/env bash
# kafka-lab's two commands. Each sets everything up on first use (a virtual environment in .venv
# with the pinned requirements and this checkout's package), then:
#   ./run.sh lab    opens the labs in JupyterLab on http://127.0.0.1:8888 (token-protected)
#   ./run.sh test   runs the whole test suite (unit, property, notebooks under nbval, browser)
# Extra arguments go to jupyter-lab or pytest.
set -euo pipefail
cd "$(dirname "$0")"

VENV="${KAFKA_LAB_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

die() { echo "run.sh: $*" >&2; exit 1; }

ensure_env() {
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
        || die "kafka-lab needs Python 3.11 or newer as '$PYTHON' (set PYTHON=/path/to/python3.11)"
    if [ ! -x "$VENV/bin/python" ]; then
        echo "run.sh: creating the virtual environment in $VENV" >&2
        "$PYTHON" -m venv "$VENV" || die "could not create $VENV (on Debian/Ubuntu: apt-get install python3-venv)"
    fi
    local want have
    want="$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
    have="$(cat "$VENV/.kafka-lab-installed" 2>/dev/null || true)"
    if [ "$want" != "$have" ]; then
        echo "run.sh: installing the pinned requirements (first run: a few minutes)" >&2
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
        echo "$want" > "$VENV/.kafka-lab-installed"
    fi
    # No "news" toast over the notebooks (JupyterLab settings override, inside the venv only).
    mkdir -p "$VENV/share/jupyter/lab/settings"
    cp binder/overrides.json "$VENV/share/jupyter/lab/settings/overrides.json"
    command -v java >/dev/null 2>&1 || echo "run.sh: note: no 'java' on PATH; the Spark lab needs a JDK 17 (apt-get install openjdk-17-jdk-headless)" >&2
}

cmd="${1:-}"; shift || true
case "$cmd" in
    lab)
        ensure_env
        export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
        token="${KAFKA_LAB_TOKEN:-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')}"
        extra=()
        [ "$(id -u)" = 0 ] && extra+=(--allow-root)
        echo "run.sh: open http://127.0.0.1:${KAFKA_LAB_PORT:-8888}/lab/tree/00_start_here.ipynb?token=$token" >&2
        exec "$VENV/bin/jupyter-lab" --no-browser --ServerApp.ip=127.0.0.1 \
            --ServerApp.port="${KAFKA_LAB_PORT:-8888}" --IdentityProvider.token="$token" \
            --ServerApp.root_dir="$PWD/labs" "${extra[@]}" "$@"
        ;;
    test)
        ensure_env
        export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    *)
        die "usage: ./run.sh lab | ./run.sh test [pytest args]"
        ;;
esac

#!/usr/bin/env bash
# kafka-lab's two commands. Each sets everything up on first use (a virtual environment in .venv
# with the pinned requirements and this checkout's package), then:
#   ./run.sh lab [--port N]   opens the labs in JupyterLab on http://127.0.0.1:8888 (token-protected);
#                             --port N, or KAFKA_LAB_PORT=N, asks for another port; a taken port moves
#                             to the next free one, and the URL printed is the one the server gets
#   ./run.sh present NN [--port N]  serves lab NN's experiments without code or exercises, for a lecture
#                             (Voila, on http://127.0.0.1:8866; tools/present.py builds the view)
#   ./run.sh test             runs the whole test suite (unit, property, notebooks under nbval, browser)
# Extra arguments go to jupyter-lab or pytest. Ctrl+C stops the server (it asks to confirm; twice skips that).
# KAFKA_LAB_VENV picks the virtual environment; KAFKA_LAB_NO_INSTALL=1 uses it as it is (no pip install).
set -euo pipefail
cd "$(dirname "$0")"

VENV="${KAFKA_LAB_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

die() { echo "run.sh: $*" >&2; exit 1; }

ensure_env() {
    if [ "${KAFKA_LAB_NO_INSTALL:-}" = 1 ]; then
        [ -x "$VENV/bin/python" ] || die "KAFKA_LAB_NO_INSTALL=1, but there is no virtual environment in $VENV"
        return 0
    fi
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

# sets port (--port N, --port=N, else $KAFKA_LAB_PORT, else the default $1) and args (everything else);
# $2 is the example a missing number's message gives
port_and_args() {
    local example="$2"
    port="${KAFKA_LAB_PORT:-$1}"
    args=()
    shift 2
    while [ $# -gt 0 ]; do
        case "$1" in
            --port) [ $# -ge 2 ] || die "--port needs a number, e.g. $example"
                    port="$2"; shift 2 ;;
            --port=*) port="${1#--port=}"; shift ;;
            *) args+=("$1"); shift ;;
        esac
    done
}

# decides the port now (the next free one if $port is taken), so the URL printed is the server's; Spark
# on loopback; the token (a new one unless KAFKA_LAB_TOKEN is set)
serve_on_loopback() {
    port="$("$VENV/bin/python" tools/free_port.py "$port" 127.0.0.1)" || exit 1
    export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
    token="${KAFKA_LAB_TOKEN:-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')}"
}

cmd="${1:-}"; shift || true
case "$cmd" in
    lab)
        port_and_args 8888 "./run.sh lab --port 8890" "$@"
        ensure_env
        serve_on_loopback
        [ "$(id -u)" = 0 ] && args+=(--allow-root)
        echo "run.sh: open http://127.0.0.1:$port/lab/tree/00_start_here.ipynb?token=$token" >&2
        echo "run.sh: stop the server with Ctrl+C in this terminal" >&2
        exec "$VENV/bin/jupyter-lab" --no-browser --ServerApp.ip=127.0.0.1 \
            --ServerApp.port="$port" --ServerApp.port_retries=0 --IdentityProvider.token="$token" \
            --ServerApp.root_dir="$PWD/labs" "${args[@]}"
        ;;
    present)
        [ $# -ge 1 ] || die "present needs a lab's number, e.g. ./run.sh present 04"
        which="$1"; shift
        port_and_args 8866 "./run.sh present 04 --port 8870" "$@"
        ensure_env
        view="$("$VENV/bin/python" tools/present.py "$which")" || exit 1
        serve_on_loopback
        echo "run.sh: presenting $(basename "$view") (its experiments, without code or exercises)" >&2
        echo "run.sh: open http://127.0.0.1:$port/?token=$token" >&2
        echo "run.sh: stop the server with Ctrl+C in this terminal" >&2
        # tools/voila_serve.py is Voila with a repair for kernel replies whose wake-up pyzmq loses (a view
        # would stop at that cell). Progressive rendering: the page comes first and the kernel fills each
        # output in. No websocket pings, which drop a page whose experiment keeps a slow machine busy for long
        exec "$VENV/bin/python" tools/voila_serve.py "$view" --no-browser --Voila.ip=127.0.0.1 --port="$port" \
            --Voila.port_retries=0 --token="$token" --theme=light --progressive_rendering=True \
            "--Voila.tornado_settings={'ws_ping_interval': 0}" "${args[@]}"
        ;;
    test)
        ensure_env
        export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    *)
        die "usage: ./run.sh lab [--port N] [jupyter-lab args] | ./run.sh present NN [--port N] | ./run.sh test [pytest args]"
        ;;
esac

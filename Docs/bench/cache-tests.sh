#!/bin/bash
# Measures Courier's response cache with the HTTP caching test suite (http-tests/cache-tests, the
# suite behind cache-tests.fyi), as a browser cache: the suite's own server on 127.0.0.1, then
# `courier-bench cache-proxy` in front of it (every request through one Courier SessionManager),
# then the suite's runner against the proxy (cache-tests-report.mjs). Prints the totals, a table
# per group and every test that did not pass. No internet and no npm packages needed: the
# suite's server and runner use only node's built-in modules and fetch. CI does not run it.
#
#   Docs/bench/cache-tests.sh SUITE_DIR [--cache none|memory|DIR] [--id TEST_ID] [--json FILE]
#                             [--markdown] [--bench PATH]
#
# SUITE_DIR: a checkout of github.com/http-tests/cache-tests (nothing in it is changed).
# --cache: the proxy's response cache (default memory; none measures Courier without one).
# --id: one test, with both sides of each request logged. --json: the suite's raw results.
# --bench: a built courier-bench (default: `swift build --product courier-bench` here).
set -euo pipefail

usage() { sed -n '9,10p' "$0" | sed 's/^# *//' >&2; exit 2; }
[[ $# -ge 1 ]] || usage
suite=$(cd "$1" && pwd)
shift
[[ -f "$suite/test-engine/client/runner.mjs" && -f "$suite/tests/index.mjs" ]] || {
  echo "cache-tests.sh: $suite is not a checkout of http-tests/cache-tests" >&2; exit 2; }
cache=memory
bench=""
report_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --id) report_args+=(--id "$2"); shift 2 ;;
    --json) report_args+=(--json "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    --markdown) report_args+=(--markdown); shift ;;
    --bench) bench="$2"; shift 2 ;;
    *) usage ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [[ -z "$bench" ]]; then
  (cd "$repo" && swift build --product courier-bench >&2)
  bench="$(cd "$repo" && swift build --show-bin-path)/courier-bench"
fi

# Loopback only: a proxy from the environment must not see these requests.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1,localhost

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Waits until FILE has a line matching PATTERN and prints the port at its end.
port_from() {
  local file=$1 pattern=$2
  for _ in $(seq 1 100); do
    if line=$(grep -m1 -E "$pattern" "$file" 2>/dev/null); then
      echo "$line" | grep -oE 'http://[^ ]*:[0-9]+' | head -1 | sed -E 's/.*:([0-9]+)$/\1/'
      return 0
    fi
    sleep 0.1
  done
  echo "cache-tests.sh: no '$pattern' in $file:" >&2
  cat "$file" >&2
  return 1
}

# The suite's server reads its settings as npm would pass them; port 0 takes a free port.
npm_config_protocol=http npm_config_port=0 npm_config_pidfile="$work/server.pid" \
  node "$suite/test-engine/server/server.mjs" >"$work/server.log" 2>&1 &
pids+=($!)
server_port=$(port_from "$work/server.log" '^Listening on')

"$bench" cache-proxy --upstream "http://127.0.0.1:$server_port" --cache "$cache" >"$work/proxy.log" 2>&1 &
pids+=($!)
proxy_port=$(port_from "$work/proxy.log" '^cache-proxy listening on')

echo "suite $(git -C "$suite" rev-parse --short HEAD 2>/dev/null || echo "at $suite"); cache $cache;" \
  "server :$server_port; proxy :$proxy_port" >&2
node --no-warnings "$here/cache-tests-report.mjs" "$suite" "http://127.0.0.1:$proxy_port" "${report_args[@]}"

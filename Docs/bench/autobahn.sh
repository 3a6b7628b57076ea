#!/bin/bash
# Autobahn|Testsuite's fuzzing server on this machine, for measuring a WebSocket client (issue 34).
# The suite (autobahntestsuite 0.8.2) is Python 2 code: `setup` unpacks Debian 11's CPython 2.7
# (fetched with `apt-get download` through a private apt configuration, unpacked with
# `dpkg-deb -x`) into DIR and installs the suite's pinned dependencies into it with pip. Nothing of
# it goes into the repository or the system: everything lives in DIR. CI does not run it.
#
#   Docs/bench/autobahn.sh setup DIR
#   Docs/bench/autobahn.sh server DIR --port P [--wss | --tls CERT KEY] [--groups LIST]
#   Docs/bench/autobahn.sh reference DIR --port P [--wss] [--agent NAME]
#   Docs/bench/autobahn.sh run DIR --port P [--wss] [--groups LIST] [--agent NAME] [-- CLIENT ARGS...]
#   Docs/bench/autobahn.sh report DIR
#
# DIR: a private directory outside the repository (default /tmp/autobahn when left out).
# setup: idempotent; needs apt-get, dpkg-deb, openssl and python3 with venv (python3-venv), and
#   takes Debian 11's packages from the mirror the machine's apt sources name.
# server: the fuzzing server in the foreground on 127.0.0.1:P (ws://, or wss:// with DIR's
#   throwaway certificate for 127.0.0.1 and localhost, or the given CERT and KEY). Its spec holds
#   the groups or subgroups to run (default 1,2,3,4,5,6,7,9,10,12,13; 12.1 is one subgroup);
#   results go to DIR/reports/clients (ws) or DIR/reports/clients-wss (wss), each with an
#   index.json and the suite's HTML pages.
# reference: the reference client, Python `websockets` in DIR's venv, runs every case the server
#   at P offers (getCaseCount, runCase, updateReports); for wss it trusts DIR/tls/ca.pem.
# run: starts the server in the background, runs the client (default: the reference client;
#   a given CLIENT gets the server's URL in AUTOBAHN_URL and the CA file in AUTOBAHN_CA), stops
#   the server and prints the report.
# report: per group, the count of each result (OK / NON-STRICT / INFORMATIONAL / UNIMPLEMENTED /
#   FAILED / other), for each agent in each DIR/reports/*/index.json, and the cases not OK.
set -euo pipefail

usage() { sed -n '8,12p' "$0" | sed 's/^# *//' >&2; exit 2; }
[[ $# -ge 1 ]] || usage
command=$1
shift
dir=/tmp/autobahn
if [[ $# -gt 0 && "$1" != --* ]]; then dir=$1; shift; fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=$(realpath -m "$dir")
case "$dir/" in "$repo"/*) echo "autobahn.sh: DIR must be outside the repository" >&2; exit 2 ;; esac

# Pinned: the suite's last Python 2 release and, with --no-deps, every package it needs (the
# set pip 20.3.4 resolved for Python 2.7 in December 2026), so a later release cannot change it.
# autobahn's [accelerate] extra is not among them: wsaccel needs a C compiler and is built only
# when there is one (step 5 of setup), and ujson serves only WAMP.
suite_pins=(
  autobahntestsuite==0.8.2 autobahn==0.10.9 Twisted==19.10.0 txaio==2.1.0 zope.interface==5.5.2
  Automat==22.10.0 PyHamcrest==1.10.1 attrs==21.4.0 constantly==15.1.0 hyperlink==21.0.0
  idna==2.10 incremental==22.10.0 six==1.17.0 typing==3.10.0.0 pyOpenSSL==21.0.0
  cryptography==3.3.2 cffi==1.15.1 pycparser==2.21 enum34==1.1.10 ipaddress==1.0.23
  service-identity==21.1.0 pyasn1==0.5.1 pyasn1-modules==0.3.0 Jinja2==2.11.3 MarkupSafe==1.1.1
  Werkzeug==1.0.1 klein==20.6.0 Tubes==0.2.1 unittest2==1.1.0 traceback2==1.4.0 linecache2==1.0.0
)
pip27_pins=(pip==20.3.4 setuptools==44.1.1 wheel==0.37.1)  # the last releases for Python 2.7
reference_pins=(websockets==17.4)
# Debian 11's CPython 2.7 and the two libraries Debian 12 no longer has (OpenSSL 1.1, libffi 7).
debs=(python2.7-minimal libpython2.7-minimal libpython2.7-stdlib python2.7 libssl1.1 libffi7)
dev_debs=(libpython2.7-dev python2.7-dev)  # headers, to build wsaccel
accelerate_pins=(wsaccel==0.6.3)

py27="$dir/py27/usr/bin/python2.7"
py3="$dir/venv3/bin/python"

# Runs DIR's Python 2.7 with its own libraries and nothing from the user's Python settings.
python27_command() {
  local libs
  libs=$(dirname "$(find "$dir/py27/usr/lib" -maxdepth 2 -name 'libssl.so.1.1' | head -1)")
  py27run=(env -u PYTHONPATH -u PYTHONHOME PYTHONNOUSERSITE=1 PYTHONWARNINGS=ignore
    PIP_NO_PYTHON_VERSION_WARNING=1 PIP_CACHE_DIR="$dir/cache/pip"
    PIP_DISABLE_PIP_VERSION_CHECK=1 LD_LIBRARY_PATH="$libs" "$py27")
}
python27() { python27_command; "${py27run[@]}" "$@"; }

say() { echo "autobahn.sh: $*" >&2; }

# The machine's own Debian archive and security archive (from /etc/apt's sources, one-line or
# deb822), named for bullseye: the same mirror, Debian 11's suites. AUTOBAHN_DEBIAN_URI and
# AUTOBAHN_DEBIAN_SECURITY_URI override them.
debian_sources() {
  python3 - <<'EOF'
import glob, os, re, sys
pairs = []  # (uri, suite) for each "deb" source
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    for line in open(path) if os.path.exists(path) else []:
        words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            pairs.append((words[1], words[2]))
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        fields = dict((k.lower(), v.split()) for k, v in re.findall(r"^([A-Za-z-]+):[ \t]*(.*)$", stanza, re.M))
        if "deb" in fields.get("types", []) and fields.get("enabled", ["yes"]) != ["no"]:
            pairs += [(u, s) for u in fields.get("uris", []) for s in fields.get("suites", [])]
main = os.environ.get("AUTOBAHN_DEBIAN_URI") or next((u for u, s in pairs if "-" not in s and "/" not in s), None)
security = os.environ.get("AUTOBAHN_DEBIAN_SECURITY_URI") or next((u for u, s in pairs if s.endswith("-security")), None)
if not main:
    sys.exit("autobahn.sh: no Debian archive in /etc/apt's sources; set AUTOBAHN_DEBIAN_URI")
keyring = "[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
print("deb %s %s bullseye main" % (keyring, main))
if security:
    print("deb %s %s bullseye-security main" % (keyring, security))
EOF
}

setup() {
  local start=$SECONDS
  mkdir -p "$dir"
  for tool in apt-get dpkg-deb openssl python3; do
    command -v "$tool" >/dev/null || { say "needs $tool"; exit 1; }
  done

  # 1. Debian 11's CPython 2.7: a private apt configuration names bullseye (the machine's own
  #    /etc/apt is read for its settings but its sources and lists are not used or changed).
  local apt=(apt-get -q -o Dir::Etc::sourcelist="$dir/apt/sources.list" -o Dir::Etc::sourceparts=-
    -o Dir::State::lists="$dir/apt/lists" -o Dir::Cache="$dir/apt"
    -o Dir::Cache::archives="$dir/apt/archives" -o Debug::NoLocking=1)
  # apt drops to the _apt user to download unless it is told to stay; DIR belongs to us.
  if [[ $(id -u) -eq 0 ]]; then apt+=(-o APT::Sandbox::User=root); fi
  if [[ ! -x "$py27" ]]; then
    say "fetching CPython 2.7 from Debian 11"
    mkdir -p "$dir/apt/lists/partial" "$dir/apt/archives/partial" "$dir/debs"
    debian_sources >"$dir/apt/sources.list"
    "${apt[@]}" update >"$dir/apt/update.log" 2>&1 || { cat "$dir/apt/update.log" >&2; exit 1; }
    (cd "$dir/debs" && "${apt[@]}" download "${debs[@]}" >"$dir/apt/download.log" 2>&1) ||
      { cat "$dir/apt/download.log" >&2; exit 1; }
    rm -rf "$dir/py27.partial"
    for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/py27.partial"; done
    mv "$dir/py27.partial" "$dir/py27"
  fi
  python27 -c 'import ssl, hashlib, ctypes, zlib' ||
    { say "$py27 cannot load ssl/hashlib/ctypes/zlib"; exit 1; }

  # 2. A Python 3 venv: its pip fetches pip for Python 2.7 (PyPI still serves it; get-pip.py
  #    is not a registry), and it holds the reference client.
  if [[ ! -x "$py3" ]]; then
    say "creating the Python 3 venv"
    python3 -m venv "$dir/venv3" || { say "python3 -m venv failed: apt-get install python3-venv"; exit 1; }
  fi
  if ! "$py3" -c 'import websockets' 2>/dev/null; then
    PIP_CACHE_DIR="$dir/cache/pip" "$py3" -m pip install -q --disable-pip-version-check "${reference_pins[@]}"
  fi

  # 3. pip for Python 2.7, run once from its own wheel to install itself.
  if ! python27 -m pip --version >/dev/null 2>&1; then
    say "installing pip into CPython 2.7"
    mkdir -p "$dir/wheels27"
    PIP_CACHE_DIR="$dir/cache/pip" "$py3" -m pip download -q --disable-pip-version-check --no-deps \
      --python-version 2.7 --only-binary=:all: -d "$dir/wheels27" "${pip27_pins[@]}"
    python27 "$(ls "$dir"/wheels27/pip-*.whl)/pip" install -q --no-warn-script-location \
      --no-index --find-links "$dir/wheels27" "${pip27_pins[@]}"
  fi

  # 4. The suite, every package pinned (a marker holds the pins it was installed with).
  local pins="${suite_pins[*]}"
  if [[ "$(cat "$dir/suite.pins" 2>/dev/null)" != "$pins" ]]; then
    say "installing autobahntestsuite into CPython 2.7"
    python27 -m pip install -q --no-warn-script-location --no-deps "${suite_pins[@]}"
    echo "$pins" >"$dir/suite.pins"
  fi
  python27 -c 'import autobahntestsuite.fuzzing, OpenSSL' ||
    { say "the suite does not import"; exit 1; }

  # 5. wsaccel (autobahn's optional C XOR masker and UTF-8 validator) when a C compiler is here:
  #    the server unmasks every byte a client sends, and wsaccel does it in 0.004 s of CPU per
  #    MiB where autobahn's pure Python takes 0.08 s (its UTF-8 check is about as fast either
  #    way). The server works without it. The headers to build it are Debian 11's.
  local cc
  cc=$(python27 -c 'import sysconfig; print(sysconfig.get_config_var("CC").split()[0])')
  if python27 -c 'import wsaccel' 2>/dev/null; then
    :
  elif ! command -v "$cc" >/dev/null; then
    say "no $cc: the server runs without wsaccel (slow on groups 9, 12, 13; apt-get install gcc)"
  else
    say "building wsaccel"
    if [[ ! -f "$dir/py27/usr/include/python2.7/Python.h" ]]; then
      (cd "$dir/debs" && "${apt[@]}" download "${dev_debs[@]}" >>"$dir/apt/download.log" 2>&1) ||
        { cat "$dir/apt/download.log" >&2; exit 1; }
      for deb in "$dir"/debs/*-dev_*.deb; do dpkg-deb -x "$deb" "$dir/py27"; done
    fi
    # Debian's build settings name /usr/include; the headers are in DIR.
    CFLAGS="-I$dir/py27/usr/include/python2.7 -I$dir/py27/usr/include" \
      python27 -m pip install -q --no-warn-script-location --no-deps "${accelerate_pins[@]}" \
      >"$dir/wsaccel.log" 2>&1 || say "wsaccel did not build ($dir/wsaccel.log): the server runs without it"
  fi

  # 6. A throwaway CA and a certificate for 127.0.0.1 and localhost, for wss.
  if [[ ! -f "$dir/tls/server.pem" ]]; then
    mkdir -p "$dir/tls"
    (cd "$dir/tls"
     openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 \
       -subj /CN=autobahn-test-ca -addext basicConstraints=critical,CA:TRUE \
       -addext keyUsage=critical,keyCertSign 2>/dev/null
     openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null
     printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
     openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
       -days 3650 -extfile server.ext 2>/dev/null)
  fi

  write_helpers
  say "ready in $dir ($((SECONDS - start)) s): $(python27 -c 'import autobahntestsuite, autobahn, twisted; print("autobahntestsuite %s, autobahn %s, Twisted %s" % (autobahntestsuite.__version__, autobahn.__version__, twisted.__version__))')$(python27 -c 'import wsaccel' 2>/dev/null && echo ", wsaccel" || echo ", no wsaccel"), websockets $("$py3" -c 'import websockets; print(websockets.version.version)')"
}

# The three small programs the subcommands run, written into DIR (not kept in the repository).
write_helpers() {
  # wstest binds the fuzzing server to every interface; this starts the same factory
  # (autobahntestsuite.fuzzing.FuzzingServerFactory) on 127.0.0.1 only, without the web port.
  cat >"$dir/fuzzingserver.py" <<'EOF'
import json, sys
from twisted.internet import reactor, ssl
from autobahn.twisted.websocket import listenWS
from autobahntestsuite.fuzzing import FuzzingServerFactory

spec = json.load(open(sys.argv[1]))
factory = FuzzingServerFactory(spec)
context = None
if factory.isSecure:
    context = ssl.DefaultOpenSSLContextFactory(spec["key"], spec["cert"])
listenWS(factory, context, interface="127.0.0.1")
print("listening on %s" % spec["url"])
sys.stdout.flush()
reactor.run()
EOF

  # The standard Autobahn client loop: ask the case count, run each case echoing every
  # message back, then ask the server to write its reports.
  cat >"$dir/reference_client.py" <<'EOF'
import asyncio, json, ssl, sys, time
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

url, agent, cafile = sys.argv[1], sys.argv[2], sys.argv[3]
context = ssl.create_default_context(cafile=cafile) if url.startswith("wss:") else None
limit = 2 ** 25  # group 9 sends messages of up to 16 MiB

async def main():
    async with connect(url + "/getCaseCount", ssl=context) as ws:
        count = json.loads(await ws.recv())
    start = time.monotonic()
    for case in range(1, count + 1):
        try:
            async with connect("%s/runCase?case=%d&agent=%s" % (url, case, agent), ssl=context,
                               max_size=limit, open_timeout=30) as ws:
                async for message in ws:
                    await ws.send(message)
        except (WebSocketException, OSError, asyncio.TimeoutError):
            pass  # the case's verdict is the server's to give
    async with connect("%s/updateReports?agent=%s" % (url, agent), ssl=context):
        pass
    print("%s: %d cases in %.1f s" % (agent, count, time.monotonic() - start), file=sys.stderr)

asyncio.run(main())
EOF

  # Counts each case's "behavior" per group, as the suite's own summary does: report.py DIR
  # [INDEX...] (default: every DIR/reports/*/index.json).
  cat >"$dir/report.py" <<'EOF'
import glob, json, os, sys
columns = ["OK", "NON-STRICT", "INFORMATIONAL", "UNIMPLEMENTED", "FAILED", "other"]
passing = ("OK", "INFORMATIONAL", "UNIMPLEMENTED")
def key(case):
    return [int(p) for p in case.split(".")]
def line(name, counts):
    return "%-6s %5s " % (name, counts["cases"]) + " ".join("%*s" % (max(len(c), 4), counts[c]) for c in columns)
indexes = sys.argv[2:] or sorted(glob.glob(os.path.join(sys.argv[1], "reports", "*", "index.json")))
found = False
for index in indexes:
    if not os.path.exists(index):
        continue
    results = json.load(open(index))
    for agent in sorted(results):
        found = True
        cases = results[agent]
        print("%s, agent %s: %d cases" % (os.path.relpath(index, sys.argv[1]), agent, len(cases)))
        print(line("group", dict([(c, c) for c in columns] + [("cases", "cases")])))
        totals = dict((c, 0) for c in columns + ["cases"])
        for group in sorted(set(key(c)[0] for c in cases)):
            row = dict((c, 0) for c in columns + ["cases"])
            for case, result in cases.items():
                if key(case)[0] == group:
                    behavior = result["behavior"]
                    row[behavior if behavior in columns else "other"] += 1
                    row["cases"] += 1
            for c in row:
                totals[c] += row[c]
            print(line(str(group), row))
        print(line("total", totals))
        odd = [(c, r) for c, r in cases.items()
               if r["behavior"] not in passing or r["behaviorClose"] not in passing]
        for case, result in sorted(odd, key=lambda cr: key(cr[0])):
            print("  %-10s %s (close: %s, code %s)" % (case, result["behavior"], result["behaviorClose"], result.get("remoteCloseCode")))
        print("")
if not found:
    sys.stderr.write("autobahn.sh: no report yet (a client writes it with updateReports)\n")
    sys.exit(1)
EOF
}

require_setup() {
  [[ -x "$py27" && -f "$dir/suite.pins" && -f "$dir/fuzzingserver.py" ]] ||
    { say "run 'autobahn.sh setup $dir' first"; exit 1; }
}

port="" wss=false cert="" key="" groups="1,2,3,4,5,6,7,9,10,12,13" agent="" client=()
parse_options() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --port) port=$2; shift 2 ;;
      --wss) wss=true; shift ;;
      --tls) wss=true; cert=$(realpath "$2"); key=$(realpath "$3"); shift 3 ;;
      --groups) groups=$2; shift 2 ;;
      --agent) agent=$2; shift 2 ;;
      --) shift; client=("$@"); break ;;
      *) usage ;;
    esac
  done
  [[ "$port" =~ ^[0-9]+$ && "$port" -gt 0 && "$port" -lt 65536 ]] || { say "--port P (1-65535) is required"; exit 2; }
  [[ "$groups" =~ ^[0-9]+(\.[0-9]+)*(,[0-9]+(\.[0-9]+)*)*$ ]] ||
    { say "--groups takes a list of groups or subgroups such as 1,2,3,10,12.1"; exit 2; }
  scheme=ws outdir="$dir/reports/clients"
  if $wss; then
    scheme=wss outdir="$dir/reports/clients-wss"
    cert=${cert:-$dir/tls/server.pem} key=${key:-$dir/tls/server.key}
  fi
  url="$scheme://127.0.0.1:$port"
}

# Writes the server's spec: the chosen groups, the report directory, the certificate for wss.
write_spec() {
  local spec="$dir/spec-$scheme-$port.json"
  python27 - "$spec" "$url" "$outdir" "$groups" "$cert" "$key" <<'EOF'
import json, sys
path, url, outdir, groups, cert, key = sys.argv[1:]
spec = {"url": url, "outdir": outdir, "cases": ["%s.*" % g for g in groups.split(",")],
        "exclude-cases": [], "exclude-agent-cases": {}}
if url.startswith("wss:"):
    spec.update(cert=cert, key=key)
json.dump(spec, open(path, "w"), indent=2)
EOF
  echo "$spec"
}

# Loopback only: a proxy from the environment must not see these connections.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1,localhost

case "$command" in
  setup)
    [[ $# -eq 0 ]] || usage
    setup ;;
  server)
    require_setup; parse_options "$@"
    spec=$(write_spec)
    mkdir -p "$outdir"
    cd "$dir"
    # exec: the server is this process, so stopping it stops the server.
    python27_command
    exec "${py27run[@]}" -u "$dir/fuzzingserver.py" "$spec" ;;
  reference)
    require_setup; parse_options "$@"
    "$py3" "$dir/reference_client.py" "$url" "${agent:-websockets-17.4-$scheme}" "$dir/tls/ca.pem" ;;
  run)
    require_setup; parse_options "$@"
    log="$dir/server-$scheme-$port.log"
    server_args=(--port "$port" --groups "$groups")
    if $wss; then server_args+=(--tls "$cert" "$key"); fi
    "$0" server "$dir" "${server_args[@]}" >"$log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
    for _ in $(seq 1 300); do
      grep -q '^listening on' "$log" 2>/dev/null && break
      kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
      sleep 0.1
    done
    grep -q '^listening on' "$log" || { say "the server did not start:"; cat "$log" >&2; exit 1; }
    start=$SECONDS status=0
    rm -f "$outdir/index.json"  # so the table below is this run's or none
    if [[ ${#client[@]} -eq 0 ]]; then
      "$py3" "$dir/reference_client.py" "$url" "${agent:-websockets-17.4-$scheme}" "$dir/tls/ca.pem" || status=$?
    else
      AUTOBAHN_URL=$url AUTOBAHN_CA="$dir/tls/ca.pem" "${client[@]}" || status=$?
    fi
    say "client run: $((SECONDS - start)) s, exit status $status"
    python27 "$dir/report.py" "$dir" "$outdir/index.json" || status=1
    exit "$status" ;;
  report)
    [[ $# -eq 0 ]] || usage
    require_setup
    python27 "$dir/report.py" "$dir" ;;
  *) usage ;;
esac

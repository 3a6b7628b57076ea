#!/bin/sh
# The HTTPS rows of Docs/Performance.md (Docs/Benchmark.md, "HTTPS"): nginx on 127.0.0.1 with a
# throwaway CA, then courier-bench, curl and a plain libcurl multi client (multi-client.c, built
# here) against it, alternating A/B/B/A per round. CI never runs this (it needs nginx).
#
#   Docs/bench/https-bench.sh BENCH ROUNDS [REQUESTS]
#
# BENCH is a release courier-bench. Rows without a TLS policy trust "the system's CA store": the
# run happens in a private mount namespace (unshare -m, so root) where libcurl's CA file is a copy
# of the system's with the test CA appended; nothing outside the namespace sees it.
# Output: one line per run, "<row> <C> <mode> cpu_us_per_req=… rps=…".
set -eu
bench=$1 rounds=${2:-3} requests=${3:-1000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/courier-https-bench.XXXXXX)
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT INT TERM
cd "$work"

# A throwaway CA and a certificate for 127.0.0.1 (P-256, as the tests' PKI).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 \
    -subj /CN=bench-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext 2>/dev/null
system=$(curl-config --ca 2>/dev/null || echo /etc/ssl/certs/ca-certificates.crt)
cat "$system" ca.pem > system-plus-ca.pem

# A free port: bind port 0, read what the kernel gave, release it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
head -c 100 /dev/zero > small
chmod 755 "$work" && chmod 644 small  # nginx's workers run as another user
cat > nginx.conf <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate $work/server.pem;
        ssl_certificate_key $work/server.key;
        ssl_session_tickets off;
        ssl_session_cache off;
        root $work;
    }
}
EOF
nginx -c "$work/nginx.conf" -p "$work" -e "$work/error.log"
url=https://127.0.0.1:$port/small
cc -O2 -o multi-client "$here/multi-client.c" -lcurl

# Runs "$@" with the test CA in the system's CA file, seen by that process only.
with_system_ca() {
    unshare -m --propagation private sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' system-plus-ca.pem "$system" "$@"
}

# CPU per request of the curl command line: user+sys of the child from /usr/bin/time, over N URLs.
curl_row() { # C mode
    c=$1 mode=$2 n=$requests
    [ "$mode" = new ] && header='-H Connection:close' || header=''
    urls=$(yes "$url" | head -n "$n" | tr '\n' ' ')
    # --parallel keeps C transfers in flight on one multi handle (curl's own connection pool).
    parallel=''; [ "$c" -gt 1 ] && parallel="--parallel --parallel-max $c"
    start=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o time.txt curl -s --cacert ca.pem $header $parallel $urls >/dev/null 2>&1 || true
    end=$(date +%s.%N)
    awk -v n="$n" -v s="$start" -v e="$end" -v c="$c" -v m="$mode" \
        '{ printf "curl %s %s cpu_us_per_req=%.1f rps=%.1f\n", c, m, ($1+$2)/n*1e6, n/(e-s) }' time.txt
}

multi_row() { # C mode
    [ "$2" = new ] && close=--close || close=''
    ./multi-client -n "$requests" -c "$1" $close --cacert ca.pem "$url" |
        sed -n "s/.* rps=\([0-9.]*\) cpu_us_per_req=\([0-9.]*\)/libcurl-multi $1 $2 cpu_us_per_req=\2 rps=\1/p"
}

courier_row() { # C mode policy
    c=$1 mode=$2 policy=$3
    [ "$mode" = new ] && flag=--new-connections || flag=''
    if [ "$policy" = none ]; then
        line=$(with_system_ca "$bench" small --url "$url" --requests "$requests" --concurrency "$c" --warmup 50 $flag) || true
    else
        line=$("$bench" small --url "$url" --requests "$requests" --concurrency "$c" --warmup 50 $flag --tls-policy "$policy" --cacert ca.pem) || true
    fi
    echo "$line" | sed -n "s/.* rps=\([0-9.]*\) .*cpu_us_per_req=\([0-9.]*\).*/courier-$policy $c $mode cpu_us_per_req=\2 rps=\1/p"
}

round=0
while [ "$round" -lt "$rounds" ]; do
    round=$((round + 1))
    for c in 1 16; do
        for mode in keepalive new; do
            # A B B A within the round; the order flips every round.
            if [ $((round % 2)) -eq 1 ]; then order="none only system curl multi multi curl system only none"
            else order="multi curl system only none none only system curl multi"; fi
            for row in $order; do
                case $row in
                curl) curl_row "$c" "$mode" ;;
                multi) multi_row "$c" "$mode" ;;
                *) courier_row "$c" "$mode" "$row" ;;
                esac
            done
        done
    done
done

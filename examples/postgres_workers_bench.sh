#!/usr/bin/env bash
# Throughput of 1, 2 and 3 `freshet run` workers on one PostgreSQL database against nginx
# serving 20 hosts (ports) x 200 static pages, no politeness limit to speak of (100/s per host)
# and an unbounded budget: checks committed per second over the last 30 s of a 45 s run.
set -euo pipefail
# Usage: BIN=target/release/freshet PG=postgres://user@127.0.0.1:5432 WORKERS="1 2 3" \
#        examples/postgres_workers_bench.sh   (needs nginx, psql and bc; PG's user may create
#        databases; uses ports 18100-18119 and a scratch folder it prints)
BIN=${BIN:-target/release/freshet}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
D=$(mktemp -d /tmp/freshet-workers-bench.XXXXXX)
echo "scratch folder: $D"
HOSTS=20; PAGES=200
rm -rf $D/www; mkdir -p $D/www/p $D/logs
for i in $(seq 0 $((PAGES-1))); do head -c 2000 /dev/urandom | base64 > $D/www/p/$i.html; done
listen=""; schedule=""
for h in $(seq 0 $((HOSTS-1))); do
  port=$((18100+h)); listen="$listen listen 127.0.0.1:$port;"
  for i in $(seq 0 $((PAGES-1))); do echo "http://127.0.0.1:$port/p/$i.html"; done > $D/www/sitemap-$port.txt
  schedule="$schedule[[site]]\nname = \"h$h\"\nsitemaps = [\"http://127.0.0.1:$port/sitemap-$port.txt\"]\nhost_rate = \"100/s\"\nrequests_per_day = 1000000000\nallow_networks = [\"127.0.0.0/8\"]\n\n"
done
printf "$schedule" > $D/sites.toml
cat > $D/nginx.conf <<CONF
worker_processes 1; daemon off; pid $D/nginx.pid; error_log $D/logs/error.log;
events { worker_connections 1024; }
http { access_log off; server { $listen root $D/www; location / { } } }
CONF
nginx -c $D/nginx.conf -p $D & NGINX=$!
sleep 1
for W in ${WORKERS:-1 2 3}; do
  db=wb_${W}_$$
  psql "$PG/postgres" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  pids=()
  for w in $(seq 1 $W); do
    $BIN run --schedules $D/sites.toml --db "$PG/$db" --worker w$w --no-status > $D/logs/w$W-$w.log 2>&1 & pids+=($!)
  done
  sleep 15; t0=$(date +%s%3N); sleep 30; t1=$(date +%s%3N)
  kill -TERM "${pids[@]}"; wait "${pids[@]}" || true
  n=$(psql "$PG/$db" -tAc "SELECT COUNT(*) FROM observations o JOIN urls u ON u.id = o.url_id WHERE u.kind = 'page' AND o.checked_ms BETWEEN $t0 AND $t1")
  echo "workers=$W checks=$n checks_per_second=$(echo "scale=1; $n*1000/($t1-$t0)" | bc)"
done
kill $NGINX

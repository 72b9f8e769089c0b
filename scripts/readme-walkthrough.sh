#!/usr/bin/env bash
# Runs the README's walkthrough as a new user would paste it: first `make demo` and the first
# sh block that follows a "<!-- walkthrough -->" line (which the README says works there too;
# the demo serves its API at once and is stopped while it seeds, so this is quick), then
# `make run` and every such block, in order, in one shell. `make run` and `make demo` go to the
# background (and make run is stopped and started again where the README starts it again); curl
# fails on an HTTP error. The run has its own ports, data directory and site directory, so it can run
# beside a `make run` of your own. It stops everything it started. `make test` runs it. It runs
# real audits (Chromium and Lighthouse): where several browser-heavy jobs share a machine, run
# them one at a time (e.g. each under flock on one lock file).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Below the kernel's ephemeral range (32768-60999), as in local-restart-test.sh.
base=${WALKTHROUGH_BASE_PORT:-28100}
export OPENVITALS_DYNAMODB_PORT=$base OPENVITALS_SQS_PORT=$((base + 1))
export OPENVITALS_ADDR=127.0.0.1:$((base + 2)) OPENVITALS_S3_ADDR=127.0.0.1:$((base + 3)) OPENVITALS_SES_PORT=$((base + 5))
export OPENVITALS_DEMO_ADDR=127.0.0.1:$((base + 6))
site_port=$((base + 4))
work=$(mktemp -d)
export OPENVITALS_DATA_DIR=$work/data

run_pid=""
# interrupt_run is Ctrl-C in make run's terminal; stop_run also waits until it has stopped.
interrupt_run() {
  if [ -n "$run_pid" ]; then
    kill -INT -- "-$run_pid" 2>/dev/null || true
  fi
}
stop_run() {
  if [ -n "$run_pid" ]; then
    interrupt_run
    wait "$run_pid" 2>/dev/null || true
    run_pid=""
  fi
}
cleanup() {
  status=$?
  stop_run
  # What the README started in the background (the local site's server) is a job of this shell.
  jobs=$(jobs -p)
  if [ -n "$jobs" ]; then kill $jobs 2>/dev/null || true; fi
  # Nothing of any run may outlive it (a restart used to leave DynamoDB Local behind).
  sleep 1
  left=$(pgrep -f "DynamoDBLocal.jar .*-port $base( |$)|sqs.js $((base + 1))( |$)" || true)
  if [ -n "$left" ]; then
    echo "a stand-in of the walkthrough's make run outlived it:" >&2
    ps -o pid=,args= -p "$(tr '\n' ',' <<<"$left" | sed 's/,$//')" >&2 || true
    kill $left 2>/dev/null || true
    status=1
  fi
  if [ "$status" != 0 ]; then
    echo "--- the walkthrough failed; make run's log:" >&2
    tail -n 40 "$work/run.log" >&2 || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# make run and make demo in the background, until the API answers; other targets as they are.
make() {
  if [ "${1:-}" != run ] && [ "${1:-}" != demo ]; then
    command make --no-print-directory "$@"
    return
  fi
  # Started again right after Ctrl-C, as a user would: the new run waits for the old to stop.
  if [ -n "$run_pid" ]; then
    interrupt_run
    # The old API goes quiet first (then the new one may answer).
    for _ in $(seq 100); do
      command curl -s -o /dev/null "http://$OPENVITALS_ADDR/openapi.json" || break
      sleep 0.1
    done
  fi
  setsid make --no-print-directory "$1" >>"$work/run.log" 2>&1 </dev/null &
  run_pid=$!
  for _ in $(seq 600); do
    if command curl -s -o /dev/null "http://$OPENVITALS_ADDR/openapi.json"; then
      return 0
    fi
    if ! kill -0 "$run_pid" 2>/dev/null; then
      echo "make run stopped while starting" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "make run did not answer within 5 minutes" >&2
  return 1
}
curl() { command curl --fail-with-body "$@"; }

# The blocks, with the README's addresses and site directory replaced by this run's.
# blocks FIRST LAST prints the walkthrough blocks FIRST to LAST (counted from 1).
blocks() {
  awk -v first="$1" -v last="$2" '/^<!-- walkthrough -->$/ { mark = 1; next }
     mark && /^```sh$/ { inblock = 1; mark = 0; n++; next }
     inblock && /^```$/ { inblock = 0; next }
     inblock && n >= first && n <= last { print }' README.md |
    sed -e "s/127\.0\.0\.1:8080/$OPENVITALS_ADDR/g" -e "s/127\.0\.0\.1:8090/127.0.0.1:$site_port/g" \
      -e "s/http\.server 8090/http.server $site_port/g" -e "s#/tmp/site#$work/site#g"
}
blocks 1 1 >"$work/first.sh"
blocks 1 1000 >"$work/steps.sh"
if [ "$(grep -c . "$work/steps.sh")" -lt 10 ]; then
  echo "no walkthrough found in README.md" >&2
  exit 1
fi

echo "walkthrough: the first block against make demo (ports $base-$((base + 6)), data in $OPENVITALS_DATA_DIR/demo)"
make demo
set -x
# shellcheck source=/dev/null
source "$work/first.sh"
set +x
[ "$KEY" = "$(cat "$OPENVITALS_DATA_DIR/demo/local-admin-key")" ] || { echo "the tour's key is not make demo's" >&2; exit 1; }
stop_run

echo "walkthrough: make run (ports $base-$((base + 5)), data in $OPENVITALS_DATA_DIR)"
make run
set -x
# shellcheck source=/dev/null
source "$work/steps.sh"
set +x
echo "walkthrough: every command succeeded"

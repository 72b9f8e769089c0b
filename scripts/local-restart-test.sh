#!/usr/bin/env bash
# Tests that local use survives restarts, as a user restarts `make run`:
#  1. Ctrl-C and `make run` again at once: the new run starts (it waits for the old one to
#     stop), and the website and the key made before still work (DynamoDB Local's files, the
#     key made once);
#  2. a test series whose audit runs when `make run` stops completes after it starts again,
#     although the SQS stand-in lost its messages (the service queues again at start what was
#     left unfinished); its page is the service's own dashboard, audited by Chromium and
#     Lighthouse;
#  3. a run whose shell and service were killed outright leaves its stand-ins behind: the next
#     `make run` stops them and starts;
#  4. once stopped, nothing of any run is left running;
#  5. `make reset` starts over: a new key, no website; the demo's data stays until
#     `make reset DEMO=1`.
# It uses its own ports, data and run directories, so it can run beside a `make run` of your
# own. `make test` runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Below the kernel's ephemeral range (32768-60999): a port there can be taken for a moment by
# any outgoing connection (CI once found the API's port so taken).
base=${RESTART_TEST_BASE_PORT:-28200}
export OPENVITALS_DYNAMODB_PORT=$base OPENVITALS_SQS_PORT=$((base + 1))
export OPENVITALS_ADDR=127.0.0.1:$((base + 2)) OPENVITALS_S3_ADDR=127.0.0.1:$((base + 3)) OPENVITALS_SES_PORT=$((base + 5))
work=$(mktemp -d)
export OPENVITALS_DATA_DIR=$work/data OPENVITALS_RUN_DIR=$work/run
# The local clock queues the day's audits in its hour: keep it away from this test.
export OPENVITALS_DAILY_HOUR=$(((10#$(date -u +%H) + 12) % 24))
# The series of step 2 audits a page of the service itself, on loopback, over http, once.
export OPENVITALS_ALLOW_PRIVATE_TARGETS=true OPENVITALS_TARGET_SCHEME=http OPENVITALS_AUDIT_RUNS=1
api=http://$OPENVITALS_ADDR
standins="DynamoDBLocal.jar .*-port $base( |$)|sqs.js $((base + 1))( |$)"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
runs=() # the process groups of the runs started (make run's PID)
run_pid=""
seen=() # every PID any run had, to check that none outlives the test
note_pids() { seen+=($(pgrep -g "$1" || true)); }
# alive PID: the process runs (a zombie no longer does; PID 1 of a container may never reap it).
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
cleanup() {
  status=$?
  for g in "${runs[@]}"; do kill -INT -- "-$g" 2>/dev/null || true; done
  for g in "${runs[@]}"; do wait "$g" 2>/dev/null || true; done
  left=$(pgrep -f -- "$standins" || true)
  if [ -n "$left" ]; then
    echo "stand-ins of this test still run: $left" >&2
    kill $left 2>/dev/null || true
    status=1
  fi
  if [ "$status" != 0 ]; then
    echo "--- make run's output:" >&2
    tail -n 60 "$work/run.log" >&2 || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# start runs make run in its own process group, as in a terminal, until the API answers.
start() {
  echo "--- make run" >>"$work/run.log"
  setsid make --no-print-directory run >>"$work/run.log" 2>&1 </dev/null &
  run_pid=$!
  runs+=("$run_pid")
  for _ in $(seq 900); do
    if curl -s -o /dev/null "$api/openapi.json"; then
      note_pids "$run_pid"
      return 0
    fi
    kill -0 "$run_pid" 2>/dev/null || fail "make run stopped while starting"
    sleep 0.2
  done
  fail "make run did not answer within 3 minutes"
}
# ctrl_c is Ctrl-C in make run's terminal: SIGINT to its process group. The API goes quiet
# before the function returns, so that the next answer comes from the next run.
ctrl_c() {
  note_pids "$run_pid"
  kill -INT -- "-$run_pid"
  for _ in $(seq 300); do
    curl -s -o /dev/null "$api/openapi.json" || return 0
    sleep 0.1
  done
  fail "the API still answers 30 s after Ctrl-C"
}
# status METHOD PATH KEY [BODY] prints the HTTP status and keeps the body in $work/body.
status() {
  curl -s -o "$work/body" -w '%{http_code}' -X "$1" "$api$2" -H "Authorization: Bearer $3" \
    -H "Content-Type: application/json" ${4:+-d "$4"}
}
printed_key() { grep -o 'ov_[a-z0-9]*' "$work/run.log" | tail -n 1; }
# first_id prints the first "id" of the last body.
first_id() { grep -o '"id":"[^"]*"' "$work/body" | head -n 1 | cut -d'"' -f4; }

# The first start makes the key (printed, and kept beside the data).
start
key=$(printed_key)
[ -n "$key" ] || fail "make run printed no key"
[ "$(cat "$OPENVITALS_DATA_DIR/local-admin-key" 2>/dev/null)" = "$key" ] || fail "the key is not in \$OPENVITALS_DATA_DIR/local-admin-key"
[ "$(status POST /account/websites "$key" '{"domain":"example.com","displayName":"Kept"}')" = 201 ] || fail "create a website: $(cat "$work/body")"
website=$(first_id)

# 1. Ctrl-C, and make run again right away.
ctrl_c
start
[ "$(status GET /websites "$key")" = 200 ] || fail "after a restart, the key made before: $(cat "$work/body")"
grep -q "\"id\":\"$website\",\"displayName\":\"Kept\"" "$work/body" || fail "after a restart, the websites are $(cat "$work/body")"
[ "$(printed_key)" = "$key" ] || fail "the restart made another key"

# 2. A series whose audit runs when make run stops: the SQS stand-in goes with the run, and
#    with it the audit's message. The next run queues it again, and the series completes.
[ "$(status POST /account/websites "$key" "{\"domain\":\"$OPENVITALS_ADDR\",\"displayName\":\"Self\"}")" = 201 ] || fail "create the service's own website: $(cat "$work/body")"
self=$(first_id)
[ "$(status POST "/$self/settings/pages" "$key" '[{"url":"/app/","alias":"Dashboard"}]')" = 200 ] || fail "add the dashboard page: $(cat "$work/body")"
page=$(first_id)
[ "$(status POST "/$self/testseries" "$key" "{\"pages\":[{\"page_id\":\"$page\",\"device\":\"desktop\"}],\"initiator\":\"restart test\"}")" = 201 ] || fail "start a series: $(cat "$work/body")"
series=$(first_id)
# series_status prints the series' status (its first "status"; its test's follows).
series_status() {
  [ "$(status GET "/$self/testseries/$series" "$key")" = 200 ] || fail "read the series: $(cat "$work/body")"
  grep -o '"status":"[^"]*"' "$work/body" | head -n 1 | cut -d'"' -f4
}
for _ in $(seq 600); do [ "$(series_status)" = testing ] && break; sleep 0.1; done
[ "$(series_status)" = testing ] || fail "the series' audit did not begin within a minute: $(cat "$work/body")"
ctrl_c
start
# A bound for a stuck audit, not a speed check: one Lighthouse run takes about a minute here.
for _ in $(seq 600); do
  state=$(series_status)
  [ "$state" = testing ] || [ "$state" = queued ] || break
  sleep 0.5
done
[ "$state" = completed ] || fail "the series in flight at the restart is $state after 5 minutes: $(cat "$work/body")"

# 3. The run's shell and service killed outright (not its stand-ins): they are left behind.
note_pids "$run_pid"
orphans=$(pgrep -f -- "$standins")
for pid in $(pgrep -g "$run_pid"); do
  grep -qw "$pid" <<<"$orphans" || kill -9 "$pid" 2>/dev/null || true
done
{ wait "$run_pid"; } 2>/dev/null || true
for pid in $orphans; do alive "$pid" || fail "stand-in $pid did not outlive its run"; done
start
for pid in $orphans; do ! alive "$pid" || fail "the stand-in $pid left behind still runs beside the new run"; done
[ "$(status GET "/$website/settings/pages" "$key")" = 200 ] || fail "after the stand-ins were left behind, the website: $(cat "$work/body")"

# 4. Stopped, nothing is left: no process any run had, no stand-in on these ports.
ctrl_c
wait "$run_pid" || fail "make run exited with $? after Ctrl-C"
sleep 0.5
for pid in "${seen[@]}"; do
  ! alive "$pid" || fail "process $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)) outlived make run"
done

# 5. make reset: the next start has a new key and no website; make demo's data (here a file
# standing for it) stays until make reset DEMO=1.
mkdir -p "$OPENVITALS_DATA_DIR/demo" && touch "$OPENVITALS_DATA_DIR/demo/kept"
make --no-print-directory reset >>"$work/run.log"
[ "$(ls -A "$OPENVITALS_DATA_DIR")" = demo ] || fail "make reset left $(ls -A "$OPENVITALS_DATA_DIR" | tr '\n' ' ')beside the demo's data"
[ -e "$OPENVITALS_DATA_DIR/demo/kept" ] || fail "make reset deleted make demo's data"
make --no-print-directory reset DEMO=1 >>"$work/run.log"
[ ! -e "$OPENVITALS_DATA_DIR/demo" ] || fail "make reset DEMO=1 left $OPENVITALS_DATA_DIR/demo"
start
[ "$(printed_key)" != "$key" ] || fail "after make reset, the same key"
[ "$(status GET "/$website/settings/pages" "$(printed_key)")" = 404 ] || fail "after make reset, the website: $(cat "$work/body")"
[ "$(status GET /websites "$key")" = 401 ] || fail "after make reset, the old key still works"
ctrl_c
wait "$run_pid" || fail "make run exited with $? after Ctrl-C"
echo "local restarts: data and key kept, a series in flight completed, nothing left behind, make reset starts over"

#!/bin/sh
# Runs the CDK app for the CDK CLI (cdk.json: "app": "sh infra/cdk-app.sh").
#
# The app must run inside infra/: it is its own Go module, and it is the
# directory `go test` runs in, so relative paths (the function binaries, the
# browser image, ../internal/api/routes.json) mean the same thing in tests and
# in `cdk synth`. The CLI, though, runs this from the repository root
# and hands over the paths below relative to the root, so make them absolute
# before moving into infra/ (otherwise the app writes its cloud assembly to
# infra/<output> and the CLI finds nothing).
set -e

abs() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s/%s\n' "$PWD" "$1" ;;
	esac
}

[ -z "$CDK_OUTDIR" ] || CDK_OUTDIR=$(abs "$CDK_OUTDIR")
[ -z "$CDK_ERROR_FILE" ] || CDK_ERROR_FILE=$(abs "$CDK_ERROR_FILE")
[ -z "$CDK_PERF_COUNTERS_FILE" ] || CDK_PERF_COUNTERS_FILE=$(abs "$CDK_PERF_COUNTERS_FILE")

cd "$(dirname "$0")"
exec go run .

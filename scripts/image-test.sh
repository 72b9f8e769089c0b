#!/usr/bin/env bash
# The browser image test: builds layers/browser/Dockerfile as `cdk deploy` does, unpacks the
# image's file system, and runs internal/testing/lambdatest's TestBrowserImage, which starts the audit
# worker's entry point inside it (chroot, as an unprivileged user, /tmp the only writable
# place, as in Lambda) under the fake Lambda Runtime API and has it audit a page served on
# the host with the image's Chromium, Node 22 and Lighthouse.
#
#   scripts/image-test.sh docker    # `make image-test`: Docker with BuildKit
#   scripts/image-test.sh buildah   # no Docker engine: buildah, from a base made by debootstrap
#
# Linux only, as root (chroot and mounts). The image is built for the host's CPU, with the
# workers built for it too: the stack deploys the linux/arm64 build of the same Dockerfile,
# which an x86_64 machine can only run under emulation. The buildah way needs no image
# registry: debian:bookworm-slim, the Dockerfile's one base, is made from Debian's packages
# (debootstrap, minbase) and stored under that name in buildah's local storage.
# Not part of `make test` (the build takes several minutes).
#
# Environment: IMAGE_TEST_PORTS (DynamoDB Local and SQS stand-in ports, default 28300 28301).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
mode=${1:-docker}
work=$root/.run/image
image=openvitals-browser-test
ports=(${IMAGE_TEST_PORTS:-28300 28301})
arch=$(go env GOARCH)

die() {
	echo "image-test: $*" >&2
	exit 1
}
say() { echo "image-test: $*"; }

[ "$(id -u)" = 0 ] || die "run as root (chroot and mounts)"
[ "$(uname -s)" = Linux ] || die "Linux only"
mkdir -p "$work"

# ---- the workers, for the host's CPU, with the Makefile's flags ----------------------------
for f in audit-worker multistep-worker; do
	GOOS=linux GOARCH=$arch CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' \
		-o "$work/dist/$f/bootstrap" "./functions/$f"
done
contexts=(--build-context "audit-worker=$work/dist/audit-worker" --build-context "multistep-worker=$work/dist/multistep-worker")

rootfs=
cleanup=()
finish() {
	local i
	for ((i = ${#cleanup[@]} - 1; i >= 0; i--)); do eval "${cleanup[i]}" || true; done
}
trap finish EXIT

# ---- the image ------------------------------------------------------------------------------
case $mode in
docker)
	command -v docker >/dev/null && docker info >/dev/null 2>&1 || die "no Docker engine (scripts/image-test.sh buildah builds without one)"
	say "docker build --platform linux/$arch"
	DOCKER_BUILDKIT=1 docker build --platform "linux/$arch" "${contexts[@]}" -t "$image" layers/browser
	rootfs=$work/rootfs-image
	rm -rf "$rootfs"
	mkdir -p "$rootfs"
	cleanup+=("rm -rf '$rootfs'")
	cid=$(docker create "$image")
	docker export "$cid" | tar -x -C "$rootfs"
	docker rm "$cid" >/dev/null
	image_env=$(docker image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image")
	;;
buildah)
	command -v buildah >/dev/null || die "buildah is missing (Debian: apt-get install buildah debootstrap)"
	# vfs: works inside containers, where overlay over overlay may not.
	b=(buildah --storage-driver vfs)
	base=docker.io/library/debian:bookworm-slim
	if ! "${b[@]}" inspect --type image "$base" >/dev/null 2>&1; then
		command -v debootstrap >/dev/null || die "debootstrap is missing (Debian: apt-get install debootstrap)"
		say "making $base with debootstrap"
		rm -rf "$work/base"
		debootstrap --variant=minbase bookworm "$work/base" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
			die "debootstrap failed (log: $work/debootstrap.log)"
		rm -rf "$work/base/var/cache/apt/archives/"*.deb "$work/base/var/lib/apt/lists/"*
		# The sources of the official image: debootstrap sets bookworm alone, without the
		# security and stable updates (Chromium's security releases come from there).
		rm -f "$work/base/etc/apt/sources.list"
		cat >"$work/base/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
		# Where the host's HTTPS goes through a proxy with its own certificate authority
		# (its extra CAs in /usr/local/share/ca-certificates), the build's apt and npm must
		# trust it too: the base gets the same CAs, and npm the system's bundle (it has its
		# own otherwise). This only concerns the base made here.
		if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
			mkdir -p "$work/base/usr/local/share/ca-certificates"
			cp /usr/local/share/ca-certificates/*.crt "$work/base/usr/local/share/ca-certificates/"
			echo 'cafile=/etc/ssl/certs/ca-certificates.crt' >"$work/base/etc/npmrc"
		fi
		ctr=$("${b[@]}" from scratch)
		mnt=$("${b[@]}" mount "$ctr")
		cp -a "$work/base/." "$mnt/"
		"${b[@]}" umount "$ctr" >/dev/null
		"${b[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$ctr"
		"${b[@]}" commit --rm "$ctr" "$base" >/dev/null
		rm -rf "$work/base"
	fi
	say "buildah bud (chroot isolation)"
	"${b[@]}" bud --layers --isolation chroot --pull-never "${contexts[@]}" -t "$image" layers/browser
	ctr=$("${b[@]}" from --pull-never "$image")
	cleanup+=("${b[*]} rm '$ctr' >/dev/null")
	rootfs=$("${b[@]}" mount "$ctr")
	cleanup+=("${b[*]} umount '$ctr' >/dev/null")
	image_env=$("${b[@]}" inspect --type image --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$image")
	;;
*)
	die "usage: scripts/image-test.sh docker|buildah"
	;;
esac
say "image file system: $rootfs ($(du -sh "$rootfs" | cut -f1))"

# ---- Lambda's view of it: read-only but /tmp, with /proc and /dev ----------------------------
run=$work/run
mkdir -p "$run"
mount --bind "$rootfs" "$run"
cleanup+=("umount -R '$run'")
mount -o remount,bind,ro "$run"
mount -t proc proc "$run/proc"
mount --rbind /dev "$run/dev"
mount -t tmpfs -o mode=1777,size=1g tmpfs "$run/tmp"

# ---- the test -------------------------------------------------------------------------------
layers/standins/standins.sh start "${ports[@]}"
cleanup+=("layers/standins/standins.sh stop ${ports[*]}")
AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_EC2_METADATA_DISABLED=true \
	AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:${ports[0]} AWS_ENDPOINT_URL_SQS=http://127.0.0.1:${ports[1]} \
	OPENVITALS_IMAGE_ROOTFS=$run OPENVITALS_IMAGE_ENV=$image_env \
	go test -count=1 -v -timeout 15m -run '^TestBrowserImage$' ./internal/testing/lambdatest/
say "passed ($mode)"

#!/usr/bin/env bash
# cross-arm64.sh: check that memowm's coding is bit-exact across
# architectures.
#
#  1. Cross-compiles the test binaries of the coding packages for linux/arm64
#     (GOARCH=arm64 go test -c) and runs each under qemu user-mode emulation
#     from inside its package directory (the tests read testdata relative to
#     it). The golden tests (sha256 of coded streams, pinned tables) then
#     check arm64 against the values recorded on amd64.
#  2. Builds scripts/crossarch for amd64 and arm64. The amd64 build builds the
#     test fixture (internal/fixture), saves its bundle and episodes, writes
#     memory files (plain, SlotRepeat, Mix, a lossy policy) and prints their
#     sha256; the arm64 build, under qemu, writes the same files from the
#     saved inputs. Any difference is a failure.
#  3. Also runs the arm64 build on a fixture built under arm64 itself and says
#     whether it matches amd64's; the fixture's sim uses floating point
#     outside the golden-tested inference path, so this is informational
#     unless -strict.
#
# Usage: scripts/cross-arm64.sh [-short] [-strict] [-rev REV] [PKG ...]
#   -short    pass -test.short to the test binaries
#   -strict   fail when the fixture built under arm64 differs from amd64's
#   -rev REV  test the committed revision REV (git archive) instead of the
#             working tree; scripts/crossarch comes from the working tree
#             when REV lacks it
#   PKG       packages to test (default: entropy codec worldmodel opq model
#             internal/f32; missing ones, or ones without tests, are skipped)
# Environment: QEMU (default: qemu-aarch64, else qemu-aarch64-static),
#   PKG_TIMEOUT (seconds per test binary, default 1800).
#
# Exit status: 0 when everything passed, 1 on any failure, 2 when it cannot
# run (no qemu, bad arguments).
set -uo pipefail

short=0 strict=0 rev=""
pkgs=()
while [ $# -gt 0 ]; do
	case "$1" in
	-short) short=1 ;;
	-strict) strict=1 ;;
	-rev)
		[ $# -ge 2 ] || { echo "cross-arm64: -rev needs a revision" >&2; exit 2; }
		rev="$2"; shift ;;
	-h | -help | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "cross-arm64: unknown flag $1 (see -help)" >&2; exit 2 ;;
	*) pkgs+=("${1#./}") ;;
	esac
	shift
done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(entropy codec worldmodel opq model internal/f32)

root=$(cd "$(dirname "$0")/.." && pwd)
qemu=${QEMU:-}
if [ -z "$qemu" ]; then
	for q in qemu-aarch64 qemu-aarch64-static; do
		if command -v "$q" >/dev/null 2>&1; then qemu=$q; break; fi
	done
fi
if [ -z "$qemu" ] || ! command -v "$qemu" >/dev/null 2>&1; then
	echo "cross-arm64: qemu-aarch64 not found; install it with:" >&2
	echo "    apt-get update && apt-get install -y qemu-user" >&2
	echo "(or qemu-user-static, which provides qemu-aarch64-static; or set QEMU)" >&2
	exit 2
fi
command -v go >/dev/null 2>&1 || { echo "cross-arm64: go not found" >&2; exit 2; }
pkg_timeout=${PKG_TIMEOUT:-1800}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cross-arm64.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

src=$root
if [ -n "$rev" ]; then
	src=$tmp/src
	mkdir -p "$src"
	if ! git -C "$root" archive "$rev" | tar -x -C "$src"; then
		echo "cross-arm64: cannot export revision $rev" >&2
		exit 2
	fi
	if [ ! -d "$src/scripts/crossarch" ]; then
		mkdir -p "$src/scripts"
		cp -r "$root/scripts/crossarch" "$src/scripts/"
	fi
	rev="$rev ($(git -C "$root" rev-parse --short "$rev"))"
fi

export CGO_ENABLED=0 GOOS=linux
host=$(go env GOHOSTARCH)
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

start=$(now)
echo "cross-arm64: $(go version | cut -d' ' -f3), $("$qemu" --version | head -1)"
echo "tree: ${rev:-working tree of $root}"
[ $short = 1 ] && echo "mode: -test.short" || echo "mode: full tests"

failed=0
summary=()
report() { # name status seconds
	summary+=("$(printf '%-22s %-5s %7ss' "$1" "$2" "$3")")
	if [ "$2" = FAIL ]; then failed=1; fi
}

# 1. Package tests under qemu.
for pkg in "${pkgs[@]}"; do
	if [ ! -d "$src/$pkg" ]; then
		echo "== $pkg: no such package, skipped"
		summary+=("$(printf '%-22s %-5s' "$pkg" SKIP)")
		continue
	fi
	if ! compgen -G "$src/$pkg/*_test.go" >/dev/null; then
		echo "== $pkg: no tests, skipped"
		summary+=("$(printf '%-22s %-5s' "$pkg" SKIP)")
		continue
	fi
	bin=$tmp/${pkg//\//_}.test
	t0=$(now)
	if ! (cd "$src" && GOARCH=arm64 go test -c -o "$bin" "./$pkg") >"$tmp/build.log" 2>&1; then
		echo "== $pkg: FAIL (arm64 build)"
		sed 's/^/    /' "$tmp/build.log"
		report "$pkg" FAIL "$(secs "$t0" "$(now)")"
		continue
	fi
	t1=$(now)
	args=(-test.timeout "$((pkg_timeout - 30))s")
	[ $short = 1 ] && args+=(-test.short)
	(cd "$src/$pkg" && timeout "$pkg_timeout" "$qemu" "$bin" "${args[@]}") >"$tmp/test.log" 2>&1
	rc=$?
	t2=$(now)
	rm -f "$bin"
	if [ $rc = 0 ]; then
		echo "== $pkg: PASS (build $(secs "$t0" "$t1")s, run $(secs "$t1" "$t2")s)"
		report "$pkg" PASS "$(secs "$t1" "$t2")"
	else
		[ $rc = 124 ] && why="timed out after ${pkg_timeout}s" || why="exit status $rc"
		echo "== $pkg: FAIL, $why (build $(secs "$t0" "$t1")s, run $(secs "$t1" "$t2")s)"
		sed 's/^/    /' "$tmp/test.log" | tail -n 60
		report "$pkg" FAIL "$(secs "$t1" "$t2")"
	fi
done

# 2. Memory files: natively (amd64), arm64 under qemu from the native inputs.
echo "== memory files (scripts/crossarch)"
t0=$(now)
ca_ok=1
if ! (cd "$src" && GOARCH=$host go build -o "$tmp/crossarch-native" ./scripts/crossarch &&
	GOARCH=arm64 go build -o "$tmp/crossarch-arm64" ./scripts/crossarch) >"$tmp/build.log" 2>&1; then
	echo "   FAIL: build"
	sed 's/^/    /' "$tmp/build.log"
	ca_ok=0
fi
tb=$(now)
echo "   built for $host and arm64 in $(secs "$t0" "$tb")s"
# Only the data lines (name hash ...) are compared.
data() { grep -Ev '^(arch|inputs) ' "$1"; }
compare() { # label a b
	if diff <(data "$2") <(data "$3") >"$tmp/diff" 2>&1; then
		echo "   $1: identical ($(data "$2" | wc -l) hashes)"
		return 0
	fi
	echo "   $1: DIFFERENT"
	# In the order of the second file; a name missing from either shows "-".
	awk -v host="$host" 'NR == FNR { h[$1] = $2; next }
		!($1 in h) || h[$1] != $2 { printf "      %-26s %s %.16s  arm64 %.16s\n", $1, host, ($1 in h) ? h[$1] : "-", $2 }
		{ seen[$1] = 1 }
		END { for (k in h) if (!(k in seen)) printf "      %-26s %s %.16s  arm64 -\n", k, host, h[k] }' \
		<(data "$2") <(data "$3")
	return 1
}
if [ $ca_ok = 1 ]; then
	if ! "$tmp/crossarch-native" -save "$tmp/fixture" >"$tmp/amd64.txt" 2>&1; then
		echo "   FAIL: amd64 run"; sed 's/^/    /' "$tmp/amd64.txt"; ca_ok=0
	else
		sed 's/^/   /' "$tmp/amd64.txt"
		echo "   ($host run $(secs "$tb" "$(now)")s)"
	fi
fi
t1=$(now)
if [ $ca_ok = 1 ]; then
	if ! "$qemu" "$tmp/crossarch-arm64" -load "$tmp/fixture" >"$tmp/arm64.txt" 2>&1; then
		echo "   FAIL: arm64 run"; sed 's/^/    /' "$tmp/arm64.txt"; ca_ok=0
	else
		sed 's/^/   /' "$tmp/arm64.txt"
		echo "   (arm64 run under qemu $(secs "$t1" "$(now)")s)"
		compare "same inputs, $host vs arm64" "$tmp/amd64.txt" "$tmp/arm64.txt" || ca_ok=0
	fi
fi
t2=$(now)
if [ $ca_ok = 1 ]; then
	report "memory files" PASS "$(secs "$t0" "$t2")"
else
	report "memory files" FAIL "$(secs "$t0" "$t2")"
fi

# 3. The fixture built under arm64 itself.
if [ -x "$tmp/crossarch-arm64" ]; then
	echo "== fixture built under arm64 (informational$([ $strict = 1 ] && echo ", -strict: a difference fails"))"
	t3=$(now)
	if ! "$qemu" "$tmp/crossarch-arm64" >"$tmp/arm64-native.txt" 2>&1; then
		echo "   FAIL: arm64 run"; sed 's/^/    /' "$tmp/arm64-native.txt"
		report "fixture under arm64" FAIL "$(secs "$t3" "$(now)")"
	else
		sed 's/^/   /' "$tmp/arm64-native.txt"
		echo "   (arm64 run under qemu $(secs "$t3" "$(now)")s)"
		if compare "fixture built on each architecture" "$tmp/amd64.txt" "$tmp/arm64-native.txt"; then
			report "fixture under arm64" PASS "$(secs "$t3" "$(now)")"
		elif [ $strict = 1 ]; then
			report "fixture under arm64" FAIL "$(secs "$t3" "$(now)")"
		else
			echo "   (inputs are listed first: the first of them to differ is where the"
			echo "    fixture stops being portable; files from the same inputs: see above)"
			report "fixture under arm64" DIFF "$(secs "$t3" "$(now)")"
		fi
	fi
fi

echo "== summary (packages: test run under qemu; memory files: builds and both runs)"
printf '   %s\n' "${summary[@]}"
echo "   total $(secs "$start" "$(now)")s"
if [ $failed = 1 ]; then
	echo "cross-arm64: FAIL"
	exit 1
fi
echo "cross-arm64: PASS"

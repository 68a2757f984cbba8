#!/usr/bin/env bash
# bench/alternate.sh [-n ROUNDS] [-g GAP] OLD NEW [small|medium|large]
#
# Compares two builds of skillsync on the daemon's path, in turns: each
# build has a workspace of its own on one upstream (the corpus of
# bench/run.sh, medium unless named), synced cold at A; then, ROUNDS
# times (default 5), upstream moves to B (1% changed) and back to A, and
# at each move every build in turn waits GAP seconds (default 1; a
# daemon waits minutes, try 65), fetches (untimed) and syncs, timed, then
# syncs again with nothing new, timed. Which build goes first alternates
# by round. Builds measured one after the other, minutes apart, differ by
# a quarter on the VMs we measure on as the machine's speed drifts; in
# turns, both meet the same drift.
#
# OLD and NEW are commits (anything git rev-parse takes), or "." for the
# working tree as it is. It prints the medians of wall time and CPU time
# (user + system, bench/timeit) per step and build, and NEW's CPU time
# over OLD's. It asserts no timing.
set -euo pipefail
# A build that fails inside $(...) stops the script, not just its subshell.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
. bench/corpus.sh

usage() { echo "usage: bench/alternate.sh [-n ROUNDS] [-g GAP] OLD NEW [small|medium|large]" >&2; exit 2; }
rounds=5 gap=1
while getopts n:g: o; do
  case $o in
    n) rounds=$OPTARG ;;
    g) gap=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] && [ $# -le 3 ] || usage
case "$rounds" in '' | *[!0-9]* | 0) echo "bench/alternate.sh: -n takes a whole number of rounds, 1 or more" >&2; exit 2 ;; esac
case "$gap" in '' | *[!0-9]*) echo "bench/alternate.sh: -g takes whole seconds" >&2; exit 2 ;; esac
old=$1 new=$2 size=${3:-medium}
sizes "$size" || usage

work=$(mktemp -d)
cleanup() {
  for w in "$work"/src-*; do
    if [ -d "$w" ]; then git worktree remove --force "$w" >/dev/null 2>&1 || true; fi
  done
  rm -rf "$work"
  git worktree prune || true
}
trap cleanup EXIT

# build NAME REV: builds skillsync at REV into $work/NAME, as bench/run.sh
# and the release do (static, no cgo).
build() {
  local name=$1 rev=$2 src=. commit
  if [ "$rev" != . ]; then
    if ! commit=$(git rev-parse --verify --quiet "$rev^{commit}"); then
      echo "bench/alternate.sh: $rev is not a commit here" >&2
      return 1
    fi
    src=$work/src-$name
    git worktree add -q --detach "$src" "$commit"
  fi
  if ! (cd "$src" && CGO_ENABLED=0 go build -o "$work/$name" ./cmd/skillsync); then
    echo "bench/alternate.sh: skillsync does not build at $rev" >&2
    return 1
  fi
  local changes=
  if [ "$rev" = . ] && [ -n "$(git status --porcelain)" ]; then changes=', with changes'; fi
  echo "$name: $rev ($(cd "$src" && git rev-parse --short HEAD)$changes)"
}
echo "building..." >&2
built_old=$(build old "$old")
built_new=$(build new "$new")
go build -o "$work/timeit" ./bench/timeit

out=$PWD/bench/out/$size
mkdir -p "$out"
make_corpus "$out"
up=$work/up.git
git clone -q --bare "$out/corpus" "$up"
git -C "$up" config gc.auto 0
git -C "$up" symbolic-ref HEAD refs/heads/main
git -C "$up" update-ref refs/heads/main v1

mkdir -p "$work/m"
for b in old new; do
  mkdir -p "$work/ws-$b"
  printf 'max_entries: 1000000\nrepositories:\n  - name: corpus\n    git: file://%s\n' "$up" > "$work/ws-$b/skillsync.yaml"
  echo "cold sync ($b)..." >&2
  (cd "$work/ws-$b" && XDG_CACHE_HOME=$work/ws-$b/.xdg "$work/$b" sync --quiet >/dev/null)
done

# timed LABEL BUILD ARGS...: one run of the build's skillsync in its
# workspace, dirty pages written back first; appends "wall cpu" to
# $work/m/LABEL-BUILD.
timed() {
  local label=$1 b=$2
  shift 2
  sync
  (cd "$work/ws-$b" && XDG_CACHE_HOME=$work/ws-$b/.xdg "$work/timeit" -o "$work/t" "$work/$b" "$@" >/dev/null)
  cut -d' ' -f1,2 "$work/t" >> "$work/m/$label-$b"
}

for i in $(seq "$rounds"); do
  order="old new"
  [ $((i % 2)) -eq 0 ] && order="new old"
  echo "round $i of $rounds ($order first)" >&2
  for to in v2 v1; do
    git -C "$up" update-ref refs/heads/main "$to"
    label=pct
    [ "$to" = v1 ] && label=back
    for b in $order; do
      sleep "$gap"
      (cd "$work/ws-$b" && XDG_CACHE_HOME=$work/ws-$b/.xdg "$work/$b" fetch --quiet >/dev/null)
      timed "$label" "$b" sync --quiet
      timed noop "$b" sync --quiet
    done
  done
done

col() { awk -v c="$2" '{print $c}' "$work/m/$1" | median; }
echo
echo "bench/alternate.sh -n $rounds -g $gap $old $new $size: $rounds rounds, $gap s before each fetch; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$built_old"
echo "$built_new"
printf '\n%-26s %11s %11s %11s %11s %9s\n' step "old wall" "old CPU" "new wall" "new CPU" "CPU new/old"
for label in pct back noop; do
  case $label in
    pct) name="A -> B (1%): sync" ;;
    back) name="back to A: sync" ;;
    noop) name="no-op sync" ;;
  esac
  ow=$(col "$label-old" 1) oc=$(col "$label-old" 2) nw=$(col "$label-new" 1) nc=$(col "$label-new" 2)
  printf '%-26s %11s %11s %11s %11s %9s\n' "$name" "$ow" "$oc" "$nw" "$nc" "$(awk -v a="$nc" -v b="$oc" 'BEGIN {printf "%.2f", a/b}')"
done
echo "(medians in ms, of $rounds runs for each sync step and $((rounds * 2)) for the no-op)"

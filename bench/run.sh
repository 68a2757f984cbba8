#!/usr/bin/env bash
# bench/run.sh small|medium|large — measures skillsync on a generated
# corpus against what a user would do by hand with git, and prints a
# table. Each figure is the median of $RUNS runs (default 5 for small, 3
# for medium, 1 for large; at least 10 for the no-op sync and the read
# commands). Results go to bench/out/<size>/results.txt and
# results.json. It asserts no timing: it exits non-zero only when it
# cannot run. GOBENCH=0 skips the Go benchmarks. PCT_GAP=N waits N
# seconds before each fetch and 1% sync (and in the Go benchmark of the
# daemon's sync), as a daemon's rounds are minutes apart: the folders the
# sync before swapped out are then recycled (see materialize's
# recycleAfter, a minute) instead of removed, and on a machine that
# reclaims idle page cache the files a sync reads back are on disk again.
#
# It takes a daemon's path: the workspace follows a branch of an upstream
# bare repository (packed, as a server's is) with the default depth-1
# store; the cold sync is at revision A (v1), then upstream moves to B
# (v2, 1% changed), and the fetch and the sync are timed apart, then the
# way back to A. The git baseline takes the same path by hand: git clone
# --depth 1 + cp -r, then git fetch --depth 1, then git checkout + rsync
# of the copy.
#
# Every step reports, for skillsync and for the baseline: wall time, CPU
# seconds (user + system, of the process and its children: steadier than
# wall time on a shared machine), the files opened (open and openat calls
# under strace -f --seccomp-bpf, which stops at those calls only, on one
# extra untimed run; "-" when strace is missing or cannot trace),
# peak RSS (the largest process's) and the 1-minute load average when it
# ran; bench/timeit takes the first two and the last but one. The timer's
# own floor, a timed /bin/true, is a row of the table.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

size=${1:-}
. bench/corpus.sh
sizes "$size" || { echo "usage: bench/run.sh small|medium|large" >&2; exit 2; }
case ${PCT_GAP:-0} in
  '' | *[!0-9]*) echo "bench/run.sh: PCT_GAP=$PCT_GAP: give whole seconds, such as PCT_GAP=65" >&2; exit 2 ;;
esac
# Whole seconds from here on, without leading zeros (results.json takes it as a number).
PCT_GAP=$((10#${PCT_GAP:-0}))
runs=${RUNS:-$defruns}
# Read commands and the no-op sync are quick, and on a shared machine a
# few tens of milliseconds swing by half from one minute to the next:
# more runs for a steady median.
readruns=$(( runs < 10 ? 10 : runs ))

# What the comparisons need.
need=()
command -v rsync >/dev/null || need+=(rsync)
command -v git >/dev/null || need+=(git)
command -v strace >/dev/null || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || true
fi

out=$PWD/bench/out/$size
mkdir -p "$out"
bin=$out/skillsync
# Built as release/build.sh builds what users download: static, no cgo.
CGO_ENABLED=0 go build -o "$bin" ./cmd/skillsync
# The timer every step runs under (bench/timeit: wall time around the
# command alone, CPU time in microseconds, peak RSS).
timeit=$out/timeit
go build -o "$timeit" ./bench/timeit
corpus=$out/corpus
make_corpus "$out"
changed=$(awk -F': ' '/"added"|"edited"/ {gsub(/,/,"",$2); s+=$2} END {print s}' "$out/corpus.json")
nfiles=$(awk -F': ' '/"files"/ {gsub(/,/,"",$2); print $2}' "$out/corpus.json")
mib=$(awk -F': ' '/"bytes"/ {gsub(/,/,"",$2); printf "%.0f", $2/1048576}' "$out/corpus.json")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/m"

# Every timed command starts with dirty pages written back, so none pays
# for writing back another's files: skillsync's syncfs would otherwise
# flush the baseline's dirty pages too.
settle() { sync; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "-" && b != "-" && b > 0) printf "%.2f", a/b; else print "-"}'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# The upstream a daemon follows: a bare, packed copy of the corpus whose
# main branch is moved between v1 (A) and v2 (B).
up=$work/up.git
git clone -q --bare "$corpus" "$up"
git -C "$up" config gc.auto 0
git -C "$up" symbolic-ref HEAD refs/heads/main
upstream() { git -C "$up" update-ref refs/heads/main "$1"; }
upstream v1
# ws DIR: a workspace whose one source follows upstream's default branch
# (depth 1, the default). The large corpus holds more directory entries
# than discovery reads by default (max_entries 100,000).
ws() {
  mkdir -p "$1"
  printf 'max_entries: 1000000\nrepositories:\n  - name: corpus\n    git: file://%s\n' "$up" > "$1/skillsync.yaml"
}

# measure LABEL DIR CMD...: runs CMD in DIR under bench/timeit and
# appends "wall_ms cpu_ms rss_kib load" to $work/m/LABEL; CMD's output
# goes to $work/m/LABEL.out. A skillsync command is run with its
# XDG_CACHE_HOME in DIR. The clock starts and stops in timeit, around
# the command alone: timed from this shell (date, a subshell, GNU time)
# /bin/true took 16 ms on the VMs we measure on, every step's figure
# that much too high.
measure() {
  local label=$1 d=$2
  shift 2
  settle
  (cd "$d" && XDG_CACHE_HOME="$d/.xdg" "$timeit" -o "$work/time" "$@" > "$work/m/$label.out")
  awk -v l="$(load1)" '{printf "%s %.1f %d %s\n", $1, $2, $3, l}' "$work/time" >> "$work/m/$label"
}
# opens LABEL DIR CMD...: the files CMD opens (open and openat calls,
# strace -f), on an untimed run, into $work/m/LABEL.opens.
opens() {
  local label=$1 d=$2
  shift 2
  if ! command -v strace >/dev/null; then echo - > "$work/m/$label.opens"; return; fi
  # Where strace may not trace (a container without ptrace), no count.
  if ! (cd "$d" && XDG_CACHE_HOME="$d/.xdg" strace -f --seccomp-bpf -c -o "$work/strace" -e trace=open,openat "$@" > /dev/null 2>&1); then
    echo - > "$work/m/$label.opens"
    return
  fi
  awk '$NF == "total" {print $4+0; found=1} END {if (!found) print 0}' "$work/strace" > "$work/m/$label.opens"
}
# col LABEL N: the median of column N of LABEL's runs (the maximum for
# RSS, column 3).
col() {
  [ -f "$work/m/$1" ] || { echo -; return; }
  if [ "$2" = 3 ]; then awk '{print $3}' "$work/m/$1" | sort -n | tail -1
  else awk -v c="$2" '{print $c}' "$work/m/$1" | median; fi
}
wall() { col "$1" 1; }
cpu() { col "$1" 2; }
rss() { col "$1" 3; }
load() { col "$1" 4; }
nopens() { cat "$work/m/$1.opens" 2>/dev/null || echo -; }
field() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | awk '{print $2}'; }
clone_cp='git clone -q --depth 1 "file://$1" repo 2>/dev/null && cp -r repo/skills copy'

echo "1/6 cold sync at A vs git clone --depth 1 + cp -r, and vs tar -x + sync ($runs runs each)" >&2
git -C "$corpus" archive --format=tar v1 skills > "$out/v1.tar"
for i in $(seq "$runs"); do
  d=$work/cold-$i; ws "$d"
  c=$work/clone-$i; mkdir -p "$c"
  # Which of the two goes first alternates: the first after the last
  # run's removals creates its 20,000 files where the file system has
  # just freed as many, and neither should always be that one.
  if [ $((i % 2)) -eq 0 ]; then measure clone "$c" bash -c "$clone_cp" _ "$up"; fi
  measure cold "$d" "$bin" sync --quiet --json
  cp "$work/m/cold.out" "$d/sync.json"
  if [ $((i % 2)) -eq 1 ]; then measure clone "$c" bash -c "$clone_cp" _ "$up"; fi
  x=$work/untar-$i; mkdir -p "$x"
  measure untar "$x" bash -c 'tar -xf "$1" && sync' _ "$out/v1.tar"
  rm -rf "$x"
  [ "$i" -gt 1 ] && rm -rf "$d" "$c"
done
d=$work/cold-opens; ws "$d"; opens cold "$d" "$bin" sync --quiet; rm -rf "$d"
c=$work/clone-opens; mkdir -p "$c"; opens clone "$c" bash -c "$clone_cp" _ "$up"; rm -rf "$c"
cold_written=$(field "$work/cold-1/sync.json" written)
if [ "${cold_written:-0}" -ne "$nfiles" ]; then
  echo "bench: the cold sync wrote ${cold_written:-0} of the corpus's $nfiles files; its report is below" >&2
  cat "$work/cold-1/sync.json" >&2
  exit 1
fi

echo "2/6 sync with nothing new ($readruns runs), trusting the records and with --verify ($runs), vs rsync -a quick check" >&2
d=$work/cold-1
c=$work/clone-1
rsync -a "$c/repo/skills/" "$c/copy/"
for i in $(seq "$readruns"); do
  measure noop "$d" "$bin" sync --quiet --json
  measure rsync "$c" rsync -a repo/skills/ copy/
done
noop_written=$(field "$work/m/noop.out" written)
opens noop "$d" "$bin" sync --quiet
opens rsync "$c" rsync -a repo/skills/ copy/
for i in $(seq "$runs"); do
  measure noopv "$d" "$bin" sync --quiet --json --verify
done
noopv_written=$(field "$work/m/noopv.out" written)

echo "3/6 upstream moves A -> B (1%): fetch, then sync, vs git fetch --depth 1, then checkout + rsync; and back to A" >&2
mapfile -t changed_paths < <(git -C "$corpus" diff --name-only --diff-filter=AM v1 v2)
git_fetch='git fetch -q --depth 1 origin main 2>/dev/null'
git_sync='git -C repo checkout -q --detach FETCH_HEAD && rsync -a --delete repo/skills/ copy/'
pct_written=0; pct_bytes=0
for i in $(seq "$runs"); do
  [ "$PCT_GAP" -gt 0 ] && sleep "$PCT_GAP"
  upstream v2
  measure fetchb "$d" "$bin" fetch --quiet
  measure pct "$d" "$bin" sync --quiet --json
  pct_written=$(field "$work/m/pct.out" written); pct_bytes=$(field "$work/m/pct.out" bytes_written)
  measure gfetchb "$c/repo" bash -c "$git_fetch"
  measure gpct "$c" bash -c "$git_sync"
  # The clone is at B: its changed files are what a sync must write.
  w=$work/write-$i; mkdir -p "$w"
  measure write "$c/repo" bash -c 'cp --parents "${@:2}" "$1/" && sync' _ "$w" "${changed_paths[@]}"
  rm -rf "$w"
  [ "$PCT_GAP" -gt 0 ] && sleep "$PCT_GAP"
  upstream v1
  measure fetcha "$d" "$bin" fetch --quiet
  measure back "$d" "$bin" sync --quiet --json
  measure gfetcha "$c/repo" bash -c "$git_fetch"
  measure gback "$c" bash -c "$git_sync"
done
# Opens, on one more round trip, untimed.
upstream v2
opens fetchb "$d" "$bin" fetch --quiet
opens pct "$d" "$bin" sync --quiet
opens gfetchb "$c/repo" bash -c "$git_fetch"
opens gpct "$c" bash -c "$git_sync"
upstream v1
opens fetcha "$d" "$bin" fetch --quiet
opens back "$d" "$bin" sync --quiet
opens gfetcha "$c/repo" bash -c "$git_fetch"
opens gback "$c" bash -c "$git_sync"
upstream v2
(cd "$d" && XDG_CACHE_HOME="$d/.xdg" "$bin" sync --quiet > /dev/null)
git -C "$c/repo" fetch -q --depth 1 origin main 2>/dev/null && git -C "$c/repo" checkout -q --detach FETCH_HEAD
rsync -a --delete "$c/repo/skills/" "$c/copy/"

echo "4/6 verify vs rsync -a --checksum --dry-run" >&2
for i in $(seq "$runs"); do
  measure verify "$d" "$bin" verify --quiet
  measure rsyncc "$c" rsync -a --checksum --dry-run repo/skills/ copy/
done

echo "5/6 read commands in new processes: prompt, list, search ($readruns runs each)" >&2
for i in $(seq "$readruns"); do
  measure prompt "$d" "$bin" prompt
  measure list "$d" "$bin" list
  measure search "$d" "$bin" search "deploy review"
  measure floor "$d" /bin/true
done
opens prompt "$d" "$bin" prompt
opens list "$d" "$bin" list
opens search "$d" "$bin" search "deploy review"

echo "6/6 Go benchmarks (catalog build, search, prompt over 10,000 skills; prompt and no-op sync over a synced cache; the daemon's 1% sync)" >&2
cachebench=$(( skills < 2000 ? skills : 2000 ))
# The Go benchmarks' workspaces go where every other step's do, on the
# same file system: left to themselves the tests put their temporary
# folders in /dev/shm (internal/testmain), where a sync's syncfs and
# fsyncs cost nothing and creating a file is cheap. Until round sixteen
# they ran there, and the daemon's 1% sync came out at half its time on
# the disk.
gotmp=$work/gotmp
mkdir -p "$gotmp"
gob=
[ "${GOBENCH:-1}" = 0 ] || gob=$(TMPDIR=$gotmp SKILLSYNC_BENCH_SKILLS=$cachebench go test -run '^$' -bench 'Benchmark(CatalogBuild|Search|Prompt|PromptFromCache|NoOpSync)$' -benchmem -benchtime "${BENCHTIME:-1s}" . ./layering/ 2>/dev/null | awk '/^Benchmark/ {printf "%s %s\n", $1, $3}' || true)
bench_ns() { echo "$gob" | awk -v n="$1" '$1 ~ "^"n"(-[0-9]+)?$" {print $2}'; }
catalog_ns=$(bench_ns BenchmarkCatalogBuild); search_ns=$(bench_ns BenchmarkSearch); prompt_ns=$(bench_ns BenchmarkPrompt)
pfc_ns=$(bench_ns BenchmarkPromptFromCache); noop_ns=$(bench_ns BenchmarkNoOpSync)
# The daemon's 1% sync in one process (BenchmarkDaemonSync, in the root package's tests): the same corpus,
# the sync after each fetch timed alone, A -> B and back in turn.
daemon=
[ "${GOBENCH:-1}" = 0 ] || daemon=$(TMPDIR=$gotmp SKILLSYNC_BENCH_CORPUS=$corpus SKILLSYNC_BENCH_GAP=${PCT_GAP}s go test -timeout 0 -run '^$' -bench 'BenchmarkDaemonSync$' -benchtime "${DAEMONRUNS:-6}x" . 2>/dev/null | awk '/^BenchmarkDaemonSync/ {for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") w = $i; else if ($(i+1) == "cpu-ms/op") c = $i; printf "%.1f %s\n", w/1e6, c}' || true)
gap_note=; [ -n "$daemon" ] && [ "$PCT_GAP" -gt 0 ] && gap_note=", ${PCT_GAP} s before each fetch"
daemon_ms=$(echo "$daemon" | awk '{print $1}'); daemon_cpu=$(echo "$daemon" | awk '{print $2}')

# reclaim: the page cache reclaim the machine runs on its own, which
# decides whether a step finds the files it reads in memory or on disk.
# The VMs we measure on run DAMON's pageout of file pages idle for a
# minute: a step that reads what no step touched for a minute reads it
# from disk (docs/performance.md, round thirteen).
reclaim() {
  local k c s age aggr seen=
  for k in /sys/kernel/mm/damon/admin/kdamonds/[0-9]*; do
    [ -e "$k" ] || continue
    seen=1
    [ "$(cat "$k/state" 2>/dev/null)" = on ] || continue
    for c in "$k"/contexts/[0-9]*; do
      # A scheme on physical memory reaches the page cache; one on a
      # process's memory does not.
      [ "$(cat "$c/operations" 2>/dev/null)" = paddr ] || continue
      for s in "$c"/schemes/[0-9]*; do
        [ "$(cat "$s/action" 2>/dev/null)" = pageout ] || continue
        age=$(cat "$s/access_pattern/age/min" 2>/dev/null) || age=
        aggr=$(cat "$c/monitoring_attrs/intervals/aggr_us" 2>/dev/null) || aggr=
        if [ -n "$age" ] && [ -n "$aggr" ]; then
          echo "DAMON pages out what is idle for $((age * aggr / 1000000)) s"
        else
          echo "DAMON pages out what is idle for a while (unreadable settings)"
        fi
        return
      done
    done
  done
  # DAMON's settings are readable by root only.
  if [ -n "$seen" ] && [ ! -r /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ]; then
    echo "page reclaim unknown (DAMON runs; its settings need root)"
  else
    echo "no proactive page reclaim found"
  fi
}
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go env GOVERSION), $(reclaim)"
endload=$(cut -d' ' -f1-3 /proc/loadavg)
mibof() { [ "$1" = - ] && echo - || echo $(( $1 / 1024 )); }
# row STEP WHO LABEL: one line of the table.
row() {
  printf '%-36s %-26s %10s %9s %8s %7s %6s\n' "$1" "$2" "$(wall "$3")" "$(cpu "$3")" "$(nopens "$3")" "$(mibof "$(rss "$3")")" "$(load "$3")"
}
{
printf '\nskillsync benchmark: %s corpus (%s skills, %s files, %s MiB; the 1%% commit adds or edits %s files), median of %s runs (%s for read commands and the no-op sync)\n' \
  "$size" "$skills" "$nfiles" "$mib" "$changed" "$runs" "$readruns"
printf 'command: %sRUNS=%s bench/run.sh %s; machine: %s; load average at the end: %s\n\n' "$([ "$PCT_GAP" -gt 0 ] && echo "PCT_GAP=$PCT_GAP ")" "$runs" "$size" "$machine" "$endload"
printf '%-36s %-26s %10s %9s %8s %7s %6s\n' "step" "who" "wall ms" "CPU ms" "opens" "RSS MiB" "load"
row "cold sync at A (depth-1 store)" "skillsync sync" cold
row "" "git clone --depth 1 + cp -r" clone
row "" "tar -x + sync" untar
row "no-op sync" "skillsync sync" noop
row "" "rsync -a" rsync
row "no-op sync --verify" "skillsync sync --verify" noopv
row "upstream A -> B (1%): fetch" "skillsync fetch" fetchb
row "" "git fetch --depth 1" gfetchb
row "upstream A -> B (1%): sync" "skillsync sync" pct
row "" "git checkout + rsync -a" gpct
row "" "cp the changed files + sync" write
row "back to A: fetch" "skillsync fetch" fetcha
row "" "git fetch --depth 1" gfetcha
row "back to A: sync" "skillsync sync" back
row "" "git checkout + rsync -a" gback
row "verify" "skillsync verify" verify
row "" "rsync -a --checksum -n" rsyncc
row "prompt, new process" "skillsync prompt" prompt
row "list, new process" "skillsync list" list
row "search, new process" "skillsync search" search
row "the timer's floor" "/bin/true" floor
printf '\nratios: cold wall %s, cold CPU %s (skillsync / clone + cp); 1%% sync / (2 x no-op + write) %s; back / (2 x no-op + write) %s\n' \
  "$(ratio "$(wall cold)" "$(wall clone)")" "$(ratio "$(cpu cold)" "$(cpu clone)")" \
  "$(ratio "$(wall pct)" "$(awk -v n="$(wall noop)" -v w="$(wall write)" 'BEGIN {print 2*n+w}')")" \
  "$(ratio "$(wall back)" "$(awk -v n="$(wall noop)" -v w="$(wall write)" 'BEGIN {print 2*n+w}')")"
printf 'files written: cold %s, no-op %s, no-op --verify %s, 1%% sync %s (%s bytes; the commit adds or edits %s)\n' \
  "$cold_written" "$noop_written" "$noopv_written" "$pct_written" "$pct_bytes" "$changed"
printf 'Go benchmarks over 10,000 skills: catalog build %s ns/op, search %s ns/op, prompt %s ns/op\n' "${catalog_ns:--}" "${search_ns:--}" "${prompt_ns:--}"
printf 'Go benchmarks over a synced cache of %s skills: prompt %s ns/op, no-op sync %s ns/op\n' "$cachebench" "${pfc_ns:--}" "${noop_ns:--}"
printf 'Go benchmark of the 1%% sync after its fetch, in one process, on the file system of the steps above (BenchmarkDaemonSync%s): %s ms wall, %s ms CPU per sync\n' "$gap_note" "${daemon_ms:--}" "${daemon_cpu:--}"
} | tee "$out/results.txt"

# results.json: per step label, the same figures.
jnum() { [ "$1" = - ] && echo null || echo "$1"; }
{
  printf '{\n  "size": "%s", "skills": %s, "files": %s, "changed_files": %s, "runs": %s,\n' "$size" "$skills" "$nfiles" "$changed" "$runs"
  printf '  "machine": "%s", "load_average_end": "%s",\n' "$machine" "$endload"
  printf '  "files_written": {"cold": %s, "noop": %s, "noop_verify": %s, "pct": %s}, "pct_bytes_written": %s,\n' \
    "$(jnum "${cold_written:--}")" "$(jnum "${noop_written:--}")" "$(jnum "${noopv_written:--}")" "$(jnum "${pct_written:--}")" "$(jnum "${pct_bytes:--}")"
  printf '  "go_bench_ns": {"catalog_build": %s, "search": %s, "prompt": %s, "prompt_from_cache": %s, "noop_sync": %s, "cache_bench_skills": %s},\n' \
    "$(jnum "${catalog_ns:--}")" "$(jnum "${search_ns:--}")" "$(jnum "${prompt_ns:--}")" "$(jnum "${pfc_ns:--}")" "$(jnum "${noop_ns:--}")" "$cachebench"
  printf '  "go_bench_daemon_sync": {"wall_ms": %s, "cpu_ms": %s, "gap_s": %s},\n' "$(jnum "${daemon_ms:--}")" "$(jnum "${daemon_cpu:--}")" "$PCT_GAP"
  printf '  "steps": {'
  sep=
  for l in cold clone untar noop rsync noopv fetchb gfetchb pct gpct write fetcha gfetcha back gback verify rsyncc prompt list search floor; do
    printf '%s\n    "%s": {"wall_ms": %s, "cpu_ms": %s, "opens": %s, "peak_rss_kib": %s, "load": %s}' "$sep" "$l" \
      "$(jnum "$(wall $l)")" "$(jnum "$(cpu $l)")" "$(jnum "$(nopens $l)")" "$(jnum "$(rss $l)")" "$(jnum "$(load $l)")"
    sep=,
  done
  printf '\n  }\n}\n'
} > "$out/results.json"
echo "wrote $out/results.txt and $out/results.json" >&2

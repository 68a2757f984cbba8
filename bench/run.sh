#!/usr/bin/env bash
# bench/run.sh small|medium|large — measures skillsync on a generated
# corpus against what a user would do by hand, and prints a table. Each
# figure is the median of $RUNS runs (default 5; 3 for large). Results go
# to bench/out/<size>/results.json. It asserts no timing: it exits
# non-zero only when it cannot run. GOBENCH=0 skips the Go benchmarks.
# PCT_GAP=N waits N seconds before each
# timed 1% sync, as a daemon's syncs are minutes apart: the folders the
# sync before swapped out are then recycled (see materialize's
# recycleAfter, a minute) instead of removed.
#
# It takes a daemon's path: the workspace follows a branch of an upstream
# bare repository with the default depth-1 store; the cold sync is at
# revision A (v1), then upstream moves to B (v2, 1% changed), and the
# fetch and the sync are timed apart, then the way back to A. Next to
# wall time it reports CPU seconds (user + system, steadier than wall
# time on a shared machine) for skillsync and for the git baseline, and
# the files each opened (strace -f, on one extra untimed run; 0 when
# strace is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

size=${1:-}
case "$size" in
  small) skills=200; files=10; defruns=5 ;;
  medium) skills=2000; files=10; defruns=5 ;;
  large) skills=10000; files=10; defruns=3 ;;
  *) echo "usage: bench/run.sh small|medium|large" >&2; exit 2 ;;
esac
runs=${RUNS:-$defruns}
# Read commands are quick: more runs for a steady median.
readruns=$(( runs < 10 ? 10 : runs ))

# What the comparisons need.
need=()
command -v rsync >/dev/null || need+=(rsync)
[ -x /usr/bin/time ] || need+=(time)
command -v git >/dev/null || need+=(git)
command -v strace >/dev/null || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

out=$PWD/bench/out/$size
mkdir -p "$out"
bin=$out/skillsync
go build -o "$bin" ./cmd/skillsync
corpus=$out/corpus
if [ ! -f "$out/corpus.json" ] || [ ! -d "$corpus/.git" ]; then
  rm -rf "$corpus"
  echo "generating the $size corpus ($skills skills x $files files)..." >&2
  go run ./bench/corpus -skills "$skills" -files "$files" -out "$corpus" > "$out/corpus.json"
fi
changed=$(awk -F': ' '/"added"|"edited"/ {gsub(/,/,"",$2); s+=$2} END {print s}' "$out/corpus.json")
nfiles=$(awk -F': ' '/"files"/ {gsub(/,/,"",$2); print $2}' "$out/corpus.json")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every timed command starts with the page cache flushed, so none pays for
# writing back another's files: skillsync's syncfs would otherwise flush
# the baseline's dirty pages too.
now() { date +%s%N; }
settle() { sync; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (b-a)/1e6}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
maxof() { sort -n | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b>0) printf "%.2f", a/b; else print "-"}'; }

# The upstream a daemon follows: a bare copy of the corpus whose main
# branch is moved between v1 (A) and v2 (B).
up=$work/up.git
git clone -q --bare "$corpus" "$up"
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
# cpu_ms FILE: user + system milliseconds from /usr/bin/time -f "%U %S %M".
cpu_ms() { awk '{printf "%.0f", ($1+$2)*1000}' "$1"; }
# run_timed DIR CMD...: one skillsync command in DIR; prints "wall_ms
# rss_kib cpu_ms" and leaves its output in DIR/out.json.
run_timed() {
  local d=$1 t0 t1
  shift
  settle
  t0=$(now)
  (cd "$d" && XDG_CACHE_HOME="$d/.xdg" /usr/bin/time -f "%U %S %M" -o "$d/time" "$bin" "$@" > "$d/out.json")
  t1=$(now)
  echo "$(ms "$t0" "$t1") $(awk '{print $3}' "$d/time") $(cpu_ms "$d/time")"
}
# sync_timed DIR [FLAGS]: one sync; prints "ms rss_kib cpu_ms" and leaves the JSON in DIR/sync.json.
sync_timed() {
  local d=$1
  shift
  run_timed "$d" sync --quiet --json "$@"
  mv "$d/out.json" "$d/sync.json"
}
# opens DIR CMD...: the files one skillsync command opens (open and
# openat calls, strace -f), on an untimed run.
opens() {
  local d=$1
  shift
  command -v strace >/dev/null || { echo 0; return; }
  (cd "$d" && XDG_CACHE_HOME="$d/.xdg" strace -f -c -o "$d/strace" -e trace=open,openat "$bin" "$@" > /dev/null)
  awk '$NF == "total" {print $4+0; found=1} END {if (!found) print 0}' "$d/strace"
}
# read_timed DIR ARGS...: one read command in a new process; prints "ms rss_kib".
read_timed() {
  local d=$1 t0 t1
  shift
  t0=$(now)
  (cd "$d" && XDG_CACHE_HOME="$d/.xdg" /usr/bin/time -f %M -o "$d/rss" "$bin" "$@" > /dev/null)
  t1=$(now)
  echo "$(ms "$t0" "$t1") $(cat "$d/rss")"
}
field() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | awk '{print $2}'; }

echo "1/6 cold sync at A vs git clone --depth 1 + cp -r, and vs tar -x + sync ($runs runs each)" >&2
git -C "$corpus" archive --format=tar v1 skills > "$out/v1.tar"
cold=(); cold_rss=(); cold_cpu=(); clone=(); clone_cpu=(); untar=()
for i in $(seq "$runs"); do
  d=$work/cold-$i; ws "$d"
  read -r t r c < <(sync_timed "$d"); cold+=("$t"); cold_rss+=("$r"); cold_cpu+=("$c")
  c=$work/clone-$i; mkdir -p "$c"
  settle
  t0=$(now)
  /usr/bin/time -f "%U %S %M" -o "$c.time" bash -c 'git clone -q --depth 1 "file://$1" "$2/repo" 2>/dev/null && cp -r "$2/repo/skills" "$2/copy"' _ "$up" "$c"
  t1=$(now); clone+=("$(ms "$t0" "$t1")"); clone_cpu+=("$(cpu_ms "$c.time")")
  x=$work/untar-$i; mkdir -p "$x"
  settle
  t0=$(now); tar -xf "$out/v1.tar" -C "$x" && sync; t1=$(now); untar+=("$(ms "$t0" "$t1")")
  rm -rf "$x"
  [ "$i" -gt 1 ] && rm -rf "$d" "$c"
done
cold_ms=$(printf '%s\n' "${cold[@]}" | median)
cold_cpu_ms=$(printf '%s\n' "${cold_cpu[@]}" | median)
clone_ms=$(printf '%s\n' "${clone[@]}" | median)
clone_cpu_ms=$(printf '%s\n' "${clone_cpu[@]}" | median)
untar_ms=$(printf '%s\n' "${untar[@]}" | median)
# Opens, on one more cold sync and one more clone + copy.
d=$work/cold-opens; ws "$d"
cold_opens=$(opens "$d" sync --quiet)
rm -rf "$d"
clone_opens=0
if command -v strace >/dev/null; then
  c=$work/clone-opens; mkdir -p "$c"
  strace -f -c -o "$c.strace" -e trace=open,openat bash -c 'git clone -q --depth 1 "file://$1" "$2/repo" 2>/dev/null && cp -r "$2/repo/skills" "$2/copy"' _ "$up" "$c"
  clone_opens=$(awk '$NF == "total" {print $4+0}' "$c.strace")
  rm -rf "$c"
fi
cold_written=$(field "$work/cold-1/sync.json" written)
if [ "${cold_written:-0}" -ne "$nfiles" ]; then
  echo "bench: the cold sync wrote ${cold_written:-0} of the corpus's $nfiles files; its report is below" >&2
  cat "$work/cold-1/sync.json" >&2
  exit 1
fi

echo "2/6 sync with nothing new, trusting the records and with --verify, vs rsync -a quick check" >&2
d=$work/cold-1
noop=(); noop_rss=(); noopv=(); noopv_rss=()
noop_cpu=()
for i in $(seq "$runs"); do
  read -r t r c < <(sync_timed "$d"); noop+=("$t"); noop_rss+=("$r"); noop_cpu+=("$c")
done
noop_written=$(field "$d/sync.json" written)
noop_cpu_ms=$(printf '%s\n' "${noop_cpu[@]}" | median)
noop_opens=$(opens "$d" sync --quiet)
for i in $(seq "$runs"); do
  read -r t r _ < <(sync_timed "$d" --verify); noopv+=("$t"); noopv_rss+=("$r")
done
noopv_written=$(field "$d/sync.json" written)
noop_ms=$(printf '%s\n' "${noop[@]}" | median)
noopv_ms=$(printf '%s\n' "${noopv[@]}" | median)
src=$work/clone-1/repo/skills; dst=$work/clone-1/copy
rsync -a "$src/" "$dst/"
rs=()
for i in $(seq "$runs"); do
  settle; t0=$(now); rsync -a "$src/" "$dst/"; t1=$(now); rs+=("$(ms "$t0" "$t1")")
done
rsync_ms=$(printf '%s\n' "${rs[@]}" | median)

echo "3/6 upstream moves A -> B (1%): fetch, then sync, vs writing the changed files (cp + sync); and back to A" >&2
git -C "$work/clone-1/repo" fetch -q --depth 1 origin tag v2 2>/dev/null && git -C "$work/clone-1/repo" checkout -q v2
mapfile -t changed_paths < <(git -C "$corpus" diff --name-only --diff-filter=AM v1 v2)
pct=(); pct_rss=(); pct_cpu=(); pct_written=0; pct_bytes=0; wr=()
fetchb=(); fetchb_cpu=(); back=(); back_cpu=()
for i in $(seq "$runs"); do
  upstream v2
  read -r t _ c < <(run_timed "$d" fetch --quiet); fetchb+=("$t"); fetchb_cpu+=("$c")
  [ "${PCT_GAP:-0}" -gt 0 ] && sleep "$PCT_GAP"
  read -r t r c < <(sync_timed "$d"); pct+=("$t"); pct_rss+=("$r"); pct_cpu+=("$c")
  pct_written=$(field "$d/sync.json" written); pct_bytes=$(field "$d/sync.json" bytes_written)
  upstream v1
  run_timed "$d" fetch --quiet > /dev/null
  [ "${PCT_GAP:-0}" -gt 0 ] && sleep "$PCT_GAP"
  read -r t _ c < <(sync_timed "$d"); back+=("$t"); back_cpu+=("$c")
  w=$work/write-$i; mkdir -p "$w"
  settle
  t0=$(now); (cd "$work/clone-1/repo" && cp --parents "${changed_paths[@]}" "$w/") && sync; t1=$(now); wr+=("$(ms "$t0" "$t1")")
  rm -rf "$w"
done
pct_ms=$(printf '%s\n' "${pct[@]}" | median)
pct_cpu_ms=$(printf '%s\n' "${pct_cpu[@]}" | median)
fetchb_ms=$(printf '%s\n' "${fetchb[@]}" | median)
fetchb_cpu_ms=$(printf '%s\n' "${fetchb_cpu[@]}" | median)
back_ms=$(printf '%s\n' "${back[@]}" | median)
back_cpu_ms=$(printf '%s\n' "${back_cpu[@]}" | median)
write_ms=$(printf '%s\n' "${wr[@]}" | median)
upstream v2
(cd "$d" && XDG_CACHE_HOME="$d/.xdg" "$bin" fetch --quiet > /dev/null)
pct_opens=$(opens "$d" sync --quiet)

echo "4/6 verify vs rsync -a --checksum --dry-run" >&2
rsync -a --delete "$src/" "$dst/"
ver=(); ver_rss=(); rsc=()
for i in $(seq "$runs"); do
  settle; t0=$(now)
  (cd "$d" && XDG_CACHE_HOME="$d/.xdg" /usr/bin/time -f %M -o "$d/rss" "$bin" verify --quiet)
  t1=$(now); ver+=("$(ms "$t0" "$t1")"); ver_rss+=("$(cat "$d/rss")")
  settle; t0=$(now); rsync -a --checksum --dry-run "$src/" "$dst/"; t1=$(now); rsc+=("$(ms "$t0" "$t1")")
done
verify_ms=$(printf '%s\n' "${ver[@]}" | median)
rsyncc_ms=$(printf '%s\n' "${rsc[@]}" | median)

echo "5/6 read commands in new processes: prompt, list, search ($readruns runs each)" >&2
settle
declare -A read_ms read_rss
for cmd in prompt list search; do
  args=("$cmd")
  [ "$cmd" = search ] && args=(search "deploy review")
  ts=(); rss=()
  for i in $(seq "$readruns"); do
    read -r t r < <(read_timed "$d" "${args[@]}"); ts+=("$t"); rss+=("$r")
  done
  read_ms[$cmd]=$(printf '%s\n' "${ts[@]}" | median)
  read_rss[$cmd]=$(printf '%s\n' "${rss[@]}" | maxof)
done

echo "6/6 Go benchmarks (catalog build, search, prompt over 10,000 skills; prompt and no-op sync over a synced cache)" >&2
cachebench=$(( skills < 2000 ? skills : 2000 ))
gob=
[ "${GOBENCH:-1}" = 0 ] || gob=$(SKILLSYNC_BENCH_SKILLS=$cachebench go test -run '^$' -bench 'Benchmark(CatalogBuild|Search|Prompt|PromptFromCache|NoOpSync)$' -benchmem -benchtime "${BENCHTIME:-1s}" . ./layering/ 2>/dev/null | awk '/^Benchmark/ {printf "%s %s\n", $1, $3}' || true)
bench_ns() { echo "$gob" | awk -v n="$1" '$1 ~ "^"n"(-[0-9]+)?$" {print $2}'; }
catalog_ns=$(bench_ns BenchmarkCatalogBuild); search_ns=$(bench_ns BenchmarkSearch); prompt_ns=$(bench_ns BenchmarkPrompt)
pfc_ns=$(bench_ns BenchmarkPromptFromCache); noop_ns=$(bench_ns BenchmarkNoOpSync)

kib() { printf '%s\n' "$@" | maxof; }
cold_rss_kib=$(kib "${cold_rss[@]}"); noop_rss_kib=$(kib "${noop_rss[@]}"); noopv_rss_kib=$(kib "${noopv_rss[@]}")
pct_rss_kib=$(kib "${pct_rss[@]}"); ver_rss_kib=$(kib "${ver_rss[@]}")

machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go env GOVERSION)"
load=$(cut -d' ' -f1-3 /proc/loadavg)
{
printf '\nskillsync benchmark: %s corpus (%s skills, %s files, 1%% commit changes %s), median of %s runs\n' "$size" "$skills" "$nfiles" "$changed" "$runs"
printf 'machine: %s; load average at the end: %s\n\n' "$machine" "$load"
printf '%-44s %12s %12s %8s\n' "measure" "skillsync" "baseline" "ratio"
printf '%-44s %10s ms %10s ms %8s\n' "cold sync vs clone --depth 1 + cp -r" "$cold_ms" "$clone_ms" "$(ratio "$cold_ms" "$clone_ms")"
printf '%-44s %10s ms %10s ms %8s\n' "  CPU (user + system)" "$cold_cpu_ms" "$clone_cpu_ms" "$(ratio "$cold_cpu_ms" "$clone_cpu_ms")"
printf '%-44s %13s %13s %8s\n' "  files opened" "$cold_opens" "$clone_opens" "$(ratio "$cold_opens" "$clone_opens")"
printf '%-44s %10s ms %10s ms %8s\n' "cold sync vs tar -x + sync" "$cold_ms" "$untar_ms" "$(ratio "$cold_ms" "$untar_ms")"
printf '%-44s %10s ms %10s ms %8s\n' "no-op sync vs rsync -a" "$noop_ms" "$rsync_ms" "$(ratio "$noop_ms" "$rsync_ms")"
printf '%-44s %10s ms %12s %8s\n' "  CPU (user + system)" "$noop_cpu_ms" "-" "-"
printf '%-44s %13s %12s %8s\n' "  files opened" "$noop_opens" "-" "-"
printf '%-44s %10s ms %10s ms %8s\n' "no-op sync --verify vs rsync -a" "$noopv_ms" "$rsync_ms" "$(ratio "$noopv_ms" "$rsync_ms")"
printf '%-44s %10s ms %12s %8s\n' "fetch of the 1% commit (B)" "$fetchb_ms" "-" "-"
printf '%-44s %10s ms %12s %8s\n' "  CPU (user + system)" "$fetchb_cpu_ms" "-" "-"
printf '%-44s %10s ms %10s ms %8s\n' "1% sync (after its fetch) vs cp of the changed files + sync" "$pct_ms" "$write_ms" "$(ratio "$pct_ms" "$write_ms")"
printf '%-44s %10s ms %12s %8s\n' "  CPU (user + system)" "$pct_cpu_ms" "-" "-"
printf '%-44s %13s %12s %8s\n' "  files opened" "$pct_opens" "-" "-"
printf '%-44s %10s ms %10s ms %8s\n' "sync back to A (after its fetch)" "$back_ms" "$write_ms" "$(ratio "$back_ms" "$write_ms")"
printf '%-44s %10s ms %12s %8s\n' "  CPU (user + system)" "$back_cpu_ms" "-" "-"
printf '%-44s %10s ms %10s ms %8s\n' "verify vs rsync -a --checksum --dry-run" "$verify_ms" "$rsyncc_ms" "$(ratio "$verify_ms" "$rsyncc_ms")"
printf '%-44s %10s ms %12s %8s\n' "prompt, new process" "${read_ms[prompt]}" "-" "-"
printf '%-44s %10s ms %12s %8s\n' "list, new process" "${read_ms[list]}" "-" "-"
printf '%-44s %10s ms %12s %8s\n' "search, new process" "${read_ms[search]}" "-" "-"
printf '\nfiles written: cold %s, no-op %s, no-op --verify %s, 1%% sync %s (the commit changed %s), 1%% bytes written %s\n' \
  "$cold_written" "$noop_written" "$noopv_written" "$pct_written" "$changed" "$pct_bytes"
printf 'peak RSS (MiB): cold %s, no-op %s, no-op --verify %s, 1%% %s, verify %s, prompt %s, list %s, search %s\n' \
  "$((cold_rss_kib/1024))" "$((noop_rss_kib/1024))" "$((noopv_rss_kib/1024))" "$((pct_rss_kib/1024))" "$((ver_rss_kib/1024))" \
  "$((read_rss[prompt]/1024))" "$((read_rss[list]/1024))" "$((read_rss[search]/1024))"
printf 'Go benchmarks over 10,000 skills: catalog build %s ns/op, search %s ns/op, prompt %s ns/op\n' "${catalog_ns:--}" "${search_ns:--}" "${prompt_ns:--}"
printf 'Go benchmarks over a synced cache of %s skills: prompt %s ns/op, no-op sync %s ns/op\n' "$cachebench" "${pfc_ns:--}" "${noop_ns:--}"
} | tee "$out/results.txt"

cat > "$out/results.json" <<JSON
{
  "size": "$size", "skills": $skills, "files": $nfiles, "changed_files": $changed, "runs": $runs,
  "machine": "$machine", "load_average": "$load",
  "cold_sync_ms": $cold_ms, "clone_cp_ms": $clone_ms, "cold_ratio": $(ratio "$cold_ms" "$clone_ms"),
  "cold_sync_cpu_ms": $cold_cpu_ms, "clone_cp_cpu_ms": $clone_cpu_ms, "cold_cpu_ratio": $(ratio "$cold_cpu_ms" "$clone_cpu_ms"),
  "cold_sync_opens": $cold_opens, "clone_cp_opens": $clone_opens,
  "untar_sync_ms": $untar_ms, "cold_untar_ratio": $(ratio "$cold_ms" "$untar_ms"),
  "noop_sync_ms": $noop_ms, "rsync_ms": $rsync_ms, "noop_ratio": $(ratio "$noop_ms" "$rsync_ms"),
  "noop_verify_sync_ms": $noopv_ms, "noop_sync_cpu_ms": $noop_cpu_ms, "noop_sync_opens": $noop_opens,
  "pct_sync_ms": $pct_ms, "pct_files_written": ${pct_written:-0}, "pct_bytes_written": ${pct_bytes:-0}, "write_changed_ms": $write_ms,
  "pct_sync_cpu_ms": $pct_cpu_ms, "pct_sync_opens": $pct_opens, "pct_fetch_ms": $fetchb_ms, "pct_fetch_cpu_ms": $fetchb_cpu_ms,
  "back_sync_ms": $back_ms, "back_sync_cpu_ms": $back_cpu_ms,
  "verify_ms": $verify_ms, "rsync_checksum_ms": $rsyncc_ms, "verify_ratio": $(ratio "$verify_ms" "$rsyncc_ms"),
  "read_ms": {"prompt": ${read_ms[prompt]}, "list": ${read_ms[list]}, "search": ${read_ms[search]}},
  "peak_rss_kib": {"cold": $cold_rss_kib, "noop": $noop_rss_kib, "noop_verify": $noopv_rss_kib, "pct": $pct_rss_kib, "verify": $ver_rss_kib,
    "prompt": ${read_rss[prompt]}, "list": ${read_rss[list]}, "search": ${read_rss[search]}},
  "go_bench_ns": {"catalog_build": ${catalog_ns:-null}, "search": ${search_ns:-null}, "prompt": ${prompt_ns:-null},
    "prompt_from_cache": ${pfc_ns:-null}, "noop_sync": ${noop_ns:-null}, "cache_bench_skills": $cachebench}
}
JSON
echo "wrote $out/results.json" >&2

#!/usr/bin/env bash
# bench/run.sh small|medium — measures skillsync on a generated corpus
# against what a user would do by hand, and prints a table. Each figure is
# the median of $RUNS runs (default 5). Results go to bench/out/<size>/results.json.
# It asserts no timing: it exits non-zero only when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

size=${1:-}
case "$size" in
  small) skills=200; files=10 ;;
  medium) skills=2000; files=10 ;;
  *) echo "usage: bench/run.sh small|medium" >&2; exit 2 ;;
esac
runs=${RUNS:-5}

# What the comparisons need.
need=()
command -v rsync >/dev/null || need+=(rsync)
[ -x /usr/bin/time ] || need+=(time)
command -v git >/dev/null || need+=(git)
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

# ws DIR REF: a workspace whose one source is the corpus at REF.
ws() {
  mkdir -p "$1"
  printf 'repositories:\n  - name: corpus\n    git: file://%s\n    ref: %s\n' "$corpus" "$2" > "$1/skillsync.yaml"
}
# sync_timed DIR: one sync; prints "ms rss_kib" and leaves the JSON in DIR/sync.json.
sync_timed() {
  local t0 t1
  settle
  t0=$(now)
  (cd "$1" && XDG_CACHE_HOME="$1/.xdg" /usr/bin/time -f %M -o "$1/rss" "$bin" sync --quiet --json > "$1/sync.json")
  t1=$(now)
  echo "$(ms "$t0" "$t1") $(cat "$1/rss")"
}
field() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | awk '{print $2}'; }

echo "1/4 cold sync vs git clone --depth 1 + cp -r ($runs runs each)" >&2
cold=(); cold_rss=(); clone=()
for i in $(seq "$runs"); do
  d=$work/cold-$i; ws "$d" v1
  read -r t r < <(sync_timed "$d"); cold+=("$t"); cold_rss+=("$r")
  c=$work/clone-$i; mkdir -p "$c"
  settle
  t0=$(now)
  git clone -q --depth 1 --branch v1 "file://$corpus" "$c/repo" 2>/dev/null && cp -r "$c/repo/skills" "$c/copy"
  t1=$(now); clone+=("$(ms "$t0" "$t1")")
  [ "$i" -gt 1 ] && rm -rf "$d" "$c"
done
cold_ms=$(printf '%s\n' "${cold[@]}" | median)
clone_ms=$(printf '%s\n' "${clone[@]}" | median)
cold_written=$(field "$work/cold-1/sync.json" written)
if [ "${cold_written:-0}" -eq 0 ]; then
  echo "bench: the cold sync wrote no file; its report is below" >&2
  cat "$work/cold-1/sync.json" >&2
  exit 1
fi

echo "2/4 sync with nothing new vs rsync -a quick check" >&2
d=$work/cold-1
noop=(); noop_rss=()
for i in $(seq "$runs"); do
  read -r t r < <(sync_timed "$d"); noop+=("$t"); noop_rss+=("$r")
done
noop_ms=$(printf '%s\n' "${noop[@]}" | median)
noop_written=$(field "$d/sync.json" written)
src=$work/clone-1/repo/skills; dst=$work/clone-1/copy
rsync -a "$src/" "$dst/"
rs=()
for i in $(seq "$runs"); do
  settle; t0=$(now); rsync -a "$src/" "$dst/"; t1=$(now); rs+=("$(ms "$t0" "$t1")")
done
rsync_ms=$(printf '%s\n' "${rs[@]}" | median)

echo "3/4 sync of the 1% commit" >&2
pct=(); pct_rss=(); pct_written=0; pct_bytes=0
for i in $(seq "$runs"); do
  ws "$d" v2
  read -r t r < <(sync_timed "$d"); pct+=("$t"); pct_rss+=("$r")
  pct_written=$(field "$d/sync.json" written); pct_bytes=$(field "$d/sync.json" bytes_written)
  ws "$d" v1; sync_timed "$d" > /dev/null
done
pct_ms=$(printf '%s\n' "${pct[@]}" | median)
ws "$d" v2; sync_timed "$d" > /dev/null

echo "4/4 verify vs rsync -a --checksum --dry-run" >&2
git -C "$work/clone-1/repo" fetch -q --depth 1 origin tag v2 2>/dev/null && git -C "$work/clone-1/repo" checkout -q v2
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

echo "Go benchmarks (catalog build, search, prompt over 10,000 skills)" >&2
gob=$(go test -run '^$' -bench 'Benchmark(CatalogBuild|Search|Prompt)$' -benchmem -benchtime "${BENCHTIME:-1s}" . ./layering/ 2>/dev/null | awk '/^Benchmark/ {printf "%s %s\n", $1, $3}')
bench_ns() { echo "$gob" | awk -v n="$1" '$1 ~ "^"n"(-[0-9]+)?$" {print $2}'; }
catalog_ns=$(bench_ns BenchmarkCatalogBuild); search_ns=$(bench_ns BenchmarkSearch); prompt_ns=$(bench_ns BenchmarkPrompt)

kib() { printf '%s\n' "$@" | maxof; }
cold_rss_kib=$(kib "${cold_rss[@]}"); noop_rss_kib=$(kib "${noop_rss[@]}"); pct_rss_kib=$(kib "${pct_rss[@]}"); ver_rss_kib=$(kib "${ver_rss[@]}")

machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go env GOVERSION)"
{
printf '\nskillsync benchmark: %s corpus (%s skills, %s files, 1%% commit changes %s), median of %s runs\n' "$size" "$skills" "$nfiles" "$changed" "$runs"
printf 'machine: %s\n\n' "$machine"
printf '%-44s %12s %12s %8s\n' "measure" "skillsync" "baseline" "ratio"
printf '%-44s %10s ms %10s ms %8s\n' "cold sync vs clone --depth 1 + cp -r" "$cold_ms" "$clone_ms" "$(ratio "$cold_ms" "$clone_ms")"
printf '%-44s %10s ms %10s ms %8s\n' "no-op sync vs rsync -a" "$noop_ms" "$rsync_ms" "$(ratio "$noop_ms" "$rsync_ms")"
printf '%-44s %10s ms %12s %8s\n' "1% sync" "$pct_ms" "-" "-"
printf '%-44s %10s ms %10s ms %8s\n' "verify vs rsync -a --checksum --dry-run" "$verify_ms" "$rsyncc_ms" "$(ratio "$verify_ms" "$rsyncc_ms")"
printf '\nfiles written: cold %s, no-op %s, 1%% sync %s (the commit changed %s), 1%% bytes written %s\n' "$cold_written" "$noop_written" "$pct_written" "$changed" "$pct_bytes"
printf 'peak RSS (MiB): cold %s, no-op %s, 1%% %s, verify %s\n' \
  "$((cold_rss_kib/1024))" "$((noop_rss_kib/1024))" "$((pct_rss_kib/1024))" "$((ver_rss_kib/1024))"
printf 'Go benchmarks over 10,000 skills: catalog build %s ns/op, search %s ns/op, prompt %s ns/op\n' "${catalog_ns:--}" "${search_ns:--}" "${prompt_ns:--}"
} | tee "$out/results.txt"

cat > "$out/results.json" <<JSON
{
  "size": "$size", "skills": $skills, "files": $nfiles, "changed_files": $changed, "runs": $runs,
  "machine": "$machine",
  "cold_sync_ms": $cold_ms, "clone_cp_ms": $clone_ms, "cold_ratio": $(ratio "$cold_ms" "$clone_ms"),
  "noop_sync_ms": $noop_ms, "rsync_ms": $rsync_ms, "noop_ratio": $(ratio "$noop_ms" "$rsync_ms"),
  "pct_sync_ms": $pct_ms, "pct_files_written": ${pct_written:-0}, "pct_bytes_written": ${pct_bytes:-0},
  "verify_ms": $verify_ms, "rsync_checksum_ms": $rsyncc_ms, "verify_ratio": $(ratio "$verify_ms" "$rsyncc_ms"),
  "peak_rss_kib": {"cold": $cold_rss_kib, "noop": $noop_rss_kib, "pct": $pct_rss_kib, "verify": $ver_rss_kib},
  "go_bench_ns": {"catalog_build": ${catalog_ns:-null}, "search": ${search_ns:-null}, "prompt": ${prompt_ns:-null}}
}
JSON
echo "wrote $out/results.json" >&2

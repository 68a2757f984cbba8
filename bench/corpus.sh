# bench/corpus.sh is sourced by bench/run.sh and bench/alternate.sh: the
# sizes, and the generated corpus every measurement runs on.

# sizes SIZE: sets skills, files and defruns for small, medium or large;
# returns 1 for anything else.
sizes() {
  case "$1" in
    small) skills=200; files=10; defruns=5 ;;
    medium) skills=2000; files=10; defruns=3 ;;
    large) skills=10000; files=10; defruns=1 ;;
    *) return 1 ;;
  esac
}

# make_corpus OUT: makes sure OUT/corpus holds the generated corpus of
# $skills x $files (tags v1 and v2, the second changing 1% of the
# skills), packed, and OUT/corpus.json its description.
make_corpus() {
  local out=$1
  local corpus=$out/corpus
  if [ ! -f "$out/corpus.json" ] || [ ! -d "$corpus/.git" ]; then
    rm -rf "$corpus" "$out/corpus.json"
    echo "generating the corpus ($skills skills x $files files)..." >&2
    # Its description lands only once the corpus is whole: a run that
    # stops halfway is started again next time, not taken for done.
    if ! go run ./bench/corpus -skills "$skills" -files "$files" -out "$corpus" > "$out/corpus.json.new"; then
      rm -rf "$corpus" "$out/corpus.json.new"
      echo "bench: generating the corpus failed" >&2
      return 1
    fi
    mv "$out/corpus.json.new" "$out/corpus.json"
  fi
  # The generator leaves loose objects. Packed once here: a git server's
  # repository is packed, and upload-pack over loose objects searches for
  # deltas at every clone (over a minute for medium, and git gc --auto
  # would start doing it in the background in the middle of the runs).
  git -C "$corpus" config gc.auto 0
  if [ "$(git -C "$corpus" count-objects | cut -d' ' -f1)" -gt 0 ]; then
    echo "packing the corpus..." >&2
    git -C "$corpus" gc -q
  fi
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }

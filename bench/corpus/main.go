// Command corpus builds the benchmark corpus: a deterministic, seeded git
// repository of skills, with a second commit that changes 1% of the files.
//
//	go run ./bench/corpus -skills 2000 -files 10 -out /tmp/corpus
//
// It prints a JSON summary: both commits and how many files the second one
// added, edited and removed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

type summary struct {
	Repo     string `json:"repo"`
	Skills   int    `json:"skills"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	Commit1  string `json:"commit1"`
	Commit2  string `json:"commit2"`
	Added    int    `json:"added"`
	Edited   int    `json:"edited"`
	Removed  int    `json:"removed"`
	Executes int    `json:"executables"`
}

func main() {
	skills := flag.Int("skills", 200, "number of skills")
	files := flag.Int("files", 10, "files per skill, SKILL.md included")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("out", "", "directory to create the repository in (must not exist)")
	flag.Parse()
	if *out == "" || *files < 1 || *skills < 1 {
		fmt.Fprintln(os.Stderr, "usage: corpus -out DIR [-skills N] [-files N] [-seed N]")
		os.Exit(2)
	}
	s, err := build(*out, *skills, *files, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s)
}

// size draws a file size from 200 B to 64 KiB, log-normal around a mean
// of about 8 KiB, as real skills mix short notes and long references.
func size(rng *rand.Rand) int {
	n := int(math.Exp(rng.NormFloat64()*1.0 + math.Log(5000)))
	return min(max(n, 200), 64<<10)
}

// text is deterministic filler of n bytes.
func text(rng *rand.Rand, n int) []byte {
	words := []string{"skill", "agent", "step", "check", "file", "run", "the", "and", "with", "output", "table", "release", "notes", "deploy", "review"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		if rng.IntN(12) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return []byte(b.String()[:n])
}

func build(dir string, skills, files int, seed uint64) (*summary, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("%s exists", dir)
	}
	rng := rand.New(rand.NewPCG(seed, 42))
	s := &summary{Repo: dir, Skills: skills}
	var paths []string
	for i := 0; i < skills; i++ {
		name := fmt.Sprintf("skill-%05d", i)
		base := filepath.Join(dir, "skills", name)
		summary := strings.ReplaceAll(string(text(rng, 80)), "\n", " ")
		md := fmt.Sprintf("---\nname: %s\ndescription: \"Benchmark skill %d: %s\"\nlicense: MIT\n---\n", name, i, summary)
		body := text(rng, size(rng))
		if err := write(filepath.Join(base, "SKILL.md"), append([]byte(md), body...), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(base, "SKILL.md"))
		for f := 1; f < files; f++ {
			var rel string
			mode := os.FileMode(0o644)
			switch f % 4 {
			case 0:
				rel = fmt.Sprintf("scripts/tool-%d.sh", f)
				mode = 0o755
				s.Executes++
			case 1:
				rel = fmt.Sprintf("references/part-%d.md", f)
			case 2:
				rel = fmt.Sprintf("references/deep/nested/ref-%d.md", f)
			default:
				rel = fmt.Sprintf("assets/data-%d.txt", f)
			}
			data := text(rng, size(rng))
			if mode == 0o755 {
				data = append([]byte("#!/bin/sh\n"), data...)
			}
			p := filepath.Join(base, rel)
			if err := write(p, data, mode); err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
	}
	var err error
	if s.Commit1, err = commit(dir, "corpus", true); err != nil {
		return nil, err
	}
	s.Files, s.Bytes = count(dir)

	// The second commit: 1% of the files change; of those, most are
	// edited, a few added and a few removed.
	sort.Strings(paths)
	change := max(1, len(paths)/100)
	picked := rng.Perm(len(paths))[:change]
	for i, idx := range picked {
		p := paths[idx]
		switch {
		case i%10 == 8 && !strings.HasSuffix(p, "SKILL.md"):
			if err := os.Remove(p); err != nil {
				return nil, err
			}
			s.Removed++
		case i%10 == 9:
			if err := write(filepath.Join(filepath.Dir(p), fmt.Sprintf("added-%d.md", i)), text(rng, size(rng)), 0o644); err != nil {
				return nil, err
			}
			s.Added++
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			data = append(data, text(rng, 100)...)
			info, _ := os.Stat(p)
			if err := write(p, data, info.Mode().Perm()); err != nil {
				return nil, err
			}
			s.Edited++
		}
	}
	if s.Commit2, err = commit(dir, "one percent", false); err != nil {
		return nil, err
	}
	return s, nil
}

func write(p string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, mode)
}

func count(dir string) (int, int64) {
	n, total := 0, int64(0)
	_ = filepath.Walk(filepath.Join(dir, "skills"), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n++
			total += info.Size()
		}
		return nil
	})
	return n, total
}

// commit records the work tree; the first commit also makes the repository
// and tags it v1, the second is tagged v2.
func commit(dir, msg string, first bool) (string, error) {
	run := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
			"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if first {
		if _, err := run("init", "-q", "-b", "main"); err != nil {
			return "", err
		}
		// No gc in the background after a commit of 100,000 files:
		// bench/run.sh packs the corpus itself, and its git gc failed
		// while an automatic one was still running.
		if _, err := run("config", "gc.auto", "0"); err != nil {
			return "", err
		}
	}
	if _, err := run("add", "-A"); err != nil {
		return "", err
	}
	if _, err := run("commit", "-q", "-m", msg); err != nil {
		return "", err
	}
	tag := "v2"
	if first {
		tag = "v1"
	}
	if _, err := run("tag", tag); err != nil {
		return "", err
	}
	return run("rev-parse", "HEAD")
}

//go:build unix

// Command turns runs two builds of a command in turns and compares what
// each process costs, the way a change to a new process's start is
// measured here (a no-op sync, list, prompt, version):
//
//	turns [-n ROUNDS] OLD NEW [-- ARG...]
//
// Each round runs OLD and NEW once each with ARGs in the current folder,
// which one goes first alternating from round to round, their output
// discarded; wall time runs from just before a process starts to just
// after it is reaped, CPU time is its user + system time from wait4. It
// prints the median of each for both builds and NEW's over OLD's. A run
// that fails stops it, with that run's error output. On the VMs we
// measure on the machine's speed drifts by a quarter within minutes:
// builds measured one after the other differ by the drift, builds in
// turns meet the same drift. Its figures are not bench/run.sh's: they
// are of a workspace already synced, with nothing between the runs.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	rounds := flag.Int("n", 60, "rounds: runs of each build")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: turns [-n ROUNDS] OLD NEW [-- ARG...]")
	}
	flag.Parse()
	builds, args := splitArgs(flag.Args())
	if len(builds) != 2 || *rounds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	figures, err := inTurns(builds, args, *rounds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "turns:", err)
		os.Exit(1)
	}
	fmt.Print(table(builds, args, *rounds, figures))
}

// splitArgs splits turns' arguments at "--" into the builds and the
// arguments each is run with.
func splitArgs(all []string) (builds, args []string) {
	if i := slices.Index(all, "--"); i >= 0 {
		return all[:i], all[i+1:]
	}
	return all, nil
}

// cost is what one run took, in milliseconds.
type cost struct{ wall, cpu float64 }

// inTurns runs each build rounds times with args, in turns, and returns
// each build's runs.
func inTurns(builds, args []string, rounds int) ([][]cost, error) {
	runs := make([][]cost, len(builds))
	for r := range rounds {
		for k := range builds {
			i := (k + r) % len(builds) // who goes first alternates
			c, err := runOnce(builds[i], args)
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], c)
		}
	}
	return runs, nil
}

// runOnce runs path with args once and returns its cost.
func runOnce(path string, args []string) (cost, error) {
	cmd := exec.Command(path, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return cost{}, fmt.Errorf("%s: %w\n%s", path, err, stderr.Bytes())
	}
	if err != nil {
		return cost{}, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return cost{}, errors.New("no resource usage for " + path)
	}
	return cost{wall: ms(wall), cpu: ms(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))}, nil
}

// table says each build's medians and NEW's over OLD's.
func table(builds, args []string, rounds int, runs [][]cost) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "turns -n %d, %d runs of each, in turns, with %q\n", rounds, rounds, args)
	wall := make([]float64, len(builds))
	cpu := make([]float64, len(builds))
	for k, build := range builds {
		wall[k] = median(runs[k], func(c cost) float64 { return c.wall })
		cpu[k] = median(runs[k], func(c cost) float64 { return c.cpu })
		fmt.Fprintf(&b, "%-40s wall %8.2f ms   CPU %8.2f ms\n", build, wall[k], cpu[k])
	}
	fmt.Fprintf(&b, "new/old: wall %.3f, CPU %.3f (medians)\n", wall[1]/wall[0], cpu[1]/cpu[0])
	return b.String()
}

// median is the median of what of each run.
func median(runs []cost, of func(cost) float64) float64 {
	v := make([]float64, len(runs))
	for i, c := range runs {
		v[i] = of(c)
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

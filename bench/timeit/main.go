//go:build unix

// Command timeit runs a command and writes how long it took, the way
// bench/run.sh measures every step:
//
//	timeit -o FILE CMD [ARG...]
//
// FILE gets one line, "wall_ms cpu_ms maxrss_kib": wall time from just
// before the command is started to just after it is reaped, in
// milliseconds to a tenth; CPU time (user + system) of the command and
// of the children it waited for, from wait4's rusage, in microseconds
// rather than GNU time's 10 ms steps; and the peak RSS of the largest of
// those processes (at least timeit's own, about 2.4 MiB: the kernel
// counts the memory the child shared with timeit until its exec). The
// command inherits stdin, stdout and stderr. timeit exits as the shell
// would: the command's status, 128 + the signal that killed it, 126 for
// a command that cannot be run, 127 for one that is not there. Ctrl-C
// and Ctrl-\ reach the command alone, so its figures are still written.
//
// It replaces `date` + a subshell + GNU time, which on the 2-core VMs we
// measure on added 15 to 20 ms to every figure (a timed /bin/true came
// out at 16 ms): that is the shell's forks, not the command's cost.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "", "file to write \"wall_ms cpu_ms maxrss_kib\" to")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: timeit -o FILE CMD [ARG...]")
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(*out, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "timeit:", err)
	}
	os.Exit(code)
}

// run times args[0] with args[1:] and writes the figures to out; it
// returns the command's exit status.
func run(out string, args []string) (int, error) {
	// Caught rather than ignored: an ignored signal would stay ignored in
	// the command.
	signal.Notify(make(chan os.Signal, 1), os.Interrupt, syscall.SIGQUIT)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	switch {
	case err == nil, errors.As(err, &exit):
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		return 127, err
	default:
		return 126, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 127, errors.New("no resource usage for " + args[0])
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	line := fmt.Sprintf("%.1f %.1f %d\n", ms(wall), ms(cpu), ru.Maxrss)
	if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
		return 127, err
	}
	return exitStatus(cmd.ProcessState), nil
}

// exitStatus is the status a shell gives for a command that ended as p
// says.
func exitStatus(p *os.ProcessState) int {
	if ws, ok := p.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.ExitCode()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

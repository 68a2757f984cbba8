package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is Linux's USER_HZ, the unit of the times in /proc/*/stat
// (100 on every Linux skillsync runs on).
const clockTicks = 100

// procTimes reads a process's user+system CPU seconds from /proc, its
// own and (with children) those of its children it has waited for, and
// its parent's pid. It works on Linux only; elsewhere it fails and the
// bench reports no CPU times.
func procTimes(pid string, children bool) (secs float64, ppid string, err error) {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, "", err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, "", errors.New("unreadable /proc stat")
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state), f[1] the parent's pid.
	if len(f) < 15 {
		return 0, "", errors.New("short /proc stat")
	}
	// f[11] and f[12] are utime and stime; f[13] and f[14] cutime and cstime.
	fields := f[11:13]
	if children {
		fields = f[11:15]
	}
	var ticks int64
	for _, v := range fields {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, "", err
		}
		ticks += n
	}
	return float64(ticks) / clockTicks, f[1], nil
}

// serverCPU is the CPU seconds of a PostgreSQL server: the postmaster and
// the backends that have exited (its children's times), and every
// backend still running. backend is the pid of any of its backends.
func serverCPU(backend int) (float64, error) {
	_, postmaster, err := procTimes(strconv.Itoa(backend), false)
	if err != nil {
		return 0, err
	}
	total, _, err := procTimes(postmaster, true)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		secs, ppid, err := procTimes(e.Name(), false)
		if err == nil && ppid == postmaster {
			total += secs
		}
	}
	return total, nil
}

// selfCPU is this process's CPU seconds.
func selfCPU() (float64, error) {
	secs, _, err := procTimes("self", false)
	return secs, err
}

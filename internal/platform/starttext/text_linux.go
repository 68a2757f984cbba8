//go:build linux

package starttext

import (
	"math/bits"
	"runtime"
	"syscall"

	"github.com/skillsync/skillsync/internal/platform/rawfile"
)

// It imports runtime, syscall, math/bits and rawfile alone, as startheap
// does its few, so that it runs before most initialisers (right after
// startheap, by the order of their paths) and the mapping overlaps them.

// madvPopulateRead is MADV_POPULATE_READ, Linux 5.14.
const madvPopulateRead = 22

func init() {
	if runtime.GOMAXPROCS(0) < 2 {
		return
	}
	go populate()
}

// populate maps every page of the program's text; an error (an older
// kernel) changes nothing.
func populate() error {
	lo, hi, ok := textRange()
	if !ok {
		return syscall.ENOENT
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateRead); errno != 0 {
		return errno
	}
	return nil
}

// textRange returns the program's text: the executable mapping that
// holds this function's code. Not the first one in the list: where the
// stack is unlimited, Linux lays out the older way, the libraries and the
// vDSO below a position-independent program.
func textRange() (lo, hi uintptr, ok bool) {
	pc, _, _, ok := runtime.Caller(0)
	if !ok {
		return 0, 0, false
	}
	return executableHolding(rawfile.Read("/proc/self/maps", make([]byte, 64<<10)), pc)
}

// executableHolding returns the range of the executable mapping in maps,
// the text of /proc/self/maps, that holds pc.
func executableHolding(maps string, pc uintptr) (lo, hi uintptr, ok bool) {
	for maps != "" {
		line := maps
		maps = ""
		for i := 0; i < len(line); i++ {
			if line[i] == '\n' {
				line, maps = line[:i], line[i+1:]
				break
			}
		}
		// 00400000-00fc8000 r-xp 00000000 fe:00 11068610  /usr/bin/skillsync
		lo, rest, ok := hexPrefix(line)
		if !ok || rest == "" || rest[0] != '-' {
			continue
		}
		hi, rest, ok := hexPrefix(rest[1:])
		if ok && len(rest) >= 5 && rest[:5] == " r-xp" && lo <= pc && pc < hi {
			return lo, hi, true
		}
	}
	return 0, 0, false
}

// hexPrefix reads the hexadecimal number s starts with and returns it
// and what follows; ok is false for none, or for one too long for an
// address.
func hexPrefix(s string) (n uintptr, rest string, ok bool) {
	i := 0
	for ; i < len(s) && isHex(s[i]); i++ {
		if i == bits.UintSize/4 {
			return 0, s, false
		}
		n = n<<4 | hexValue(s[i])
	}
	return n, s[i:], i > 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func hexValue(c byte) uintptr {
	if c <= '9' {
		return uintptr(c - '0')
	}
	return uintptr(c-'a') + 10
}

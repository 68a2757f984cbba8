package startheap

// Range is the heap a big command gets advised for huge pages, where
// the system has room for it (Room): a 1% sync of 10,000 skills peaks
// near 110 MiB, of 2,000 skills near 40 MiB. Memory nothing touches
// costs no page, only the runtime's records of the range: 30 page faults
// for each 128 MiB.
const Range = 256 << 20

// Command returns the command that a skillsync command line (without
// the program's name) runs: its first argument that is neither a flag
// nor the value of a global flag given apart from it (--config FILE,
// --log-format FORMAT). It is "" when there is none.
func Command(args []string) string {
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--":
			return "" // cobra finds no command past it either
		case arg == "--config" || arg == "--log-format":
			i++
		case len(arg) > 0 && arg[0] == '-':
		default:
			return arg
		}
	}
	return ""
}

// Big reports whether the command fills a big heap at once, reading
// thousands of records, skills or objects. cmd/skillsync annotates the
// same commands big-heap; its tests hold the two to each other.
func Big(command string) bool {
	switch command {
	case "fetch", "sync", "update", "verify":
		return true
	}
	return false
}

// room is Room from what the system says: whether the heap gets huge
// pages on advice (wanted), its overcommit mode (the file's text, "" when it could
// not be read), whether the address space is capped and its memory in
// bytes.
func room(want int, onAdvice bool, overcommitMode string, capped bool, memory uint64) int {
	if !onAdvice || overcommitMode == "" || overcommitMode[0] == '2' || capped || want <= 0 {
		return 0
	}
	return int(min(uint64(want), memory/8))
}

// Package startheap backs the start of the Go heap with transparent huge
// pages, from its initialiser, before most packages' initialisers run.
// cmd/skillsync links it, and calls Undo for a command that stays up.
//
// Why: on the VMs we measure on a page fault costs 13 to 35 us, and the
// 207 package initialisers of skillsync fill about 2 MiB of fresh heap 4
// KiB at a time, some 400 faults, before main. Every command paid them:
// `skillsync version` took 880 to 915 faults and 36 to 40 ms of CPU.
// The runtime never advises huge pages itself, and cmd/skillsync's
// memory tuning runs only once main does.
//
// For a command that fills a big heap at once (fetch, sync, update,
// verify: Big), read from the process's command line, the initialiser
// also grows the heap by a range of up to Range bytes (Room) advised for
// huge pages, and has it collected while the heap is still small, on one
// P until the collection ends (takeRange says why). Not where the
// environment sets GOMAXPROCS, nor GODEBUG's gcstoptheworld
// (rangeWanted). cmd/skillsync asks Ranged before doing the same in
// main.
//
// Only Linux has the advice, and the sizes it assumes (a 64 MiB heap
// arena, 2 MiB huge pages) are those of 64-bit x86 and ARM; elsewhere
// the package does nothing. Nor does it where the system's transparent
// huge pages are set to "never" or "always", or where the environment
// sets GOGC, GOMEMLIMIT or GODEBUG=disablethp=1.
package startheap

// Package starttext maps the program's code ahead as it starts, from its
// initialiser, on a core the start leaves idle. cmd/skillsync links it
// for that alone.
//
// Why: on the VMs we measure on a page fault on the binary's text costs
// 18 to 20 us, and a sync with nothing new took about 160 of them, 112
// in the package initialisers, each mapping the 64 KiB around it.
// MADV_POPULATE_READ maps the whole text (the pages are in the page
// cache) in one system call: made on the main goroutine it cost what it
// saved (docs/performance.md, round twenty-nine); made on another thread
// while the initialisers run, it took a no-op sync from 30.6 to 28.2 ms,
// CPU alike, and version from 22.5 to 18.8 (round forty-two). Only the
// text: mapping the read-only data as well (13 MB more) spared 90 more
// faults and no time. The process's RSS grows by the text it would not
// have touched, about 2 MiB.
//
// Only Linux (5.14 and later) has the advice. Elsewhere, and where the
// process has one P, whose goroutine the mapping would hold up, the
// package does nothing.
package starttext

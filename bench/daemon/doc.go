// Package daemon holds the Go benchmark of a daemon's sync: a workspace
// synced cold at revision A, upstream moving to B with 1% of the skills
// changed, a fetch, and then the sync timed alone (see
// BenchmarkDaemonSync). It has no code of its own.
package daemon

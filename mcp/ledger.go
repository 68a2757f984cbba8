package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ledger is what one connection was sent: the skills load_skill answered
// in full, oldest first, at most max of them. A skill loaded again is not
// sent again while it is in the ledger and unchanged, unless it is owed.
type ledger struct {
	mu      sync.Mutex
	max     int
	entries []ledgerEntry
}

type ledgerEntry struct {
	key    string // catalog key
	name   string
	digest string // of the body sent: a skill that changed is sent again
	// owed is set when loaded_skills left the skill out to keep within
	// its budget: the agent, whose context lost it, is told to load it,
	// and must not be answered "already loaded".
	owed bool
}

// load puts a skill at the most recent end of the ledger and reports
// whether the connection already has it as it is now, and if so whether
// it is owed all the same. When the ledger is full, its oldest entry not
// owed falls out (oldest).
func (l *ledger) load(key, name, digest string) (already, owed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.IndexFunc(l.entries, func(e ledgerEntry) bool { return e.key == key }); i >= 0 {
		already = l.entries[i].digest == digest
		owed = already && l.entries[i].owed
		l.entries = slices.Delete(l.entries, i, i+1)
	}
	l.entries = append(l.entries, ledgerEntry{key: key, name: name, digest: digest})
	for len(l.entries) > l.max {
		i := l.oldest()
		l.entries = slices.Delete(l.entries, i, i+1)
	}
	return already, owed
}

// oldest is the entry a full ledger drops: its oldest that is not owed,
// else its oldest. A skill owed was left out by loaded_skills, which
// told the agent to get it back with load_skill: dropped, it would be
// sent as a new use. The newest entry, just loaded, is never dropped.
func (l *ledger) oldest() int {
	if i := slices.IndexFunc(l.entries[:len(l.entries)-1], func(e ledgerEntry) bool { return !e.owed }); i >= 0 {
		return i
	}
	return 0
}

// owe marks what loaded_skills left out of its answer as owed, and what
// it gave back as sent.
func (l *ledger) owe(owed, sent []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.entries {
		switch {
		case slices.Contains(owed, e.key):
			l.entries[i].owed = true
		case slices.Contains(sent, e.key):
			l.entries[i].owed = false
		}
	}
}

// list returns the entries, oldest first.
func (l *ledger) list() []ledgerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// drop takes keys out of the ledger.
func (l *ledger) drop(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = slices.DeleteFunc(l.entries, func(e ledgerEntry) bool { return slices.Contains(keys, e.key) })
}

// ledgers holds one ledger per connection, for as long as it lasts.
type ledgers struct {
	mu sync.Mutex
	m  map[*sdk.ServerSession]*ledger
}

// of returns the ledger of the session ss, making it on first use. It is
// forgotten when the session ends. A request without a session gets a
// ledger of its own.
func (ls *ledgers) of(ss *sdk.ServerSession, max int) *ledger {
	if ss == nil {
		return &ledger{max: max}
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l, ok := ls.m[ss]; ok {
		return l
	}
	l := &ledger{max: max}
	ls.m[ss] = l
	go func() {
		_ = ss.Wait()
		ls.mu.Lock()
		delete(ls.m, ss)
		ls.mu.Unlock()
	}()
	return l
}

func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

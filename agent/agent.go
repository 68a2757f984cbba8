// Package agent reads what agents did with skills from their own records,
// so usage is counted for agents that never call skillsync. An Importer
// reads one agent's records (Claude Code's session transcripts: package
// agent/claude) and returns the skill uses and views it finds; the caller
// maps them to catalog skills, records them and then saves the importer's
// marks, so an import that runs again reads only what was added since.
//
// Every record an importer reads is untrusted input: lines and files are
// bounded, a read ends with its context even inside a line, malformed
// lines are skipped and counted, and no path read from a record or from
// the saved marks is ever opened.
package agent

import (
	"context"
	"errors"
	"time"
)

// ErrNoSkill is a hook input about a tool call that neither uses a skill
// nor reads a SKILL.md: nothing to record, and no failure.
var ErrNoSkill = errors.New("the tool call uses no skill")

// Event is one thing an agent did with a skill.
type Event struct {
	// Skill is the name the agent called its skill tool with; "" when the
	// agent read a file instead.
	Skill string
	// Path is the absolute, cleaned path of the SKILL.md the agent read;
	// "" for a skill tool call.
	Path string
	// View is set for a read: the agent looked at the skill. A skill tool
	// call is a use.
	View bool
	// At is when the agent did it, from its own record; zero means now (a
	// hook reports as it happens).
	At time.Time
	// ID is the agent's id of the tool call, when it has one.
	ID string
	// Source says how the agent was told to use the skill when that is
	// not its own choice (FromSlash: the user typed /name); "" is the
	// source of the import or hook that found the event.
	Source Source
	// Dir is the directory the agent worked in, when its record says (a
	// hook's cwd): where the workspace's config is looked for.
	Dir string
	// Where says where the event was found, such as a transcript and the
	// byte offset of its line, for messages.
	Where string
	// Written is when the record holding the event was last written (its
	// file's modification time); zero when not known. A call dated past
	// the clock is judged against it (MaxAhead): a record written past
	// now was written before the clock stepped back.
	Written time.Time
}

// Importer reads one agent's records.
type Importer interface {
	// Name is the agent's name as the command line takes it ("claude"),
	// and its key in the saved marks.
	Name() string
	// Import returns the events recorded after done, the marks of the last
	// import (nil for none), dropping those before since (zero for none).
	// Events before since are passed over for good: the returned marks
	// move past them.
	Import(ctx context.Context, since time.Time, done Marks) (*Batch, error)
}

// maxNamed is how many malformed records a batch names.
const maxNamed = 5

// Skip counts a record at where (a file, and an offset or row in it)
// that did not parse or lacked what an event needs, naming the first few.
func (b *Batch) Skip(where string) {
	b.Malformed++
	if len(b.MalformedAt) < maxNamed {
		b.MalformedAt = append(b.MalformedAt, where)
	}
}

// Batch is what one import found.
type Batch struct {
	// Events in the order the records hold them, file by file.
	Events []Event
	// Marks say how far each record was read. Save them once Events are
	// recorded: saved before, a crash would lose the events; saved after,
	// a crash counts them again on the next import, which moves no time.
	Marks Marks
	// Files is how many records had something new; Rewritten how many of
	// those were not the records read last time with lines added (read
	// again from the start).
	Files, Rewritten int
	// Malformed lines did not parse or lacked what an event needs;
	// TooLong lines were over the line limit. Both were skipped.
	// MalformedAt names where the first few malformed ones are (Skip).
	Malformed, TooLong int
	MalformedAt        []string
	// Before counts events dropped because they were older than since.
	Before int
	// Unreadable says which records could not be read, and why; they keep
	// their marks and are tried again next time.
	Unreadable []string
}

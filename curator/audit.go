package curator

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/workspace"
)

// AuditDir is the audit log's directory inside the workspace's skills/.
const AuditDir = workspace.AuditName

// Event is one line of the audit log.
type Event struct {
	TS         time.Time `json:"ts"`
	Actor      string    `json:"actor"`
	Op         string    `json:"op"`
	Target     string    `json:"target"`
	From       string    `json:"from"`
	To         string    `json:"to"`
	BeforeHash string    `json:"before_hash"`
	AfterHash  string    `json:"after_hash"`
	Detail     string    `json:"detail"`
	// Approver is who let a draft through the promotion gate.
	Approver string `json:"approver,omitempty"`
	// Commit is the commit a promotion to a git source pushed.
	Commit string `json:"commit,omitempty"`
}

// Audit is the append-only log of every curation and sync change, one
// JSON object a line in one file per UTC day.
type Audit struct {
	dir string
}

// NewAudit returns the audit log of the workspace whose skills directory
// is skillsDir.
func NewAudit(skillsDir string) *Audit { return &Audit{dir: filepath.Join(skillsDir, AuditDir)} }

// Append writes events, each as one line. Lines are written with O_APPEND
// in one write each, so concurrent writers never interleave within a line.
// Neither the audit directory nor a day's file is followed through a
// symbolic link: a planted link makes Append refuse, naming the path, and
// the file it points at stays untouched.
func (a *Audit) Append(events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	byDay := map[string][]byte{}
	for _, e := range events {
		e.TS = e.TS.UTC().Truncate(time.Second)
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		day := e.TS.Format("2006-01-02")
		byDay[day] = append(append(byDay[day], line...), '\n')
	}
	if err := realDir(a.dir); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	// Open the directory itself without following a link, and the files
	// beneath it by descriptor: a link swapped in after the check above is
	// refused as well.
	dir, err := platform.OpenDir(a.dir)
	if err != nil {
		return fmt.Errorf("audit log: open %s: %w", a.dir, linkErr(err))
	}
	defer dir.Close()
	days := make([]string, 0, len(byDay))
	for day := range byDay {
		days = append(days, day)
	}
	sort.Strings(days)
	for _, day := range days {
		if err := appendAt(dir, filepath.Join(a.dir, day+".jsonl"), byDay[day]); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	return nil
}

// appendAt appends data to the regular file name in the directory dir,
// creating it, never through a symbolic link, and never blocking on a
// FIFO planted in its place.
func appendAt(dir *platform.Dir, name string, data []byte) error {
	f, err := dir.OpenFile(filepath.Base(name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, linkErr(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s); move it away", name, info.Mode().Type())
	}
	if err := atomicfile.OneName(name, info); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("append to %s: %w", name, err)
	}
	return f.Close()
}

// linkErr turns the refusal of a no-follow open into ErrSymlink.
func linkErr(err error) error {
	if errors.Is(err, platform.ErrLink) {
		return ErrSymlink
	}
	return err
}

// Read returns the events at or after since (the zero time for all) whose
// op is op ("" for any), oldest first. A line that does not parse is
// reported in bad with its file and line, and skipped.
func (a *Audit) Read(since time.Time, op string) (events []Event, bad []string, err error) {
	files, err := filepath.Glob(filepath.Join(a.dir, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	for _, name := range files {
		day, perr := time.Parse("2006-01-02", strings.TrimSuffix(filepath.Base(name), ".jsonl"))
		if perr == nil && day.Add(24*time.Hour).Before(since) {
			continue
		}
		f, err := atomicfile.OpenNoFollow(name, os.O_RDONLY, 0)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%v; skipped", err))
			continue
		}
		if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
			f.Close()
			bad = append(bad, name+": not a regular file; skipped")
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			var e Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				bad = append(bad, fmt.Sprintf("%s:%d: %v", name, n, err))
				continue
			}
			if e.TS.Before(since) || (op != "" && e.Op != op) {
				continue
			}
			events = append(events, e)
		}
		if err := sc.Err(); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v; the rest of the file is skipped", name, err))
		}
		f.Close()
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].TS.Before(events[j].TS) })
	return events, bad, nil
}

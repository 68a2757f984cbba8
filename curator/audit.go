package curator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// AuditDir is the audit log's directory inside the workspace's skills/.
const AuditDir = ".audit"

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
func (a *Audit) Append(events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return fmt.Errorf("audit log: %w", err)
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
	for day, data := range byDay {
		f, err := os.OpenFile(filepath.Join(a.dir, day+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return fmt.Errorf("audit log %s: %v %v", day, werr, cerr)
		}
	}
	return nil
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
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
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
		f.Close()
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].TS.Before(events[j].TS) })
	return events, bad, nil
}

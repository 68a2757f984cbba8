package serve

import (
	"cmp"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

// page is what every template gets: the title, which tab is current, and
// the page's own data.
type page struct {
	Title, Tab string
	Data       any
}

type catalogRow struct {
	Name, Description, Layer, Source, State string
	Uses30                                  int
}

type catalogData struct {
	Query, Layer, Source, State string
	Layers, Sources, States     []string
	Rows                        []catalogRow
	Total                       int
}

// recent is how far back the catalog counts uses.
const recent = 30 * 24 * time.Hour

// catalogAndUsage reads what the catalog and curation pages both start from;
// on failure it has answered the request already.
func (s *Server) catalogAndUsage(w http.ResponseWriter, r *http.Request) (*layering.Catalog, *curator.Usage, bool) {
	cat, err := s.b.Catalog(r.Context())
	if err != nil {
		s.fail(w, "read the catalog", err)
		return nil, nil, false
	}
	usage, err := s.b.Usage(r.Context())
	if err != nil {
		s.fail(w, "read usage", err)
		return nil, nil, false
	}
	return cat, usage, true
}

func (s *Server) catalog(w http.ResponseWriter, r *http.Request) {
	cat, usage, ok := s.catalogAndUsage(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	d := catalogData{Query: q.Get("q"), Layer: q.Get("layer"), Source: q.Get("source"), State: q.Get("state")}
	visible := cat.Visible()
	d.Total = len(visible)
	winners := visible
	if strings.TrimSpace(d.Query) != "" {
		// The same scorer as the search command and the MCP tool.
		winners = winners[:0:0]
		for _, res := range layering.NewIndex(visible).Search(d.Query, len(visible)) {
			winners = append(winners, res.Winner)
		}
	}
	since := s.opts.Now().Add(-recent)
	layers, sources, states := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, win := range visible {
		layers[win.Layer.String()], sources[win.Source], states[stateOf(win)] = true, true, true
	}
	for _, win := range winners {
		row := catalogRow{Name: win.Skill.Name, Description: win.Skill.Description, Layer: win.Layer.String(), Source: win.Source, State: stateOf(win)}
		if (d.Layer != "" && row.Layer != d.Layer) || (d.Source != "" && row.Source != d.Source) || (d.State != "" && row.State != d.State) {
			continue
		}
		if c, ok := s.b.CopyOf(win); ok {
			row.Uses30 = usesSince(usage.Skills[c], since)
		}
		d.Rows = append(d.Rows, row)
	}
	d.Layers, d.Sources, d.States = sortedKeys(layers), sortedKeys(sources), sortedKeys(states)
	if r.URL.Query().Get("rows") == "1" {
		// The search box's script asks for the rows alone.
		s.render(w, "rows", page{Data: d})
		return
	}
	s.render(w, "catalog.html", page{Title: "Skills", Tab: "catalog", Data: d})
}

func stateOf(w *layering.Winner) string {
	if w.State == "" {
		return string(curator.Active)
	}
	return w.State
}

// usesSince adds up a copy's uses on the days from since on.
func usesSince(u *curator.SkillUsage, since time.Time) int {
	if u == nil {
		return 0
	}
	day := since.UTC().Format(curator.DayLayout)
	n := 0
	for d, c := range u.Days {
		if d >= day {
			n += c.Uses
		}
	}
	return n
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type skillData struct {
	Winner   *layering.Winner
	Body     template.HTML
	BodyNote string // what of the body is shown as text, and why
	Files    []fileRow
	Revision string
	Chart    template.HTML
	Usage    *curator.SkillUsage
	Copy     string
}

type fileRow struct {
	Path string
	Size int64
}

// weeks is how many weeks a skill's chart shows.
const weeks = 12

func (s *Server) skill(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("name")
	f, win, err := s.b.Open(ctx, name, "SKILL.md")
	if err != nil {
		s.fail(w, "skill "+name, err)
		return
	}
	defer f.Close()
	md, err := io.ReadAll(io.LimitReader(f, maxPage))
	if err != nil {
		s.fail(w, "read "+name+"/SKILL.md", err)
		return
	}
	shown := s.bodies.get(body(md), "/skills/"+url.PathEscape(win.Skill.Name)+"/files/")
	d := skillData{Winner: win, Body: shown.HTML, BodyNote: shown.Note, Revision: win.Revision}
	for _, file := range win.Skill.FileList() {
		d.Files = append(d.Files, fileRow{Path: file.Path, Size: file.Size})
	}
	now := s.opts.Now()
	start := weekStart(now).AddDate(0, 0, -7*(weeks-1))
	days, err := s.b.History(ctx, win, start)
	if err != nil {
		s.log.Warn("no usage history", "skill", name, "err", err)
	}
	d.Chart = chart(days, start, weeks)
	if c, ok := s.b.CopyOf(win); ok {
		d.Copy = c.String()
		if usage, err := s.b.Usage(ctx); err == nil {
			d.Usage = usage.Skills[c]
		}
	}
	s.render(w, "skill.html", page{Title: win.Skill.Name, Tab: "catalog", Data: d})
}

// maxPage bounds what a page shows of one file. Escaped, a file's text
// can take five times its bytes ("<" is "&lt;"), and the page is held
// until a slow client has read it (httpserver.Pages bounds for how long
// and for how many): at 256 KiB, some 1.5 MB a connection at worst.
const maxPage = 256 << 10

// body is a SKILL.md without its frontmatter.
func body(md []byte) string {
	text := strings.TrimPrefix(string(md), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		if i := strings.Index(rest, "\n---"); i >= 0 {
			rest = rest[i+len("\n---"):]
			_, after, _ := strings.Cut(rest, "\n")
			return after
		}
	}
	return text
}

type fileData struct {
	Skill, Path string
	Size        int64
	Text        string
	Binary      bool
	Truncated   bool
}

// file shows one file of a skill as text, confined as read is: the
// Backend's Open refuses .., absolute paths and links out of the skill.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	name, p := r.PathValue("name"), r.PathValue("path")
	if strings.ContainsRune(name+p, 0) {
		// No file's name holds a NUL; the system would refuse the open.
		http.NotFound(w, r)
		return
	}
	if path.Clean("/"+p) == "/" {
		// The skill's folder: its page lists the files.
		http.Redirect(w, r, "/skills/"+url.PathEscape(name), http.StatusSeeOther)
		return
	}
	f, _, err := s.b.Open(r.Context(), name, p)
	if err != nil {
		s.fail(w, "file "+p+" of skill "+name, err)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPage+1))
	if err != nil {
		s.fail(w, "read "+p+" of skill "+name, err)
		return
	}
	d := fileData{Skill: name, Path: path.Clean(p), Size: int64(len(data))}
	if info, err := f.Stat(); err == nil {
		d.Size = info.Size()
	}
	if len(data) > maxPage {
		data, d.Truncated = data[:maxPage], true
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		d.Binary = true
	} else {
		d.Text = string(data)
	}
	s.render(w, "file.html", page{Title: name + "/" + d.Path, Tab: "catalog", Data: d})
}

func (s *Server) sources(w http.ResponseWriter, r *http.Request) {
	st, err := s.b.Status(r.Context())
	if err != nil {
		s.fail(w, "read the sources' state", err)
		return
	}
	s.render(w, "sources.html", page{Title: "Sources", Tab: "sources", Data: st})
}

type curationRow struct {
	Name, Copy, State string
	LastActive        time.Time
	ArchiveOn         time.Time
	Pinned            bool
}

type curationData struct {
	Policy                    Policy
	Stale, Candidates, Pinned []curationRow
	LastRun                   *time.Time
	LastSummary               string
}

func (s *Server) curation(w http.ResponseWriter, r *http.Request) {
	cat, usage, ok := s.catalogAndUsage(w, r)
	if !ok {
		return
	}
	pol := s.b.Curation()
	d := curationData{Policy: pol, LastRun: usage.Curator.LastRunAt, LastSummary: usage.Curator.LastSummary}
	now := s.opts.Now()
	for _, win := range cat.Winners {
		if win.Hidden {
			// The config hides it: out of the catalog page, its own
			// page a 404, and so out of this one too.
			continue
		}
		c, ok := s.b.CopyOf(win)
		if !ok {
			continue
		}
		u := usage.Skills[c]
		if u == nil {
			continue
		}
		row := curationRow{Name: win.Skill.Name, Copy: c.String(), State: string(u.State), LastActive: u.LastActive(), Pinned: u.Pinned}
		if !row.LastActive.IsZero() && pol.ArchiveAfter > 0 {
			row.ArchiveOn = row.LastActive.Add(pol.ArchiveAfter)
		}
		switch {
		case u.Pinned:
			d.Pinned = append(d.Pinned, row)
		case u.State == curator.Stale:
			d.Stale = append(d.Stale, row)
			// A stale copy is archived at ArchiveOn; one idle past
			// StaleAfter will be marked stale at the next run.
			if !row.ArchiveOn.IsZero() && row.ArchiveOn.Before(now.Add(7*24*time.Hour)) {
				d.Candidates = append(d.Candidates, row)
			}
		case u.State == curator.Active && pol.StaleAfter > 0 && now.Sub(row.LastActive) > pol.StaleAfter:
			d.Candidates = append(d.Candidates, row)
		}
	}
	byDate := func(a, b curationRow) int { return cmp.Compare(a.LastActive.UnixNano(), b.LastActive.UnixNano()) }
	slices.SortFunc(d.Stale, byDate)
	slices.SortFunc(d.Candidates, byDate)
	s.render(w, "curation.html", page{Title: "Curation", Tab: "curation", Data: d})
}

type draftRow struct {
	Draft
	Lines []diffLine
}

// Summary is the line under a draft's name: its description, when it
// was proposed and what it replaces, leaving out what it lacks (a
// draft's description may be empty) rather than the words around it.
func (d draftRow) Summary() string {
	first := strings.TrimSpace(d.Description)
	if !d.ProposedAt.IsZero() {
		if first == "" {
			first = "Proposed " + date(d.ProposedAt)
		} else {
			first += ", proposed " + date(d.ProposedAt)
		}
	}
	what := "a new skill"
	if d.Against != "" {
		what = "replaces " + d.Against
	}
	if first == "" {
		return strings.ToUpper(what[:1]) + what[1:]
	}
	return first + "; " + what
}

type diffLine struct {
	Kind, Text string // Kind: add, del, hunk, file or ""
}

func (s *Server) drafts(w http.ResponseWriter, r *http.Request) {
	list, err := s.b.Drafts(r.Context())
	if err != nil {
		s.fail(w, "read the drafts", err)
		return
	}
	rows := make([]draftRow, 0, len(list))
	for _, d := range list {
		rows = append(rows, draftRow{Draft: d, Lines: diffLines(d.Diff)})
	}
	s.render(w, "drafts.html", page{Title: "Drafts", Tab: "drafts", Data: rows})
}

// diffLines classifies a unified diff's lines for colouring.
func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		kind := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "):
			kind = "file"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		}
		out = append(out, diffLine{Kind: kind, Text: l})
	}
	return out
}

func (s *Server) fleet(w http.ResponseWriter, r *http.Request) {
	f, err := s.b.Fleet(r.Context())
	if err != nil {
		s.fail(w, "read the fleet", err)
		return
	}
	s.render(w, "fleet.html", page{Title: "Fleet", Tab: "fleet", Data: f})
}

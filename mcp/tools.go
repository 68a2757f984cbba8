package mcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// maxSearchLimit bounds what one search returns, whatever is asked.
const maxSearchLimit = 100

// defaultSearchLimit is how many results search_skills returns when no
// limit is given: enough to choose from, few enough for a context window.
const defaultSearchLimit = 10

type searchInput struct {
	Query string `json:"query" jsonschema:"what the task is about, in a few words (a skill name, a file format, a tool)"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many skills to return at most, 1 to 100; 10 when left out"`
}

type searchOutput struct {
	Results []skillSummary `json:"results" jsonschema:"the skills that match, best first"`
	Message string         `json:"message,omitempty" jsonschema:"what to do when nothing matched"`
}

type listOutput struct {
	Skills []skillSummary `json:"skills" jsonschema:"every skill this workspace offers, by name"`
	Count  int            `json:"count"`
}

type skillSummary struct {
	Name        string `json:"name"`
	Description string `json:"description" jsonschema:"what the skill does and when to use it"`
	Layer       string `json:"layer" jsonschema:"where the skill comes from: global, marketplace, workspace or user"`
	Source      string `json:"source"`
	Score       int    `json:"score,omitempty" jsonschema:"how well the skill matches the query; higher is better"`
}

type nameInput struct {
	Name string `json:"name" jsonschema:"the skill's name, as search_skills or list_skills gives it"`
}

type fileEntry struct {
	Path string `json:"path" jsonschema:"relative to the skill's directory"`
	Size int64  `json:"size" jsonschema:"in bytes"`
}

type loadOutput struct {
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Layer         string         `json:"layer"`
	Source        string         `json:"source"`
	Location      string         `json:"location,omitempty" jsonschema:"the skill's SKILL.md on disk, when it has one"`
	Frontmatter   map[string]any `json:"frontmatter,omitempty" jsonschema:"the SKILL.md frontmatter: name, description, license, allowed-tools and any other field"`
	Body          string         `json:"body,omitempty" jsonschema:"the skill's instructions (Markdown); left out when already loaded; cut after the character limit, with a [truncated] line that says how to read the rest"`
	Truncated     bool           `json:"truncated,omitempty" jsonschema:"true when body leaves out the end of the instructions"`
	NextOffset    int64          `json:"next_offset,omitempty" jsonschema:"when truncated: the offset in the skill's main file (SKILL.md) where read_skill_file reads on"`
	Files         []fileEntry    `json:"files,omitempty" jsonschema:"the skill's files, read one with read_skill_file; left out when already loaded"`
	AlreadyLoaded bool           `json:"already_loaded,omitempty" jsonschema:"true when this session was already sent the skill as it is now"`
	Message       string         `json:"message,omitempty"`
}

type readInput struct {
	Name string `json:"name" jsonschema:"the skill's name"`
	Path string `json:"path" jsonschema:"the file's path relative to the skill's directory, as load_skill lists it, such as SKILL.md or scripts/run.py"`
	// Bytes, not characters: a byte offset is found without reading the
	// file up to it, and size says how many there are.
	Offset int64 `json:"offset,omitempty" jsonschema:"where to start, in bytes from the start of the file: left out (or 0) for the start, the next_offset of the page before for the rest of a long file"`
}

type readOutput struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	Size       int64  `json:"size" jsonschema:"the whole file's size in bytes"`
	Offset     int64  `json:"offset,omitempty" jsonschema:"the byte where text starts: the offset asked for, moved back to the start of the character it fell in"`
	Text       string `json:"text,omitempty" jsonschema:"the file's text from offset on; cut after the character limit, with a [truncated] line at the end"`
	Truncated  bool   `json:"truncated,omitempty" jsonschema:"true when text leaves out the end of the file"`
	NextOffset int64  `json:"next_offset,omitempty" jsonschema:"when truncated: the offset that reads on from where text ends"`
	Remaining  int64  `json:"remaining,omitempty" jsonschema:"bytes of the file after text"`
	Binary     bool   `json:"binary,omitempty" jsonschema:"true when the file is not text; its content is then left out"`
	MIMEType   string `json:"mime_type,omitempty"`
	Message    string `json:"message,omitempty"`
}

type loadedOutput struct {
	Skills  []loadedSkill `json:"skills" jsonschema:"the skills loaded in this session, the most recently loaded first, as many as fit in the answer"`
	Omitted []string      `json:"omitted,omitempty" jsonschema:"skills loaded in this session that did not fit in the answer, the most recent first: load_skill gives each of them again"`
	Gone    []string      `json:"gone,omitempty" jsonschema:"skills loaded earlier that the workspace no longer offers"`
}

type loadedSkill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Body        string `json:"body" jsonschema:"the skill's instructions, cut as load_skill cuts them"`
	Truncated   bool   `json:"truncated,omitempty" jsonschema:"true when body leaves out the end of the instructions"`
	NextOffset  int64  `json:"next_offset,omitempty" jsonschema:"when truncated: the offset in the skill's main file (SKILL.md) where read_skill_file reads on"`
}

func readOnly() *sdk.ToolAnnotations {
	closed := false
	return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}
}

func (s *Server) addTools() error {
	search, err := searchSchema()
	if err != nil {
		return err
	}
	read, err := jsonschema.For[readInput](nil)
	if err != nil {
		return fmt.Errorf("read_skill_file's input schema: %w", err)
	}
	zero := 0.0
	read.Properties["offset"].Minimum = &zero
	sdk.AddTool(s.mcp, &sdk.Tool{
		Name:        "search_skills",
		Title:       "Search skills",
		Description: "Find the skills that fit a task: ranks skills by name, description, tags and triggers against the query. Load one with load_skill.",
		Annotations: readOnly(),
		InputSchema: search,
	}, s.searchSkills)
	sdk.AddTool(s.mcp, &sdk.Tool{
		Name:        "list_skills",
		Title:       "List skills",
		Description: "List every skill of this workspace with its description. With many skills, search_skills is shorter.",
		Annotations: readOnly(),
	}, s.listSkills)
	sdk.AddTool(s.mcp, &sdk.Tool{
		Name:  "load_skill",
		Title: "Load a skill",
		Description: fmt.Sprintf("Get a skill's instructions (follow them), its frontmatter and its list of files. "+
			"Instructions over %d characters are cut with a [truncated] line that gives the read_skill_file call for the rest. "+
			"A skill already loaded in this session is answered \"already loaded\" instead of being sent again.", s.opts.MaxChars),
		Annotations: readOnly(),
	}, s.loadSkill)
	sdk.AddTool(s.mcp, &sdk.Tool{
		Name:  "read_skill_file",
		Title: "Read a skill's file",
		Description: fmt.Sprintf("Read one file of a skill (a script, a reference, a template) by its path inside the skill. "+
			"Text over %d characters is cut with a [truncated] line that says how many bytes are left; "+
			"give its next_offset as offset to read on. Binary files are described, not shown.", s.opts.MaxChars),
		Annotations: readOnly(),
		InputSchema: read,
	}, s.readSkillFile)
	sdk.AddTool(s.mcp, &sdk.Tool{
		Name:  "loaded_skills",
		Title: "Skills loaded in this session",
		Description: fmt.Sprintf("Give back the instructions of the skills loaded in this session, the most recently loaded first, to re-attach them after the context was compacted; "+
			"each is cut after %d characters, as load_skill cuts it, and the answer holds at most %d characters of them: "+
			"a skill that does not fit is named under omitted, and load_skill gives it again.", s.opts.MaxChars, s.opts.loadedChars()),
		Annotations: readOnly(),
	}, s.loadedSkills)
	return nil
}

// searchSchema is search_skills' input schema with the bounds of limit,
// which struct tags cannot express: a client that validates arguments
// learns them before it calls.
func searchSchema() (*jsonschema.Schema, error) {
	schema, err := jsonschema.For[searchInput](nil)
	if err != nil {
		return nil, fmt.Errorf("search_skills' input schema: %w", err)
	}
	lo, hi := 1.0, float64(maxSearchLimit)
	schema.Properties["limit"].Minimum = &lo
	schema.Properties["limit"].Maximum = &hi
	return schema, nil
}

func summary(w *layering.Winner, score int) skillSummary {
	return skillSummary{Name: w.Skill.Name, Description: w.Skill.Description, Layer: w.Layer.String(), Source: w.Source, Score: score}
}

func (s *Server) searchSkills(ctx context.Context, _ *sdk.CallToolRequest, in searchInput) (*sdk.CallToolResult, searchOutput, error) {
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, searchOutput{}, err
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, searchOutput{}, errors.New("give a query: a few words about the task; list_skills shows every skill")
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	limit = min(limit, maxSearchLimit)
	out := searchOutput{Results: []skillSummary{}}
	for _, r := range snap.search(in.Query, limit) {
		out.Results = append(out.Results, summary(r.Winner, r.Score))
	}
	if len(out.Results) == 0 {
		// The query is the client's, of any size: quoted whole, a
		// megabyte asked for came back twice (the text and the
		// structured result).
		out.Message = fmt.Sprintf("no skill matches %q; try other words, or list_skills to see all %d skills", clip(in.Query), len(snap.visible))
	}
	return nil, out, nil
}

func (s *Server) listSkills(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, listOutput, error) {
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, listOutput{}, err
	}
	out := listOutput{Skills: make([]skillSummary, 0, len(snap.visible)), Count: len(snap.visible)}
	for _, w := range snap.visible {
		out.Skills = append(out.Skills, summary(w, 0))
	}
	return nil, out, nil
}

func (s *Server) loadSkill(ctx context.Context, req *sdk.CallToolRequest, in nameInput) (*sdk.CallToolResult, loadOutput, error) {
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, loadOutput{}, err
	}
	w, err := snap.lookup(in.Name)
	if err != nil {
		return nil, loadOutput{}, err
	}
	page, err := body(ctx, &w.Skill, s.opts.MaxChars)
	if err != nil {
		return nil, loadOutput{}, fmt.Errorf("read the instructions of skill %s: %w", w.Skill.Name, err)
	}
	files := fileEntries(&w.Skill)
	out := loadOutput{
		Name: w.Skill.Name, Description: w.Skill.Description, Layer: w.Layer.String(), Source: w.Source,
		Location: w.Location(),
	}
	l := s.ledgers.of(req.Session, s.opts.LedgerSize)
	// The whole main file's sum: a change past the part sent is a change.
	already, owed := l.load(layering.Key(w.Skill.Name), w.Skill.Name, digest(string(page.Sum[:])+"\x00"+fileTree(files)))
	if already && !owed {
		// A model that loads a skill again (after its context was
		// compacted, say) is still on the use it was counted for.
		out.AlreadyLoaded = true
		out.Message = fmt.Sprintf("skill %s is already loaded in this session and has not changed: follow the instructions you were sent; "+
			"if they are no longer in your context, call loaded_skills", w.Skill.Name)
		return textResult(out.Message), out, nil
	}
	if !already {
		// A skill loaded_skills left out is sent again on the use it
		// was counted for when it was first sent.
		s.record(ctx, w.Skill.Name, false)
	}
	out.Frontmatter = frontmatter(&w.Skill)
	out.Body = bodyText(&w.Skill, page)
	if page.Cut() {
		out.Truncated, out.NextOffset = true, page.End
	}
	out.Files = files
	return textResult(loadText(w, out.Body, files)), out, nil
}

func (s *Server) readSkillFile(ctx context.Context, _ *sdk.CallToolRequest, in readInput) (*sdk.CallToolResult, readOutput, error) {
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, readOutput{}, err
	}
	w, err := snap.lookup(in.Name)
	if err != nil {
		return nil, readOutput{}, err
	}
	p, err := skillPath(w.Skill.Name, in.Path)
	if err != nil {
		return nil, readOutput{}, err
	}
	fsys, err := snap.filesOf(w)
	if err != nil {
		return nil, readOutput{}, err
	}
	ft, err := readText(fsys, p, in.Offset, s.opts.MaxChars)
	var off *offsetError
	switch {
	case errors.Is(err, errIsDir):
		return nil, readOutput{}, fmt.Errorf("%s in skill %s is a directory; load_skill(%q) lists the skill's files", p, w.Skill.Name, w.Skill.Name)
	case errors.As(err, &off):
		return nil, readOutput{}, fmt.Errorf("%s in skill %s: %w", p, w.Skill.Name, err)
	case err != nil:
		return nil, readOutput{}, fileError(w, p, err)
	}
	s.record(ctx, w.Skill.Name, true)
	out := readOutput{Name: w.Skill.Name, Path: p, Size: ft.size, Offset: ft.start, Truncated: ft.truncated, Binary: ft.binary, MIMEType: ft.mime}
	switch {
	case ft.binary:
		out.Message = fmt.Sprintf("%s in skill %s is a binary file (%s, %d bytes) and is not shown as text; it can be read as the resource %s",
			p, w.Skill.Name, ft.mime, ft.size, resourceURI(w.Skill.Name, p))
		return textResult(out.Message), out, nil
	case ft.truncated:
		out.NextOffset, out.Remaining = ft.end, ft.size-ft.end
		out.Text = ft.text + readOn(w.Skill.Name, p, ft)
	case ft.start > 0 && ft.start == ft.size:
		out.Message = fmt.Sprintf("nothing is left of %s in skill %s from offset %d: the file is %d bytes", p, w.Skill.Name, ft.start, ft.size)
		return textResult(out.Message), out, nil
	default:
		out.Text = ft.text
	}
	return textResult(out.Text), out, nil
}

func (s *Server) loadedSkills(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, loadedOutput, error) {
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, loadedOutput{}, err
	}
	l := s.ledgers.of(req.Session, s.opts.LedgerSize)
	out := loadedOutput{Skills: []loadedSkill{}}
	budget := s.opts.loadedChars()
	var gone, owed, sent []string
	var b strings.Builder
	// The most recent first: an agent whose context was compacted is
	// most likely in the middle of the task it loaded its last skills
	// for, so those are given back first and the oldest are the ones
	// left out. A skill that does not fit does not stop the older ones
	// behind it: a small one still fits, and every one left out is named.
	for _, e := range slices.Backward(l.list()) {
		w, ok := snap.byKey[e.key]
		if !ok {
			out.Gone = append(out.Gone, e.name)
			gone = append(gone, e.key)
			continue
		}
		page, err := body(ctx, &w.Skill, s.opts.MaxChars)
		if err != nil {
			return nil, loadedOutput{}, fmt.Errorf("read the instructions of skill %s: %w", w.Skill.Name, err)
		}
		text := bodyText(&w.Skill, page)
		cost := utf8.RuneCountInString(w.Skill.Name) + utf8.RuneCountInString(w.Skill.Description) + utf8.RuneCountInString(text)
		if cost > budget {
			out.Omitted = append(out.Omitted, w.Skill.Name)
			owed = append(owed, e.key)
			continue
		}
		budget -= cost
		sent = append(sent, e.key)
		ls := loadedSkill{Name: w.Skill.Name, Description: w.Skill.Description, Body: text}
		if page.Cut() {
			ls.Truncated, ls.NextOffset = true, page.End
		}
		out.Skills = append(out.Skills, ls)
		fmt.Fprintf(&b, "<skill name=%q>\n%s\n</skill>\n\n", w.Skill.Name, strings.TrimSpace(text))
	}
	l.drop(gone...)
	l.owe(owed, sent)
	if len(out.Skills) == 0 && len(out.Gone) == 0 && len(out.Omitted) == 0 {
		b.WriteString("no skill was loaded in this session; load_skill loads one")
	}
	if len(out.Gone) > 0 {
		fmt.Fprintf(&b, "no longer offered by the workspace (do not follow them any more): %s\n", strings.Join(out.Gone, ", "))
	}
	if len(out.Omitted) > 0 {
		fmt.Fprintf(&b, "left out to keep this answer within %d characters, the most recent first (call load_skill with each name to get its instructions again): %s",
			s.opts.loadedChars(), quoted(out.Omitted))
	}
	return textResult(strings.TrimSpace(b.String())), out, nil
}

// quoted lists names quoted, so that one with a comma or a space reads
// as one name.
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// recordWait is how long an answer waits for its use or view to be
// recorded. The usage file's lock may be held for minutes (a writer
// waits up to two for another): the answer goes out then, and the record
// is made once the lock is free.
const recordWait = 2 * time.Second

// record counts a use or a view. A use that cannot be recorded does not
// fail the call, and one that waits for the usage file's lock does not
// hold it past recordWait: the agent needs the skill more than the count
// does. The record outlives a cancelled request: the skill was sent.
func (s *Server) record(ctx context.Context, name string, view bool) {
	what := map[bool]string{false: "use", true: "view"}[view]
	done := make(chan struct{})
	s.records.add()
	go func() {
		defer s.records.done()
		defer close(done)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		if err := s.ws.Record(ctx, name, view); err != nil {
			s.log.Warn("cannot record the "+what+" of a skill", "skill", name, "err", err)
		}
	}()
	timer := time.NewTimer(recordWait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		s.log.Info("answered before the "+what+" of a skill was recorded: the usage file is busy; it is recorded once it is free", "skill", name)
	}
}

func textResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

func fileEntries(s *skill.Skill) []fileEntry {
	list := s.FileList()
	out := make([]fileEntry, 0, len(list))
	for _, f := range list {
		out = append(out, fileEntry{Path: f.Path, Size: f.Size})
	}
	return out
}

func fileTree(files []fileEntry) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "  %s (%d bytes)\n", f.Path, f.Size)
	}
	return b.String()
}

// bodyText is a skill's instructions as an answer carries them: the
// page read, and when it leaves out the rest, the line that says how to
// read it.
func bodyText(sk *skill.Skill, page skill.BodyPage) string {
	if !page.Cut() {
		return page.Text
	}
	return page.Text + fmt.Sprintf("\n\n[truncated: the first %d characters of the instructions are shown; %d bytes of %s are left: "+
		"read_skill_file(name=%q, path=%q, offset=%d) reads on]", utf8.RuneCountInString(page.Text), page.Size-page.End, sk.File, sk.Name, sk.File, page.End)
}

// loadText is load_skill's answer as a model reads it: what the skill is,
// its files, then its instructions.
func loadText(w *layering.Winner, text string, files []fileEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill: %s\nDescription: %s\nFrom: %s layer, source %s\n", w.Skill.Name, w.Skill.Description, w.Layer, w.Source)
	if len(w.Skill.AllowedTools) > 0 {
		fmt.Fprintf(&b, "Allowed tools: %s\n", strings.Join(w.Skill.AllowedTools, " "))
	}
	fmt.Fprintf(&b, "Files (read one with read_skill_file(name=%q, path=...)):\n%s\n", w.Skill.Name, fileTree(files))
	b.WriteString(text)
	return b.String()
}

// frontmatter returns the skill's frontmatter as the specification spells
// its keys, with every field skillsync does not interpret.
func frontmatter(s *skill.Skill) map[string]any {
	m := map[string]any{"name": s.Name, "description": s.Description}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	list := func(k string, v []string) {
		if len(v) > 0 {
			m[k] = v
		}
	}
	set("license", s.License)
	set("compatibility", s.Compatibility)
	set("version", s.Version)
	set("author", s.Author)
	list("tags", s.Tags)
	list("triggers", s.Triggers)
	list("allowed-tools", s.AllowedTools)
	if len(s.Metadata) > 0 {
		m["metadata"] = s.Metadata
	}
	for k, v := range s.Extra {
		if _, ok := m[k]; !ok {
			m[k] = jsonSafe(v)
		}
	}
	return m
}

// jsonSafe replaces what JSON cannot hold (YAML's .nan and .inf) with its
// text, so one odd field cannot fail a load.
func jsonSafe(v any) any {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprint(v)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonSafe(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonSafe(x)
		}
		return out
	}
	return v
}

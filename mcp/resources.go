package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
)

// resourceScheme is the URI scheme of skills as resources:
// skill://<name>/<path inside the skill>.
const resourceScheme = "skill://"

// resourceURI returns the URI of a skill's file. The name and each path
// segment are escaped. A name that cannot be a URI's host even escaped
// (Go's URLs take no escaped ASCII there: a space, '#', '?', '%') comes
// after an empty host instead, skill:///<name>/<path>, so every skill
// the catalog shows is a resource; parseResourceURI reads both.
func resourceURI(name, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	host := url.PathEscape(name)
	if _, err := url.Parse(resourceScheme + host + "/"); err != nil {
		host = "/" + host
	}
	return resourceScheme + host + "/" + strings.Join(segs, "/")
}

// parseResourceURI splits a skill:// URI into the skill's name and the
// file's path, unescaped.
func parseResourceURI(uri string) (name, p string, err error) {
	rest, ok := strings.CutPrefix(uri, resourceScheme)
	if !ok {
		return "", "", fmt.Errorf("resource %s is not a skill: skill resources are skill://<name>/<path>", uri)
	}
	rest = strings.TrimPrefix(rest, "/") // a name after an empty host
	rawName, rawPath, _ := strings.Cut(rest, "/")
	if name, err = url.PathUnescape(rawName); err != nil {
		return "", "", fmt.Errorf("resource %s: %w", uri, err)
	}
	if p, err = url.PathUnescape(rawPath); err != nil {
		return "", "", fmt.Errorf("resource %s: %w", uri, err)
	}
	return name, p, nil
}

func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: "skill://{name}/{+path}",
		Name:        "skill-file",
		Title:       "A file of a skill",
		Description: "Any file of a skill, by the skill's name and the file's path inside it; skill://<name>/SKILL.md is its instructions.",
	}, s.readResource)
}

// registerResources makes the resource list the SKILL.md of every visible
// skill in snap: skills that are gone are removed and new or changed ones
// added, so connected clients are told the list changed only when it did.
// It runs under s.reload, and reports whether the list changed.
func (s *Server) registerResources(snap *snapshot) (changed bool) {
	want := make(map[string]*layering.Winner, len(snap.visible))
	for _, w := range snap.visible {
		uri := resourceURI(w.Skill.Name, w.Skill.File)
		if _, err := url.Parse(uri); err != nil {
			continue // unreachable: resourceURI makes URIs that parse; the tools still serve it
		}
		want[uri] = w
	}
	var gone []string
	for uri := range s.registered {
		if _, ok := want[uri]; !ok {
			gone = append(gone, uri)
			delete(s.registered, uri)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveResources(gone...)
		changed = true
	}
	for uri, w := range want {
		if desc, ok := s.registered[uri]; ok && desc == w.Skill.Description {
			continue
		}
		s.registered[uri] = w.Skill.Description
		s.mcp.AddResource(&sdk.Resource{
			URI: uri, Name: w.Skill.Name, Title: w.Skill.Name + " (skill)", Description: w.Skill.Description,
			MIMEType: "text/markdown",
		}, s.readResource)
		changed = true
	}
	return changed
}

// readResource serves any file of a visible skill. Text comes as text,
// cut at the character limit read_skill_file keeps, anything else as a
// blob of at most MaxResourceBytes. A read records a view, as
// read_skill_file does. A request for something that is not there, or
// that leads out of its skill, is refused as invalid parameters.
func (s *Server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	name, p, err := parseResourceURI(uri)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	w, err := snap.lookup(name)
	if err != nil {
		return nil, invalidParams("resource %s not found: %v", uri, err)
	}
	rel, err := skillPath(w.Skill.Name, p)
	if err != nil {
		return nil, invalidParams("resource %s: %v", uri, err)
	}
	fsys, err := snap.filesOf(w)
	if err != nil {
		return nil, err
	}
	c, err := s.resourceContents(fsys, w.Skill.Name, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, invalidParams("resource %s not found: skill %s has no file %s", uri, w.Skill.Name, rel)
	case errors.Is(err, errIsDir):
		return nil, invalidParams("resource %s: %s in skill %s is a directory", uri, rel, w.Skill.Name)
	case errors.Is(err, errTooLarge):
		return nil, invalidParams("resource %s: %v", uri, err)
	case errors.Is(err, repository.ErrOutside), errors.Is(err, repository.ErrNotRegular):
		// A link out of the skill is an escaping URI, and a FIFO or a
		// device no resource: the client asked for what is not served.
		return nil, invalidParams("resource %s: %v", uri, fileError(w, rel, err))
	case err != nil:
		return nil, fileError(w, rel, err)
	}
	c.URI = uri
	s.record(ctx, w.Skill.Name, true)
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// resourceContents reads the file at rel as a resource: text up to the
// character limit, with the same [truncated] line read_skill_file adds,
// or the whole file as a blob.
func (s *Server) resourceContents(fsys fs.FS, name, rel string) (*sdk.ResourceContents, error) {
	ft, err := readText(fsys, rel, 0, s.opts.MaxChars)
	if err != nil {
		return nil, err
	}
	if !ft.binary {
		text := ft.text
		if ft.truncated {
			text += readOn(name, rel, ft)
		}
		return &sdk.ResourceContents{MIMEType: mimeOf(rel, []byte(ft.text)), Text: text}, nil
	}
	data, err := readAll(fsys, rel, s.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	return &sdk.ResourceContents{MIMEType: mimeOf(rel, data), Blob: data}, nil
}

func mimeOf(p string, data []byte) string {
	switch ext := strings.ToLower(path.Ext(p)); ext {
	case ".md", ".markdown":
		return "text/markdown"
	case "":
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
	}
	if isText(data) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

func (s *Server) addPrompt() {
	s.mcp.AddPrompt(&sdk.Prompt{
		Name:  "available_skills",
		Title: "Available skills",
		Description: "The <available_skills> block for a system prompt: every skill an agent may load, with its description " +
			"(skills marked disable-model-invocation are left out).",
		Arguments: []*sdk.PromptArgument{
			{Name: "format", Description: "xml (the default) or json"},
			{Name: "max_chars", Description: "keep the block within this many characters: descriptions are shortened, then the last skills left out"},
		},
	}, s.getPrompt)
}

func (s *Server) getPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	snap, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	args := req.Params.Arguments
	maxChars := 0
	if v := strings.TrimSpace(args["max_chars"]); v != "" {
		if maxChars, err = strconv.Atoi(v); err != nil || maxChars < 0 {
			return nil, invalidParams("max_chars %q is not a number of characters", v)
		}
	}
	block, err := layering.Prompt(layering.PromptSkills(snap.visible), layering.PromptFormat(args["format"]), maxChars)
	if err != nil {
		// The skills are rendered already; only the format can be wrong.
		return nil, invalidParams("%v", err)
	}
	return &sdk.GetPromptResult{
		Description: "the skills of this workspace; load one with the load_skill tool before following it",
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: block}}},
	}, nil
}

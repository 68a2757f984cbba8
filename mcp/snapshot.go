package mcp

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// snapshot is one reading of the catalog: what the server answers from
// until the workspace's stamp moves.
type snapshot struct {
	stamp string
	// visible is the winners that are neither hidden nor archived, in
	// catalog order; the server knows no others.
	visible []*layering.Winner
	byKey   map[string]*layering.Winner

	indexOnce sync.Once
	index     *layering.Index

	filesMu sync.Mutex
	files   map[string]fs.FS // by catalog key, made on first read
	// env finds the user's git config, for what git ignores in a local
	// layer's skill (filesOf).
	env hostenv.Env
}

func newSnapshot(stamp string, cat *layering.Catalog, env hostenv.Env) *snapshot {
	visible := cat.Visible()
	byKey := make(map[string]*layering.Winner, len(visible))
	for _, w := range visible {
		byKey[layering.Key(w.Skill.Name)] = w
	}
	return &snapshot{stamp: stamp, visible: visible, byKey: byKey, files: map[string]fs.FS{}, env: env}
}

// search ranks the visible skills against query.
func (s *snapshot) search(query string, limit int) []layering.Result {
	s.indexOnce.Do(func() { s.index = layering.NewIndex(s.visible) })
	return s.index.Search(query, limit)
}

// lookup returns the visible skill named name, compared as the catalog
// compares names, or an error that names the closest visible skills.
func (s *snapshot) lookup(name string) (*layering.Winner, error) {
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("give the name of a skill; search_skills or list_skills shows them")
	}
	if w, ok := s.byKey[layering.Key(name)]; ok {
		return w, nil
	}
	if near := layering.Nearest(s.visible, name, 3); len(near) > 0 {
		return nil, fmt.Errorf("no skill named %q; did you mean %s?", name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("no skill named %q; search_skills or list_skills shows the skills there are", clip(name))
}

// clip is a name as an answer quotes it: a client's name of a megabyte
// is not sent back whole.
func clip(name string) string {
	const most = 100
	if len(name) <= most {
		return name
	}
	i := most
	for i > 0 && !utf8.RuneStart(name[i]) {
		i--
	}
	return name[:i] + "…"
}

// filesOf returns the file system a skill's files are read through,
// confined to the skill's own directory: a skill that lives on disk is
// read through a DirFS rooted at it, so a symbolic link into a sibling
// skill is refused as the read command refuses it; any other skill
// through its own fs.FS.
func (s *snapshot) filesOf(w *layering.Winner) (fs.FS, error) {
	if w.Dir == "" {
		return w.Skill.Files, nil
	}
	key := layering.Key(w.Skill.Name)
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if fsys, ok := s.files[key]; ok {
		return fsys, nil
	}
	fsys, err := repository.SkillFiles(w.Dir, w.Skill.Path, w.Layer != layering.Marketplace, s.env)
	if err != nil {
		return nil, fmt.Errorf("open skill %s at %s: %w", w.Skill.Name, w.Dir, err)
	}
	s.files[key] = fsys
	return fsys, nil
}

// body returns the first maxChars characters of a skill's instructions,
// the Markdown after its frontmatter, read from its files on demand: the
// catalog keeps frontmatter only.
func body(_ context.Context, s *skill.Skill, maxChars int) (skill.BodyPage, error) {
	return s.ReadBodyPage(maxChars)
}

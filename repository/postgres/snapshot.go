package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// How a Postgres source keeps a snapshot.
//
// Skills must see one consistent state of the tables and must not hold the
// source in memory. It reads in one REPEATABLE READ, READ ONLY
// transaction: the revision, then the listing of every entry and file
// (names, modes, sizes and hashes: small), then the contents it does not
// have yet, streamed row by row into a spool directory on local disk,
// named by their SHA-256. Then the transaction ends, and the files are
// served from the spool by an fs.FS built from the listing.
//
// The other way, keeping only the revision and fetching a file's content
// when it is opened, would need every old version of every file kept in
// the database until no reader could want it, and would hold a
// connection, or fail, for as long as a caller reads. A copy on local
// disk costs the disk space of the source and makes the source's
// files as durable as a git store's objects for as long as the caller
// needs them. Since the spool is content-addressed, a later snapshot
// downloads only the contents that changed.
//
// Limits apply from the listing, before the contents they rule out are
// read. The listing itself stops after max_entries rows. Then the download
// runs in two passes: first the files discovery reads (every SKILL.md and
// plugin manifest within its size limit, at most max_source_size bytes of
// them), then discovery runs on the snapshot as Skills will, and only the
// files of the skills it keeps are read. Discovery takes sizes from the
// listing, so max_file_size, max_skill_size, max_source_size and the
// source's selection rule a skill out before any of its other files is
// downloaded, with the same problems and the same skills kept as on any
// other adapter: the second discovery, in Skills, sees the same tree.

// chunkSize is the largest piece of content read in one row: larger files
// are read in slices of it, so memory stays bounded whatever a file's size.
const chunkSize = 1 << 20

// pgTree is one snapshot of a Postgres source.
type pgTree struct {
	revision repository.Revision
	nodes    map[string]*pgNode // by slash-separated path; "." is the root
	spool    string
	problems []skill.Problem
}

// pgNode is a directory or a regular file of a snapshot.
type pgNode struct {
	name     string
	dir      bool
	children []*pgNode // in name order
	mode     fs.FileMode
	size     int64
	sum      string // hex SHA-256 of the content
	modTime  time.Time
	held     bool // the content is in the spool
	entry    string
}

// pgRow is one line of the listing: an entry, and one of its files unless
// the entry has none.
type pgRow struct {
	entry     string
	updatedAt time.Time
	path      *string
	mode      *int32
	size      *int64
	sum       []byte
}

// snapshot returns the newest snapshot, reusing the last one when the
// revision has not moved.
func (p *Postgres) snapshot(ctx context.Context) (*pgTree, error) {
	pool, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	var tree *pgTree
	err = p.withSchema(ctx, pool, func() error {
		tree, err = p.read(ctx, pool)
		return err
	})
	if err != nil {
		return nil, p.fail("read skills", err)
	}
	return tree, nil
}

// read reads a snapshot in one transaction. Its errors are unwrapped, for
// snapshot to wrap once.
func (p *Postgres) read(ctx context.Context, pool *pgxpool.Pool) (*pgTree, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, opError("begin snapshot", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rev, err := p.revision(ctx, tx)
	if err != nil {
		return nil, opError("read revision", err)
	}
	if p.tree != nil && p.tree.revision == rev {
		return p.tree, tx.Commit(ctx)
	}
	rows, over, err := p.listing(ctx, tx)
	if err != nil {
		return nil, opError("list skills", err)
	}
	if p.spool == "" {
		dir, err := os.MkdirTemp(p.cfg.SpoolDir, "skillsync-pg-"+repository.SourceName(p.cfg.Source)+"-")
		if err != nil {
			return nil, opError("make spool directory", err)
		}
		p.spool = dir
	}
	tree := buildTree(p.cfg.Source, rev, p.spool, rows)
	if over != "" {
		tree.problems = append(tree.problems, skill.Problem{Level: skill.Error, Rule: "source-too-many-entries", Source: p.cfg.Source, Path: over, File: over,
			Message: fmt.Sprintf("the source has more than %d files (max_entries): the listing stopped in %s, which and every skill after it in name order are not read (a cached copy of one stays as it is): raise max_entries for a source this big", p.opts.EntryLimit(), over)})
	}
	if err := p.download(ctx, tx, tree, p.heads(tree)); err != nil {
		return nil, err
	}
	kept, err := p.kept(ctx, tree)
	if err != nil {
		return nil, err
	}
	if err := p.download(ctx, tx, tree, kept); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, opError("end snapshot", err)
	}
	p.tree = tree
	tree.prune()
	return tree, nil
}

// listing reads every entry and file, without content, in name order, at
// most max_entries rows: memory stays bounded whatever the tables hold.
// When there are more, the entry the limit cut into is left out whole, as
// is every entry after it, and over names it.
func (p *Postgres) listing(ctx context.Context, tx pgx.Tx) (out []pgRow, over string, err error) {
	var limit *int64 // nil: LIMIT NULL, no limit
	if max := p.opts.EntryLimit(); max < math.MaxInt {
		n := int64(max) + 1
		limit = &n
	}
	rows, err := tx.Query(ctx, "SELECT s.name, s.updated_at, f.path, f.mode, f.size, f.sha256 FROM "+p.schema+".skills s LEFT JOIN "+
		p.schema+`.files f ON f.skill = s.name ORDER BY s.name COLLATE "C", f.path COLLATE "C" LIMIT $1`, limit)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var r pgRow
		if err := rows.Scan(&r.entry, &r.updatedAt, &r.path, &r.mode, &r.size, &r.sum); err != nil {
			return nil, "", err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if limit != nil && int64(len(out)) == *limit {
		over = out[len(out)-1].entry
		for len(out) > 0 && out[len(out)-1].entry == over {
			out = out[:len(out)-1]
		}
	}
	return out, over, nil
}

// validEntry reports whether name can be a directory at the root of the
// tree: one path component. A name starting with "." is valid and hidden,
// as a dot-directory is in any source.
func validEntry(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 && !strings.ContainsAny(name, "/\\\x00")
}

// validFilePath reports whether p can be a file's path inside a skill:
// slash-separated, relative, no "." or ".." element, no backslash, every
// element at most 255 bytes.
func validFilePath(p string) bool {
	if !fs.ValidPath(p) || p == "." || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, elem := range strings.Split(p, "/") {
		if len(elem) > 255 {
			return false
		}
	}
	return true
}

// buildTree makes the snapshot's tree from its listing. An entry with a
// bad name, or a file path that is invalid or collides with a directory,
// is left out whole with an error problem: one bad entry never stops the
// others.
func buildTree(source string, rev repository.Revision, spool string, rows []pgRow) *pgTree {
	t := &pgTree{revision: rev, spool: spool, nodes: map[string]*pgNode{".": {name: ".", dir: true, mode: fs.ModeDir | 0o755}}}
	byEntry := map[string][]pgRow{}
	for _, r := range rows {
		byEntry[r.entry] = append(byEntry[r.entry], r)
	}
	entries := make([]string, 0, len(byEntry))
	for name := range byEntry {
		entries = append(entries, name)
	}
	sort.Strings(entries)
	for _, name := range entries {
		if p := t.addEntry(name, byEntry[name]); p != nil {
			p.Source = source
			t.problems = append(t.problems, *p)
		}
	}
	for _, n := range t.nodes {
		sort.Slice(n.children, func(i, j int) bool { return n.children[i].name < n.children[j].name })
	}
	return t
}

// addEntry adds one entry and its files, or nothing and a problem.
func (t *pgTree) addEntry(name string, rows []pgRow) *skill.Problem {
	bad := func(rule, file, format string, args ...any) *skill.Problem {
		p := &skill.Problem{Level: skill.Error, Rule: rule, Path: name, File: file, Message: fmt.Sprintf(format, args...) + "; the skill is skipped"}
		if skill.ValidName(name) {
			p.Skill = name
		}
		return p
	}
	if !validEntry(name) {
		return bad("skill-name-invalid", "", "skill name %q in the skills table is not one path component", name)
	}
	modTime := rows[0].updatedAt.UTC()
	nodes := map[string]*pgNode{name: {name: name, dir: true, mode: fs.ModeDir | 0o755, modTime: modTime, entry: name}}
	for _, r := range rows {
		if r.path == nil {
			continue // an entry without files
		}
		if !validFilePath(*r.path) {
			return bad("file-path-invalid", name, "file path %q is not a clean relative path", *r.path)
		}
		if r.size == nil || r.mode == nil || len(r.sum) != sha256.Size {
			return bad("file-unreadable", path.Join(name, *r.path), "file %s has no size, mode or hash", *r.path)
		}
		full := path.Join(name, *r.path)
		mode := fs.FileMode(0o644)
		if *r.mode&0o111 != 0 {
			mode = 0o755
		}
		file := &pgNode{name: path.Base(full), mode: mode, size: *r.size, sum: hex.EncodeToString(r.sum), modTime: modTime, entry: name}
		if nodes[full] != nil {
			return bad("file-path-conflict", full, "%s is both a file and a directory", *r.path)
		}
		nodes[full] = file
		// Link the file to its parents, making the missing ones, up to the
		// first that existed: from there on the chain is linked already.
		for child := full; ; {
			dir := path.Dir(child)
			parent, existed := nodes[dir]
			if !existed {
				parent = &pgNode{name: path.Base(dir), dir: true, mode: fs.ModeDir | 0o755, modTime: modTime, entry: name}
				nodes[dir] = parent
			} else if !parent.dir {
				return bad("file-path-conflict", dir, "%s is both a file and a directory", strings.TrimPrefix(dir, name+"/"))
			}
			parent.children = append(parent.children, nodes[child])
			if existed {
				break
			}
			child = dir
		}
	}
	for p, n := range nodes {
		t.nodes[p] = n
	}
	root := t.nodes["."]
	root.children = append(root.children, nodes[name])
	return nil
}

// drop removes an entry from the tree, with a problem saying why.
func (t *pgTree) drop(source, entry string, p skill.Problem) {
	for name, n := range t.nodes {
		if n.entry == entry {
			delete(t.nodes, name)
		}
	}
	root := t.nodes["."]
	root.children = deleteNode(root.children, entry)
	p.Source, p.Path = source, entry
	if skill.ValidName(entry) {
		p.Skill = entry
	}
	t.problems = append(t.problems, p)
}

func deleteNode(nodes []*pgNode, name string) []*pgNode {
	out := nodes[:0]
	for _, n := range nodes {
		if n.name != name {
			out = append(out, n)
		}
	}
	return out
}

// wanted reports whether a file's content may be read into the spool:
// not when its own size rules its skill out.
func (p *Postgres) wanted(n *pgNode) bool {
	if p.opts.MaxFileSize > 0 && n.size > p.opts.MaxFileSize {
		return false
	}
	if skillFileName(n.name) && n.size > skill.MaxSkillFile {
		return false
	}
	return true
}

// skillFileName reports whether name is the file that makes a directory a
// skill.
func skillFileName(name string) bool { return name == "SKILL.md" || name == "skill.md" }

// heads returns the paths of the files discovery reads, in path order:
// every SKILL.md (or skill.md) and plugin manifest within its size limit,
// up to max_source_size bytes of them in all. A SKILL.md past that is not
// read, and its skill is reported as unreadable.
func (p *Postgres) heads(t *pgTree) []string {
	var out []string
	var total int64
	for _, name := range t.paths() {
		n := t.nodes[name]
		switch {
		case n.dir || !p.wanted(n):
			continue
		case skillFileName(n.name):
		case (n.name == path.Base(repository.MarketplaceManifest) || n.name == path.Base(repository.PluginManifest)) &&
			path.Base(path.Dir(name)) == path.Dir(repository.MarketplaceManifest) && n.size <= repository.MaxManifestSize:
		default:
			continue
		}
		if total += n.size; total > p.opts.SourceSizeLimit() {
			break
		}
		out = append(out, name)
	}
	return out
}

// kept runs discovery on the snapshot, whose SKILL.md files and manifests
// are in the spool by now and whose other files have only their listed
// sizes, and returns the paths of every file of the skills it keeps: the
// ones to download. Discovery reads no other content, so Skills, running
// it again over the whole snapshot, keeps the same skills.
func (p *Postgres) kept(ctx context.Context, t *pgTree) ([]string, error) {
	found, _, err := repository.Scan(ctx, &pgFS{tree: t}, p.cfg.Source, p.cfg.Source, p.opts)
	if err != nil {
		return nil, opError("discover skills", err)
	}
	var out []string
	for _, f := range found {
		if !f.Valid() {
			continue
		}
		for _, file := range f.Skill.Listing {
			out = append(out, path.Join(f.Skill.Path, file.Path))
		}
	}
	sort.Strings(out)
	return out, nil
}

// paths returns the paths of the tree's nodes in order.
func (t *pgTree) paths() []string {
	out := make([]string, 0, len(t.nodes))
	for name := range t.nodes {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// download brings into the spool the contents of the files at paths that
// it lacks, reading from the snapshot's transaction: small contents in
// one streamed query, large ones slice by slice. A content that does not
// match its hash drops its entry.
func (p *Postgres) download(ctx context.Context, tx pgx.Tx, t *pgTree, paths []string) error {
	type want struct {
		entry, path string
		size        int64 // as listed: what the content may be, no more
	}
	small := map[string]want{} // by hash: one file of each content
	large := map[string]want{}
	for _, name := range paths {
		n := t.nodes[name]
		if n == nil || n.dir || n.held || !p.wanted(n) {
			continue
		}
		if _, err := os.Stat(filepath.Join(t.spool, n.sum)); err == nil {
			n.held = true
			continue
		}
		w := want{n.entry, strings.TrimPrefix(name, n.entry+"/"), n.size}
		if n.size > chunkSize {
			large[n.sum] = w
		} else if _, ok := small[n.sum]; !ok {
			small[n.sum] = w
		}
	}
	failed := map[string]string{} // hash -> why
	if len(small) > 0 {
		var entries, files []string
		sizes := map[string]int64{}
		for sum, w := range small {
			entries, files = append(entries, w.entry), append(files, w.path)
			sizes[sum] = w.size
		}
		// At most one byte past a small file's limit comes back, whatever
		// a row claims its size to be.
		rows, err := tx.Query(ctx, "SELECT f.sha256, substring(f.content FROM 1 FOR $3) FROM "+p.schema+".files f JOIN unnest($1::text[], $2::text[]) AS w (skill, path) ON f.skill = w.skill AND f.path = w.path",
			entries, files, chunkSize+1)
		if err != nil {
			return opError("read file contents", err)
		}
		for rows.Next() {
			var sum []byte
			var content pgtype.DriverBytes // valid until the next row: never copied
			if err := rows.Scan(&sum, &content); err != nil {
				rows.Close()
				return opError("read file contents", err)
			}
			key := hex.EncodeToString(sum)
			err := t.store(key, sizes[key], func(w io.Writer) error { _, err := w.Write(content); return err })
			var bad *hashError
			if errors.As(err, &bad) {
				failed[bad.want] = err.Error()
			} else if err != nil {
				rows.Close()
				return opError("copy file contents to the spool", err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return opError("read file contents", err)
		}
	}
	sums := make([]string, 0, len(large))
	for sum := range large {
		sums = append(sums, sum)
	}
	sort.Strings(sums)
	for _, sum := range sums {
		w := large[sum]
		err := t.store(sum, w.size, func(f io.Writer) error {
			for off := int64(1); ; off += chunkSize {
				var part []byte
				err := tx.QueryRow(ctx, "SELECT substring(content FROM $3 FOR $4) FROM "+p.schema+".files WHERE skill = $1 AND path = $2",
					w.entry, w.path, off, chunkSize).Scan(&part)
				if err != nil {
					return &readError{err}
				}
				if _, err := f.Write(part); err != nil {
					return err
				}
				if len(part) < chunkSize {
					return nil
				}
			}
		})
		var re *readError
		var bad *hashError
		switch {
		case errors.As(err, &re):
			return opError("read file "+path.Join(w.entry, w.path), re.err)
		case errors.As(err, &bad):
			failed[sum] = err.Error()
		case err != nil:
			return opError("copy file contents to the spool", err)
		}
	}
	for _, name := range paths {
		n := t.nodes[name]
		if n == nil || n.dir || !p.wanted(n) || n.held {
			continue
		}
		if why, ok := failed[n.sum]; ok {
			t.drop(p.cfg.Source, n.entry, skill.Problem{Level: skill.Error, Rule: "file-unreadable", File: name,
				Message: fmt.Sprintf("cannot copy %s from the database: %s; the skill is skipped", name, why)})
			continue
		}
		if _, err := os.Stat(filepath.Join(t.spool, n.sum)); err != nil {
			// The snapshot listed it, so the snapshot has it.
			return opError("read file "+name, fmt.Errorf("content %s was not returned", n.sum[:12]))
		}
		n.held = true
	}
	return nil
}

// readError marks a failure of the database, as opposed to one of the
// local disk or of the content itself.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// store writes a content into the spool under its hash: into a temporary
// file, hashed on the way, then renamed, so the spool never holds a
// partial or wrong content under a hash. A content that does not match
// its hash, or is longer than size (the listed size, which the limits
// were checked against), is a *hashError: a database that lies about a
// size cannot spend more memory or disk than the limits allow.
func (t *pgTree) store(sum string, size int64, write func(io.Writer) error) error {
	f, err := os.CreateTemp(t.spool, ".part-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	lw := &limitedWriter{w: io.MultiWriter(f, h), left: size}
	err = write(lw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if lw.over {
		return &hashError{got: "longer than listed", want: sum}
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return &hashError{got: got, want: sum}
	}
	return os.Rename(f.Name(), filepath.Join(t.spool, sum))
}

// limitedWriter takes at most left bytes and then refuses, marking over.
type limitedWriter struct {
	w    io.Writer
	left int64
	over bool
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if int64(len(b)) > l.left {
		l.over = true
		return 0, errors.New("the content is longer than its listed size")
	}
	l.left -= int64(len(b))
	return l.w.Write(b)
}

// hashError is a content that does not hash to the value stored with it.
type hashError struct{ got, want string }

func (e *hashError) Error() string {
	if len(e.got) != len(e.want) {
		return fmt.Sprintf("content %s is %s", e.want[:12], e.got)
	}
	return fmt.Sprintf("content hashes to %s, not to the stored %s", e.got[:12], e.want[:12])
}

// prune removes from the spool every content the tree does not hold.
func (t *pgTree) prune() {
	keep := map[string]bool{}
	for _, n := range t.nodes {
		if n.held {
			keep[n.sum] = true
		}
	}
	entries, _ := os.ReadDir(t.spool)
	for _, e := range entries {
		if !keep[e.Name()] {
			os.Remove(filepath.Join(t.spool, e.Name()))
		}
	}
}

// opError wraps err with the operation that failed.
func opError(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }

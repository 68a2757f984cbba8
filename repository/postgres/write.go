package postgres

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/internal/skillhash"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// maxPublishFile bounds one file of a published skill when the source has
// no max_file_size: a file is held in memory while it is sent.
const maxPublishFile = 256 << 20

// publishFile is one file of a skill being published, as the first pass
// over it found it.
type publishFile struct {
	path string
	mode int32
	size int64
	sum  string
}

// PublishSkill writes the skill in files, an FS rooted at the skill's
// directory, into the source as name, replacing any skill of that name, in
// one transaction; author is recorded in the changes table. The skill must
// pass strict validation, and its name must be name.
//
// Every writer of the source takes the lock of the revision row first, so
// publishes and deletes (of any skill) run one after the other, never
// interleaved: the final state is always one whole version. A publish that
// changes nothing writes nothing and returns the current revision.
func (p *Postgres) PublishSkill(ctx context.Context, name string, files fs.FS, author string) (repository.Revision, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	list, err := p.checkPublish(name, files)
	if err != nil {
		return "", err
	}
	skillHash, err := hashSkill(files, list)
	if err != nil {
		return "", fmt.Errorf("source %s: publish %s: %w", p.cfg.Source, name, err)
	}
	return p.write(ctx, "publish "+name, func(pool *pgxpool.Pool) (repository.Revision, error) {
		return p.publish(ctx, pool, name, files, list, skillHash, author, nil)
	})
}

// errMoved is a skill another writer changed after an edit read it.
var errMoved = errors.New("the skill changed while it was edited")

// publishEdit publishes the skill name as the source holds it now, its
// SKILL.md made what edit makes of it. The transaction writes only while
// the skill is still what was read: should another writer change it in
// between, it is read and edited again, up to three times.
func (p *Postgres) publishEdit(ctx context.Context, name string, edit func([]byte) ([]byte, error), author string) (repository.Revision, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		read, err := p.current(ctx, name)
		if err != nil {
			return "", err
		}
		was, err := p.checkPublish(name, read)
		if err != nil {
			return "", err
		}
		if _, err := hashSkill(read, was); err != nil {
			return "", fmt.Errorf("source %s: edit %s: %w", p.cfg.Source, name, err)
		}
		md := read["SKILL.md"]
		if md == nil {
			return "", fmt.Errorf("source %s: edit %s: the skill has no SKILL.md", p.cfg.Source, name)
		}
		if md.Data, err = edit(md.Data); err != nil {
			return "", fmt.Errorf("source %s: edit %s/SKILL.md: %w", p.cfg.Source, name, err)
		}
		list, err := p.checkPublish(name, read)
		if err != nil {
			return "", err
		}
		skillHash, err := hashSkill(read, list)
		if err != nil {
			return "", fmt.Errorf("source %s: edit %s: %w", p.cfg.Source, name, err)
		}
		rev, err := p.write(ctx, "edit "+name, func(pool *pgxpool.Pool) (repository.Revision, error) {
			return p.publish(ctx, pool, name, read, list, skillHash, author, was)
		})
		if !errors.Is(err, errMoved) || attempt == 2 {
			return rev, err
		}
	}
}

// current reads the files of the skill name as the source holds it now.
func (p *Postgres) current(ctx context.Context, name string) (fstest.MapFS, error) {
	skills, _, err := p.Skills(ctx)
	if err != nil {
		return nil, err
	}
	p.readMu.Lock()
	defer p.readMu.Unlock()
	for _, s := range skills {
		if s.Name != name {
			continue
		}
		out := fstest.MapFS{}
		for _, f := range s.FileList() {
			data, err := fs.ReadFile(s.Files, f.Path)
			if err != nil {
				return nil, fmt.Errorf("source %s: read %s/%s: %w", p.cfg.Source, name, f.Path, err)
			}
			out[f.Path] = &fstest.MapFile{Data: data, Mode: f.Mode}
		}
		return out, nil
	}
	return nil, fmt.Errorf("source %s: edit %s: %w %q", p.cfg.Source, name, ErrNoSkill, name)
}

// checkPublish validates the skill strictly and lists its files.
func (p *Postgres) checkPublish(name string, files fs.FS) ([]publishFile, error) {
	invalid := func(problems []skill.Problem) error {
		for i := range problems {
			problems[i].Source, problems[i].Level = p.cfg.Source, skill.Error
		}
		return &repository.InvalidSkillError{Source: p.cfg.Source, Skill: name, Problems: problems}
	}
	if !skill.ValidName(name) {
		return nil, invalid([]skill.Problem{{Rule: "name-invalid", Path: name, Message: fmt.Sprintf("name %q is not one safe path component", name)}})
	}
	_, problems := skill.Load(files, name, name)
	limit := p.opts.MaxFileSize
	if limit <= 0 || limit > maxPublishFile {
		limit = maxPublishFile
	}
	listing, more := skill.ListFiles(files, name, limit)
	problems = append(problems, more...)
	var list []publishFile
	for _, f := range listing {
		if !validFilePath(f.Path) {
			problems = append(problems, skill.Problem{Rule: "file-path-invalid", Path: name, File: name + "/" + f.Path,
				Message: fmt.Sprintf("file path %q has a backslash or an element over 255 bytes", f.Path)})
		}
		mode := int32(0o644)
		if f.Mode.Perm()&0o111 != 0 {
			mode = 0o755
		}
		list = append(list, publishFile{path: f.Path, mode: mode, size: f.Size})
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	return list, nil
}

// hashSkill reads every file once, streaming: it fills in each file's
// SHA-256 and returns the skill's hash as the cache computes it
// (internal/skillhash; the files are in path order).
func hashSkill(files fs.FS, list []publishFile) (string, error) {
	skillHash := skillhash.New()
	for i := range list {
		f := &list[i]
		sum, err := hashFile(files, f.path, f.size)
		if err != nil {
			return "", err
		}
		f.sum = hex.EncodeToString(sum[:])
		skillHash.Add(f.path, f.size, sum)
	}
	sum := skillHash.Sum()
	return hex.EncodeToString(sum[:]), nil
}

// hashFile returns one file's SHA-256, checking that it still has the
// size it was listed with.
func hashFile(files fs.FS, name string, size int64) ([32]byte, error) {
	var sum [32]byte
	r, err := files.Open(name)
	if err != nil {
		return sum, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, size+1))
	if err != nil {
		return sum, fmt.Errorf("read %s: %w", name, err)
	}
	if n != size {
		return sum, fmt.Errorf("%s changed while it was read: try again", name)
	}
	h.Sum(sum[:0])
	return sum, nil
}

// lockRevision takes the revision row's lock, which every writer takes
// first, and returns the current revision.
func (p *Postgres) lockRevision(ctx context.Context, tx pgx.Tx) (repository.Revision, error) {
	var value int64
	var registry string
	err := tx.QueryRow(ctx, "SELECT value, registry::text FROM "+p.schema+".revision FOR UPDATE").Scan(&value, &registry)
	if err != nil {
		return "", err
	}
	return formatRevision(value, registry), nil
}

// bump moves the revision on (once per transaction) and returns it.
func (p *Postgres) bump(ctx context.Context, tx pgx.Tx) (repository.Revision, int64, error) {
	var value int64
	var registry string
	err := tx.QueryRow(ctx, "SELECT "+p.schema+".bump(), registry::text FROM "+p.schema+".revision").Scan(&value, &registry)
	if err != nil {
		return "", 0, err
	}
	return formatRevision(value, registry), value, nil
}

// publish is PublishSkill's transaction. With was, it writes only while
// the stored skill has exactly those files (errMoved otherwise).
func (p *Postgres) publish(ctx context.Context, pool *pgxpool.Pool, name string, files fs.FS, list []publishFile, skillHash, author string, was []publishFile) (repository.Revision, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	current, err := p.lockRevision(ctx, tx)
	if err != nil {
		return "", err
	}
	if was != nil {
		if same, err := p.unchanged(ctx, tx, name, was); err != nil || !same {
			return "", cmp.Or(err, errMoved)
		}
	}
	same, err := p.unchanged(ctx, tx, name, list)
	if err != nil {
		return "", err
	}
	if same {
		return current, tx.Commit(ctx)
	}
	rev, value, err := p.bump(ctx, tx)
	if err != nil {
		return "", err
	}
	_, err = tx.Exec(ctx, "INSERT INTO "+p.schema+".skills (name, hash, revision, updated_at, updated_by) VALUES ($1, $2, $3, now(), $4) "+
		"ON CONFLICT (name) DO UPDATE SET hash = EXCLUDED.hash, revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by",
		name, skillHash, value, author)
	if err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM "+p.schema+".files WHERE skill = $1", name); err != nil {
		return "", err
	}
	for _, f := range list {
		content, err := readChecked(files, f)
		if err != nil {
			return "", err
		}
		_, err = tx.Exec(ctx, "INSERT INTO "+p.schema+".files (skill, path, mode, content) VALUES ($1, $2, $3, $4)", name, f.path, f.mode, content)
		if err != nil {
			return "", fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	if err := p.recordChange(ctx, tx, value, name, "publish", skillHash, author); err != nil {
		return "", err
	}
	return rev, tx.Commit(ctx)
}

// unchanged reports whether the stored skill has exactly these files.
func (p *Postgres) unchanged(ctx context.Context, tx pgx.Tx, name string, list []publishFile) (bool, error) {
	rows, err := tx.Query(ctx, "SELECT f.path, f.mode, f.sha256 FROM "+p.schema+".skills s LEFT JOIN "+p.schema+
		".files f ON f.skill = s.name WHERE s.name = $1 ORDER BY f.path COLLATE \"C\"", name)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	i, exists := 0, false
	same := true
	for rows.Next() {
		exists = true
		var path *string
		var mode *int32
		var sum []byte
		if err := rows.Scan(&path, &mode, &sum); err != nil {
			return false, err
		}
		if path == nil {
			continue
		}
		if i >= len(list) || list[i].path != *path || (*mode&0o111 != 0) != (list[i].mode&0o111 != 0) || list[i].sum != hex.EncodeToString(sum) {
			same = false
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return exists && same && i == len(list), nil
}

// readChecked reads one file whole, checking it against the first pass:
// a file that changed in between fails the publish rather than storing a
// skill whose hash does not match its files.
func readChecked(files fs.FS, f publishFile) ([]byte, error) {
	r, err := files.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	content, err := io.ReadAll(io.LimitReader(r, f.size+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.path, err)
	}
	sum := sha256.Sum256(content)
	if int64(len(content)) != f.size || hex.EncodeToString(sum[:]) != f.sum {
		return nil, fmt.Errorf("%s changed while the skill was published: try again", f.path)
	}
	return content, nil
}

func (p *Postgres) recordChange(ctx context.Context, tx pgx.Tx, revision int64, name, action, skillHash, author string) error {
	_, err := tx.Exec(ctx, "INSERT INTO "+p.schema+".changes (revision, skill, action, hash, author) VALUES ($1, $2, $3, $4, $5)",
		revision, name, action, skillHash, author)
	return err
}

// ErrNoSkill is returned by Delete for a skill the source does not have.
var ErrNoSkill = errors.New("no such skill")

// Delete removes the skill name and its files from the source in one
// transaction, serialized with every other writer as Publish is, and
// records author in the changes table.
func (p *Postgres) Delete(ctx context.Context, name, author string) (repository.Revision, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	return p.write(ctx, "delete "+name, func(pool *pgxpool.Pool) (repository.Revision, error) {
		return p.delete(ctx, pool, name, author)
	})
}

// write runs tx, one writer's transaction, on the source's pool with the
// schema checked, again after a serialization conflict, and returns the
// revision it made. An error names op ("publish pdf").
func (p *Postgres) write(ctx context.Context, op string, tx func(*pgxpool.Pool) (repository.Revision, error)) (repository.Revision, error) {
	pool, err := p.connect(ctx)
	if err != nil {
		return "", err
	}
	var rev repository.Revision
	err = retryConflicts(ctx, func() error {
		return p.withSchema(ctx, pool, func() error {
			var err error
			rev, err = tx(pool)
			return err
		})
	})
	if err != nil {
		return "", p.fail(op, err)
	}
	return rev, nil
}

// delete is Delete's transaction.
func (p *Postgres) delete(ctx context.Context, pool *pgxpool.Pool, name, author string) (repository.Revision, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := p.lockRevision(ctx, tx); err != nil {
		return "", err
	}
	tag, err := tx.Exec(ctx, "DELETE FROM "+p.schema+".skills WHERE name = $1", name)
	if err != nil {
		return "", err
	}
	if tag.RowsAffected() == 0 {
		return "", fmt.Errorf("%w %q", ErrNoSkill, name)
	}
	rev, value, err := p.bump(ctx, tx)
	if err != nil {
		return "", err
	}
	if err := p.recordChange(ctx, tx, value, name, "delete", "", author); err != nil {
		return "", err
	}
	return rev, tx.Commit(ctx)
}

// retryConflicts runs a transaction again, up to three times, when the
// server aborted it for a deadlock or a serialization failure: both mean
// another writer came first, not that anything is wrong.
func retryConflicts(ctx context.Context, run func() error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = run()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "40P01" && pgErr.Code != "40001") || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// Publish is PublishSkill as the promotion gate asks for it: the skill
// goes into the database in one transaction and the new revision is the
// "commit". A database has no branches: Base, Branch and Direct do not
// apply, and Message stays in the gate's audit line.
func (p *Postgres) Publish(ctx context.Context, req repository.PublishRequest) (repository.Published, error) {
	publish := func() (repository.Revision, error) { return p.PublishSkill(ctx, req.Name, req.Files, req.Author) }
	if req.Edit != nil {
		publish = func() (repository.Revision, error) { return p.publishEdit(ctx, req.Name, req.Edit, req.Author) }
	}
	rev, err := publish()
	if err != nil {
		return repository.Published{}, err
	}
	return repository.Published{Commit: rev, Path: req.Name, Direct: true}, nil
}

var _ repository.Publisher = (*Postgres)(nil)

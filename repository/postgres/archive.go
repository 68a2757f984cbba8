package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// PostgresArchivePrefix starts the entry name of an archived skill in a
// postgres source: .archive.<name>. A name starting with "." is a hidden
// entry that discovery never reads, so the skill is gone from every host
// at the next revision, with its files kept; RestoreArchived renames it
// back.
const PostgresArchivePrefix = ".archive."

// Archive renames each skill's entry to .archive.<name> in one
// transaction, which moves the revision on once. A name the source does
// not have, or one already archived under that name, fails the whole
// transaction: nothing is archived.
func (p *Postgres) Archive(ctx context.Context, names []string, author string) (repository.Revision, error) {
	for _, n := range names {
		if !skill.ValidName(n) {
			return "", fmt.Errorf("source %s: archive %q: not a valid skill name", p.cfg.Source, n)
		}
	}
	return p.write(ctx, "archive "+strings.Join(names, ", "), func(pool *pgxpool.Pool) (repository.Revision, error) {
		return p.rename(ctx, pool, names, true, author)
	})
}

// RestoreArchived renames .archive.<name> back to name, in one
// transaction; it refuses while a skill of that name exists.
func (p *Postgres) RestoreArchived(ctx context.Context, name, author string) (repository.Revision, error) {
	if !skill.ValidName(name) {
		return "", fmt.Errorf("source %s: restore %q: not a valid skill name", p.cfg.Source, name)
	}
	return p.write(ctx, "restore "+name, func(pool *pgxpool.Pool) (repository.Revision, error) {
		return p.rename(ctx, pool, []string{name}, false, author)
	})
}

func (p *Postgres) rename(ctx context.Context, pool *pgxpool.Pool, names []string, archive bool, author string) (repository.Revision, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := p.lockRevision(ctx, tx); err != nil {
		return "", err
	}
	for _, name := range names {
		from, to := name, PostgresArchivePrefix+name
		if !archive {
			from, to = to, from
		}
		var taken bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+p.schema+".skills WHERE name = $1)", to).Scan(&taken); err != nil {
			return "", err
		}
		if taken {
			return "", fmt.Errorf("%s: %q already exists", name, to)
		}
		tag, err := tx.Exec(ctx, "UPDATE "+p.schema+".skills SET name = $2, updated_at = now(), updated_by = $3 WHERE name = $1", from, to, author)
		if err != nil {
			return "", err
		}
		if tag.RowsAffected() == 0 {
			return "", fmt.Errorf("%w %q", ErrNoSkill, from)
		}
	}
	rev, value, err := p.bump(ctx, tx)
	if err != nil {
		return "", err
	}
	action := "delete" // archived: gone from the source, files kept
	if !archive {
		action = "publish"
	}
	for _, name := range names {
		if err := p.recordChange(ctx, tx, value, name, action, "", author); err != nil {
			return "", err
		}
	}
	return rev, tx.Commit(ctx)
}

var _ repository.Archiver = (*Postgres)(nil)

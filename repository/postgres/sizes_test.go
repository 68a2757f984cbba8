package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/repositorytest"
)

// TestPostgresSizeThatLiesIsNotTrusted: a row whose size column understates
// its content (a database is untrusted) cannot bring more than the limits
// allow into the spool.
func TestPostgresSizeThatLiesIsNotTrusted(t *testing.T) {
	t.Parallel()
	s := newPostgres(t, repository.Options{MaxFileSize: 1000})
	schema := s.cfg.Schema
	pgtest.Exec(t, s.cluster, "ALTER TABLE "+schema+".files DROP COLUMN size")
	pgtest.Exec(t, s.cluster, "ALTER TABLE "+schema+".files ADD COLUMN size bigint")
	s.loadRaw(t, map[string]repositorytest.File{
		"a/SKILL.md": {Data: "---\nname: a\ndescription: d\n---\n"},
		"a/big.bin":  {Data: strings.Repeat("x", 20<<20)},
	})
	pgtest.Exec(t, s.cluster, "UPDATE "+schema+".files SET size = 10")
	_, _, err := s.Skills(context.Background())
	t.Logf("Skills: %v", err)
	var total int64
	ents, _ := os.ReadDir(s.spool)
	for _, e := range ents {
		sub, _ := os.ReadDir(s.spool + "/" + e.Name())
		for _, f := range sub {
			info, _ := f.Info()
			total += info.Size()
			t.Logf("spool %s/%s %d bytes", e.Name(), f.Name(), info.Size())
		}
	}
	if total > 1<<20 {
		t.Errorf("max_file_size is 1000 bytes, yet %d bytes of content were written to the spool", total)
	}
}

package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/hostid"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

func TestHostID(t *testing.T) {
	if got := fleet.HostID("build-7", "/w"); got != "build-7" {
		t.Errorf("configured host id: got %q", got)
	}
	a, b := fleet.HostID("", "/work/a"), fleet.HostID("", "/work/b")
	if a == b {
		t.Errorf("two workspaces on one machine share the host id %q", a)
	}
	if !fleet.ValidHostID(a) || a != fleet.HostID("", "/work/a") {
		t.Errorf("host id %q is not valid or not stable", a)
	}
	// macOS allows host names of 255 bytes: the name is cut, at a
	// character, to leave the hash room.
	for _, name := range []string{strings.Repeat("a", 199), strings.Repeat("é", 100), strings.Repeat("x", 255), strings.Repeat("\u023a", 127), "", " spaced "} {
		id := fleet.HostIDOf(name, "/work/a")
		if strings.HasPrefix(name, "\u023a") && !strings.HasPrefix(id, "\u023a") {
			// Cut to fit as the store keys it (ⱥ is a byte longer), not
			// given up for "host".
			t.Errorf("host name of %d bytes that folding lengthens: id %q", len(name), id)
		}
		// Valid as the store keys it too, else every push is refused.
		if !fleet.ValidHostID(id) || !fleet.ValidHostID(hostid.Canonical(id)) || !strings.HasSuffix(id, a[len(a)-9:]) {
			t.Errorf("host name of %d bytes: id %q is not valid", len(name), id)
		}
	}
}

func TestHoldBackAsksWhoOnlyWhenNeeded(t *testing.T) {
	plain := skill.Skill{Name: "plain", Path: "plain"}
	asked := 0
	who := func() (string, string) { asked++; return "host-1", "prod" }
	inputs := []layering.Input{{Layer: layering.Marketplace, Source: "team", Skills: []skill.Skill{plain}}}
	if held := fleet.HoldBack(inputs, who); len(held) != 0 || asked != 0 || len(inputs[0].Skills) != 1 {
		t.Fatalf("a skill without metadata: held %v, asked %d times, kept %d", held, asked, len(inputs[0].Skills))
	}
	staged := []skill.Skill{
		{Name: "zeta", Path: "zeta", Metadata: map[string]string{"rollout": "0%"}},
		{Name: "alpha", Path: "alpha", Metadata: map[string]string{"environments": "staging"}},
		{Name: "everyone", Path: "everyone", Metadata: map[string]string{"rollout": "100%"}},
	}
	inputs = []layering.Input{{Layer: layering.Marketplace, Source: "team", Skills: append([]skill.Skill{plain}, staged...),
		Dir: func(s skill.Skill) string { return filepath.Join("/cache/team", s.Name) }}}
	held := fleet.HoldBack(inputs, who)
	if asked != 1 {
		t.Errorf("who was asked %d times, want once", asked)
	}
	if len(held) != 2 || held[0].Skill.Name != "alpha" || held[1].Skill.Name != "zeta" {
		t.Fatalf("held %+v, want alpha then zeta", held)
	}
	if held[0].Dir != "/cache/team/alpha" || !strings.Contains(held[0].Reason, "environments staging") {
		t.Errorf("held alpha: dir %q, reason %q", held[0].Dir, held[0].Reason)
	}
	if k := inputs[0].Skills; len(k) != 2 || k[0].Name != "plain" || k[1].Name != "everyone" {
		t.Errorf("kept %+v, want plain and everyone", k)
	}
}

func TestHeartbeatFromTheLastSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".fleet-sync.json")
	if err := fleet.NoteSync(path, "boom", []fleet.SourceState{{Source: "team", Revision: "aaa", Status: "failed", Error: "no route"}}); err != nil {
		t.Fatal(err)
	}
	hb := fleet.NewHeartbeat(fleet.Heartbeat{Host: "h"}, path, []string{"team", "new"}, map[string]string{"team": "bbb"})
	if hb.Host != "h" || hb.LastError != "boom" || len(hb.Sources) != 2 {
		t.Fatalf("heartbeat %+v", hb)
	}
	if s := hb.Sources[0]; s.Revision != "bbb" || s.Status != "failed" || s.Error != "no route" {
		t.Errorf("source team: %+v, want the lock's revision and the last sync's result", s)
	}
	if s := hb.Sources[1]; s.Source != "new" || s.Status != "unknown" {
		t.Errorf("a source the last sync did not report: %+v", s)
	}
	// A file that does not parse, or holds a text the store refuses, is
	// no last sync at all: the push goes on.
	for _, body := range []string{"{", `{"version":1,"sources":[{"source":"team","status":"ok\u001b[2J"}]}`,
		`{"version":1,"sources":[{"source":"team","status":"` + strings.Repeat("x", 300) + `"}]}`} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if hb := fleet.NewHeartbeat(fleet.Heartbeat{}, path, []string{"team"}, nil); hb.LastError != "" || hb.Sources[0].Status != "unknown" {
			t.Errorf("heartbeat from %q: %+v", body, hb)
		}
	}
}

func TestPreparePushSendsOnlyWhatChanged(t *testing.T) {
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := curator.Copy{Layer: layering.Marketplace, Owner: "team", Name: "a"}
	b := curator.Copy{Layer: layering.Workspace, Name: "b"}
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{
		a: {UseCount: 2, LastUsedAt: &at, State: curator.Active},
		b: {ViewCount: 1, LastViewedAt: &at, State: curator.Stale},
	}}
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	p := fleet.PreparePush(fleet.Heartbeat{Host: "h"}, u, pushed, "store", warn)
	if recs := p.Records(); len(recs) != 2 || recs[0].Copy != a || recs[0].Uses != 2 || !recs[0].LastUsedAt.Equal(at) || recs[1].State != "stale" {
		t.Fatalf("first push: %+v", recs)
	}
	if len(warnings) != 0 {
		t.Errorf("a missing pushed file warned: %v", warnings)
	}
	// A pushed file that does not parse sends everything, and says so.
	if err := os.WriteFile(pushed, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := fleet.PreparePush(fleet.Heartbeat{Host: "h"}, u, pushed, "store", warn); len(p.Records()) != 2 || len(warnings) != 1 ||
		!strings.HasSuffix(warnings[0], ": sending every usage record") {
		t.Errorf("corrupt pushed file: %d records, warnings %v", len(p.Records()), warnings)
	}
}

func TestPushRemembersWhatTheStoreAcknowledged(t *testing.T) {
	s, _ := open(t, pgCluster.Get(t), nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 3, LastUsedAt: &at, State: curator.Active}}}
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	rep, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn).Send(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Host != "host-a" || rep.Sent != 1 || rep.Uses != 3 {
		t.Fatalf("first push: %+v", rep)
	}
	if p := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn); len(p.Records()) != 0 {
		t.Errorf("nothing changed, yet %d records would go", len(p.Records()))
	}
	u.Skills[pdf].UseCount = 4
	if p := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn); len(p.Records()) != 1 || p.Records()[0].Uses != 4 {
		t.Errorf("one use more: %+v", p.Records())
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	// Another store (a schema or database the config now names) has none
	// of it.
	if p := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity()+"x", warn); len(p.Records()) != 1 || p.Records()[0].Uses != 4 {
		t.Errorf("a push to another store sends %+v, want every counter whole", p.Records())
	}
	if !strings.Contains(s.Identity(), "schema ") || strings.Contains(s.Identity(), "password") {
		t.Errorf("store identity %q", s.Identity())
	}
}

// TestPushSendsManyRecordsInParts: a host with more usage records than one
// push may carry sends them in parts, and the pushed file then says the
// store has them all.
func TestPushSendsManyRecordsInParts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 50,001 records")
	}
	s, _ := open(t, pgCluster.Get(t), nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{}}
	const n = 50_001
	for i := range n {
		u.Skills[mcopy(t, "team", fmt.Sprintf("s%05d", i))] = &curator.SkillUsage{UseCount: 1, LastUsedAt: &at, State: curator.Active}
	}
	warn := func(s string) { t.Errorf("warning: %s", s) }
	rep, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn).Send(context.Background(), s)
	if err != nil || rep.Sent != n || rep.Records != n || rep.Uses != n {
		t.Fatalf("push of %d records: %+v, %v", n, rep, err)
	}
	if p := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn); len(p.Records()) != 0 {
		t.Errorf("after the push, %d records would go again", len(p.Records()))
	}
}

// TestRenamedHostCountsNothingTwice: the store keeps what a workspace
// pushed under its old host id, so under the new one it sends only what
// grew since, and back under the old one likewise.
func TestRenamedHostCountsNothingTwice(t *testing.T) {
	s, _ := open(t, pgCluster.Get(t), nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf, doc := mcopy(t, "team", "pdf"), mcopy(t, "team", "doc")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{
		pdf: {UseCount: 3, ViewCount: 1, LastUsedAt: &at, LastViewedAt: &at, State: curator.Active},
	}}
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	push := func(host string) *fleet.PushReport {
		t.Helper()
		rep, err := fleet.PreparePush(hb(host), u, pushed, s.Identity(), warn).Send(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	total := func(c curator.Copy) (int64, int64) {
		t.Helper()
		got := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})[c.String()]
		return got.Uses, got.Views
	}
	steps := []struct {
		host             string
		pdfUses, docUses int
		wantPdf, wantDoc int64
		wantWarning      bool
	}{
		{host: "host-a", pdfUses: 3, wantPdf: 3},
		{host: "host-b", pdfUses: 5, docUses: 2, wantPdf: 5, wantDoc: 2, wantWarning: true},
		{host: "host-b", pdfUses: 6, docUses: 2, wantPdf: 6, wantDoc: 2},
		{host: "host-a", pdfUses: 9, docUses: 4, wantPdf: 9, wantDoc: 4, wantWarning: true},
		// A usage file reset sends nothing below what the store holds.
		{host: "host-c", pdfUses: 1, docUses: 0, wantPdf: 9, wantDoc: 4, wantWarning: true},
	}
	for i, st := range steps {
		warnings = nil
		u.Skills[pdf].UseCount = st.pdfUses
		if st.docUses > 0 || u.Skills[doc] != nil {
			u.Skills[doc] = &curator.SkillUsage{UseCount: st.docUses, LastUsedAt: &at, State: curator.Active}
		}
		push(st.host)
		if uses, views := total(pdf); uses != st.wantPdf || views != 1 {
			t.Errorf("step %d (%s): pdf has %d uses and %d views in the fleet, want %d and 1", i, st.host, uses, views, st.wantPdf)
		}
		if uses, _ := total(doc); uses != st.wantDoc {
			t.Errorf("step %d (%s): doc has %d uses in the fleet, want %d", i, st.host, uses, st.wantDoc)
		}
		if got := len(warnings) == 1 && strings.Contains(warnings[0], "host id is now"); got != st.wantWarning {
			t.Errorf("step %d (%s): warnings %q", i, st.host, warnings)
		}
	}
	// Another store has none of it: every counter goes whole.
	p := fleet.PreparePush(hb("host-c"), u, pushed, s.Identity()+"x", warn)
	for _, r := range p.Records() {
		if r.Copy == pdf && r.Uses != 1 {
			t.Errorf("to another store pdf sends %d uses, want the counter whole (1)", r.Uses)
		}
	}
}

// TestCraftedPushedFileIsRefused: a pushed file whose counters no store
// holds (negative, past MaxCount) is read as unreadable, so the push
// sends every counter whole rather than more or less than was used.
func TestCraftedPushedFileIsRefused(t *testing.T) {
	t.Parallel()
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 2, LastUsedAt: &at, State: curator.Active}}}
	for _, body := range []string{
		`{"version":1,"host":"h","store":"s","records":{},"earlier":{"ghost":{"marketplace:team/pdf":{"u":-999999999998,"v":-5}}}}`,
		`{"version":1,"host":"h","store":"s","records":{},"earlier":{"a":{"marketplace:team/pdf":{"u":9223372036854775807}},"b":{"marketplace:team/pdf":{"u":9223372036854775807}}}}`,
		`{"version":1,"host":"h","store":"s","records":{"marketplace:team/pdf":{"u":-1}}}`,
	} {
		if err := os.WriteFile(pushed, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		var warnings []string
		p := fleet.PreparePush(fleet.Heartbeat{Host: "h"}, u, pushed, "s", func(s string) { warnings = append(warnings, s) })
		if len(p.Records()) != 1 || p.Records()[0].Uses != 2 || len(warnings) != 1 || !strings.Contains(warnings[0], "out of range") {
			t.Errorf("%s: records %+v, warnings %q; want pdf's 2 uses whole and a warning", body, p.Records(), warnings)
		}
	}
}

// TestCraftedBackCountIsNamed: a pushed file whose record holds an
// addition out of range (bu, bv) is refused with a warning that names
// that counter and its value, not the record's counters, which are in
// range.
func TestCraftedBackCountIsNamed(t *testing.T) {
	t.Parallel()
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 2, LastUsedAt: &at, State: curator.Active}}}
	body := `{"version":1,"host":"h","store":"s","records":{"marketplace:team/pdf":{"u":3,"bu":-7}}}`
	if err := os.WriteFile(pushed, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	fleet.PreparePush(fleet.Heartbeat{Host: "h"}, u, pushed, "s", func(s string) { warnings = append(warnings, s) })
	if len(warnings) != 1 || !strings.Contains(warnings[0], "-7") || !strings.Contains(warnings[0], pushed) {
		t.Errorf("warnings %q; want one naming %s and the addition -7", warnings, pushed)
	}
}

// TestSkippedRecordIsSentAgain: a record the store refuses (a state it
// cannot keep) is not remembered as pushed, so the push after it is
// mended sends it. (A last use too far ahead of the server's clock is no
// longer a refusal: TestUsesDatedAheadByAClockSincePutRight.)
func TestSkippedRecordIsSentAgain(t *testing.T) {
	s, _ := open(t, pgCluster.Get(t), nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 3, LastUsedAt: &at, State: "act\x01ive"}}}
	warn := func(string) {}
	if rep, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn).Send(context.Background(), s); err != nil || len(rep.Skipped) != 1 {
		t.Fatalf("a record with a state the store cannot keep: %+v %v", rep, err)
	}
	// Not acknowledged: the same record goes again.
	if p := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn); len(p.Records()) != 1 {
		t.Errorf("after the refusal %d records would go, want pdf's again", len(p.Records()))
	}
	u.Skills[pdf].State = curator.Active
	rep, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn).Send(context.Background(), s)
	if err != nil || rep.Uses != 3 {
		t.Fatalf("after the record was mended: %+v %v; want pdf's 3 uses", rep, err)
	}
}

// TestLostPushesAreSentAgain: a store that lost a host's pushes (the
// host's row deleted by an operator, or the store reset or restored)
// counts the next push as the host's first; the host then sends every
// record whole, so its pins and counters are back.
func TestLostPushesAreSentAgain(t *testing.T) {
	c := pgCluster.Get(t)
	s, schema := open(t, c, nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 3, LastUsedAt: &at, State: curator.Active, Pinned: true}}}
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	push := func() *fleet.PushReport {
		t.Helper()
		rep, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn).Send(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	push()
	pgtest.Exec(t, c, "DELETE FROM "+schema+".hosts WHERE host = 'host-a'")
	if rep := push(); rep.Records != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "no earlier push") {
		t.Fatalf("the push after the host's rows went: %+v, warnings %q", rep, warnings)
	}
	got := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})[pdf.String()]
	if got.Uses != 3 || !got.Pinned {
		t.Errorf("pdf in the fleet: %+v, want 3 uses and the pin back", got)
	}
	warnings = nil
	if rep := push(); rep.Records != 0 || len(warnings) != 0 {
		t.Errorf("the push after: %+v, warnings %q; want nothing sent again", rep, warnings)
	}
	// The store reset: made again empty, it gets every counter whole.
	pgtest.Exec(t, c, "DROP SCHEMA "+schema+" CASCADE")
	s2, err := fleet.Open(context.Background(), fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s = s2
	warnings = nil
	if rep := push(); rep.Records != 1 || len(warnings) != 1 {
		t.Fatalf("the push to the reset store: %+v, warnings %q", rep, warnings)
	}
	if got := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})[pdf.String()]; got.Uses != 3 || !got.Pinned {
		t.Errorf("pdf in the reset store: %+v, want 3 uses and the pin", got)
	}
}

// TestHostRemovedThenGrownCountsNothingTwice: an operator removes a host
// that is still alive (DELETE FROM hosts); its next push carries grown
// counters. The store still counts what the host pushed before (the day
// buckets keep it), so the push must add only the growth since.
func TestHostRemovedThenGrownCountsNothingTwice(t *testing.T) {
	c := pgCluster.Get(t)
	s, schema := open(t, c, nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf := mcopy(t, "team", "pdf")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 3, LastUsedAt: &at, State: curator.Active}}}
	push := func() {
		t.Helper()
		if _, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), func(string) {}).Send(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	push()
	pgtest.Exec(t, c, "DELETE FROM "+schema+".hosts WHERE host = 'host-a'")
	u.Skills[pdf].UseCount = 5
	push()
	if got := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})[pdf.String()]; got.Uses != 5 {
		t.Errorf("pdf used 5 times on one host has %d uses in the fleet", got.Uses)
	}
	push()
	if got := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})[pdf.String()]; got.Uses != 5 {
		t.Errorf("after one more push: %d uses, want 5", got.Uses)
	}
}

// TestAUsageFileThatWentBackLosesNoUseOfTheFleet: the store keeps the
// greatest counter a host sent. A usage file brought back from a backup,
// or set aside as corrupt and begun again, counts from lower than the
// store holds; the uses made after it are the fleet's all the same, each
// once, and what the file lost is not counted again.
func TestAUsageFileThatWentBackLosesNoUseOfTheFleet(t *testing.T) {
	s, _ := open(t, pgCluster.Get(t), nil)
	pushed := filepath.Join(t.TempDir(), ".fleet-pushed.json")
	at := time.Now().UTC().Truncate(time.Second)
	pdf, doc := mcopy(t, "team", "pdf"), mcopy(t, "team", "doc")
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{
		pdf: {UseCount: 10, ViewCount: 4, LastUsedAt: &at, LastViewedAt: &at, State: curator.Active},
		doc: {UseCount: 2, LastUsedAt: &at, State: curator.Active},
	}}
	warn := func(s string) { t.Logf("warning: %s", s) }
	steps := []struct {
		what               string
		pdfUses, pdfViews  int // pdfUses -1: no record
		doc                int // -1: no record
		wantPdf, wantViews int64
		wantDoc            int64
	}{
		{what: "first push", pdfUses: 10, pdfViews: 4, doc: 2, wantPdf: 10, wantViews: 4, wantDoc: 2},
		{what: "restored from a backup", pdfUses: 7, pdfViews: 3, doc: 1, wantPdf: 10, wantViews: 4, wantDoc: 2},
		{what: "used since", pdfUses: 10, pdfViews: 4, doc: 2, wantPdf: 13, wantViews: 5, wantDoc: 3},
		// doc's first use after it is not told from what the file lost.
		{what: "begun again (set aside as corrupt)", pdfUses: 0, doc: -1, wantPdf: 13, wantViews: 5, wantDoc: 3},
		{what: "used again", pdfUses: 2, doc: 1, wantPdf: 15, wantViews: 5, wantDoc: 3},
		{what: "used once more", pdfUses: 2, doc: 2, wantPdf: 15, wantViews: 5, wantDoc: 4},
		{what: "nothing new", pdfUses: 2, doc: 2, wantPdf: 15, wantViews: 5, wantDoc: 4},
		// Read as corrupt (empty), then mended by hand: nothing twice.
		{what: "read as corrupt", pdfUses: -1, doc: -1, wantPdf: 15, wantViews: 5, wantDoc: 4},
		{what: "mended", pdfUses: 2, doc: 2, wantPdf: 15, wantViews: 5, wantDoc: 4},
	}
	for _, st := range steps {
		delete(u.Skills, pdf)
		if st.pdfUses >= 0 {
			u.Skills[pdf] = &curator.SkillUsage{UseCount: st.pdfUses, ViewCount: st.pdfViews, LastUsedAt: &at, LastViewedAt: &at, State: curator.Active}
		}
		delete(u.Skills, doc)
		if st.doc >= 0 {
			u.Skills[doc] = &curator.SkillUsage{UseCount: st.doc, LastUsedAt: &at, State: curator.Active}
		}
		if _, err := fleet.PreparePush(hb("host-a"), u, pushed, s.Identity(), warn).Send(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		fleetUsage := usageOf(t, s, fleet.UsageOptions{Since: at.Add(-time.Hour)})
		if got := fleetUsage[pdf.String()]; got.Uses != st.wantPdf || got.Views != st.wantViews {
			t.Errorf("%s: pdf has %d uses and %d views in the fleet, want %d and %d", st.what, got.Uses, got.Views, st.wantPdf, st.wantViews)
		}
		if got := fleetUsage[doc.String()]; got.Uses != st.wantDoc {
			t.Errorf("%s: doc has %d uses in the fleet, want %d", st.what, got.Uses, st.wantDoc)
		}
	}
}

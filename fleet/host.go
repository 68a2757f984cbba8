package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/hostid"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// HostID is a workspace's id in the fleet and for staged rollout:
// configured (fleet.host) when set, else the host name and a short hash
// of the workspace's root, so two workspaces on one machine are two
// hosts.
func HostID(configured, root string) string {
	if configured != "" {
		return configured
	}
	name, err := os.Hostname()
	if err != nil {
		name = ""
	}
	return hostIDOf(name, root)
}

// hostIDOf is the id of the workspace root on the host named name: the
// name, cut to leave room for the hash within the bound on an id (macOS
// allows host names of up to 255 bytes) as written and as the store keys
// it (hostid.Canonical, which may lengthen it), and the hash.
func hostIDOf(name, root string) string {
	sum := sha256.Sum256([]byte(root))
	suffix := "-" + hex.EncodeToString(sum[:4])
	for len(name)+len(suffix) > hostid.MaxLen || len(hostid.Canonical(name))+len(suffix) > hostid.MaxLen {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if !ValidHostID(name) {
		name = "host"
	}
	return name + suffix
}

// HoldBack takes out of inputs the skills this host does not take by
// their staged rollout (metadata.rollout, metadata.environments) and
// returns them with the reason, sorted by name and layer. whoami gives
// the host's id and environment; it is called only when a skill has
// metadata to judge.
func HoldBack(inputs []layering.Input, whoami func() (host, env string)) []layering.Held {
	var held []layering.Held
	host, env, asked := "", "", false
	for i := range inputs {
		in := &inputs[i]
		// kept is made only once a skill is held back: copying thousands of
		// skills that all stay was most of this on a large catalog.
		var kept []skill.Skill
		for j := range in.Skills {
			s := &in.Skills[j]
			reason := ""
			if len(s.Metadata) > 0 {
				if !asked {
					host, env = whoami()
					asked = true
				}
				reason = HeldBack(host, env, s.Name, s.Metadata)
			}
			if reason == "" {
				if kept != nil {
					kept = append(kept, *s)
				}
				continue
			}
			if kept == nil {
				kept = append(make([]skill.Skill, 0, len(in.Skills)-1), in.Skills[:j]...)
			}
			en := layering.Entry{Skill: *s, Layer: in.Layer, Source: in.Source, Revision: in.Revision}
			if in.Dir != nil {
				en.Dir = in.Dir(*s)
			}
			held = append(held, layering.Held{Entry: en, Reason: reason})
		}
		if kept != nil {
			in.Skills = kept
		}
	}
	slices.SortFunc(held, func(a, b layering.Held) int {
		if c := strings.Compare(layering.Key(a.Skill.Name), layering.Key(b.Skill.Name)); c != 0 {
			return c
		}
		return int(a.Layer) - int(b.Layer)
	})
	return held
}

// syncFile is skills/.fleet-sync.json: the last sync's result, left for
// the next push's heartbeat.
type syncFile struct {
	Version int           `json:"version"`
	Error   string        `json:"error"`
	Sources []SourceState `json:"sources"`
}

// Validate checks the version and each source's texts as the store will:
// a hand-edited or torn file whose status the store refuses would
// otherwise refuse every push until the next sync; read as unreadable,
// it is no last sync at all, and the push goes on.
func (f *syncFile) Validate() error {
	if err := jsonfile.CheckVersion(f.Version, 1); err != nil {
		return err
	}
	for _, s := range f.Sources {
		for _, t := range []struct{ what, v string }{{"source name", s.Source}, {"revision", s.Revision}, {"status", s.Status}} {
			if err := checkText(t.what, t.v, maxText); err != nil {
				return err
			}
		}
	}
	return nil
}

// NoteSync writes a sync's result to path (skills/.fleet-sync.json) for
// the next push: its error ("" when none) and each source's state. It
// holds no time, so a sync with the same outcome writes the same file.
// The folder it is in (skills/) is made when missing, its parent not: a
// new host's first sync, which failed before anything made skills/, is
// the one whose failure the fleet most needs to hear of.
func NoteSync(path, syncErr string, sources []SourceState) error {
	if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return jsonfile.Write(path, &syncFile{Version: 1, Error: syncErr, Sources: sources}, 0o644)
}

// NewHeartbeat is what a host says of itself: hb's host, environment
// and version, with the last sync's result as NoteSync left it in
// syncPath and a state for each of sources (a source the last sync did
// not report is "unknown"). revisions, from the lock, win over the
// revision the last sync reported.
func NewHeartbeat(hb Heartbeat, syncPath string, sources []string, revisions map[string]string) Heartbeat {
	last := &syncFile{}
	if err := jsonfile.Read(syncPath, last); err != nil {
		last = &syncFile{}
	}
	hb.LastError = last.Error
	results := map[string]SourceState{}
	for _, s := range last.Sources {
		results[s.Source] = s
	}
	for _, name := range sources {
		st := results[name]
		st.Source = name
		if rev := revisions[name]; rev != "" {
			st.Revision = rev
		}
		if st.Status == "" {
			st.Status = "unknown"
		}
		hb.Sources = append(hb.Sources, st)
	}
	return hb
}

// RemoteKey is the key of where a source is that a heartbeat reports
// (SourceState.Remote): a short hash of the URL and ref the lock records
// of it (credentials are never in the lock), "" when it records no URL.
func RemoteKey(url, ref string) string {
	if url == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(url + "\x00" + ref))
	return hex.EncodeToString(sum[:8])
}

// PushReport is what a push sent.
type PushReport struct {
	Host string `json:"host"`
	PushResult
	// Sent is how many usage records went: the ones changed since the
	// last acknowledged push.
	Sent int `json:"sent"`
}

// pushedFile is skills/.fleet-pushed.json: per copy, what the store has
// acknowledged.
type pushedFile struct {
	// Version 2 names the host as this workspace spells its id, which
	// the store keeps counters of apart (schema version 4); version 1
	// named it as the store keyed it then (hostid.Canonical, or as
	// spelled before schema version 3).
	Version int    `json:"version"`
	Host    string `json:"host"`
	// Store is the store that acknowledged the records (Store.Identity).
	Store   string                  `json:"store,omitempty"`
	Records map[string]pushedRecord `json:"records"`
	// Earlier holds, per host id this workspace pushed under before to
	// the same store, what the store acknowledged of it. The store keeps
	// those counters, so the host id in use sends only what grew beyond
	// their sum: a renamed host counts nothing twice.
	Earlier map[string]map[string]pushedRecord `json:"earlier,omitempty"`
}

type pushedRecord struct {
	Uses       int64  `json:"u"`
	Views      int64  `json:"v"`
	LastUsed   int64  `json:"lu"`
	LastViewed int64  `json:"lv"`
	State      string `json:"s,omitempty"`
	Pinned     bool   `json:"p,omitempty"`
	// BackUses and BackViews are what the usage file lost of the counters
	// the store holds (brought back from a backup, begun again as
	// corrupt): added to its counters, so that the uses after it grow
	// what the store holds rather than stay under it (see ahead).
	BackUses  int64 `json:"bu,omitempty"`
	BackViews int64 `json:"bv,omitempty"`
}

// ahead returns the counters to send of a copy whose usage file counts
// uses and views (less what earlier host ids hold), of which the store
// holds own (ok: it holds any). The store keeps the greatest counter a
// host sends: a usage file that went back below it (brought back from a
// backup, begun again as corrupt) would send nothing it holds until its
// counters passed it again, and the uses made meanwhile would never be
// the fleet's. So the counters go with what the file lost added, and
// where they fall below what the store holds, that difference is added
// from then on (the uses between the loss and this push are not told
// from those lost, and count as lost: never twice). The record keeps the
// additions.
func ahead(uses, views int64, own pushedRecord, ok bool) (r pushedRecord) {
	if ok {
		r.BackUses, r.BackViews = own.BackUses, own.BackViews
	}
	if uses+r.BackUses < own.Uses {
		r.BackUses = own.Uses - uses
	}
	if views+r.BackViews < own.Views {
		r.BackViews = own.Views - views
	}
	r.BackUses, r.BackViews = min(max(r.BackUses, 0), MaxCount), min(max(r.BackViews, 0), MaxCount)
	r.Uses, r.Views = min(max(uses+r.BackUses, 0), MaxCount), min(max(views+r.BackViews, 0), MaxCount)
	return r
}

// Validate checks the version and that every counter is one the store
// could hold (0 to MaxCount): a crafted file must not make a push send
// more than was used, or less.
func (p *pushedFile) Validate() error {
	if err := jsonfile.CheckVersion(p.Version, 1, 2); err != nil {
		return err
	}
	sets := []map[string]pushedRecord{p.Records}
	for _, recs := range p.Earlier {
		sets = append(sets, recs)
	}
	for _, recs := range sets {
		for c, r := range recs {
			// The additions (bu, bv) are named apart: a record whose
			// counters are in range but an addition not is no puzzle.
			for _, err := range []error{checkCount("uses", r.Uses), checkCount("views", r.Views),
				checkCount("uses added (bu)", r.BackUses), checkCount("views added (bv)", r.BackViews)} {
				if err != nil {
					return fmt.Errorf("the record of %q is out of range: %w", c, err)
				}
			}
		}
	}
	return nil
}

// Push is a push made ready: the heartbeat and the usage records that
// changed since the last push the store acknowledged.
type Push struct {
	hb   Heartbeat
	recs []Record
	// all are every record, sent when the store turns out to hold no
	// earlier push of the host though the pushed file says it did
	// (resend): a store reset or restored, the host's row deleted.
	all    []Record
	resend bool
	// usage and own are what the push was made from: the usage, and what
	// the store acknowledged of this host.
	usage   *curator.Usage
	own     map[string]pushedRecord
	next    map[string]pushedRecord
	earlier map[string]map[string]pushedRecord
	path    string
	store   string
	warn    func(string)
	// made is when the push was made ready, on this process's monotonic
	// clock: each part's heartbeat names the host's clock as hb.At moved
	// on by the time since (at).
	made time.Time
}

// at is the heartbeat of a part of the push: hb with the host's clock of
// now.
func (p *Push) at() Heartbeat {
	hb := p.hb
	if !hb.At.IsZero() {
		hb.At = hb.At.Round(0).Add(time.Since(p.made))
	}
	return hb
}

// Records are the usage records the push sends.
func (p *Push) Records() []Record { return p.recs }

// PreparePush compares u with what pushedPath (skills/.fleet-pushed.json)
// says store (Store.Identity) acknowledged, and keeps the records that
// changed: counters are sent whole, so a push repeated after a lost answer
// counts nothing twice. A pushed file that cannot be read, that is
// another host's, or another store's (a new schema, database or server),
// sends every record. A host id that changed (fleet.host set or changed,
// the machine or workspace renamed) sends counters less what the store
// holds under the ids used before, as those stay counted. warn hears
// what changes nothing.
//
// The store keys a host by its canonical id (hostid.Canonical) and keeps
// the counters of each spelling of it apart, so that two workspaces of
// one host under two spellings add up: a workspace's spelling that
// changed ("Build-01" to "build-01") is a host id that changed, and
// sends its counters less the old spelling's.
func PreparePush(hb Heartbeat, u *curator.Usage, pushedPath, store string, warn func(string)) *Push {
	pushed := &pushedFile{}
	if err := jsonfile.Read(pushedPath, pushed); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn(err.Error() + ": sending every usage record")
		}
		pushed = &pushedFile{}
	}
	if pushed.Store != store {
		// Another store: it has none of this usage.
		pushed = &pushedFile{}
	}
	legacy := pushed.Version < 2
	if legacy && pushed.Host != "" && hostid.Canonical(pushed.Host) == hostid.Canonical(hb.Host) {
		// A file from before spellings were kept apart, pushed under
		// a spelling of this id: what it acknowledged the store holds
		// of the host with no spelling (migration 4), which this
		// spelling's first push draws on. The same workspace.
		pushed.Host = hb.Host
	}
	if pushed.Host != hb.Host {
		pushed = renamed(pushed, hb.Host, warn)
	}
	if legacy {
		foldVariants(pushed)
	}
	p := prepare(hb, u, pushed, pushedPath, store, warn)
	if legacy {
		// Every record, changed or not: a copy this spelling does not
		// send keeps what it acknowledged in the rows of no spelling,
		// where another spelling's first push would take its own uses
		// out of them as counted already.
		p.recs = p.all
	}
	return p
}

// prepare is PreparePush from the pushed file as read.
func prepare(hb Heartbeat, u *curator.Usage, pushed *pushedFile, pushedPath, store string, warn func(string)) *Push {
	base := earlierCounts(pushed.Earlier)
	p := &Push{hb: hb, next: map[string]pushedRecord{}, earlier: pushed.Earlier, path: pushedPath, store: store, warn: warn,
		usage: u, own: pushed.Records, resend: len(pushed.Records) > 0, made: time.Now()}
	for c, su := range u.Skills {
		if su == nil {
			continue
		}
		r := Record{Copy: c, State: string(su.State), Pinned: su.Pinned}
		b := base[c.String()]
		own, ok := pushed.Records[c.String()]
		counts := ahead(int64(su.UseCount)-b.Uses, int64(su.ViewCount)-b.Views, own, ok)
		r.Uses, r.Views = counts.Uses, counts.Views
		if su.LastUsedAt != nil {
			r.LastUsedAt = *su.LastUsedAt
		}
		if su.LastViewedAt != nil {
			r.LastViewedAt = *su.LastViewedAt
		}
		rec := pushedRecord{Uses: r.Uses, Views: r.Views, LastUsed: r.LastUsedAt.Unix(), LastViewed: r.LastViewedAt.Unix(), State: r.State, Pinned: r.Pinned,
			BackUses: counts.BackUses, BackViews: counts.BackViews}
		p.next[c.String()] = rec
		p.all = append(p.all, r)
		if ok && own == rec {
			continue
		}
		p.recs = append(p.recs, r)
	}
	// A copy the usage file no longer holds (begun again, or read as
	// corrupt and so empty) is still what the store holds: its record
	// stays as it is, so that once the file counts it again, ahead finds
	// it below the store if it is. Not taken as none: a file read empty
	// and then mended would count twice what it never lost.
	for key, own := range pushed.Records {
		if _, ok := p.next[key]; !ok {
			p.next[key] = own
		}
	}
	byCopy := func(a, b Record) int { return strings.Compare(a.Copy.String(), b.Copy.String()) }
	slices.SortFunc(p.recs, byCopy)
	slices.SortFunc(p.all, byCopy)
	return p
}

// renamed is the pushed file of a store that knows this workspace under
// another host id: what it acknowledged moves to Earlier, and host's own
// records, if it pushed under host before, come back from there.
func renamed(pushed *pushedFile, host string, warn func(string)) *pushedFile {
	if pushed.Host == "" {
		return &pushedFile{Store: pushed.Store, Earlier: pushed.Earlier}
	}
	earlier := maps.Clone(pushed.Earlier)
	if earlier == nil {
		earlier = map[string]map[string]pushedRecord{}
	}
	earlier[pushed.Host] = pushed.Records
	own := earlier[host]
	delete(earlier, host)
	warn(fmt.Sprintf("fleet push: this workspace's host id is now %q, was %q: the store keeps what %q pushed, and %q sends only what grew since", host, pushed.Host, pushed.Host, host))
	return &pushedFile{Host: host, Store: pushed.Store, Records: own, Earlier: earlier}
}

// foldVariants moves into pushed's own records what it keeps under
// earlier ids that are spellings of its host's (case, normalization):
// the store merged those ids' rows into the host's, adding their
// counters (migration 3), so the host's records are the sums too. Were
// they kept apart, the host would send its counters less theirs, below
// what the store now holds of it, and its uses would count for nothing
// until they passed it.
//
// Only a version 1 file's: since, the store keeps each spelling's
// counters apart, and an earlier spelling is an earlier id like any.
func foldVariants(pushed *pushedFile) {
	for id, recs := range pushed.Earlier {
		if hostid.Canonical(id) != hostid.Canonical(pushed.Host) {
			continue
		}
		if pushed.Records == nil {
			pushed.Records = map[string]pushedRecord{}
		}
		for c, e := range recs {
			own, ok := pushed.Records[c]
			if !ok {
				// What the file lost (bu, bv) is the variant's own
				// business: its counters hold it.
				e.BackUses, e.BackViews = 0, 0
				pushed.Records[c] = e
				continue
			}
			own.Uses, own.Views = min(own.Uses+e.Uses, MaxCount), min(own.Views+e.Views, MaxCount)
			own.LastUsed, own.LastViewed = max(own.LastUsed, e.LastUsed), max(own.LastViewed, e.LastViewed)
			pushed.Records[c] = own
		}
		delete(pushed.Earlier, id)
	}
}

// earlierCounts sums, per copy, the counters the store holds under the
// host ids in earlier.
func earlierCounts(earlier map[string]map[string]pushedRecord) map[string]pushedRecord {
	sum := map[string]pushedRecord{}
	for _, recs := range earlier {
		for c, r := range recs {
			b := sum[c]
			b.Uses += r.Uses
			b.Views += r.Views
			sum[c] = b
		}
	}
	return sum
}

// Send pushes p to store, in pushes of at most maxRecords records each,
// and, once the store acknowledged them all, records what it holds in the
// pushed file: should a later part fail, the next push sends the earlier
// ones again, which counts nothing twice.
func (p *Push) Send(ctx context.Context, store *Store) (*PushReport, error) {
	var res PushResult
	// The first part (or the heartbeat alone) is refused, whole, when the
	// store counts it as the host's first though the pushed file says it
	// acknowledged earlier ones: sent whole, the counters it still
	// counts (an operator deleted the host) would count twice.
	err := p.sendParts(ctx, store, p.recs, &res)
	if err == nil && len(p.recs) == 0 {
		// The heartbeat alone.
		res, err = store.push(ctx, p.at(), nil, p.resend)
	}
	if errors.Is(err, errFirstPush) {
		if p, err = p.lost(ctx, store); err != nil {
			return nil, err
		}
		res = PushResult{}
		err = p.sendParts(ctx, store, p.all, &res)
		if err == nil && len(p.all) == 0 {
			res, err = store.push(ctx, p.at(), nil, false)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, s := range res.Skipped {
		p.warn("fleet push: skipped " + s)
	}
	// A record the store refused is not what it holds: the next push
	// sends it again (a clock put right, a record mended).
	for _, c := range res.skippedCopies {
		delete(p.next, c)
	}
	if err := jsonfile.Write(p.path, &pushedFile{Version: 2, Host: p.hb.Host, Store: p.store, Records: p.next, Earlier: p.earlier}, 0o644); err != nil {
		// The store has the usage; the next push sends it again, which
		// counts nothing twice.
		p.warn("fleet push: remember what was pushed: " + err.Error())
	}
	return &PushReport{Host: hostid.Canonical(p.hb.Host), PushResult: res, Sent: len(p.recs)}, nil
}

// lost is the push to make when the store counts this one as the host's
// first, though it acknowledged earlier ones: it lost the host's rows.
// Where it still has day counts of the copies the host pushed (an
// operator deleted the host), what the host pushed stays counted there,
// and is kept as an earlier id's: the records go again less it, so the
// pins and states come back and nothing is counted twice. Where it has
// none (a store reset), the records go whole. (Had other hosts pushed
// those copies to a reset store first, the host's own history stays
// lost, never counted twice.)
func (p *Push) lost(ctx context.Context, store *Store) (*Push, error) {
	var copies []curator.Copy
	for key := range p.own {
		if c, err := curator.ParseCopy(key); err == nil {
			copies = append(copies, c)
		}
	}
	kept, err := store.hasDays(ctx, copies)
	if err != nil {
		return nil, err
	}
	p.warn(fmt.Sprintf("fleet push: the store holds no earlier push of host %q (reset, or the host removed): sending every usage record", hostid.Canonical(p.hb.Host)))
	if !kept {
		// What earlier ids pushed went with the rest.
		np := prepare(p.hb, p.usage, &pushedFile{Host: p.hb.Host, Store: p.store}, p.path, p.store, p.warn)
		np.made = p.made
		return np, nil
	}
	earlier := maps.Clone(p.earlier)
	if earlier == nil {
		earlier = map[string]map[string]pushedRecord{}
	}
	// No host id holds a tab: this key is never a host's.
	earlier[p.hb.Host+"\tremoved"] = p.own
	np := prepare(p.hb, p.usage, &pushedFile{Host: p.hb.Host, Store: p.store, Earlier: earlier}, p.path, p.store, p.warn)
	np.made = p.made
	return np, nil
}

// sendParts pushes recs in parts of at most maxRecords, adding what the
// store did to res.
func (p *Push) sendParts(ctx context.Context, store *Store, recs []Record, res *PushResult) error {
	first := true
	for part := range slices.Chunk(recs, maxRecords) {
		r, err := store.push(ctx, p.at(), part, first && p.resend)
		first = false
		if err != nil {
			return err
		}
		res.Seq, res.Records, res.Uses, res.Views, res.ClockSkewMS = r.Seq, res.Records+r.Records, res.Uses+r.Uses, res.Views+r.Views, r.ClockSkewMS
		res.Skipped = append(res.Skipped, r.Skipped...)
		res.skippedCopies = append(res.skippedCopies, r.skippedCopies...)
	}
	return nil
}

// LastUses returns the fleet's last use or view of each marketplace copy
// since since (now less stale_after), or why curation on fleet data must
// wait: fewer than minHosts hosts reported in that window. A view counts
// as it does on this host (idle time runs from the latest use or view)
// and in a source's curation.
func LastUses(ctx context.Context, store *Store, since time.Time, staleAfter time.Duration, minHosts int) (map[curator.Copy]time.Time, string, error) {
	hosts, err := store.Reporting(ctx, since)
	if err != nil {
		return nil, "", err
	}
	if hosts < minHosts {
		return nil, waitMessage(hosts, staleAfter, minHosts, "curation on fleet data waits"), nil
	}
	list, err := store.Usage(ctx, UsageOptions{Since: since})
	if err != nil {
		return nil, "", err
	}
	out := map[curator.Copy]time.Time{}
	for _, u := range list {
		if u.Copy.Layer != layering.Marketplace {
			continue
		}
		for _, at := range []*time.Time{u.LastUsedAt, u.LastViewedAt} {
			if at != nil && at.After(out[u.Copy]) {
				out[u.Copy] = *at
			}
		}
	}
	return out, "", nil
}

// waitMessage says why a curation on fleet data waits, and what waits.
func waitMessage(hosts int, staleAfter time.Duration, minHosts int, what string) string {
	return fmt.Sprintf("fleet: %d hosts reported within stale_after %s, fewer than curator.min_hosts %d: %s", hosts, staleAfter, minHosts, what)
}

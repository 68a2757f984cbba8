// Command fleet measures the fleet store on a real PostgreSQL: it starts a
// throw-away cluster (or uses -dsn-file), loads -hosts simulated hosts
// with -skills usage records each, then has every host push once a minute
// for -minutes minutes, -changed of its records changed per push, paced
// as the fleet would push (hosts/60 pushes a second), and prints push
// latency, rows, bytes and the time of fleet usage and fleet status.
//
//	go run ./bench/fleet -hosts 1000 -skills 2000
//
// It asserts no timing; it exits non-zero only when it cannot run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/layering"
)

type result struct {
	Hosts, Skills int
	Changed       float64
	LoadSeconds   float64 `json:"load_seconds"`
	Pushes        int     `json:"pushes"`
	PushRate      float64 `json:"push_rate_per_second"`
	PushP50       float64 `json:"push_ms_p50"`
	PushP99       float64 `json:"push_ms_p99"`
	PushMax       float64 `json:"push_ms_max"`
	Late          int     `json:"late_pushes"`
	PayloadBytes  int     `json:"payload_bytes_per_push"`
	UsageMS       float64 `json:"usage_ms"`
	StatusMS      float64 `json:"status_ms"`
	StatusSkillMS float64 `json:"status_skill_ms"`
	// FoldMS is one fold of the deltas the pushes left (pushes fold one
	// time in 64, after they return).
	FoldMS        float64 `json:"fold_ms"`
	PendingDeltas int64   `json:"pending_deltas"`
	Rows          map[string]int64
	Bytes         map[string]int64
	DatabaseBytes int64 `json:"database_bytes"`
	// CPU seconds of the bench process and of the server while pushing
	// (PushWallSeconds of wall time), and while loading.
	PushWallSeconds float64 `json:"push_wall_seconds"`
	PushCPUBench    float64 `json:"push_cpu_seconds_bench,omitempty"`
	PushCPUServer   float64 `json:"push_cpu_seconds_server,omitempty"`
	LoadCPUBench    float64 `json:"load_cpu_seconds_bench,omitempty"`
	LoadCPUServer   float64 `json:"load_cpu_seconds_server,omitempty"`
	// LoadAvg is /proc/loadavg before the pushes and at the end: other
	// work on the machine.
	LoadAvg []string `json:"loadavg,omitempty"`
}

func main() {
	hosts := flag.Int("hosts", 1000, "simulated hosts")
	skills := flag.Int("skills", 2000, "usage records per host")
	changed := flag.Float64("changed", 0.10, "share of a host's records changed per push")
	minutes := flag.Float64("minutes", 2, "minutes of pushes after the load (each host pushes once a minute)")
	loaders := flag.Int("load-concurrency", 4, "concurrent pushes while loading")
	loadCopy := flag.Bool("load-copy", true, "load each host's first records in bulk (a heartbeat push per host, then COPY into host_copies and the rollups computed once); false loads with a push of all records per host")
	conns := flag.Int("conns", 32, "connections of the pushing pool")
	dsnFile := flag.String("dsn-file", "", "use this server instead of a throw-away cluster")
	out := flag.String("out", "", "write the result as JSON here too")
	sharedBuffers := flag.String("shared-buffers", "512MB", "shared_buffers of the throw-away cluster (pgtest starts it with 16MB)")
	explain := flag.Duration("explain", 0, "log the plans (EXPLAIN ANALYZE, BUFFERS) of statements slower than this with auto_explain, and print them at the end (throw-away cluster only)")
	flag.Parse()
	ctx := context.Background()
	if !validSize(*sharedBuffers) {
		log.Fatalf("-shared-buffers %q: want a size such as 512MB", *sharedBuffers)
	}

	if *dsnFile == "" {
		c, err := pgtest.Start(ctx)
		if err != nil {
			log.Fatal(err)
		}
		defer c.Remove()
		// A server as a team would run it: more than pgtest's 16MB of
		// shared buffers.
		conn, err := pgx.Connect(ctx, c.DSN("postgres"))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "ALTER SYSTEM SET shared_buffers = '"+*sharedBuffers+"'"); err != nil {
			log.Fatal(err)
		}
		if *explain > 0 {
			// Loaded here so that ALTER SYSTEM knows its settings.
			if _, err := conn.Exec(ctx, "LOAD 'auto_explain'"); err != nil {
				log.Fatal(err)
			}
			for _, set := range []string{
				"session_preload_libraries = 'auto_explain'",
				fmt.Sprintf("auto_explain.log_min_duration = %d", explain.Milliseconds()),
				"auto_explain.log_analyze = on", "auto_explain.log_buffers = on",
				"auto_explain.log_nested_statements = on", "auto_explain.log_triggers = on",
			} {
				if _, err := conn.Exec(ctx, "ALTER SYSTEM SET "+set); err != nil {
					log.Fatal(err)
				}
			}
		}
		conn.Close(ctx)
		if err := c.Stop(); err != nil {
			log.Fatal(err)
		}
		if err := c.Resume(ctx); err != nil {
			log.Fatal(err)
		}
		dir, err := os.MkdirTemp("", "fleet-bench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		*dsnFile = filepath.Join(dir, "dsn")
		if err := os.WriteFile(*dsnFile, []byte(c.DSN("postgres")), 0o600); err != nil {
			log.Fatal(err)
		}
	}
	schema := fmt.Sprintf("bench_%d_%d", *hosts, *skills)
	store, err := fleet.Open(ctx, fleet.Config{DSNFile: *dsnFile, Schema: schema, Create: true, MaxConns: int32(*conns), Timeout: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	dsn, _ := fleet.ReadDSN("", *dsnFile)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
		log.Fatal(err)
	}

	copies := make([]curator.Copy, *skills)
	for i := range copies {
		copies[i] = curator.Copy{Layer: layering.Marketplace, Owner: "team", Name: fmt.Sprintf("skill-%05d", i)}
	}
	type host struct {
		mu   sync.Mutex
		hb   fleet.Heartbeat
		uses []int64
		rng  *rand.Rand
	}
	hs := make([]*host, *hosts)
	for i := range hs {
		hs[i] = &host{
			hb: fleet.Heartbeat{Host: fmt.Sprintf("host-%05d.ci.example", i), Environment: "prod", Version: "v1.0.0", Skills: *skills,
				Sources: []fleet.SourceState{{Source: "team", Revision: "9f2c1e0b7a3d", Status: "unchanged"}}},
			uses: make([]int64, *skills),
			rng:  rand.New(rand.NewPCG(uint64(i), 7)),
		}
	}
	now := time.Now().UTC()
	records := func(h *host, all bool) []fleet.Record {
		var idx []int
		if all {
			idx = make([]int, len(h.uses))
			for i := range idx {
				idx[i] = i
			}
		} else {
			idx = h.rng.Perm(len(h.uses))[:int(float64(len(h.uses))**changed)]
		}
		out := make([]fleet.Record, 0, len(idx))
		for _, i := range idx {
			h.uses[i] += 1 + int64(h.rng.IntN(3))
			out = append(out, fleet.Record{Copy: copies[i], Uses: h.uses[i], Views: h.uses[i] / 2, LastUsedAt: now, LastViewedAt: now, State: "active"})
		}
		return out
	}
	payload := func(recs []fleet.Record) int {
		n := 200 // heartbeat
		for _, r := range recs {
			n += len(r.Copy.Name) + len(r.Copy.Owner) + len("marketplace") + len(r.State) + 8*4 + 1
		}
		return n
	}

	res := result{Hosts: *hosts, Skills: *skills, Changed: *changed, Rows: map[string]int64{}, Bytes: map[string]int64{}}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		log.Fatal(err)
	}
	// cpu returns the CPU seconds so far of the bench and the server;
	// zeros where /proc is not there.
	cpu := func() (bench, server float64) {
		bench, _ = selfCPU()
		server, _ = serverCPU(backend)
		return bench, server
	}
	loadavg := func() {
		if data, err := os.ReadFile("/proc/loadavg"); err == nil {
			res.LoadAvg = append(res.LoadAvg, strings.TrimSpace(string(data)))
		}
	}
	log.Printf("loading %d hosts x %d records", *hosts, *skills)
	start := time.Now()
	b0, s0 := cpu()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(hs) {
					return
				}
				h := hs[i]
				h.mu.Lock()
				recs := records(h, !*loadCopy)
				h.mu.Unlock()
				if *loadCopy {
					recs = nil
				}
				if _, err := store.Push(ctx, h.hb, recs); err != nil {
					log.Fatal(err)
				}
				if (i+1)%max(1, len(hs)/10) == 0 {
					log.Printf("loaded %d hosts", i+1)
				}
			}
		}()
	}
	wg.Wait()
	if *loadCopy {
		// A bulk load: COPY without the rollup triggers, then the
		// rollups computed once from the rows, as the triggers would
		// have kept them (every record's uses and views on the day of
		// its last use and view).
		if _, err := conn.Exec(ctx, "ALTER TABLE "+schema+".host_copies DISABLE TRIGGER rollup_insert"); err != nil {
			log.Fatal(err)
		}
		const chunk = 100
		cols := []string{"host", "layer", "owner", "name", "uses", "views", "last_used_at", "last_viewed_at", "state", "pinned"}
		var nextChunk atomic.Int64
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cc, err := pgx.Connect(ctx, dsn)
				if err != nil {
					log.Fatal(err)
				}
				defer cc.Close(ctx)
				for {
					first := int(nextChunk.Add(chunk)) - chunk
					if first >= len(hs) {
						return
					}
					var rows [][]any
					for _, h := range hs[first:min(first+chunk, len(hs))] {
						for _, r := range records(h, true) {
							rows = append(rows, []any{h.hb.Host, r.Copy.Layer.String(), r.Copy.Owner, r.Copy.Name, r.Uses, r.Views, r.LastUsedAt, r.LastViewedAt, r.State, r.Pinned})
						}
					}
					if _, err := cc.CopyFrom(ctx, pgx.Identifier{schema, "host_copies"}, cols, pgx.CopyFromRows(rows)); err != nil {
						log.Fatal(err)
					}
					if n := first + chunk; n%max(chunk, len(hs)/10/chunk*chunk) == 0 {
						log.Printf("copied the records of %d hosts", n)
					}
				}
			}()
		}
		wg.Wait()
		for _, sql := range []string{
			"ALTER TABLE " + schema + ".host_copies ENABLE TRIGGER rollup_insert",
			// Each host's counters as its one spelling (its id, canonical
			// already) pushed them, as pushes would have left them.
			`INSERT INTO ` + schema + `.spelling_copies (host, spelling, layer, owner, name, uses, views)
SELECT host, host, layer, owner, name, uses, views FROM ` + schema + `.host_copies`,
			`INSERT INTO ` + schema + `.copy_stats (layer, owner, name, hosts, placed, pinned, last_used_at, last_viewed_at, first_seen_at)
SELECT layer, owner, name, count(*), count(*) FILTER (WHERE state <> 'archived'), count(*) FILTER (WHERE pinned),
	max(last_used_at), max(last_viewed_at), min(first_seen_at)
FROM ` + schema + `.host_copies GROUP BY layer, owner, name`,
			`INSERT INTO ` + schema + `.copy_days (day, layer, owner, name, uses, views, last_users)
SELECT day, layer, owner, name, sum(uses), sum(views), sum(last_users) FROM (
	SELECT (last_used_at AT TIME ZONE 'UTC')::date AS day, layer, owner, name, uses, 0 AS views, 1 AS last_users FROM ` + schema + `.host_copies
	UNION ALL
	SELECT (last_viewed_at AT TIME ZONE 'UTC')::date, layer, owner, name, 0, views, 0 FROM ` + schema + `.host_copies
) r GROUP BY day, layer, owner, name`,
		} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				log.Fatal(err)
			}
		}
	}
	res.LoadSeconds = time.Since(start).Seconds()
	b1, s1 := cpu()
	res.LoadCPUBench, res.LoadCPUServer = b1-b0, s1-s0
	for _, table := range []string{"host_copies", "spelling_copies", "copy_stats", "copy_days", "hosts"} {
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+schema+"."+table); err != nil {
			log.Fatal(err)
		}
	}

	// Paced pushes: each host once a minute, spread evenly.
	total := int(float64(*hosts) * *minutes)
	interval := time.Duration(float64(time.Minute) / float64(*hosts))
	log.Printf("pushing: %d pushes, one every %s", total, interval)
	lat := make([]time.Duration, total)
	var late atomic.Int64
	loadavg()
	b0, s0 = cpu()
	begin := time.Now()
	sem := make(chan struct{}, *conns*2)
	for i := range total {
		at := begin.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		} else if d < -time.Second {
			late.Add(1)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			h := hs[i%len(hs)]
			h.mu.Lock()
			recs := records(h, false)
			h.mu.Unlock()
			if i == 0 {
				res.PayloadBytes = payload(recs)
			}
			t0 := time.Now()
			if _, err := store.Push(ctx, h.hb, recs); err != nil {
				log.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b1, s1 = cpu()
	res.PushWallSeconds, res.PushCPUBench, res.PushCPUServer = elapsed.Seconds(), b1-b0, s1-s0
	res.Pushes, res.PushRate, res.Late = total, float64(total)/elapsed.Seconds(), int(late.Load())
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	res.PushP50, res.PushP99, res.PushMax = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(lat[len(lat)-1])

	median := func(f func() error) float64 {
		var ds []time.Duration
		for range 5 {
			t0 := time.Now()
			if err := f(); err != nil {
				log.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		return ms(ds[2])
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+".copy_deltas").Scan(&res.PendingDeltas); err != nil {
		log.Fatal(err)
	}
	res.UsageMS = median(func() error {
		_, err := store.Usage(ctx, fleet.UsageOptions{Since: time.Now().Add(-30 * 24 * time.Hour)})
		return err
	})
	res.StatusMS = median(func() error {
		_, err := store.Status(ctx, fleet.StatusOptions{StaleAfter: 2 * time.Hour})
		return err
	})
	res.StatusSkillMS = median(func() error {
		_, err := store.Status(ctx, fleet.StatusOptions{StaleAfter: 2 * time.Hour, Skill: "skill-00042"})
		return err
	})
	t0 := time.Now()
	if err := store.Fold(ctx); err != nil {
		log.Fatal(err)
	}
	res.FoldMS = ms(time.Since(t0))
	for _, table := range []string{"hosts", "host_sources", "revisions", "host_copies", "copy_stats", "copy_days", "copy_deltas"} {
		var rows, bytes int64
		if err := conn.QueryRow(ctx, "SELECT count(*), pg_total_relation_size($1::regclass) FROM "+schema+"."+table, schema+"."+table).Scan(&rows, &bytes); err != nil {
			log.Fatal(err)
		}
		res.Rows[table], res.Bytes[table] = rows, bytes
	}
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&res.DatabaseBytes); err != nil {
		log.Fatal(err)
	}
	loadavg()
	if *explain > 0 {
		// The server's log is next to its data directory.
		var plans string
		if err := conn.QueryRow(ctx, "SELECT pg_read_file(current_setting('data_directory') || '/../server.log')").Scan(&plans); err != nil {
			log.Printf("read the server log: %v", err)
		}
		fmt.Fprintln(os.Stderr, plans)
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(data))
	if *out != "" {
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// validSize accepts what shared_buffers takes: digits and a unit.
func validSize(s string) bool {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	switch s[n:] {
	case "kB", "MB", "GB":
		return n > 0
	}
	return false
}

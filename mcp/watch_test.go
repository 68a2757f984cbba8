package mcp

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// listedWorkspace stamps its directory by the names in it, as the engine's
// stamp changes when a folder gains or loses an entry, and says which
// directory to watch when watch is set.
type listedWorkspace struct {
	*dirWorkspace
	watch bool
}

func (l listedWorkspace) Stamp() (string, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, "/"), nil
}

type watchedWorkspace struct{ listedWorkspace }

func (w watchedWorkspace) WatchDirs() []string { return []string{w.dir} }

// TestMCPWatchNotifiesIdleClients checks that a client that sends nothing
// hears of a new skill, through file notifications and through the poll
// that stands in for them.
func TestMCPWatchNotifiesIdleClients(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ws   Workspace
	}{
		{"fsnotify", watchedWorkspace{listedWorkspace{dirWorkspace: fixture(t)}}},
		{"poll", listedWorkspace{dirWorkspace: fixture(t)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, c.ws, Options{StampEvery: time.Hour})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go s.Watch(ctx)

			resources := make(chan struct{}, 8)
			prompts := make(chan struct{}, 8)
			client := sdk.NewClient(&sdk.Implementation{Name: "idle", Version: "v0"}, &sdk.ClientOptions{
				ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { resources <- struct{}{} },
				PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { prompts <- struct{}{} },
			})
			ct, st := sdk.NewInMemoryTransports()
			if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			// Let the watch start before the change it must see.
			time.Sleep(200 * time.Millisecond)

			dir := c.ws.(interface{ root() string }).root()
			start := time.Now()
			writeSkill(t, dir, "xlsx", "Spreadsheets", "# XLSX\n", nil)
			for what, ch := range map[string]chan struct{}{"resources": resources, "prompts": prompts} {
				select {
				case <-ch:
					t.Logf("%s list_changed %v after the change", what, time.Since(start).Round(time.Millisecond))
				case <-time.After(10 * time.Second):
					t.Fatalf("no %s list_changed within 10 s of a new skill", what)
				}
			}
			// The client, still idle until now, finds the new skill.
			if uris := resourceURIs(t, cs); !strings.Contains(uris, "skill://xlsx/SKILL.md") {
				t.Errorf("resources after the notification: %s", uris)
			}
			// Nothing changed: nothing is sent.
			select {
			case <-resources:
				t.Error("a second resources list_changed without a change")
			case <-time.After(700 * time.Millisecond):
			}
		})
	}
}

func (d *dirWorkspace) root() string { return d.dir }

func TestMCPWatchStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ws := watchedWorkspace{listedWorkspace{dirWorkspace: fixture(t)}}
	s := newServer(t, ws, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Watch(ctx); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not return when its context ended")
	}
}

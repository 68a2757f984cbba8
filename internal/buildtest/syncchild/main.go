// Command syncchild runs one sync of the config file it is given and
// exits: 0 when the sync succeeded, 1 when it failed, 2 when the config
// does not load. TestSyncSurvivesSIGKILL kills it at moments spread over
// a sync. The test builds it without -race (internal/buildtest says
// why).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: syncchild CONFIG")
		os.Exit(2)
	}
	cfg, err := config.Load(os.Args[1], skillsync.Kinds())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg.Global = ""
	if _, err := skillsync.NewEngine(cfg).Sync(context.Background(), skillsync.SyncOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

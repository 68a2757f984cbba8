package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set at build time (release/build.sh) with
// -ldflags "-X main.version=1.2.3 -X main.commit=0123456789ab": the
// release's binaries carry no VCS stamp, and the commit is what a bug
// report should name.
var version, commit = "", ""

func newVersionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print skillsync's version",
		Example: `  skillsync version --json`,
		Args:    args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			v := buildVersion()
			if a.json {
				out := map[string]string{"version": v, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
				if commit != "" {
					out["commit"] = commit
				}
				return writeJSON(a.stdout, out)
			}
			built := ""
			if commit != "" {
				built = "commit " + commit + ", "
			}
			fmt.Fprintf(a.stdout, "skillsync %s (%s%s %s/%s)\n", v, built, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

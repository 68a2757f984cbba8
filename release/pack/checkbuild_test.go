package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// release is the build information of a release binary for linux/amd64,
// as release/build.sh makes it.
func release() *debug.BuildInfo {
	return &debug.BuildInfo{GoVersion: runtime.Version(), Path: mainPath, Settings: []debug.BuildSetting{
		{Key: "-buildmode", Value: "exe"}, {Key: "-compiler", Value: "gc"},
		{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"},
		{Key: "GOARCH", Value: "amd64"}, {Key: "GOOS", Value: "linux"},
		{Key: "GOAMD64", Value: "v1"},
	}}
}

func TestBuildProblemsRefuseWhatABuildersEnvironmentChanges(t *testing.T) {
	t.Parallel()
	if p := buildProblems(release(), "linux", "amd64"); len(p) != 0 {
		t.Fatalf("a release build is refused: %v", p)
	}
	set := func(key, value string) *debug.BuildInfo {
		info := release()
		for i := range info.Settings {
			if info.Settings[i].Key == key {
				info.Settings[i].Value = value
				return info
			}
		}
		info.Settings = append(info.Settings, debug.BuildSetting{Key: key, Value: value})
		return info
	}
	for _, c := range []struct {
		info         *debug.BuildInfo
		goos, goarch string
		want         string
	}{
		{set("GOAMD64", "v3"), "linux", "amd64", "GOAMD64"},
		{set("CGO_ENABLED", "1"), "linux", "amd64", "CGO_ENABLED"},
		{set("-trimpath", "false"), "linux", "amd64", "-trimpath"},
		{set("-tags", "netgo"), "linux", "amd64", "-tags"},
		{set("GOEXPERIMENT", "greenteagc"), "linux", "amd64", "GOEXPERIMENT"},
		{set("-race", "true"), "linux", "amd64", "-race"},
		{set("vcs.modified", "true"), "linux", "amd64", "vcs.modified"},
		{release(), "darwin", "amd64", "GOOS"},
		{release(), "linux", "arm64", "GOARM64"},
		{&debug.BuildInfo{GoVersion: runtime.Version(), Path: "example.com/other", Settings: release().Settings}, "linux", "amd64", "built from"},
		{&debug.BuildInfo{GoVersion: "go1.0", Path: mainPath, Settings: release().Settings}, "linux", "amd64", "built with go1.0,"},
	} {
		p := strings.Join(buildProblems(c.info, c.goos, c.goarch), "; ")
		if !strings.Contains(p, c.want) {
			t.Errorf("%s/%s %v: problems %q, want one about %s", c.goos, c.goarch, c.info.Settings, p, c.want)
		}
	}
}

func TestCheckBuildReadsTheBinary(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// This test's binary is an executable of this system, not a release
	// of skillsync.
	err = checkBuild(exe, "linux/amd64")
	if err == nil || !strings.Contains(err.Error(), "built from") {
		t.Errorf("the test binary passes as a release: %v", err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		if goos == runtime.GOOS {
			continue
		}
		if err := checkFormat(exe, goos, runtime.GOARCH); err == nil {
			t.Errorf("this %s executable passes as a %s one", runtime.GOOS, goos)
		}
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	if err := checkFormat(exe, runtime.GOOS, other); other != "" && err == nil {
		t.Errorf("this %s executable passes as an %s one", runtime.GOARCH, other)
	}
	readme := t.TempDir() + "/README.md"
	os.WriteFile(readme, []byte("# readme"), 0o600)
	if err := checkBuild(readme, "linux/amd64"); err == nil {
		t.Error("a text file passes as a release binary")
	}
}

package main

import (
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// mainPath is the package every release binary is built from.
const mainPath = "github.com/skillsync/skillsync/cmd/skillsync"

// checkBuild refuses a release binary that is not what its archive's
// name promises: an executable of the target's format and processor,
// built from mainPath with the settings release/build.sh fixes. A
// builder's GOAMD64=v3 (from the environment or `go env -w`) would ship
// a Linux binary that dies with SIGILL on an older processor, and its
// GOFLAGS=-tags or GOEXPERIMENT a binary no other builder reproduces;
// both are recorded in the binary's build information, read here.
func checkBuild(name, target string) error {
	goos, goarch, ok := strings.Cut(target, "/")
	if !ok {
		return fmt.Errorf("-checkbuild %q: want GOOS/GOARCH", target)
	}
	info, err := buildinfo.ReadFile(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	problems := buildProblems(info, goos, goarch)
	if err := checkFormat(name, goos, goarch); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s is not a release binary for %s: %s", name, target, strings.Join(problems, "; "))
	}
	return nil
}

// buildProblems lists how info differs from a release build for
// goos/goarch. The binary must come from the Go release that built this
// program: build.sh builds both with the release's GOTOOLCHAIN, and
// another Go gives other bytes.
func buildProblems(info *debug.BuildInfo, goos, goarch string) []string {
	var problems []string
	if info.Path != mainPath {
		problems = append(problems, fmt.Sprintf("built from %q, want %q", info.Path, mainPath))
	}
	if info.GoVersion != runtime.Version() {
		problems = append(problems, fmt.Sprintf("built with %s, want %s", info.GoVersion, runtime.Version()))
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	want := map[string]string{
		"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0",
		"-trimpath": "true", "-buildmode": "exe", "-compiler": "gc",
	}
	switch goarch {
	case "amd64":
		want["GOAMD64"] = "v1"
	case "arm64":
		want["GOARM64"] = "v8.0"
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			problems = append(problems, fmt.Sprintf("%s=%q, want %q", k, got[k], want[k]))
		}
	}
	// Settings a builder's environment adds; a release has none of them.
	for _, k := range []string{"-tags", "-race", "-msan", "-asan", "-cover", "-gcflags", "-asmflags", "-ldflags", "GOEXPERIMENT", "vcs", "vcs.revision", "vcs.modified"} {
		if v, ok := got[k]; ok {
			problems = append(problems, fmt.Sprintf("built with %s=%q", k, v))
		}
	}
	return problems
}

// checkFormat reads the executable's header: ELF for Linux, Mach-O for
// macOS, PE for Windows, each for goarch's processor.
func checkFormat(name, goos, goarch string) error {
	switch goos {
	case "linux":
		f, err := elf.Open(name)
		if err != nil {
			return fmt.Errorf("not an ELF executable: %v", err)
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Type != elf.ET_EXEC || f.Machine != want {
			return fmt.Errorf("ELF %v %v, want ET_EXEC %v", f.Type, f.Machine, want)
		}
	case "darwin":
		f, err := macho.Open(name)
		if err != nil {
			return fmt.Errorf("not a Mach-O executable: %v", err)
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Type != macho.TypeExec || f.Cpu != want {
			return fmt.Errorf("Mach-O %v %v, want executable %v", f.Type, f.Cpu, want)
		}
	case "windows":
		f, err := pe.Open(name)
		if err != nil {
			return fmt.Errorf("not a PE executable: %v", err)
		}
		defer f.Close()
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want || f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			return fmt.Errorf("PE machine %#x, want executable %#x", f.Machine, want)
		}
	default:
		return fmt.Errorf("no release is made for %s", goos)
	}
	return nil
}

package agent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/realdir"
)

// LayerLinkError is a layer folder (the workspace's skills/, which holds
// the hooks' journal and the usage file) that is a symbolic link: a sync
// reads the skills where it leads, but skillsync writes nothing through
// it, so skillsync use, the agents' hooks, the usage import and curation
// all fail until it is a real folder.
type LayerLinkError struct {
	// Dir is the layer folder, Target where its link leads ("" when the
	// link cannot be read).
	Dir, Target string
}

func (e *LayerLinkError) Error() string {
	to := ""
	if e.Target != "" {
		to = " to " + e.Target
	}
	msg := fmt.Sprintf("the layer folder %s is a symbolic link%s: a sync reads its skills, but skillsync writes nothing through a link in the workspace, so skillsync use, the agents' hooks, the usage import and curation fail; make %s a real folder (remove the link and move what it leads to there)",
		e.Dir, to, e.Dir)
	if e.Target != "" && filepath.Base(e.Target) == filepath.Base(e.Dir) {
		msg += fmt.Sprintf(", or, if the workspace belongs where it leads, set workspace: %s in the config", filepath.Dir(e.Target))
	}
	return msg
}

// Unwrap is realdir.ErrSymlink: the link is refused as any other.
func (e *LayerLinkError) Unwrap() error { return realdir.ErrSymlink }

// LayerLink says whether the layer folder dir is a symbolic link: a
// *LayerLinkError naming the fix when it is, nil when it is anything else
// or missing. It reads the link and changes nothing.
func LayerLink(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	target, err := os.Readlink(dir)
	if err == nil && !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(dir), target)
	}
	return &LayerLinkError{Dir: dir, Target: target}
}

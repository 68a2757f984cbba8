package skillsync

import (
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/targets"
)

// The config has plain types of its own, so that it sits below the
// domain it configures; these turn them into the domain's.

// curatorPolicy is the config's curator: section as the curator takes it.
func curatorPolicy(c config.Curation) curator.Policy {
	return curator.Policy{StaleAfter: c.StaleAfter, ArchiveAfter: c.ArchiveAfter, MinIdle: c.MinIdle, Layers: c.Layers}
}

// targetMode is a target's mode as materialize takes it.
func targetMode(m config.TargetMode) materialize.TargetMode {
	switch m {
	case config.ModeSymlink:
		return materialize.Symlink
	default:
		return materialize.Copy
	}
}

// places are the config's targets and agents_md files as the targets
// package takes them, trusting records and waiting as opts say.
func (e *Engine) places(opts SyncOptions) targets.Places {
	p := targets.Places{Workspace: e.cfg.Workspace, Env: e.env, Check: opts.Check(), MaxSkillSize: e.maxSkillSize(), Cache: e.layout.CacheDir(), Config: e.cfg.File, Wait: opts.WaitTime()}
	for _, t := range e.cfg.Targets {
		p.Targets = append(p.Targets, materialize.Target{Dir: t.Dir, Mode: targetMode(t.Mode)})
	}
	for _, a := range e.cfg.AgentsMD {
		p.AgentsMD = append(p.AgentsMD, a.Path)
	}
	return p
}

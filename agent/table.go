package agent

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Agent is an agent that reads skills from folders of its own: one in a
// project, one for its user.
type Agent struct {
	// Name is what --agent takes, spelled as npx skills and gh skill
	// spell it.
	Name string
	// Aliases are other names --agent takes for it.
	Aliases []string
	// Display is the agent's product name.
	Display string
	// Project is the folder the agent reads in a project, relative to the
	// workspace, slash-separated: the one a target for the agent is.
	Project string
	// Also are other folders the agent reads in a project (or read in
	// earlier releases), in Project's form. Discovery looks for skills in
	// a source's Project and Also folders of every agent; targets use
	// Project only.
	Also []string
	// User is the folder the agent reads for its user on any project:
	// "~/..." below the home directory, or "$XDG_CONFIG_HOME/..." below
	// $XDG_CONFIG_HOME (~/.config when unset, on every system, as the
	// agents themselves do).
	User string
	// UserEnv names a variable that moves the agent's home; when it is
	// set, the user folder is $UserEnv/skills.
	UserEnv string
	// Detect are paths, in User's form, whose presence means the agent is
	// installed here; the user folder itself counts too.
	Detect []string
	// AgentsMD is, for an agent that reads no skills folder but reads a
	// project's AGENTS.md (Project and User are ""), that file: its
	// target is an agents_md: entry, where skillsync keeps the list of
	// skills.
	AgentsMD string
	// On holds, by GOOS, where the agent keeps its user folder on that
	// system when it is not User (and Detect) there: "$APPDATA/..." is
	// %APPDATA% on Windows.
	On map[string]Place
}

// Place is an agent's user folder on one system.
type Place struct {
	User   string
	Detect []string
}

// agents is the table, sorted by name. Each row cites where its folders
// come from:
//
//	[npx]  vercel-labs/skills src/agents.ts at 82dd76bd (2026-02-14), the
//	       table npx skills installs by; its README lists the same paths.
//	[gh]   cli/cli internal/skills/registry/registry.go, the table of
//	       gh skill install (GitHub CLI 2.90+).
//	[docs] the agent's own documentation, named in the row.
//
// Where the sources disagree the row says which one it follows.
var agents = []Agent{
	// [npx] adal, [gh] adal.
	{Name: "adal", Display: "AdaL", Project: ".adal/skills", User: "~/.adal/skills", Detect: []string{"~/.adal"}},
	// [docs] aider.chat/docs/usage/conventions.html and agents.md (the
	// AGENTS.md site lists Aider, loading it with read: AGENTS.md in
	// .aider.conf.yml): Aider reads no skills folder, so its target is the
	// project's AGENTS.md. ~/.aider holds its caches and analytics;
	// ~/.aider.conf.yml its user config.
	{Name: "aider", Display: "Aider", AgentsMD: "AGENTS.md", Detect: []string{"~/.aider", "~/.aider.conf.yml"}},
	// [npx] amp: global $XDG_CONFIG_HOME/agents/skills, installed when $XDG_CONFIG_HOME/amp exists.
	{Name: "amp", Display: "Amp", Project: ".agents/skills", User: "$XDG_CONFIG_HOME/agents/skills", Detect: []string{"$XDG_CONFIG_HOME/amp"}},
	// [npx] antigravity (.agent/skills in a project); [gh] has .agents/skills there.
	{Name: "antigravity", Display: "Antigravity", Project: ".agent/skills", User: "~/.gemini/antigravity/skills", Detect: []string{"~/.gemini/antigravity"}},
	// [npx] augment.
	{Name: "augment", Display: "Augment", Project: ".augment/skills", User: "~/.augment/skills", Detect: []string{"~/.augment"}},
	// [gh] bob.
	{Name: "bob", Display: "IBM Bob", Project: ".bob/skills", User: "~/.bob/skills", Detect: []string{"~/.bob"}},
	// [npx] claude-code, [gh] claude-code; [docs] code.claude.com/docs/en/skills
	// (personal ~/.claude/skills, project .claude/skills). CLAUDE_CONFIG_DIR
	// moves ~/.claude, as both tools honour.
	{Name: "claude-code", Aliases: []string{"claude"}, Display: "Claude Code", Project: ".claude/skills", User: "~/.claude/skills", UserEnv: "CLAUDE_CONFIG_DIR", Detect: []string{"~/.claude"}},
	// [npx] cline; [gh] reads .agents/skills instead.
	{Name: "cline", Display: "Cline", Project: ".cline/skills", User: "~/.cline/skills", Detect: []string{"~/.cline"}},
	// [npx] codebuddy.
	{Name: "codebuddy", Display: "CodeBuddy", Project: ".codebuddy/skills", User: "~/.codebuddy/skills", Detect: []string{"~/.codebuddy"}},
	// [npx] codex, [gh] codex; [docs] developers.openai.com/codex/skills
	// (.agents/skills in a repository). CODEX_HOME moves ~/.codex. Also:
	// .codex/skills, where [npx] installed for Codex before .agents/skills.
	{Name: "codex", Display: "Codex", Project: ".agents/skills", Also: []string{".codex/skills"}, User: "~/.codex/skills", UserEnv: "CODEX_HOME", Detect: []string{"~/.codex"}},
	// [npx] command-code.
	{Name: "command-code", Display: "Command Code", Project: ".commandcode/skills", User: "~/.commandcode/skills", Detect: []string{"~/.commandcode"}},
	// [npx] continue.
	{Name: "continue", Display: "Continue", Project: ".continue/skills", User: "~/.continue/skills", Detect: []string{"~/.continue"}},
	// [gh] cortex.
	{Name: "cortex", Display: "Cortex Code", Project: ".cortex/skills", User: "~/.snowflake/cortex/skills", Detect: []string{"~/.snowflake/cortex"}},
	// [npx] crush (~/.config written out, not $XDG_CONFIG_HOME). On Windows
	// too: charmbracelet/crush docs/config/README.md puts the global config
	// in %USERPROFILE%\.config\crush (earlier releases documented
	// %LOCALAPPDATA%\crush; this row follows the current one).
	{Name: "crush", Display: "Crush", Project: ".crush/skills", User: "~/.config/crush/skills", Detect: []string{"~/.config/crush"}},
	// [npx] cursor; [gh] has .agents/skills in a project.
	{Name: "cursor", Display: "Cursor", Project: ".cursor/skills", User: "~/.cursor/skills", Detect: []string{"~/.cursor"}},
	// [gh] deepagents.
	{Name: "deepagents", Display: "Deep Agents", Project: ".agents/skills", User: "~/.deepagents/agent/skills", Detect: []string{"~/.deepagents"}},
	// [npx] droid (Factory).
	{Name: "droid", Display: "Droid", Project: ".factory/skills", User: "~/.factory/skills", Detect: []string{"~/.factory"}},
	// [gh] firebender.
	{Name: "firebender", Display: "Firebender", Project: ".agents/skills", User: "~/.firebender/skills", Detect: []string{"~/.firebender"}},
	// [npx] gemini-cli, [gh] gemini-cli. Also: .gemini/skills, the
	// workspace skills folder of geminicli.com/docs/cli/using-agent-skills.
	{Name: "gemini-cli", Aliases: []string{"gemini"}, Display: "Gemini CLI", Project: ".agents/skills", Also: []string{".gemini/skills"}, User: "~/.gemini/skills", Detect: []string{"~/.gemini"}},
	// [npx] github-copilot, [gh] github-copilot. Also: .github/skills and
	// .claude/skills, the project folders of docs.github.com/en/copilot/
	// concepts/agents/about-agent-skills.
	{Name: "github-copilot", Aliases: []string{"copilot"}, Display: "GitHub Copilot", Project: ".agents/skills", Also: []string{".github/skills", ".claude/skills"}, User: "~/.copilot/skills", Detect: []string{"~/.copilot"}},
	// [npx] goose, [gh] goose. [docs] block.github.io/goose/docs/guides/
	// context-engineering/using-skills (skills in goose's config folder,
	// ~/.config/goose/skills) and .../guides/config-files (that folder is
	// %APPDATA%\Block\goose\config on Windows, where goose uses the
	// platform's folders, not XDG's).
	{Name: "goose", Display: "Goose", Project: ".goose/skills", User: "$XDG_CONFIG_HOME/goose/skills", Detect: []string{"$XDG_CONFIG_HOME/goose"},
		On: map[string]Place{"windows": {User: "$APPDATA/Block/goose/config/skills", Detect: []string{"$APPDATA/Block/goose"}}}},
	// [npx] iflow-cli.
	{Name: "iflow-cli", Aliases: []string{"iflow"}, Display: "iFlow CLI", Project: ".iflow/skills", User: "~/.iflow/skills", Detect: []string{"~/.iflow"}},
	// [npx] junie.
	{Name: "junie", Display: "Junie", Project: ".junie/skills", User: "~/.junie/skills", Detect: []string{"~/.junie"}},
	// [npx] kilo.
	{Name: "kilo", Aliases: []string{"kilo-code"}, Display: "Kilo Code", Project: ".kilocode/skills", User: "~/.kilocode/skills", Detect: []string{"~/.kilocode"}},
	// [npx] kimi-cli (installed when ~/.kimi exists).
	{Name: "kimi-cli", Aliases: []string{"kimi"}, Display: "Kimi Code CLI", Project: ".agents/skills", User: "~/.config/agents/skills", Detect: []string{"~/.kimi"}},
	// [npx] kiro-cli, [gh] kiro-cli.
	{Name: "kiro-cli", Aliases: []string{"kiro"}, Display: "Kiro CLI", Project: ".kiro/skills", User: "~/.kiro/skills", Detect: []string{"~/.kiro"}},
	// [npx] kode.
	{Name: "kode", Display: "Kode", Project: ".kode/skills", User: "~/.kode/skills", Detect: []string{"~/.kode"}},
	// [npx] mcpjam.
	{Name: "mcpjam", Display: "MCPJam", Project: ".mcpjam/skills", User: "~/.mcpjam/skills", Detect: []string{"~/.mcpjam"}},
	// [npx] mistral-vibe.
	{Name: "mistral-vibe", Aliases: []string{"vibe"}, Display: "Mistral Vibe", Project: ".vibe/skills", User: "~/.vibe/skills", Detect: []string{"~/.vibe"}},
	// [npx] mux.
	{Name: "mux", Display: "Mux", Project: ".mux/skills", User: "~/.mux/skills", Detect: []string{"~/.mux"}},
	// [npx] neovate.
	{Name: "neovate", Display: "Neovate", Project: ".neovate/skills", User: "~/.neovate/skills", Detect: []string{"~/.neovate"}},
	// [npx] openclaw reads skills/ in a project, which is skillsync's own
	// workspace layer: only --global targets it. User folder as [gh] has it
	// (~/.openclaw/skills); [npx] falls back to the older ~/.clawdbot and
	// ~/.moltbot, which count as found.
	{Name: "openclaw", Display: "OpenClaw", Project: "skills", User: "~/.openclaw/skills", Detect: []string{"~/.openclaw", "~/.clawdbot", "~/.moltbot"}},
	// [docs] opencode.ai/docs/skills: .opencode/skills in a project and
	// $XDG_CONFIG_HOME/opencode/skills for the user (it also reads
	// .claude/skills and .agents/skills, which [npx] and [gh] install to).
	// sst/opencode packages/opencode/src/global/index.ts takes its config
	// folder from xdg-basedir, which is ~/.config on Windows too.
	{Name: "opencode", Display: "OpenCode", Project: ".opencode/skills", Also: []string{".claude/skills", ".agents/skills"}, User: "$XDG_CONFIG_HOME/opencode/skills", Detect: []string{"$XDG_CONFIG_HOME/opencode"}},
	// [npx] openhands.
	{Name: "openhands", Display: "OpenHands", Project: ".openhands/skills", User: "~/.openhands/skills", Detect: []string{"~/.openhands"}},
	// [npx] pi.
	{Name: "pi", Display: "Pi", Project: ".pi/skills", User: "~/.pi/agent/skills", Detect: []string{"~/.pi/agent"}},
	// [npx] pochi.
	{Name: "pochi", Display: "Pochi", Project: ".pochi/skills", User: "~/.pochi/skills", Detect: []string{"~/.pochi"}},
	// [npx] qoder.
	{Name: "qoder", Display: "Qoder", Project: ".qoder/skills", User: "~/.qoder/skills", Detect: []string{"~/.qoder"}},
	// [npx] qwen-code.
	{Name: "qwen-code", Aliases: []string{"qwen"}, Display: "Qwen Code", Project: ".qwen/skills", User: "~/.qwen/skills", Detect: []string{"~/.qwen"}},
	// [npx] replit: nothing in the home directory tells it is installed.
	{Name: "replit", Display: "Replit", Project: ".agents/skills", User: "$XDG_CONFIG_HOME/agents/skills"},
	// [npx] roo, [gh] roo.
	{Name: "roo", Aliases: []string{"roo-code"}, Display: "Roo Code", Project: ".roo/skills", User: "~/.roo/skills", Detect: []string{"~/.roo"}},
	// [docs] support.atlassian.com/rovo/docs/extend-rovo-dev-cli-with-agent-skills
	// (.rovodev/skills or .agents/skills in a project, ~/.rovodev/skills
	// for the user); [npx] rovodev in earlier releases of src/agents.ts.
	{Name: "rovodev", Aliases: []string{"rovo-dev"}, Display: "Rovo Dev", Project: ".rovodev/skills", Also: []string{".agents/skills"}, User: "~/.rovodev/skills", Detect: []string{"~/.rovodev"}},
	// [npx] trae.
	{Name: "trae", Display: "Trae", Project: ".trae/skills", User: "~/.trae/skills", Detect: []string{"~/.trae"}},
	// [npx] trae-cn: the project folder is Trae's.
	{Name: "trae-cn", Display: "Trae CN", Project: ".trae/skills", User: "~/.trae-cn/skills", Detect: []string{"~/.trae-cn"}},
	// [gh] warp.
	{Name: "warp", Display: "Warp", Project: ".agents/skills", User: "~/.agents/skills", Detect: []string{"~/.warp"}},
	// [npx] windsurf, [gh] windsurf.
	{Name: "windsurf", Display: "Windsurf", Project: ".windsurf/skills", User: "~/.codeium/windsurf/skills", Detect: []string{"~/.codeium/windsurf"}},
	// [npx] zencoder.
	{Name: "zencoder", Display: "Zencoder", Project: ".zencoder/skills", User: "~/.zencoder/skills", Detect: []string{"~/.zencoder"}},
}

// All is the --agent value that names every agent in the table.
const All = "*"

// Agents returns the known agents, sorted by name.
func Agents() []Agent {
	out := make([]Agent, len(agents))
	for i, a := range agents {
		a.Aliases = slices.Clone(a.Aliases)
		a.Also = slices.Clone(a.Also)
		a.Detect = slices.Clone(a.Detect)
		if a.On != nil {
			on := make(map[string]Place, len(a.On))
			for goos, p := range a.On {
				on[goos] = Place{User: p.User, Detect: slices.Clone(p.Detect)}
			}
			a.On = on
		}
		out[i] = a
	}
	return out
}

// Lookup finds an agent by name or alias, ignoring case.
func Lookup(name string) (Agent, bool) {
	for _, a := range Agents() {
		if strings.EqualFold(a.Name, name) || slices.ContainsFunc(a.Aliases, func(s string) bool { return strings.EqualFold(s, name) }) {
			return a, true
		}
	}
	return Agent{}, false
}

// Names returns every name --agent takes, aliases included, sorted.
func Names() []string {
	var out []string
	for _, a := range agents {
		out = append(out, a.Name)
		out = append(out, a.Aliases...)
	}
	slices.Sort(out)
	return out
}

// UserDir returns the agent's user folder on this system, absolute
// (UserDirOn(SystemOf(env))); "" for an agent that keeps none.
func (a Agent) UserDir(env hostenv.Env) (string, error) { return a.UserDirOn(SystemOf(env)) }

// place is the agent's user folder and detect paths on sys.
func (a Agent) place(sys System) Place {
	if p, ok := a.On[sys.GOOS]; ok {
		return p
	}
	return Place{User: a.User, Detect: a.Detect}
}

// UserDirOn returns the agent's user folder on sys, absolute:
// $UserEnv/skills when that variable is set, else the folder the table
// gives for sys's GOOS, expanded there; "" for an agent that keeps none.
func (a Agent) UserDirOn(sys System) (string, error) {
	if a.UserEnv != "" {
		if v := sys.getenv(a.UserEnv); v != "" {
			p, err := sys.expand(v)
			if err != nil {
				return "", err
			}
			return sys.join(p, "skills"), nil
		}
	}
	user := a.place(sys).User
	if user == "" {
		return "", nil
	}
	return sys.expand(user)
}

// DetectOn returns, absolute on sys, the paths whose presence means the
// agent is installed there: its Detect paths and its user folder.
func (a Agent) DetectOn(sys System) []string {
	var out []string
	for _, p := range a.place(sys).Detect {
		if abs, err := sys.expand(p); err == nil {
			out = append(out, abs)
		}
	}
	if dir, err := a.UserDirOn(sys); err == nil && dir != "" {
		out = append(out, dir)
	}
	return out
}

// Installed reports whether the agent looks installed for this user: one
// of its Detect paths, or its user folder, exists.
func (a Agent) Installed(env hostenv.Env) bool {
	for _, p := range a.DetectOn(SystemOf(env)) {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// Target is one folder to add as a target and the agents that read
// it.
type Target struct {
	// Dir is as the config gets it: relative to the workspace for a
	// project folder; for a user folder "~/..." when it is below the home
	// directory, else absolute. "" for an AGENTS.md target.
	Dir    string
	Agents []string
	// AgentsMD is, instead of Dir, the project file (AGENTS.md) an
	// agents_md: target keeps the list of skills in.
	AgentsMD string
}

// Targets returns the folders the named agents read, in the order
// named, one target per folder however many agents share it. With
// global they are the user folders, else the project folders (or, for an
// agent that reads only AGENTS.md, that file). "*" names every agent;
// then an agent whose project folder skillsync cannot write (OpenClaw's
// skills/, the workspace layer) or that has no user folder under global
// is left out and named in skipped, while naming it alone is an error.
func Targets(env hostenv.Env, names []string, global bool) (targets []Target, skipped []string, err error) {
	var list []Agent
	all := false
	for _, n := range names {
		if n == All {
			all = true
			list = append(list, Agents()...)
			continue
		}
		a, ok := Lookup(n)
		if !ok {
			return nil, nil, fmt.Errorf("unknown agent %q; skillsync agents lists them: %s", n, strings.Join(Names(), ", "))
		}
		list = append(list, a)
	}
	index := map[string]int{}
	seen := map[string]bool{}
	for _, a := range list {
		if seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		named := slices.ContainsFunc(names, func(n string) bool { m, _ := Lookup(n); return m.Name == a.Name })
		if a.AgentsMD != "" {
			switch {
			case global && all && !named:
				skipped = append(skipped, a.Name)
				continue
			case global:
				return nil, nil, fmt.Errorf("agent %s reads a project's %s and %w; run skillsync init --agent %s in the project", a.Name, a.AgentsMD, errNoUserFolder, a.Name)
			}
			key := "agents_md:" + a.AgentsMD
			if i, ok := index[key]; ok {
				targets[i].Agents = append(targets[i].Agents, a.Name)
				continue
			}
			index[key] = len(targets)
			targets = append(targets, Target{AgentsMD: a.AgentsMD, Agents: []string{a.Name}})
			continue
		}
		dir := a.Project
		if global {
			if dir, err = a.UserTarget(env); err != nil {
				return nil, nil, fmt.Errorf("agent %s: %w", a.Name, err)
			}
		} else if dir == "skills" {
			if all && !named {
				skipped = append(skipped, a.Name)
				continue
			}
			return nil, nil, fmt.Errorf("agent %s reads skills/ in a project, which is skillsync's workspace layer (your own skills), not a target; use --global for its user folder %s", a.Name, a.User)
		}
		if i, ok := index[dir]; ok {
			targets[i].Agents = append(targets[i].Agents, a.Name)
			continue
		}
		index[dir] = len(targets)
		targets = append(targets, Target{Dir: dir, Agents: []string{a.Name}})
	}
	return targets, skipped, nil
}

// WhySkipped says why Targets left the named agent out of "*" (it is in
// skipped), as a sentence that follows "agent NAME ".
func WhySkipped(name string, global bool) string {
	a, _ := Lookup(name)
	if a.AgentsMD != "" && global {
		return fmt.Sprintf("reads a project's %s and %s: left out", a.AgentsMD, errNoUserFolder)
	}
	return "reads skills/ in a project, skillsync's workspace layer: left out (use --global for its user folder)"
}

// UserTarget is the agent's user folder as a config target: "~/..." when
// it is below the home directory, else absolute.
func (a Agent) UserTarget(env hostenv.Env) (string, error) {
	dir, err := a.UserDir(env)
	if err != nil || dir == "" {
		return "", err
	}
	if home, err := SystemOf(env).Home(); err == nil {
		if rel, err := filepath.Rel(home, dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel), nil
		}
	}
	return dir, nil
}

// ProjectFolders returns every folder an agent of the table reads in a
// project (each agent's Project and Also), once each, sorted: where
// discovery looks for skills in a source besides its own skills/ folders.
// OpenClaw's "skills" is the workspace layer and a repository's own
// convention, not an agent's folder, and is left out.
func ProjectFolders() []string {
	seen := map[string]bool{"skills": true}
	var out []string
	for _, a := range agents {
		for _, dir := range append([]string{a.Project}, a.Also...) {
			if dir != "" && !seen[dir] {
				seen[dir] = true
				out = append(out, dir)
			}
		}
	}
	slices.Sort(out)
	return out
}

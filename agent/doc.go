package agent

import (
	"fmt"
	"strings"
)

// Markdown is docs/agents.md: the table of agents as users read it, made
// from the table itself (a test keeps the file current).
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Agents

<!-- Generated from agent/table.go by agent.Markdown; agent/doc_test.go keeps it current:
     SKILLSYNC_UPDATE_DOCS=1 go test ./agent -run TestAgentsDoc rewrites it. -->

The agents ` + "`skillsync init --agent`" + ` and ` + "`skillsync add --agent`" + ` know, and where each
reads skills. Each row of ` + "`agent/table.go`" + ` cites where its folders come from (the
agent's own documentation, npx skills' table, gh skill's table). ` + "`skillsync agents`" + `
prints the same list with the folders found on this machine.

- **Project**: the folder a target for the agent is, relative to the workspace
  (` + "`init --agent NAME`" + `). An agent that reads only ` + "`AGENTS.md`" + ` gets an
  ` + "`agents_md:`" + ` target instead ([configuration.md](configuration.md#agentsmd-for-agents-without-a-skills-folder)).
- **User (Linux, macOS)** and **User (Windows)**: the folder ` + "`--global`" + ` targets.
  ` + "`~`" + ` is the home directory (` + "`%USERPROFILE%`" + ` on Windows); ` + "`$XDG_CONFIG_HOME`" + `
  is ` + "`~/.config`" + ` when unset, on every system, as these agents resolve it.
- **Moved by**: the variable that moves the agent's folder; its user folder is
  then ` + "`$VARIABLE/skills`" + `.

| agent | --agent | project | user (Linux, macOS) | user (Windows) | moved by |
|---|---|---|---|---|---|
`)
	win := System{GOOS: "windows", Getenv: func(k string) string {
		switch k {
		case "USERPROFILE":
			return `C:\%USERPROFILE%`
		case "APPDATA":
			return `C:\%APPDATA%`
		}
		return ""
	}}
	for _, a := range Agents() {
		names := "`" + a.Name + "`"
		for _, al := range a.Aliases {
			names += ", `" + al + "`"
		}
		project, user, windows, moved := code(a.Project), code(a.User), "", code(a.UserEnv)
		if a.AgentsMD != "" {
			project = code(a.AgentsMD) + " (agents_md)"
			user, windows = "none", "none"
		} else if dir, err := a.UserDirOn(win); err == nil {
			windows = code(strings.TrimPrefix(dir, `C:\`))
		}
		if p, ok := a.On["darwin"]; ok {
			user += " (macOS: " + code(p.User) + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", a.Display, names, project, user, windows, moved)
	}
	return b.String()
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

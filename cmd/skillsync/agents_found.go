package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/termtext"
)

// noAgent is the --agent value that asks for no target on purpose.
const noAgent = "none"

// explicitAgents takes --agent none out of names: it reports whether the
// user named agents (none included), and the names to resolve.
func explicitAgents(names []string) (named bool, rest []string, err error) {
	if !slices.Contains(names, noAgent) {
		return len(names) > 0, names, nil
	}
	if len(names) > 1 {
		return false, nil, usageError("--agent none goes alone: it asks for no target")
	}
	return true, nil, nil
}

// foundAgents returns the agents installed for this user (their user or
// config folder is there, as npx skills detects them) whose folder can
// be a target, in the table's order.
func foundAgents(env hostenv.Env, global bool) []agent.Agent {
	var out []agent.Agent
	for _, ag := range agent.Agents() {
		if !ag.Installed(env) {
			continue
		}
		if _, _, err := agent.Targets(env, []string{ag.Name}, global); err != nil {
			continue // a folder skillsync cannot write, such as skills/
		}
		out = append(out, ag)
	}
	return out
}

// detectTargets is what init and add do in a workspace without targets
// when no --agent is given: on a terminal they ask which of the agents
// found to use, all of them preselected; otherwise they say which were
// found and the --agent line that adds them. argv is that command line's
// words after skillsync, without --agent, each quoted for the shell as it
// is printed. It never leaves the user thinking an agent sees the skills
// when none does.
func (a *app) detectTargets(argv ...string) ([]agent.Target, error) {
	found := foundAgents(a.env, a.global)
	prefix := "skillsync "
	if a.global {
		prefix = "skillsync -g "
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = termtext.ShellArg(w)
	}
	redo := strings.Join(words, " ")
	if len(found) == 0 {
		a.logWarn(fmt.Sprintf("no target and no agent found on this machine: no agent will see these skills.\n"+
			"  Add one with %s%s --agent NAME (skillsync agents lists them), or --agent none to keep it so.", prefix, redo))
		return nil, nil
	}
	names := make([]string, len(found))
	for i, ag := range found {
		names[i] = ag.Name
	}
	if in, ok := a.stdin.(*os.File); ok && !a.json && isTerminal(in) {
		chosen, err := askAgents(bufio.NewReader(in), a, found)
		if err != nil {
			return nil, err
		}
		targets, _, err := agent.Targets(a.env, chosen, a.global)
		return targets, err
	}
	line := prefix + redo
	for _, n := range names {
		line += " --agent " + n
	}
	a.logWarn(fmt.Sprintf("no target: no agent will see these skills yet. Agents found here: %s.\n  Add their folders with: %s", strings.Join(names, ", "), line))
	return nil, nil
}

// askAgents lists the agents found, all preselected, and reads which to
// use: Enter takes them all, numbers pick some, "none" none.
func askAgents(in *bufio.Reader, a *app, found []agent.Agent) ([]string, error) {
	fmt.Fprintln(a.stderr, "Agents found on this machine; their folders become targets:")
	for i, ag := range found {
		targets, _, _ := agent.Targets(a.env, []string{ag.Name}, a.global)
		dir := ""
		if len(targets) > 0 {
			dir = cmp.Or(targets[0].Dir, targets[0].AgentsMD)
		}
		fmt.Fprintf(a.stderr, "  %d. [x] %s (%s) %s\n", i+1, ag.Display, ag.Name, dir)
	}
	for {
		fmt.Fprint(a.stderr, "Use which? Enter for the marked ones, numbers such as 1 3, or none: ")
		text, err := in.ReadString('\n')
		text = strings.TrimSpace(text)
		if err != nil && text == "" {
			return nil, fmt.Errorf("read the answer: %w", err)
		}
		chosen, ok := parseChoice(text, found)
		if ok {
			return chosen, nil
		}
		fmt.Fprintf(a.stderr, "%q: give numbers from 1 to %d, or none\n", text, len(found))
	}
}

// parseChoice reads an answer to askAgents.
func parseChoice(text string, found []agent.Agent) ([]string, bool) {
	var out []string
	switch strings.ToLower(text) {
	case "":
		for _, ag := range found {
			out = append(out, ag.Name)
		}
		return out, true
	case "none", "n":
		return []string{}, true
	}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' }) {
		i, err := strconv.Atoi(f)
		if err != nil || i < 1 || i > len(found) {
			return nil, false
		}
		if !slices.Contains(out, found[i-1].Name) {
			out = append(out, found[i-1].Name)
		}
	}
	return out, true
}

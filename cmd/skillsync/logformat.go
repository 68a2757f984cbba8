package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/skillsync/skillsync/internal/termtext"
	"github.com/skillsync/skillsync/skill"
)

// The values of --log-format.
const (
	logText = "text"
	logJSON = "json"
)

func (a *app) checkLogFormat() error {
	switch a.logFormat {
	case "", logText, logJSON:
		return nil
	}
	return usageError("--log-format %q: use text or json", a.logFormat)
}

// logFormatIn returns the --log-format args give, "" when none: for an
// error cobra returns before it parses the flags.
func logFormatIn(args []string) string {
	format := ""
	for i, arg := range args {
		if arg == "--" {
			break
		}
		if v, ok := strings.CutPrefix(arg, "--log-format="); ok {
			format = v
		} else if arg == "--log-format" && i+1 < len(args) {
			format = args[i+1]
		}
	}
	return format
}

// jsonLog is the logger of --log-format json; nil for text.
func (a *app) jsonLog() *slog.Logger {
	if a.logFormat != logJSON {
		return nil
	}
	return slog.New(slog.NewJSONHandler(a.stderr, nil))
}

// logWarn writes a warning to stderr: "warning: msg", or a JSON line.
func (a *app) logWarn(msg string) {
	if l := a.jsonLog(); l != nil {
		l.Warn(msg)
		return
	}
	fmt.Fprintf(a.stderr, "warning: %s\n", msg)
}

// logError writes the error a command ended with: "skillsync: msg",
// escaped so it cannot act on a terminal, or a JSON line.
func (a *app) logError(msg string) {
	if l := a.jsonLog(); l != nil {
		l.Error(msg)
		return
	}
	fmt.Fprintf(a.stderr, "skillsync: %s\n", termtext.EscapeLines(msg))
}

// logProblem writes a skill's problem as a JSON line: a warning or an
// error, with where it is as attributes.
func logProblem(l *slog.Logger, p skill.Problem) {
	level := slog.LevelWarn
	if p.Level == skill.Error {
		level = slog.LevelError
	}
	l.Log(context.Background(), level, p.Message, "source", p.Source, "skill", p.Skill, "file", p.File, "line", p.Line, "rule", p.Rule)
}

package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/internal/termtext"
	"github.com/skillsync/skillsync/repository"
)

type readOptions struct {
	name, file string
	raw        bool
}

func newReadCommand(a *app, runF func(context.Context, *readOptions) error) *cobra.Command {
	opts := &readOptions{}
	cmd := &cobra.Command{
		Use:   "read NAME [FILE]",
		Short: "Print a skill's SKILL.md, or one of its files",
		Long: `Print a skill's SKILL.md, or FILE of the skill.

FILE is relative to the skill's directory and must stay inside it: a path
through ".." or an absolute one is bad usage (exit 2), and a symbolic link
that leads out of the skill is refused.
Hidden skills are refused. On a terminal, control characters are shown
escaped and a binary file is not printed unless --raw is given; to a pipe
the bytes are written as they are. --json prints {"name", "file", "content"},
with "content_base64" instead for a file that is not UTF-8 text.`,
		Example: `  skillsync read pdf
  skillsync read pdf scripts/extract.py
  skillsync read pdf assets/logo.png > logo.png`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.name = argv[0]
			if len(argv) == 2 {
				opts.file = argv[1]
				if _, err := repository.SkillPath(opts.file); err != nil {
					return usageError("read %s %s: %v", opts.name, opts.file, err)
				}
			}
			return pick(runF, a.runRead)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "write a binary file to a terminal too")
	return cmd
}

// sniffSize is how much of a file decides whether it is text.
const sniffSize = 8 << 10

func (a *app) runRead(ctx context.Context, opts *readOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	f, w, err := eng.Read(ctx, opts.name, opts.file)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return fmt.Errorf("read %s %s: %w", w.Skill.Name, opts.file, err)
	}
	head = head[:n]
	if a.json {
		return a.readJSON(w.Skill.Name, cmp.Or(opts.file, w.Skill.File), head, f)
	}
	if opts.raw || !isTerminal(a.stdout) {
		if _, err := a.stdout.Write(head); err != nil {
			return err
		}
		_, err = io.Copy(a.stdout, f)
		return err
	}
	if looksBinary(head) {
		return fmt.Errorf("read %s %s: a binary file is not printed to a terminal; redirect it to a file, or give --raw", w.Skill.Name, opts.file)
	}
	// Text from a source reaches a terminal escaped: an escape sequence in
	// a SKILL.md cannot retitle the window, write the clipboard or clear
	// the screen. The file is at most max_file_size.
	rest, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", w.Skill.Name, opts.file, err)
	}
	_, err = io.WriteString(a.stdout, termtext.EscapeLines(string(head)+string(rest)))
	return err
}

// looksBinary reports whether head looks like the start of a file that is not
// text: it holds a NUL or is not UTF-8 (a rune cut at the end is fine).
func looksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 {
			return len(head) >= utf8.UTFMax
		}
		head = head[size:]
	}
	return false
}

// readJSON prints a file of the skill name as JSON: its text, or its
// bytes in base64 when they are not UTF-8. The file is at most
// max_file_size.
func (a *app) readJSON(name, file string, head []byte, rest io.Reader) error {
	tail, err := io.ReadAll(rest)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", name, file, err)
	}
	data := append(head, tail...)
	out := struct {
		Name          string  `json:"name"`
		File          string  `json:"file"`
		Content       *string `json:"content,omitempty"`
		ContentBase64 string  `json:"content_base64,omitempty"`
	}{Name: name, File: file}
	if utf8.Valid(data) {
		text := string(data)
		out.Content = &text
	} else {
		out.ContentBase64 = base64.StdEncoding.EncodeToString(data)
	}
	return writeJSON(a.stdout, out)
}

package termtext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, lines string }{
		{"pdf", "pdf", "pdf"},
		{"café ünïcode 日本 😀", "café ünïcode 日本 😀", "café ünïcode 日本 😀"},
		{`back\slash`, `back\slash`, `back\slash`},
		{"clear\x1b[2J\x1b[H", `clear\x1b[2J\x1b[H`, `clear\x1b[2J\x1b[H`},
		{"bell\a", `bell\x07`, `bell\x07`},
		{"nul\x00", `nul\x00`, `nul\x00`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"two\nrows", `two\nrows`, "two\nrows"},
		{"tab\there", `tab\there`, "tab\there"},
		{"crlf\r\nend", `crlf\r\nend`, "crlf\r\nend"},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"end\r", `end\r`, `end\r`},
		{"csi\u009b2J", `csi\u009b2J`, `csi\u009b2J`},
		{"next\u0085line", `next\u0085line`, `next\u0085line`},
		{"gpj.\u202eexe", `gpj.\u202eexe`, `gpj.\u202eexe`},
		{"\u2066isolate\u2069", `\u2066isolate\u2069`, `\u2066isolate\u2069`},
		{"mark\u200e\u200f\u061c", `mark\u200e\u200f\u061c`, `mark\u200e\u200f\u061c`},
		{"zero\u200bwidth\u200d\ufeff\u00ad", `zero\u200bwidth\u200d\ufeff\u00ad`, `zero\u200bwidth\u200d\ufeff\u00ad`},
		{"line\u2028para\u2029", `line\u2028para\u2029`, `line\u2028para\u2029`},
		{"tag\U000e0041", `tag\U000e0041`, `tag\U000e0041`},
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`, `bad\xff\xfeutf8`},
		{"cut\xe2\x80", `cut\xe2\x80`, `cut\xe2\x80`},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := EscapeLines(tt.in); got != tt.lines {
			t.Errorf("EscapeLines(%q) = %q, want %q", tt.in, got, tt.lines)
		}
	}
}

// Whatever the input, the output of Escape holds no character a terminal
// acts on, is valid UTF-8 and is one line.
func TestEscapeLeavesNothingUnsafe(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	for r := rune(0xfe00); r < 0x10000; r++ {
		all.WriteRune(r)
	}
	for r := rune(0xe0000); r < 0xe0080; r++ {
		all.WriteRune(r)
	}
	all.WriteString("\xff\xc3")
	check := func(name, out string, lines bool) {
		if !utf8.ValidString(out) {
			t.Errorf("%s: output is not valid UTF-8", name)
		}
		for i, r := range out {
			if Unsafe(r) && !(lines && kept(out, i, r)) {
				t.Fatalf("%s: %U left raw at %d", name, r, i)
			}
		}
	}
	check("Escape", Escape(all.String()), false)
	check("EscapeLines", EscapeLines(all.String()), true)
	if strings.ContainsAny(Escape(all.String()), "\n\r") {
		t.Error("Escape left a line break")
	}
}

func TestUnsafe(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0, 7, 0x1b, '\n', 0x7f, 0x80, 0x9b, 0x9f, 0xad, 0x61c, 0x200b, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, 0x2028, 0x2029, 0xfeff, 0xe0001} {
		if !Unsafe(r) {
			t.Errorf("Unsafe(%U) = false", r)
		}
	}
	for _, r := range []rune{' ', 'a', '~', '\\', 0xa0, 0xe9, 0x5d0, 0x4e2d, 0x1f600, 0xfe0f} {
		if Unsafe(r) {
			t.Errorf("Unsafe(%U) = true", r)
		}
	}
}

func TestEscapeDoesNotAllocateForSafeText(t *testing.T) {
	// Not parallel: testing.AllocsPerRun counts the allocations of the whole process.
	s := strings.Repeat("Extract text and tables from PDF files. Ünïcode ok. ", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s) }); n != 0 {
		t.Errorf("Escape allocated %v times for text with nothing to escape", n)
	}
}

func TestEscapeJSON(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"name":        "a\x1b[2Jb",
		"description": "gpj.\u202eexe \u0085 \u009b \x7f \u2028 tag\U000e0041 😀 café",
		"list":        []any{"\u2066x\u2069", 1.5, true, nil},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := EscapeJSON(raw)
	for i, r := range string(out) {
		if Unsafe(r) {
			t.Fatalf("%U left raw at %d in %s", r, i, out)
		}
	}
	var back, want any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("escaped JSON does not decode: %v\n%s", err, out)
	}
	_ = json.Unmarshal(raw, &want)
	a, _ := json.Marshal(back)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Errorf("values changed:\n%s\n%s", a, b)
	}
	if !strings.Contains(string(out), `\udb40\udc41`) || !strings.Contains(string(out), `\u202e`) {
		t.Errorf("escapes missing: %s", out)
	}
	plain := []byte(`{"a":"café 😀"}`)
	if got := EscapeJSON(plain); &got[0] != &plain[0] {
		t.Error("EscapeJSON copied JSON that had nothing to escape")
	}
}

func TestShellArg(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"acme/skills", "acme/skills"},
		{"/tmp/ws/skillsync.yaml", "/tmp/ws/skillsync.yaml"},
		{"~/skills", "~/skills"},
		{"~/my skills", "'~/my skills'"},
		{"/a/b~c", "/a/b~c"},
		{"it's", `'it'\''s'`},
		{"$HOME/x", "'$HOME/x'"},
		{"a;b", "'a;b'"},
		{"", "''"},
		{"ünïcode", "'ünïcode'"},
	} {
		if got := ShellArg(tt.in); got != tt.want {
			t.Errorf("ShellArg(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

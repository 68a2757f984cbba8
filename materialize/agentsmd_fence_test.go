package materialize

import (
	"strings"
	"testing"
)

// A user's AGENTS.md that shows the markers in a fenced code block (how to
// write the block by hand, say) keeps that example: a marker inside a
// fence is text, as one quoted in prose is. The old splice took the
// fenced begin marker for the block's and replaced the user's example.
func TestSpliceAgentsMDLeavesFencedMarkers(t *testing.T) {
	block := AgentsMDBlock("<available_skills>\n</available_skills>")
	example := "# Notes\r\nTo embed, write:\r\n```\r\n" + AgentsMDBegin + "\r\nMY EXAMPLE\r\n" + AgentsMDEnd + "\r\n```\r\n"
	tilde := "~~~~md\n" + AgentsMDEnd + "\n  ~~~\nstill fenced\n~~~~\n"
	crlfBlock := strings.ReplaceAll(block, "\n", "\r\n") // the example's lines end so
	for _, tt := range []struct{ name, old, want string }{
		{"fenced markers only", example + "more\r\n", example + "more\r\n\r\n" + crlfBlock},
		{"fenced markers, then the block", example + AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\nafter\n",
			example + crlfBlock + "after\n"},
		{"a fenced end marker, no block", tilde, tilde + "\n" + block},
		// A fence never closed is no fence: the block appended after it
		// is found again by the next sync, not appended once more.
		{"an unclosed fence before the block", "```\ncode\n" + AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\n",
			"```\ncode\n" + block},
	} {
		got, err := SpliceAgentsMD([]byte(tt.old), block)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %q %v, want %q", tt.name, got, err, tt.want)
		}
	}
}

// A file saved with a UTF-8 byte order mark (Windows editors) keeps its
// block where it is: the marker on the first line is a line of its own.
// The old splice saw the end marker without the begin marker and failed
// every sync.
func TestSpliceAgentsMDAfterAByteOrderMark(t *testing.T) {
	block := AgentsMDBlock("<available_skills>\n</available_skills>")
	bom := "\xef\xbb\xbf"
	old := bom + AgentsMDBegin + "\r\nold\r\n" + AgentsMDEnd + "\r\n# Mine\r\n"
	got, err := SpliceAgentsMD([]byte(old), block)
	if want := bom + strings.ReplaceAll(block, "\n", "\r\n") + "# Mine\r\n"; err != nil || string(got) != want {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
	// Spliced again, it stays the same.
	again, err := SpliceAgentsMD(got, block)
	if err != nil || string(again) != string(got) {
		t.Errorf("again: got %q %v", again, err)
	}
}

// A begin marker of the user's later in the file, with no end marker of
// its own, is text, as SpliceAgentsMD says: an end marker in a fenced
// example after it (how to write the block by hand) does not close it,
// and the user's text between the two, the fence's opening half with it,
// is not removed as a second block.
func TestSpliceAgentsMDKeepsTextBeforeAFencedEndMarker(t *testing.T) {
	block := AgentsMDBlock("<available_skills>\n</available_skills>")
	rest := "my notes\n" + AgentsMDBegin + "\nkeep this paragraph\n```\n" + AgentsMDEnd + "\n```\ntail\n"
	old := AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\n" + rest
	got, err := SpliceAgentsMD([]byte(old), block)
	if want := block + rest; err != nil || string(got) != want {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
}

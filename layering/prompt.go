package layering

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/skillsync/skillsync/internal/termtext"
)

// PromptFormat is how Prompt renders the catalog.
type PromptFormat string

// The prompt formats.
const (
	PromptXML  PromptFormat = "xml"
	PromptJSON PromptFormat = "json"
)

// cutDescription is the length descriptions are cut to when the prompt
// has to fit a budget.
const cutDescription = 200

// promptSkill is one skill as the prompt shows it.
type promptSkill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Location    string `json:"location,omitempty"`
}

// PromptSkills returns the winners an agent's prompt lists: not hidden,
// not archived, and not marked disable-model-invocation.
func PromptSkills(winners []*Winner) []*Winner {
	var out []*Winner
	for _, w := range winners {
		if w.Visible() && !w.Skill.DisableModelInvocation() {
			out = append(out, w)
		}
	}
	return out
}

// Prompt renders winners for an agent's system prompt. With maxChars > 0
// the output keeps within maxChars characters: descriptions are cut to 200
// characters first, then the last skills are dropped and a final line says
// how many are left out.
func Prompt(winners []*Winner, format PromptFormat, maxChars int) (string, error) {
	return PromptAt(winners, format, maxChars, (*Winner).Location)
}

// PromptAt is Prompt with each skill's location given by location
// (an AGENTS.md file names them relative to its folder).
func PromptAt(winners []*Winner, format PromptFormat, maxChars int, location func(*Winner) string) (string, error) {
	render := renderXML
	switch format {
	case PromptXML, "":
	case PromptJSON:
		render = renderJSON
	default:
		return "", fmt.Errorf("unknown prompt format %q: use xml or json", format)
	}
	skills := make([]promptSkill, len(winners))
	for i, w := range winners {
		skills[i] = promptSkill{Name: w.Skill.Name, Description: w.Skill.Description, Location: location(w)}
	}
	out := render(skills, 0)
	if maxChars <= 0 || utf8.RuneCountInString(out) <= maxChars {
		return out, nil
	}
	for i := range skills {
		skills[i].Description = Shorten(skills[i].Description, cutDescription)
	}
	for n := len(skills); n >= 0; n-- {
		out = render(skills[:n], len(skills)-n)
		if utf8.RuneCountInString(out) <= maxChars {
			return out, nil
		}
	}
	return out, nil
}

// Shorten cuts s to n characters, the last one "…", when it is longer.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	// The cut is found in place: a list of thousands of skills otherwise
	// copied every description into runes, four bytes each.
	cut, runes := 0, 0
	for i := range s {
		if runes == n-1 {
			cut = i
			break
		}
		runes++
	}
	if head := s[:cut]; utf8.ValidString(head) {
		return head + "…"
	}
	// Bytes that are no UTF-8 come out as U+FFFD, as a conversion to
	// runes gives them.
	return string([]rune(s)[:n-1]) + "…"
}

func renderXML(skills []promptSkill, omitted int) string {
	var b strings.Builder
	// Sized once for the text and its tags: a prompt of thousands of
	// skills otherwise grew its buffer by copying a dozen times.
	size := 64
	for _, s := range skills {
		size += len(s.Name) + len(s.Description) + len(s.Location) + 110
	}
	b.Grow(size)
	b.WriteString("<available_skills>\n")
	for _, s := range skills {
		b.WriteString("<skill>\n<name>\n")
		b.WriteString(xmlText(s.Name))
		b.WriteString("\n</name>\n<description>\n")
		b.WriteString(xmlText(s.Description))
		b.WriteString("\n</description>\n")
		if s.Location != "" {
			b.WriteString("<location>\n")
			b.WriteString(xmlText(s.Location))
			b.WriteString("\n</location>\n")
		}
		b.WriteString("</skill>\n")
	}
	b.WriteString("</available_skills>\n")
	if omitted > 0 {
		noun := "skills"
		if omitted == 1 {
			noun = "skill"
		}
		fmt.Fprintf(&b, "<!-- %d more %s: skillsync search QUERY -->\n", omitted, noun)
	}
	return b.String()
}

// xmlText escapes text from a source for the XML prompt: markup
// characters as entities, so a description or a path cannot close an
// element or open one, and control and bidirectional characters as
// visible escapes (termtext.EscapeLines), so the prompt printed on a
// terminal or read by a person shows what is there. Line breaks are kept.
func xmlText(s string) string {
	return html.EscapeString(termtext.EscapeLines(s))
}

// renderJSON writes the prompt as indented JSON. Control characters are
// escaped by encoding/json; the bidirectional and other format characters
// it writes raw are escaped too (termtext.EscapeJSON), which decodes to the
// same strings.
func renderJSON(skills []promptSkill, omitted int) string {
	doc := struct {
		Skills  []promptSkill `json:"skills"`
		Omitted int           `json:"omitted,omitempty"`
	}{Skills: skills, Omitted: omitted}
	if doc.Skills == nil {
		doc.Skills = []promptSkill{}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(doc) // strings and ints only: it cannot fail
	return string(termtext.EscapeJSON([]byte(b.String())))
}

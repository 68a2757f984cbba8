package skill

import "strings"

// PlaceholderDescription is the description skillsync new writes into a
// new SKILL.md when it is given none: a reminder to write one, which
// validation warns about (description-placeholder) until it is replaced.
const PlaceholderDescription = "Replace this with what the skill does and when to use it."

// IsPlaceholderDescription reports whether description is still
// PlaceholderDescription, spaces and case aside.
func IsPlaceholderDescription(description string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(description), " "), PlaceholderDescription)
}

package drafts

import "strings"

// approvedBy is the audit's words for an approval, which the text of
// skillsync audit shows.
func approvedBy(who string) string { return "approved by " + who }

// commitMessage is the message of the commit that promotes dr to a
// source: message (or "Add skill NAME" and the description) followed by
// trailers a review and a script can read: Skill, Skill-Hash, Proposed-by
// (the draft's author, when it names one) and Approved-by.
func commitMessage(dr Draft, message, approver string) string {
	subject := strings.TrimSpace(message)
	if subject == "" {
		subject = "Add skill " + dr.Name
		if dr.Description != "" {
			subject += "\n\n" + dr.Description
		}
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\nSkill: " + dr.Name + "\nSkill-Hash: sha256:" + dr.Hash + "\n")
	if dr.Author != "" {
		b.WriteString("Proposed-by: " + oneLine(dr.Author) + "\n")
	}
	b.WriteString("Approved-by: " + oneLine(approver) + "\n")
	return b.String()
}

// oneLine folds s onto one line, so a trailer cannot be forged by a name
// with a newline in it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// emailOf is who's address when who is one, else empty.
// EmailOf is who when who is an address, else empty: the commit's
// author email.
func EmailOf(who string) string { return emailOf(who) }

func emailOf(who string) string {
	if strings.Contains(who, "@") && !strings.ContainsAny(who, " <>") {
		return who
	}
	return ""
}

// short is a revision cut to the 12 characters messages show.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

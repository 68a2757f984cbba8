package drafts

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The targets of a promotion that are local layers rather than sources;
// any other target names a source.
const (
	TargetWorkspace = "workspace"
	TargetUser      = "user"
)

// AutoApprover is the approver the audit log names for a promotion that
// promotion.auto made.
const AutoApprover = "auto (promotion.auto)"

// Policy is the gate's policy, the promotion: section of the config: who
// may approve and where drafts may go.
type Policy struct {
	// Approvers may approve a promotion; empty lets any named approver.
	Approvers []string
	// Targets are where drafts may go: TargetWorkspace, TargetUser or a
	// source name; empty allows the workspace and user layers and no
	// source.
	Targets []string
	// Auto promotes a draft without problems as it is proposed, to the
	// first target, with AutoApprover as its approver.
	Auto bool
	// Config names the config file in refusals; "" says "the config".
	Config string
}

// AllowsApprover reports whether who may approve a promotion: a name is
// needed, and it must be in Approvers when that is set.
func (p Policy) AllowsApprover(who string) bool {
	if strings.TrimSpace(who) == "" {
		return false
	}
	return len(p.Approvers) == 0 || slices.Contains(p.Approvers, who)
}

// AllowedTargets returns where drafts may go: Targets, or the workspace
// and user layers when it is empty.
func (p Policy) AllowedTargets() []string {
	if len(p.Targets) == 0 {
		return []string{TargetWorkspace, TargetUser}
	}
	return p.Targets
}

// AllowsTarget reports whether a draft may go to target.
func (p Policy) AllowsTarget(target string) bool {
	return slices.Contains(p.AllowedTargets(), target)
}

// Check refuses, with a *GateError, the promotion of the draft name
// approved by approver to target: no approver, an approver outside
// Approvers (unless auto: the config's author approved in advance) or a
// target outside AllowedTargets.
func (p Policy) Check(name, approver, target string, auto bool) error {
	switch {
	case strings.TrimSpace(approver) == "":
		return p.refuse(name, "no approver: a person approves every promotion (--approver WHO)")
	case !auto && !p.AllowsApprover(approver):
		return p.refuse(name, "%s is not an approver in promotion.approvers of %s (%s)", approver, p.config(), strings.Join(p.Approvers, ", "))
	case !p.AllowsTarget(target):
		return p.refuse(name, "target %s is not in promotion.targets of %s (allowed: %s)", target, p.config(), strings.Join(p.AllowedTargets(), ", "))
	}
	return nil
}

// CheckRollout refuses, with a *GateError, the rollout of the skill name
// into source approved by approver: an approver outside Approvers, when
// that is set, or a source outside Targets, when that is set. A rollout
// changes a skill a source already has, so with no policy it is allowed.
func (p Policy) CheckRollout(name, approver, source string) error {
	reason := ""
	switch {
	case !p.AllowsApprover(approver):
		reason = fmt.Sprintf("%s is not an approver in promotion.approvers of %s (%s); give one with --approver", approver, p.config(), strings.Join(p.Approvers, ", "))
	case len(p.Targets) > 0 && !slices.Contains(p.Targets, source):
		reason = fmt.Sprintf("source %s is not in promotion.targets of %s (%s): add it there to roll its skills out", source, p.config(), strings.Join(p.Targets, ", "))
	default:
		return nil
	}
	return &GateError{Op: "rollout", Name: name, Reason: reason}
}

func (p Policy) config() string {
	if p.Config == "" {
		return "the config"
	}
	return p.Config
}

func (p Policy) refuse(name, format string, args ...any) error {
	return &GateError{Name: name, Reason: fmt.Sprintf(format, args...)}
}

// GateError is a promotion the gate's policy refuses: no approver, an
// approver or a target outside the policy, a target that does not exist.
// It is a failure of the request (exit status 1), not a usage mistake.
type GateError struct {
	// Op is what was refused: "promote" when empty, or "rollout".
	Op     string
	Name   string
	Reason string
}

func (e *GateError) Error() string { return cmp.Or(e.Op, "promote") + " " + e.Name + ": " + e.Reason }

// IsRefused reports whether err is the gate refusing a promotion, by its
// policy (*GateError) or because the draft has problems (*InvalidError).
func IsRefused(err error) bool {
	var ge *GateError
	var ie *InvalidError
	return errors.As(err, &ge) || errors.As(err, &ie)
}

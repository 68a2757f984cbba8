package drafts

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	team := Policy{Approvers: []string{"alice", "bob"}, Targets: []string{"workspace", "team"}, Config: "/ws/skillsync.yaml"}
	open := Policy{}
	tests := []struct {
		name     string
		policy   Policy
		approver string
		target   string
		auto     bool
		want     string // "" for allowed
	}{
		{"an approver of the list", team, "alice", "team", false, ""},
		{"no approver", team, "", "workspace", false, "no approver: a person approves every promotion"},
		{"a blank approver", open, "  ", "workspace", false, "no approver"},
		{"no approver even with auto", team, "", "workspace", true, "no approver"},
		{"an approver outside the list", team, "mallory", "workspace", false, "mallory is not an approver in promotion.approvers of /ws/skillsync.yaml (alice, bob)"},
		{"auto is approved in advance", team, AutoApprover, "workspace", true, ""},
		{"a target outside the list", team, "alice", "user", false, "target user is not in promotion.targets of /ws/skillsync.yaml (allowed: workspace, team)"},
		{"a source not in the list", team, "alice", "other", false, "target other is not in promotion.targets"},
		{"any named approver without a list", open, "anyone", "user", false, ""},
		{"no source without a list", open, "anyone", "builtin", false, "target builtin is not in promotion.targets of the config (allowed: workspace, user)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.policy.Check("pdf", tt.approver, tt.target, tt.auto)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ge *GateError
			if !errors.As(err, &ge) || !IsRefused(err) || ge.Name != "pdf" || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "promote pdf: ") {
				t.Fatalf("err = %v, want a *GateError saying %q", err, tt.want)
			}
		})
	}
}

func TestPolicyDefaults(t *testing.T) {
	t.Parallel()
	p := Policy{}
	if !slices.Equal(p.AllowedTargets(), []string{TargetWorkspace, TargetUser}) || p.AllowsTarget("builtin") {
		t.Errorf("default targets = %v", p.AllowedTargets())
	}
	if !p.AllowsApprover("anyone") || p.AllowsApprover(" ") || p.AllowsApprover("") {
		t.Error("default approvers")
	}
	p = Policy{Approvers: []string{"alice"}, Targets: []string{"team"}}
	if !p.AllowsApprover("alice") || p.AllowsApprover("mallory") || !p.AllowsTarget("team") || p.AllowsTarget("workspace") {
		t.Errorf("policy %+v is not enforced", p)
	}
}

func TestIsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&GateError{Name: "pdf", Reason: "no"}, true},
		{&InvalidError{Name: "pdf"}, true},
		{errors.Join(errors.New("context"), &InvalidError{Name: "pdf"}), true},
		{ErrNoDraft, false},
		{errors.New("push failed"), false},
		{nil, false},
	} {
		if got := IsRefused(tt.err); got != tt.want {
			t.Errorf("IsRefused(%v) = %v", tt.err, got)
		}
	}
}

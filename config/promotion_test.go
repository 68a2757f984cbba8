package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository/all"
	"github.com/skillsync/skillsync/repository/git"
)

func TestPromotionResolves(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, `user: ann
repositories:
  - name: team
    git: https://git.example.com/acme/skills.git
    publish: direct
  - name: docs
    git: https://git.example.com/acme/docs.git
    publish: branch
promotion:
  approvers: [alice, bob]
  targets: [workspace, team, user]
  auto: true
`), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Promotion
	if !reflect.DeepEqual(p.Approvers, []string{"alice", "bob"}) || !reflect.DeepEqual(p.Targets, []string{"workspace", "team", "user"}) || !p.Auto || p.Line != 10 {
		t.Errorf("promotion = %+v", p)
	}
	direct := func(s Source) bool { return s.Settings.(*git.Settings).PublishesDirect() }
	if !direct(cfg.Sources[0]) || direct(cfg.Sources[1]) {
		t.Errorf("publish = %v, %v", direct(cfg.Sources[0]), direct(cfg.Sources[1]))
	}
	if !p.AllowsApprover("alice") || p.AllowsApprover("mallory") || p.AllowsApprover("") {
		t.Error("approvers are not enforced")
	}
	if !p.AllowsTarget("team") || p.AllowsTarget("docs") {
		t.Error("targets are not enforced")
	}
}

func TestPromotionDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "strict: false\n"), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Promotion
	if p.Auto || p.Line != 0 {
		t.Errorf("promotion = %+v", p)
	}
	// Without a policy any named approver may promote, into the local
	// layers only: publishing to a source is opted into by name.
	if !p.AllowsApprover("anyone") || p.AllowsApprover(" ") {
		t.Error("default approvers")
	}
	if !reflect.DeepEqual(p.AllowedTargets(), []string{"workspace", "user"}) || p.AllowsTarget("builtin") {
		t.Errorf("default targets = %v", p.AllowedTargets())
	}
}

func TestPromotionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
	}{
		{"unknown target", "promotion:\n  targets: [workspace, nowhere]\n", `:2: promotion: target "nowhere" is not workspace, user or the name of a source`},
		{"user target without a user", "promotion:\n  targets: [user]\n", ":2: promotion: target user needs user: set"},
		{"empty approver", "promotion:\n  approvers: [alice, \"\"]\n", ":2: promotion: an approver is empty"},
		{"unknown key", "promotion:\n  approver: alice\n", `:2: unknown key "approver" in promotion`},
		{"auto not a bool", "promotion:\n  auto: sometimes\n", `:2: key "auto" in promotion`},
		{"publish on a dir source", "repositories:\n  - dir: x\n    publish: direct\n", ":2: repositories[0]: ref, path, depth, auth, allow_inline_credentials and publish belong to git: sources"},
		{"unknown publish", "repositories:\n  - git: file:///x\n    publish: force\n", `:2: repositories[0]: publish "force": use branch`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.text)
			_, err := Load(path, all.Kinds())
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), path+tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

package all

import (
	"testing"

	"github.com/skillsync/skillsync/agent"
)

// TestAgentsRegistry: the list of agent packages builds a registry whose
// agents are rows of the table, each found by its key and by every name
// the table gives it.
func TestAgentsRegistry(t *testing.T) {
	t.Parallel()
	r, err := agent.NewRegistry(registrations()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range r.All() {
		a, ok := agent.Lookup(reg.Agent)
		if !ok {
			t.Fatalf("%s is not in the table", reg.Agent)
		}
		for _, n := range append([]string{reg.Key, a.Name}, a.Aliases...) {
			if got, ok := r.Lookup(n); !ok || got.Agent != reg.Agent {
				t.Errorf("Lookup(%s) = %s, %v", n, got.Agent, ok)
			}
		}
	}
	if _, ok := r.Lookup("cursor"); ok {
		t.Error("an agent without a package was found")
	}
	if _, err := agent.NewRegistry(append(registrations(), registrations()[0])...); err == nil {
		t.Error("an agent registered twice was taken")
	}
	if _, err := agent.NewRegistry(agent.Registration{Agent: "nope", Key: "nope"}); err == nil {
		t.Error("an agent outside the table was taken")
	}
}

package fleet

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/skillsync/skillsync/internal/hostid"
	"github.com/skillsync/skillsync/layering"
)

// The frontmatter metadata keys of staged rollout.
const (
	// RolloutKey holds a percentage ("10%") of hosts that place the skill.
	RolloutKey = "rollout"
	// EnvironmentsKey holds the environments (space- or comma-separated)
	// whose hosts place it.
	EnvironmentsKey = "environments"
)

// Rollout is a skill's staged rollout: the share of hosts that take it
// and the environments they must be in.
type Rollout struct {
	// Percent is in 0..100; 100 when the skill sets none.
	Percent float64
	// Environments is empty when every environment takes it.
	Environments []string
}

// ParseRollout reads a skill's rollout from its metadata. A value that
// does not parse is an error; the caller holds the skill back, since a
// typo must not place a skill everywhere.
func ParseRollout(meta map[string]string) (Rollout, error) {
	r := Rollout{Percent: 100}
	if v, ok := meta[RolloutKey]; ok {
		p, err := ParsePercent(v)
		if err != nil {
			return r, fmt.Errorf("metadata.%s: %w", RolloutKey, err)
		}
		r.Percent = p
	}
	if v, ok := meta[EnvironmentsKey]; ok {
		r.Environments = strings.FieldsFunc(v, func(c rune) bool { return c == ' ' || c == ',' || c == '\t' })
		if len(r.Environments) == 0 {
			return r, fmt.Errorf("metadata.%s is empty: list environments or leave the key out", EnvironmentsKey)
		}
	}
	return r, nil
}

// ParsePercent reads "10%", "10" or "2.5%" as a percentage in 0..100:
// decimal digits with at most one point and two decimals (a
// bucket is a hundredth of a percent). What else strconv reads ("1_0",
// "0x1p3", "1e1", "-0") is a typo here, and holds the skill back.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	whole, frac, _ := strings.Cut(t, ".")
	digits := func(d string) bool { return strings.Trim(d, "0123456789") == "" }
	p, err := strconv.ParseFloat(t, 64)
	if err != nil || whole+frac == "" || !digits(whole) || !digits(frac) || len(frac) > 2 || p < 0 || p > 100 || p != p {
		return 0, fmt.Errorf("rollout %q: want a percentage from 0%% to 100%%", s)
	}
	return p, nil
}

// FormatPercent writes a percentage as ParsePercent reads it.
func FormatPercent(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64) + "%"
}

// Bucket is where a host falls for a skill: a number in [0, 10000) from
// SHA-256 of the host id and the skill's name (compared as names are,
// case-insensitively). It is stable, so a host in at 10% is in at 50%.
//
// The id hashed is the canonical one (hostid.Canonical), the id the
// store and fleet status know the host by: two workspaces of one host
// spelled "Build-01" and "build-01" are one host in the fleet, and must
// take or hold back a skill together, not one each. An id that is
// canonical already hashes as it always did, so such a host keeps its
// buckets; one spelled otherwise (capitals, NFD) moved once, when
// skillsync began hashing the canonical form.
func Bucket(host, name string) int {
	h := sha256.New()
	h.Write([]byte(hostid.Canonical(host)))
	h.Write([]byte{0})
	h.Write([]byte(layering.Key(name)))
	var sum [sha256.Size]byte
	return int(binary.BigEndian.Uint64(h.Sum(sum[:0])[:8]) % 10000)
}

// Holds reports why a host in environment env does not take the skill,
// or "" when it does.
func (r Rollout) Holds(host, env, name string) string {
	if len(r.Environments) > 0 {
		in := false
		for _, e := range r.Environments {
			// Prod in a skill and prod in a host's config are one
			// environment to whoever wrote them.
			if strings.EqualFold(e, env) {
				in = true
				break
			}
		}
		if !in {
			if env == "" {
				return "rollout: environments " + strings.Join(r.Environments, " ") + " only, and this host has no environment"
			}
			return "rollout: environments " + strings.Join(r.Environments, " ") + " only, this host is in " + env
		}
	}
	if r.Percent >= 100 {
		return ""
	}
	if float64(Bucket(host, name)) >= r.Percent*100 {
		return "rollout: " + FormatPercent(r.Percent) + " of hosts, not this one yet"
	}
	return ""
}

// HeldBack reports why a host does not take a skill with metadata meta,
// or "" when it does.
func HeldBack(host, env, name string, meta map[string]string) string {
	_, hasRollout := meta[RolloutKey]
	_, hasEnvs := meta[EnvironmentsKey]
	if !hasRollout && !hasEnvs {
		return ""
	}
	r, err := ParseRollout(meta)
	if err != nil {
		return "rollout: " + err.Error()
	}
	return r.Holds(host, env, name)
}

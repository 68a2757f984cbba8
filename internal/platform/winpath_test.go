package platform

import (
	"strings"
	"testing"
)

func TestExtendedPath(t *testing.T) {
	long := strings.Repeat(`segment\`, 40) + "SKILL.md" // 328 characters
	tests := []struct {
		name, in, want string
	}{
		{"short drive path", `C:\work\.skills-cache\team\lint`, `C:\work\.skills-cache\team\lint`},
		{"long drive path", `C:\` + long, `\\?\C:\` + long},
		{"long UNC path", `\\server\share\` + long, `\\?\UNC\server\share\` + long},
		{"already extended", `\\?\C:\` + long, `\\?\C:\` + long},
		{"device path", `\\.\C:\` + long, `\\.\C:\` + long},
		{"relative, left to the caller", long, long},
		{"one under the limit", `C:\` + strings.Repeat("a", shortPath-4), `C:\` + strings.Repeat("a", shortPath-4)},
		{"at the limit", `C:\` + strings.Repeat("a", shortPath-3), `\\?\C:\` + strings.Repeat("a", shortPath-3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extendedPath(tt.in); got != tt.want {
				t.Errorf("extendedPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

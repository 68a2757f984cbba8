package cronspec

import "testing"

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"@every 15m", "0 3 * * *", "@daily", "CRON_TZ=Europe/Paris 0 3 * * *"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "x", "0 3 * *", "* * * * * *", "@every never", "@every -5m", "@every 0s", "@every 500ms", "0 3 31 2 *"} {
		if Check(bad) == nil {
			t.Errorf("Check(%q) = nil, want an error", bad)
		}
	}
}

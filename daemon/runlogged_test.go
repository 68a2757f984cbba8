package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// A job whose failure loses nothing (minor, as a fleet push's) is logged
// as a warning; any other failure as an error.
func TestRunLoggedLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{minor{errors.New("the database is down")}, `"level":"WARN"`},
		{errors.New("the cache is locked"), `"level":"ERROR"`},
	} {
		var buf bytes.Buffer
		runLogged(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), NewJob("x", "", func(context.Context) error { return tc.err }))
		if !strings.Contains(buf.String(), tc.want) || !strings.Contains(buf.String(), tc.err.Error()) {
			t.Errorf("%v logged as %s", tc.err, buf.String())
		}
	}
}

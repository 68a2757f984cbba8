// Package mcptest is the client side of the MCP tests: a client of the
// SDK, a tool call that fails the test on a protocol error, and the checks
// of a tool's answer. The server's own package and the CLI's tests (over
// stdio and HTTP) share it.
package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewClient returns an SDK client that names itself skillsync-test.
func NewClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "skillsync-test", Version: "v0"}, nil)
}

// Connect opens a session of a NewClient to srv over an in-memory
// transport, closed when the test ends.
func Connect(t testing.TB, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := NewClient().Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Call calls tool with args and, when the call succeeded and out is not
// nil, decodes the structured output into out. It fails the test on a
// protocol error or an output that does not decode, not on a tool error:
// the result says that.
func Call(t testing.TB, cs *sdk.ClientSession, tool string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if out != nil && !res.IsError {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, data, err)
		}
	}
	return res
}

// Text returns the text content of a result, its parts joined.
func Text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ToolError checks that res is a tool error whose message holds every
// part of want; it stops the test when res is a success.
func ToolError(t testing.TB, res *sdk.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error holding %q, got success: %s", want, Text(res))
	}
	for _, w := range want {
		if !strings.Contains(Text(res), w) {
			t.Errorf("tool error %q does not say %q", Text(res), w)
		}
	}
}

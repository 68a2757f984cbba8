package mcp

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// invalidParams is the answer to a request whose parameters are wrong (a
// resource that does not exist or leads out of its skill, an argument that
// is not a number). Its JSON-RPC code, -32602, tells a client that the
// request, not the server, was at fault.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

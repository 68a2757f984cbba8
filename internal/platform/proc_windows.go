package platform

import (
	"os/exec"
	"syscall"
)

// SetProcAttr: Windows runs cmd as the caller (asUser, uid and gid are
// ignored; the tests never ask for them there, as nobody runs them as
// root) and cannot tie a child's life to its parent's without a job
// object, which the tests do not need.
func SetProcAttr(cmd *exec.Cmd, asUser bool, uid, gid uint32, dieWith syscall.Signal) {
	cmd.SysProcAttr = &syscall.SysProcAttr{}
}

// DiesWithParent reports whether SetProcAttr's dieWith is honoured here.
const DiesWithParent = false

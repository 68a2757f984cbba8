package platform

import (
	"os/exec"
	"syscall"
)

// SetProcAttr makes cmd run as uid and gid when asUser is set, and, when
// dieWith is not nil, makes the kernel send it dieWith when the parent
// dies (Pdeathsig), so no child outlives a test binary killed by a
// timeout or a signal.
func SetProcAttr(cmd *exec.Cmd, asUser bool, uid, gid uint32, dieWith syscall.Signal) {
	attr := &syscall.SysProcAttr{}
	if asUser {
		attr.Credential = &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}
	}
	attr.Pdeathsig = dieWith
	cmd.SysProcAttr = attr
}

// DiesWithParent reports whether SetProcAttr's dieWith is honoured here.
const DiesWithParent = true

//go:build unix && !linux

package platform

import (
	"os/exec"
	"syscall"
)

// SetProcAttr makes cmd run as uid and gid when asUser is set. dieWith
// is not honoured: only Linux has Pdeathsig, so a child here can outlive
// a parent that is killed.
func SetProcAttr(cmd *exec.Cmd, asUser bool, uid, gid uint32, dieWith syscall.Signal) {
	attr := &syscall.SysProcAttr{}
	if asUser {
		attr.Credential = &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}
	}
	cmd.SysProcAttr = attr
}

// DiesWithParent reports whether SetProcAttr's dieWith is honoured here.
const DiesWithParent = false

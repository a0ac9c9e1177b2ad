package pglocal

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// checkReachable refuses dir, when this process is root, if the user the
// server runs as cannot reach it: PostgreSQL refuses to run as root, and a
// folder on the way that only root may enter (mktemp -d makes one, mode
// 0700) would make initdb fail with nothing but "permission denied". The
// folder's mode is the caller's to change, not this package's: the
// refusal says what to change. Folders still to be made are made
// reachable (mode 0755).
func checkReachable(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	cred, err := Unprivileged()
	if err != nil {
		return nil // newCluster says so
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// From the root down, so the folder named is the first in the way;
	// dir itself is handed to the server's user (Cluster.chown).
	var ancestors []string
	for p := abs; p != filepath.Dir(p); {
		p = filepath.Dir(p)
		ancestors = append(ancestors, p)
	}
	slices.Reverse(ancestors)
	groups := groupsOf(cred)
	for _, p := range ancestors {
		info, err := os.Stat(p)
		if err != nil {
			break // made later, reachable
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || canEnter(info.Mode(), st, cred.Uid, groups) {
			continue
		}
		return fmt.Errorf("%s (mode %04o, owner %s) cannot be entered by the user %s, which the local PostgreSQL runs as since it refuses to run as root: "+
			"let that user pass through it (chmod o+x %s: others may then open what they know the name of inside, not list it), or use a folder it can enter",
			p, info.Mode().Perm(), userName(st.Uid), userName(cred.Uid), p)
	}
	return nil
}

// canEnter reports whether a user of uid, in groups, may search a folder.
func canEnter(mode fs.FileMode, st *syscall.Stat_t, uid uint32, groups []uint32) bool {
	switch {
	case st.Uid == uid:
		return mode&0o100 != 0
	case slices.Contains(groups, st.Gid):
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}

// groupsOf is the groups of the user cred runs as: its own and the others
// it belongs to.
func groupsOf(cred *syscall.Credential) []uint32 {
	groups := []uint32{cred.Gid}
	u, err := user.LookupId(strconv.Itoa(int(cred.Uid)))
	if err != nil {
		return groups
	}
	ids, _ := u.GroupIds()
	for _, id := range ids {
		if n, err := strconv.ParseUint(id, 10, 32); err == nil {
			groups = append(groups, uint32(n))
		}
	}
	return groups
}

// userName is a user's name, or its number when it has none.
func userName(uid uint32) string {
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return u.Username
	}
	return strconv.Itoa(int(uid))
}

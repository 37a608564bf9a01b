//go:build unix

package embedpg

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// osUser is the OS account initdb and postgres run as when we are root.
type osUser struct {
	name   string
	uid    uint32
	gid    uint32
	groups []uint32 // supplementary groups, primary included
}

func (u *osUser) inGroup(gid uint32) bool {
	return gid == u.gid || slices.Contains(u.groups, gid)
}

// serverUser returns nil when the server can run as the current user, and the
// "postgres" account when the current user is root.
func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("embedpg: running as root, PostgreSQL refuses to run as root, "+
			"and there is no `postgres` OS user to run it as (%w); create one "+
			"(e.g. `useradd --system --user-group postgres`), run ledgerd as a non-root user, or set DATABASE_URL", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("embedpg: postgres user has a non-numeric uid/gid: %w", err)
	}
	if uid == 0 {
		return nil, errors.New("embedpg: the `postgres` OS user has uid 0; PostgreSQL refuses to run as root")
	}
	su := &osUser{name: u.Username, uid: uint32(uid), gid: uint32(gid)}
	gids, err := u.GroupIds()
	if err != nil {
		gids = []string{u.Gid} // supplementary groups are a nicety; the primary group is enough
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			su.groups = append(su.groups, uint32(n))
		}
	}
	return su, nil
}

// ensureTraversable makes sure u can search dir and every ancestor of it. Where
// a directory grants u search permission through no class, it adds only the
// other-execute bit (search without listing) and logs a warning. It fails for a
// directory whose owner or group class applies to u but lacks execute, since
// o+x would not help there.
func ensureTraversable(dir string, u *osUser, log *slog.Logger) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("embedpg: checking that %s can reach the data directory: %w", u.name, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("embedpg: no ownership information for %s", d)
		}
		perm := uint32(st.Mode) & 0o7777
		switch {
		case uint32(st.Uid) == u.uid:
			if perm&0o100 == 0 {
				return fmt.Errorf("embedpg: %s is owned by %s but not searchable by its owner (mode %#o); run chmod u+x on it", d, u.name, perm)
			}
		case u.inGroup(uint32(st.Gid)):
			if perm&0o010 == 0 {
				return fmt.Errorf("embedpg: %s denies search to its group, which %s is in (mode %#o); run chmod g+x on it", d, u.name, perm)
			}
		case perm&0o001 == 0:
			if err := os.Chmod(d, fs.FileMode(perm&0o777|0o001)|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
				return fmt.Errorf("embedpg: granting %s search permission on %s: %w", u.name, d, err)
			}
			log.Warn("embedpg: added other-execute permission (o+x) so the postgres user can reach the data directory",
				"dir", d, "old_mode", fmt.Sprintf("%#o", perm), "new_mode", fmt.Sprintf("%#o", perm|0o001), "user", u.name)
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// chownTree gives root and everything under it to u.
func chownTree(root string, u *osUser) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(u.uid), int(u.gid))
	})
}

// ownedBy reports whether path's owner is u.
func ownedBy(path string, u *osUser) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint32(st.Uid) == u.uid, nil
}

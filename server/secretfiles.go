package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// secretFile is the *_FILE variant of a setting that holds a secret: the
// file it names holds the value. A secret in the environment or on the
// command line shows in ps and /proc; a file (a mounted Kubernetes or
// Docker secret, say) does not, so the files are preferred.
type secretFile struct {
	env, flag string
	of        string // the env var of the setting it gives a value
}

var secretFiles = []secretFile{
	{"LEDGER_KEK_FILE", "kek-file", "LEDGER_KEK"},
	{"LEDGER_KEK_PREVIOUS_FILE", "kek-previous-file", "LEDGER_KEK_PREVIOUS"},
	{"LEDGER_ADMIN_TOKEN_FILE", "admin-token-file", "LEDGER_ADMIN_TOKEN"},
	{"LEDGER_SIGNING_SECRETS_FILE", "signing-secrets-file", "LEDGER_SIGNING_SECRETS"},
	{"SERVICE_API_KEY_SECRET_FILE", "service-api-key-secret-file", "SERVICE_API_KEY_SECRET"},
}

// maxSecretFile bounds what is read from a secret file: a secret is short,
// and a path to something else (a log, a device) must not be slurped.
const maxSecretFile = 64 << 10

// readableSetting accepts secret files that others may read, with a
// warning: for Docker Compose, whose file secrets keep the host file's
// mode and cannot be given to the container's user alone.
const readableSetting = "LEDGER_SECRET_FILES_READABLE"

// checkMode refuses a secret file whose permissions let others at it, as
// ssh does with a private key: writable by its group or by others (anyone
// could swap the KEK or the admin token), or readable by others unless
// readable is set (then it returns a warning).
func checkMode(name, path string, mode fs.FileMode, readable bool) (warning string, err error) {
	perm := mode.Perm()
	switch {
	case perm&0o022 != 0:
		return "", fmt.Errorf("%s: %s is writable by its group or by others (mode %04o): chmod go-w %s (or 0400)", name, path, perm, path)
	case perm&0o004 != 0 && !readable:
		return "", fmt.Errorf("%s: %s is readable by others (mode %04o): chmod 0400 %s, or 0440 with ledgerd's group (%s=true accepts it, with a warning)",
			name, path, perm, path, readableSetting)
	case perm&0o004 != 0:
		return fmt.Sprintf("%s: %s is readable by others (mode %04o), accepted because %s=true", name, path, perm, readableSetting), nil
	}
	return "", nil
}

// readSecretFile reads the value of a *_FILE setting: the file's content
// with trailing line breaks trimmed, after checkMode (readable is
// LEDGER_SECRET_FILES_READABLE). name says where the path came from
// ("LEDGER_KEK_FILE" or "LEDGER_KEK_FILE (--kek-file)"); errors name it and
// the path, never the content.
func readSecretFile(name, path string, readable bool) (value, warning string, err error) {
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil && fi.IsDir() {
			err = errors.New("is a directory")
		} else if err == nil {
			if warning, err = checkMode(name, path, fi.Mode(), readable); err != nil {
				return "", "", err
			}
		}
	}
	var b []byte
	if err == nil {
		b, err = io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", "", fmt.Errorf("%s: cannot read %s: %v", name, path, err)
	}
	defer clear(b)
	if len(b) > maxSecretFile {
		return "", "", fmt.Errorf("%s: %s is larger than %d bytes: not a secret file", name, path, maxSecretFile)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", "", fmt.Errorf("%s: %s is empty", name, path)
	}
	return v, warning, nil
}

// stringValue is a flag.Value holding the text of a flag; isBool lets a
// flag be given without a value (--metrics-public means true).
type stringValue struct {
	v      string
	isBool bool
}

func (s *stringValue) String() string {
	if s == nil {
		return ""
	}
	return s.v
}

func (s *stringValue) Set(v string) error { s.v = v; return nil }

func (s *stringValue) IsBoolFlag() bool { return s != nil && s.isBool }

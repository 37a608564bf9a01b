package keyring

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/datadir"
)

// File names under LEDGER_DATA_DIR (embedded mode).
const (
	// KEKFile holds the generated KEK when LEDGER_KEK is unset.
	KEKFile = "kek"
	// SecretFile holds the development signing secret Bootstrap generates,
	// for servicesim and loadtest on the same machine.
	SecretFile = "signing-secret"
)

// LoadOrCreateKEK returns the KEK kept, as Base64 of 32 bytes, in the file at
// path. When the file does not exist it creates one with 32 bytes from
// crypto/rand (file mode 0600; missing parent directories 0700). Creation is
// atomic: the key is written to a temporary file that is then linked into
// place, so a crash leaves no partial file and two processes racing agree on
// one key. An existing file readable or writable by group or others is
// refused. Errors never contain the key.
func LoadOrCreateKEK(path string) ([]byte, error) {
	kek, err := readKEK(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return kek, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("keyring: KEK directory: %w", err)
	}
	kek = make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		return nil, fmt.Errorf("keyring: random KEK: %w", err)
	}
	content := []byte(base64.StdEncoding.EncodeToString(kek) + "\n")
	defer clear(content)
	switch err := createExclusive(path, content); {
	case errors.Is(err, fs.ErrExist):
		// Another process created it first: use its key.
		clear(kek)
		return readKEK(path)
	case err != nil:
		clear(kek)
		return nil, fmt.Errorf("keyring: create KEK file: %w", err)
	}
	return kek, nil
}

func readKEK(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("keyring: KEK file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("keyring: KEK file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("keyring: KEK file %s has mode %#o: it must not be accessible to group or others (chmod 600)", path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: read KEK file: %w", err)
	}
	defer clear(b)
	kek, err := envelope.ParseSecret(string(b))
	if err != nil {
		return nil, fmt.Errorf("keyring: KEK file %s does not hold the Base64 of %d bytes", path, KEKSize)
	}
	return kek, nil
}

// createExclusive writes content to a new file at path, mode 0600, and
// fails with fs.ErrExist when path exists. The content is complete and
// synced before the name appears.
func createExclusive(path string, content []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), content)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return err
	}
	return datadir.SyncDir(filepath.Dir(path))
}

// replaceFile writes content to path, mode 0600, replacing any file there
// atomically (temporary file, fsync, rename).
func replaceFile(path string, content []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), content)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return datadir.SyncDir(filepath.Dir(path))
}

// writeTemp writes content to a new 0600 file in dir and returns its name.
func writeTemp(dir string, content []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-keyring-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = f.Chmod(0o600) // CreateTemp uses 0600 already; make it explicit
	if err == nil {
		_, err = f.Write(content)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

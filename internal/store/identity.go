package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
)

const (
	// identityKeyName holds the store's identity key. The leading dot keeps
	// it apart from origin ids, which start with a letter or digit.
	identityKeyName = ".identity-key"
	// IdentityKeySize is the length of the key in bytes.
	IdentityKeySize = 32
)

// An identity is the store's identity key file, in the store's root
// directory. Store embeds it for IdentityKey.
type identity struct {
	root *os.Root // the store's root, which holds the key file
	path string   // the root's path, for messages
	log  *slog.Logger
}

// IdentityKey returns the store's identity key: 32 random bytes kept in
// <root>/.identity-key (mode 0600), created on first use. Package config
// salts and keys each origin's fingerprint with it (config.Origin.ID), so
// that the origin directories' names, which also appear in status.json,
// say nothing testable about the env values, headers, URL or arguments
// behind them to whoever cannot read this file.
//
// The key is per store, not secret from the user who owns it. A key file
// that is not a regular file of exactly 32 bytes, owned by this user and
// unreadable by others, is replaced (logged at Warn): every origin then
// gets a new id and fetches afresh, which costs bytes but never serves a
// wrong one. Two processes creating the key at once agree on one.
func (k *identity) IdentityKey() ([]byte, error) {
	for range 3 {
		key, err := k.readKey()
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("identity key in %s: %w", k.path, err)
		}
		if err := k.createKey(); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create identity key in %s: %w", k.path, err)
		}
	}
	return nil, fmt.Errorf("identity key in %s: replaced concurrently three times", k.path)
}

// readKey returns the key, or an error wrapping fs.ErrNotExist when
// there is none (any unusable one having been removed).
func (k *identity) readKey() ([]byte, error) {
	fi, err := k.root.Lstat(identityKeyName)
	if err != nil {
		return nil, err
	}
	reason := ""
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		reason = fmt.Sprintf("not a regular file (mode %v)", fi.Mode())
	case fi.Size() != IdentityKeySize:
		reason = fmt.Sprintf("%d bytes, not %d", fi.Size(), IdentityKeySize)
	case fi.Mode().Perm()&0o077 != 0:
		reason = fmt.Sprintf("mode %v lets other users read or write it", fi.Mode().Perm())
	case st != nil && int(st.Uid) != os.Geteuid():
		reason = fmt.Sprintf("owned by uid %d, not by the user running skillfs", st.Uid)
	}
	var b []byte
	if reason == "" {
		var err error
		b, reason, err = readRegular(k.root, identityKeyName, fi, IdentityKeySize)
		if err != nil {
			return nil, err
		}
		if reason == "" && len(b) != IdentityKeySize {
			reason = fmt.Sprintf("%d bytes, not %d", len(b), IdentityKeySize)
		}
	}
	if reason == "" {
		return b, nil
	}
	k.log.Warn("replacing the store's identity key; every origin's cache starts afresh",
		"op", "open", "path", k.path+"/"+identityKeyName, "err", reason)
	if fi.IsDir() {
		makeWritable(k.root, identityKeyName)
		err = k.root.RemoveAll(identityKeyName)
	} else {
		err = k.root.Remove(identityKeyName)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove unusable key (%s): %w", reason, err)
	}
	return nil, fmt.Errorf("unusable key removed (%s): %w", reason, fs.ErrNotExist)
}

// createKey writes a new key under a temporary name and links it
// into place, so that a reader never sees a partial key and a concurrent
// creator's key wins or loses whole (fs.ErrExist).
func (k *identity) createKey() error {
	key := make([]byte, IdentityKeySize)
	rand.Read(key)
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := identityKeyName + ".new-" + hex.EncodeToString(rnd[:])
	f, err := k.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer k.root.Remove(tmp)
	_, werr := f.Write(key)
	if werr == nil {
		werr = f.Chmod(0o600)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if err := k.root.Link(tmp, identityKeyName); err != nil {
		return err
	}
	return syncDir(k.root, ".")
}

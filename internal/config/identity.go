package config

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// idIterations is the PBKDF2 work per fingerprint: some tens of
// milliseconds per origin, once per process (IDs are memoized), and as
// much per guess for anyone testing candidate secrets against an id.
const idIterations = 1 << 16

// ID is the origin's store identity: Label + "-" + 16 hex characters of a
// fingerprint of everything that decides which server the label reaches —
// the kind; for stdio the command, args, working directory and every env
// variable the file sets; for http and sse the URL (userinfo and query
// included, fragment left out, scheme and host lower-cased) and every
// header (names case-folded). A change to any of them, a rotated token
// included, gives a new ID, so bytes and a saved catalog stored for one
// server are never shown under a label since re-pointed at another, by a
// new command line, an env variable or a header alike. Rotating a
// credential therefore costs one fresh fetch of what is read again.
//
// pass_env (Origin.PassEnv) is not covered: it names variables whose values
// come from skillfs's own environment, like PATH and HOME, which no ID has
// ever covered. Their names alone would bind nothing (the value can change
// under the same name) and adding one, say SSH_AUTH_SOCK, would only cost
// the server its cache and its approvals.
//
// Env values, headers, args and URLs carry secrets, and the ID is on disk
// (the store's directory name) and in status.json. So the fingerprint is
// PBKDF2-HMAC-SHA256 (2^16 iterations) over them, salted with the store's
// random identity key (SetIdentityKey; store.IdentityKey keeps it 0600 in
// the cache directory): without the key an ID tells nothing about its
// inputs, and with it each guess at a short token still costs the
// iterations. An Origin whose key was never set uses a key drawn once per
// process: its IDs are safe but do not survive a restart.
func (o Origin) ID() string {
	key := o.idKey
	if len(key) == 0 {
		key = processKey()
	}
	return o.Label + "-" + fingerprint(key, o.identityInput())
}

// SetIdentityKey keys every origin's ID with key (the store's identity
// key) and computes the IDs, in parallel, so that later calls are cheap.
func (c *Config) SetIdentityKey(key []byte) {
	key = append([]byte(nil), key...)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range c.Origins {
		c.Origins[i].idKey = key
		wg.Add(1)
		sem <- struct{}{}
		go func(o Origin) {
			defer func() { <-sem; wg.Done() }()
			o.ID()
		}(c.Origins[i])
	}
	wg.Wait()
}

// identityInput encodes the fields ID covers, each length-prefixed so that
// no two configurations encode alike.
func (o Origin) identityInput() []byte {
	var b []byte
	field := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	sorted := func(m map[string]string, fold bool) {
		keys := make([]string, 0, len(m))
		vals := make(map[string]string, len(m))
		for k, v := range m {
			if fold {
				k = strings.ToLower(k)
			}
			keys = append(keys, k)
			vals[k] = v
		}
		sort.Strings(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			field(k)
			field(vals[k])
		}
	}
	field("skillfs origin v2")
	field(string(o.Kind))
	switch o.Kind {
	case Stdio:
		field(o.Command)
		b = binary.AppendUvarint(b, uint64(len(o.Args)))
		for _, a := range o.Args {
			field(a)
		}
		field(o.Cwd)
		sorted(o.Env, false)
	default:
		field(canonicalURL(o.URL))
		sorted(o.Headers, true)
	}
	return b
}

func canonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Fragment, u.RawFragment = "", ""
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	return u.String()
}

var (
	processKeyOnce sync.Once
	processKeyVal  []byte
)

func processKey() []byte {
	processKeyOnce.Do(func() {
		processKeyVal = make([]byte, 32)
		rand.Read(processKeyVal)
	})
	return processKeyVal
}

// ids memoizes fingerprints by a hash of key and input: the slow hash runs
// once per origin and process, however often ID is called.
var ids sync.Map // [32]byte → string

func fingerprint(key, input []byte) string {
	h := sha256.New()
	h.Write(binary.AppendUvarint(nil, uint64(len(key))))
	h.Write(key)
	h.Write(input)
	var memo [32]byte
	h.Sum(memo[:0])
	if id, ok := ids.Load(memo); ok {
		return id.(string)
	}
	salt := append([]byte("skillfs origin id\x00"), key...)
	sum, err := pbkdf2.Key(sha256.New, string(input), salt, idIterations, 32)
	if err != nil {
		// Only FIPS 140-only mode refuses these parameters; fall back to
		// a keyed hash rather than fail.
		m := sha256.Sum256(append(salt, input...))
		sum = m[:]
	}
	id := hex.EncodeToString(sum)[:16]
	ids.Store(memo, id)
	return id
}

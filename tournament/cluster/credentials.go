package cluster

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"golang.org/x/crypto/bcrypt"

	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

// Credentials are the workers' own NATS users (issue 36, item 4), issued
// and revoked by the server's admin. A worker's user may publish only on its
// own subjects (taikai.game.<id>.<kind>.<name>, taikai.worker.<name>), read
// only its own inbox, take games from the queue and put logs in its own
// bucket (WorkerLogBucket), not read or touch another's; it cannot
// queue games, answer for another worker or manage the streams. Once one
// credential exists (or from the start, when the server has a join token,
// JoinTokenEnv), the shared token (TAIKAI_NATS_TOKEN) and anonymous clients
// are refused: it is the server's alone. The secrets are kept as bcrypt
// hashes in a file of the server's data directory.
type Credentials struct {
	path  string
	join  string // the join token, "" when workers cannot enroll
	mu    sync.Mutex
	users map[string]string // name → bcrypt hash of the secret
	apply func(map[string]string) error
}

// SecretEnv holds a worker's own secret (never a flag: it would show in ps);
// the worker's --name is its user.
const SecretEnv = "TAIKAI_WORKER_SECRET"

// serverUser is the taikai server's own NATS user on the embedded server.
const serverUser = "taikai"

// anonymousUser is who a client without credentials is on an open embedded
// server; no worker can have its name (a worker's name has no space).
const anonymousUser = "anonymous worker"

// OpenCredentials reads the credentials kept at path (none if it does not
// exist) and gives them to the embedded server e.
func OpenCredentials(path string, e *Embedded) (*Credentials, error) {
	c := &Credentials{path: path, join: e.join, users: map[string]string{}, apply: e.setWorkers}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, &c.users); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := c.apply(c.copy()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Credentials) copy() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.users)
}

// save writes the file and gives the users to the NATS server; the caller
// holds c.mu.
func (c *Credentials) save() error {
	data, err := json.MarshalIndent(c.users, "", "  ")
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return err
	}
	return c.apply(maps.Clone(c.users))
}

// Issue makes a new secret for the worker name (replacing its old one, whose
// connections are closed) and returns it; it is shown this once.
func (c *Credentials) Issue(name string) (string, error) {
	return c.issue(name, true)
}

// Enroll is Issue asked by a worker itself with the join token: only for a
// name without credentials, so that the join token cannot take over a
// worker's name (and the claims it holds).
func (c *Credentials) Enroll(join, name string) (string, error) {
	if c.join == "" {
		return "", fleet.ErrEnrollOff
	}
	if subtle.ConstantTimeCompare([]byte(join), []byte(c.join)) != 1 {
		return "", fleet.ErrJoinToken
	}
	return c.issue(name, false)
}

func (c *Credentials) issue(name string, replace bool) (string, error) {
	if !fleet.WorkerNames.MatchString(name) || name == serverUser {
		return "", fmt.Errorf("worker name %q: want 1 to 64 letters, digits, - or _ (not %q)", name, serverUser)
	}
	b := make([]byte, 32)
	rand.Read(b)
	secret := hex.EncodeToString(b)
	// A random 256-bit secret needs no slow hash; bcrypt is the one hash
	// nats-server checks passwords against.
	hash, err := bcrypt.GenerateFromPassword([]byte(secret), bcrypt.MinCost)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.users[name]
	if had && !replace {
		return "", fleet.ErrNameIsUsed
	}
	c.users[name] = string(hash)
	if err := c.save(); err != nil {
		if had {
			c.users[name] = old
		} else {
			delete(c.users, name)
		}
		return "", err
	}
	return secret, nil
}

// Revoke deletes a worker's credentials: its connections are closed and it
// cannot connect again; false if it had none.
func (c *Credentials) Revoke(name string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.users[name]
	if !ok {
		return false, nil
	}
	delete(c.users, name)
	if err := c.save(); err != nil {
		c.users[name] = old
		return false, err
	}
	return true, nil
}

// Names lists the workers with credentials.
func (c *Credentials) Names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.users))
	for n := range c.users {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// enforced says whether only workers with credentials may play, and whether
// name is one of them.
func (c *Credentials) allows(name string) (enforced, ok bool) {
	if c == nil {
		return false, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok = c.users[name]
	return len(c.users) > 0, ok
}

// inboxPrefix is where a worker's replies come: its own.
func inboxPrefix(name string) string { return "_INBOX_" + name }

// ackExpires is how long a worker may still answer (acknowledge) a message
// delivered to it: longer than any game (two total clocks of at most 7 days).
const ackExpires = 30 * 24 * time.Hour

// workerPermissions are what a worker's user may publish and subscribe to.
//
// A worker acknowledges only the queue messages delivered to it: no
// $JS.ACK.<stream>.<consumer>.> (whose subjects are guessable sequence
// numbers: a worker could have handed another's game back to the queue, or
// ended it, and claimed it), but NATS's response permission, which lets a
// client publish to the reply subject of each message it received (for
// ackExpires). Such a permission belongs to a connection: after a
// reconnect a worker can no longer acknowledge what it took before, and a
// game it plays then goes back to the queue once the worker timeout passes,
// as when the worker goes silent. Its logs go to its own bucket, which the
// server made (with its bounds): it may put, read and delete objects there,
// not create, purge or delete the bucket (nats.go's object store purges only
// the chunks of an object put again, and ignores a refusal; the bucket's TTL
// removes them), and nothing of another worker's bucket or of LogBucket.
func workerPermissions(name string) *server.Permissions {
	eng, logs := "OBJ_"+EngineBucket, "OBJ_"+WorkerLogBucket(name)
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			gamePrefix + "*.*." + name, workerPrefix + name,
			"$JS.API.INFO",
			"$JS.API.CONSUMER.INFO." + Stream + "." + Consumer,
			"$JS.API.CONSUMER.MSG.NEXT." + Stream + "." + Consumer,
			"$JS.API.STREAM.INFO." + eng, "$JS.API.STREAM.INFO." + logs,
			"$JS.API.DIRECT.GET." + eng + ".>", "$JS.API.STREAM.MSG.GET." + eng,
			"$JS.API.DIRECT.GET." + logs + ".>", "$JS.API.STREAM.MSG.GET." + logs,
			"$JS.API.CONSUMER.CREATE." + eng, "$JS.API.CONSUMER.CREATE." + eng + ".>",
			"$JS.API.CONSUMER.DELETE." + eng + ".>",
			"$JS.FC." + eng + ".>",
			"$O." + WorkerLogBucket(name) + ".>",
		}},
		// Unlimited answers per message (a game's progress acks, then its
		// ack), until ackExpires.
		Response:  &server.ResponsePermission{MaxMsgs: -1, Expires: ackExpires},
		Subscribe: &server.SubjectPermission{Allow: []string{inboxPrefix(name) + ".>", cancelPrefix + "*"}},
	}
}

// WorkerAuth are the connection options of a worker with its own secret.
func WorkerAuth(name, secret string) []nats.Option {
	return []nats.Option{nats.UserInfo(name, secret), nats.CustomInboxPrefix(inboxPrefix(name))}
}

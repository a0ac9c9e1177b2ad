package topology

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// The internal token the board's services call gRPC with (the driver
// intake, job search), in a file each under Dir: the current one, and
// during a rotation the one being retired, which the replicas accept too
// (JOBBOARD_INTERNAL_TOKEN, JOBBOARD_INTERNAL_TOKEN_PREVIOUS).
const (
	internalTokenFile         = "internal-token"
	previousInternalTokenFile = "internal-token-previous"
)

// InternalToken is the topology's current internal token; empty before Up
// made one.
func (t *Topology) InternalToken() string { return t.readToken(internalTokenFile) }

func (t *Topology) readToken(file string) string {
	b, err := os.ReadFile(t.path(file))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// tokenEnv is the replicas' internal token settings. The previous token
// is left out unless it differs from a current one (which the service
// requires), so a rotation cut short between its two files still leaves
// replicas that start.
func (t *Topology) tokenEnv() []string {
	current := t.InternalToken()
	if current == "" {
		return nil
	}
	env := []string{"JOBBOARD_INTERNAL_TOKEN=" + current}
	if prev := t.readToken(previousInternalTokenFile); prev != "" && prev != current {
		env = append(env, "JOBBOARD_INTERNAL_TOKEN_PREVIOUS="+prev)
	}
	return env
}

// writeNewToken makes a random token and writes it to file, readable by
// root alone.
func (t *Topology) writeNewToken(file string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(b)
	return tok, writeFileAtomic(t.path(file), tok)
}

// writeFileAtomic writes a token to file through a temporary file and a
// rename, so a reader finds the old token or the new one, never part of
// one; readable by root alone.
func writeFileAtomic(file, token string) error {
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// TokenRotated is what a step of the internal token's rotation did.
type TokenRotated struct {
	Step     string
	Replaced []Replaced
	Took     time.Duration
}

func (r TokenRotated) String() string {
	return fmt.Sprintf("%s; %d replicas replaced, one at a time, in %.1f s", r.Step, len(r.Replaced), r.Took.Seconds())
}

// RotateInternalToken starts a rotation of the internal token: a new one
// becomes current, the old one stays accepted as the previous one, and
// the replicas are replaced one at a time to take both. The board's
// services then move to the new token (.topology/internal-token), and
// RetireInternalToken ends the rotation. make topology-rotate-internal-token
// runs it.
func (t *Topology) RotateInternalToken(ctx context.Context) (TokenRotated, error) {
	old := t.InternalToken()
	if old == "" {
		return TokenRotated{}, errors.New("the topology has no internal token: make topology-up makes one")
	}
	if t.readToken(previousInternalTokenFile) != "" {
		return TokenRotated{}, errors.New("a rotation is under way: make topology-retire-internal-token ends it first")
	}
	if err := writeFileAtomic(t.path(previousInternalTokenFile), old); err != nil {
		return TokenRotated{}, err
	}
	if _, err := t.writeNewToken(internalTokenFile); err != nil {
		return TokenRotated{}, err
	}
	return t.rotated(ctx, "new internal token in "+t.path(internalTokenFile)+", the old one accepted until retired")
}

// RetireInternalToken ends a rotation: the previous token is no longer
// accepted once the replicas are replaced. make
// topology-retire-internal-token runs it, once every caller has the new
// token.
//
// The replicas are replaced even when the previous token is gone already,
// so that a retirement cut short (a replica that failed to start) is
// finished by running it again.
func (t *Topology) RetireInternalToken(ctx context.Context) (TokenRotated, error) {
	if err := os.Remove(t.path(previousInternalTokenFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return TokenRotated{}, err
	}
	return t.rotated(ctx, "previous internal token retired")
}

// rotated replaces the replicas so they take the tokens as they are now.
func (t *Topology) rotated(ctx context.Context, step string) (TokenRotated, error) {
	start := time.Now()
	replaced, err := t.ReplaceAll(ctx)
	return TokenRotated{Step: step, Replaced: replaced, Took: time.Since(start)}, err
}

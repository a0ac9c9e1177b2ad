package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runCommandStatus runs the binary and returns its stdout, stderr and exit
// status, for commands expected to fail.
func runCommandStatus(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(jobboardBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("jobboard %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// createKey adds an API key to account and returns it.
func createKey(t *testing.T, env []string, account int64) string {
	t.Helper()
	var added struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal([]byte(runCommand(t, env, "keys", "create", "--account", fmt.Sprint(account))), &added); err != nil {
		t.Fatal(err)
	}
	return added.APIKey
}

type listedKey struct {
	ID        int64   `json:"id"`
	Prefix    string  `json:"prefix"`
	RevokedAt *string `json:"revokedAt"`
}

func listKeys(t *testing.T, env []string, account int64) []listedKey {
	t.Helper()
	var keys []listedKey
	for _, line := range strings.Split(strings.TrimSpace(runCommand(t, env, "keys", "list", "--account", fmt.Sprint(account))), "\n") {
		var k listedKey
		if err := json.Unmarshal([]byte(line), &k); err != nil {
			t.Fatalf("keys list printed %q: %v", line, err)
		}
		keys = append(keys, k)
	}
	return keys
}

// TestKeysRevokeScopedToAccount: keys revoke takes the whole key or a key
// id of one account; another account's key id revokes nothing, a prefix is
// refused with the forms that work, and a revocation still waits for the
// running server to confirm.
func TestKeysRevokeScopedToAccount(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Alpha")
	b := createAccount(t, env, "Bravo")
	addedKey := createKey(t, env, b.ID)
	keysB := listKeys(t, env, b.ID)
	if len(keysB) != 2 || keysB[0].Prefix != b.APIKey[:14] || keysB[1].Prefix != addedKey[:14] || keysB[0].RevokedAt != nil {
		t.Fatalf("keys list of B: %+v", keysB)
	}
	svc := startService(t, env)

	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"B's key id with account A", []string{"--account", fmt.Sprint(a.ID), fmt.Sprint(keysB[0].ID)}, 1,
			[]string{fmt.Sprintf("account %d has no active key with id %d; nothing revoked", a.ID, keysB[0].ID)}},
		{"the old prefix form", []string{b.APIKey[:14]}, 2,
			[]string{"prefixes are no longer accepted", "keys revoke KEY", "keys revoke --account ID KEY_ID"}},
		{"a key id without its account", []string{fmt.Sprint(keysB[0].ID)}, 2, []string{"needs --account"}},
		{"a whole key with --account", []string{"--account", fmt.Sprint(b.ID), b.APIKey}, 2, []string{"must be a key id"}},
		{"a whole key never created", []string{"jb_live_" + strings.Repeat("0", 43)}, 1, []string{"no active key is that key (already revoked, or never created); nothing revoked"}},
		{"a negative account", []string{"--account", "-3", "1"}, 2, []string{`invalid value "-3" for flag -account: not an account id`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCommandStatus(t, env, append([]string{"keys", "revoke"}, tt.args...)...)
			if code != tt.code || out != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing printed", code, out, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not say %q", errOut, w)
				}
			}
		})
	}
	for _, key := range []string{a.APIKey, b.APIKey, addedKey} {
		if code, _, _ := svc.request("basic", key, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Fatalf("after the refused revocations a key got %d, want 200", code)
		}
	}

	// By id within its account, then by the whole key: each revokes that
	// key alone, once the running server confirmed it forgot it.
	for _, tt := range []struct {
		args    []string
		key     string
		id      int64
		remains string
	}{
		{[]string{"--account", fmt.Sprint(b.ID), fmt.Sprint(keysB[1].ID)}, addedKey, keysB[1].ID, b.APIKey},
		{[]string{b.APIKey}, b.APIKey, keysB[0].ID, a.APIKey},
	} {
		out := runCommand(t, env, append([]string{"keys", "revoke"}, tt.args...)...)
		want := fmt.Sprintf(`{"id":%d,"accountId":%d,"prefix":%q,"revoked":1,"servers":1,"confirmed":1}`, tt.id, b.ID, tt.key[:14])
		if strings.TrimSpace(out) != want {
			t.Errorf("keys revoke %v printed %s, want %s", tt.args, out, want)
		}
		if code, _, _ := svc.request("basic", tt.key, "GET", "/api/v2.0/jobs.json", ""); code != 401 {
			t.Errorf("the revoked key got %d, want 401", code)
		}
		if code, _, _ := svc.request("basic", tt.remains, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
			t.Errorf("a key not revoked got %d, want 200", code)
		}
	}
	if _, errOut, code := runCommandStatus(t, env, "keys", "revoke", b.APIKey); code != 1 || !strings.Contains(errOut, "nothing revoked") {
		t.Errorf("revoking a revoked key: exit %d, %q", code, errOut)
	}
	if keys := listKeys(t, env, b.ID); keys[0].RevokedAt == nil || keys[1].RevokedAt == nil {
		t.Errorf("keys list after revoking both: %+v", keys)
	}
}

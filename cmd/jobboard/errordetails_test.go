package main

import (
	"bytes"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestGrpcurlShowsErrorDetails: grpcurl -v, resolving the detail types
// through the server's reflection, prints the field violations of an
// InvalidArgument (a filter, the x-account-id of an internal call) and the
// QuotaFailure of a message over its method's size limit.
func TestGrpcurlShowsErrorDetails(t *testing.T) {
	grpcurl := grpcurlBinary(t)
	env := migratedEnv(t)
	a := createAccount(t, env, "Details Freight")
	svc := startService(t, env)
	// call runs grpcurl, which must fail with status code (its exit status
	// is 64 plus the code), and returns what it printed.
	call := func(code int, stdin string, args ...string) string {
		t.Helper()
		args = append([]string{"-v", "-plaintext"}, args...)
		cmd := exec.Command(grpcurl, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		var exit *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 64+code {
			t.Fatalf("grpcurl %q: %v, want exit status %d\n%s", args, err, 64+code, out.String())
		}
		return out.String()
	}
	key := "authorization: Bearer " + a.APIKey
	for _, tt := range []struct {
		name string
		out  string
		want []string
	}{
		{"a filter", call(3, "", "-H", key, "-d", `{"state": "ZZ"}`, svc.grpcAddr, "jobboard.v2.DriverService/ListDrivers"), []string{
			`Code: InvalidArgument`,
			`Message: state: "ZZ" is not valid; allowed: the two-letter code of a US state or DC`,
			`"@type": "type.googleapis.com/google.rpc.BadRequest"`,
			`"field": "state"`,
			`"description": "\"ZZ\" is not valid; allowed: the two-letter code of a US state or DC"`,
		}},
		{"an x-account-id", call(3, "", "-H", "authorization: Bearer "+internalToken, "-H", "x-account-id: abc", "-d", `{}`,
			svc.grpcAddr, "jobboard.v2.DriverService/ListDrivers"), []string{
			`"@type": "type.googleapis.com/google.rpc.BadRequest"`,
			`"field": "x-account-id"`,
			`"description": "\"abc\" is not an account id (a positive integer)"`,
		}},
		{"a message over 1 MiB", call(8, `{"email": "`+strings.Repeat("e", 3<<19)+`"}`, "-H", key, "-d", "@",
			svc.grpcAddr, "jobboard.v2.DriverService/ListDrivers"), []string{
			`Code: ResourceExhausted`,
			`Message: ListDrivers takes at most 1 MiB (1,048,576 bytes); this message is 1,572,868 bytes`,
			`"@type": "type.googleapis.com/google.rpc.QuotaFailure"`,
			`"subject": "/jobboard.v2.DriverService/ListDrivers"`,
		}},
	} {
		for _, w := range tt.want {
			if !strings.Contains(tt.out, w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, tt.out)
			}
		}
		// Details that grpcurl cannot resolve print as raw bytes.
		if regexp.MustCompile(`"@value"|could not resolve`).MatchString(tt.out) {
			t.Errorf("%s: a detail grpcurl could not resolve:\n%s", tt.name, tt.out)
		}
	}
}

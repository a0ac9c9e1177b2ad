package main

import (
	"flag"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// The secrets a command knows (the internal token, the password inside
// DATABASE_URL) are never printed: help shows built-in defaults, and every
// error and log line passes through redact on its way out, in case a
// library quoted a setting back.

// redacted stands in for a secret.
const redacted = "xxxxx"

// minSecretLen is the shortest value replaced wherever it appears: a
// shorter one would blot out ordinary text, and the patterns below still
// catch it in a URL or a password=... setting.
const minSecretLen = 6

var secrets struct {
	sync.Mutex
	values []string
}

// noteSecret makes redact hide v from now on.
func noteSecret(v string) {
	if len(v) < minSecretLen {
		return
	}
	secrets.Lock()
	defer secrets.Unlock()
	for _, s := range secrets.values {
		if s == v {
			return
		}
	}
	secrets.values = append(secrets.values, v)
}

// noteSecrets notes the secrets among fs's parsed settings: the internal
// token and the passwords of the database URLs, as typed and decoded.
func noteSecrets(fs *flag.FlagSet) {
	if f := fs.Lookup("internal-token"); f != nil {
		noteSecret(f.Value.String())
	}
	for _, name := range databaseURLFlags {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if u, err := url.Parse(f.Value.String()); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok {
				noteSecret(p)
				noteSecret(url.PathEscape(p))
				noteSecret(url.QueryEscape(p))
			}
		}
	}
}

var (
	// userinfoPassword is the password of a URL: scheme://user:PASSWORD@.
	// It runs to the authority's last @, as a password may hold an @; a
	// URL whose authority has no @ (host:port/path@x) is left alone.
	userinfoPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s/?#]*@`)
	// keywordPassword is password=... in a key=value connection string.
	keywordPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)
)

// redact hides in s every secret noted and every password of a URL or a
// key=value connection string.
func redact(s string) string {
	secrets.Lock()
	for _, v := range secrets.values {
		s = strings.ReplaceAll(s, v, redacted)
	}
	secrets.Unlock()
	if strings.Contains(s, "://") {
		s = userinfoPassword.ReplaceAllString(s, "${1}"+redacted+"@")
	}
	if strings.Contains(strings.ToLower(s), "password") {
		s = keywordPassword.ReplaceAllString(s, "${1}"+redacted)
	}
	return s
}

// redactAttr is the log handler's ReplaceAttr: it redacts the message,
// every string and the text of every error.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact(a.Value.String()))
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, redact(err.Error()))
		}
	}
	return a
}

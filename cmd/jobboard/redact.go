package main

import (
	"flag"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// secrets are the values noted. Every string of every log line is read
// against them, so reading takes no lock: a note replaces the list.
var secrets struct {
	sync.Mutex // held by a note
	values     atomic.Pointer[[]string]
}

// noteSecret makes redact hide v from now on.
func noteSecret(v string) {
	if len(v) < minSecretLen {
		return
	}
	secrets.Lock()
	defer secrets.Unlock()
	var noted []string
	if p := secrets.values.Load(); p != nil {
		noted = *p
	}
	if slices.Contains(noted, v) {
		return
	}
	next := append(slices.Clip(noted), v)
	secrets.values.Store(&next)
}

// noteSecrets notes the secrets among fs's parsed settings: the internal
// token and the passwords of the database URLs, as typed and decoded.
func noteSecrets(fs *flag.FlagSet) {
	for _, name := range []string{"internal-token", "internal-token-previous"} {
		if f := fs.Lookup(name); f != nil {
			noteSecret(f.Value.String())
		}
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
	if p := secrets.values.Load(); p != nil {
		for _, v := range *p {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	if strings.Contains(s, "://") {
		s = userinfoPassword.ReplaceAllString(s, "${1}"+redacted+"@")
	}
	if containsFold(s, "password") {
		s = keywordPassword.ReplaceAllString(s, "${1}"+redacted)
	}
	return s
}

// containsFold reports whether s holds word, a lower-case ASCII word, in
// any case. Unlike lowering s first it allocates nothing, and it compares
// only where s has word's first letter, in either case (|0x20 lowers an
// ASCII letter): four times as fast as lowering on an access line's texts.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if s[i]|0x20 == word[0] && strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// redactAttr is the log handler's ReplaceAttr: it redacts the message,
// every string and the text of every error. A line's level is given as the
// text it is written as: handed back as a slog.Level, every line would
// leave jsonlog's short path for JSONHandler, which writes a level through
// encoding/json.
func redactAttr(groups []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact(a.Value.String()))
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			return slog.String(a.Key, redact(v.Error()))
		case slog.Level:
			if len(groups) == 0 && a.Key == slog.LevelKey {
				return slog.String(a.Key, v.String())
			}
		}
	}
	return a
}

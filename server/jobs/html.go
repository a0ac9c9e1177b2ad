package jobs

import (
	"crypto/sha256"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
)

// htmlSanitizer keeps the basic formatting tags docs/api.md (Jobs) allows in
// description and requirements and removes everything else.
//
// Sanitising is most of the work of checking a job, and feeds are posted
// again and again with the same texts (a re-post of an unchanged feed is the
// common case), so results are remembered, keyed by a digest of the text so
// that no request's body is kept alive. When the remembered results reach
// maxRemembered bytes, the memory starts over. A plainly clean text
// (plainlyClean) is neither parsed nor remembered.
type htmlSanitizer struct {
	policy *bluemonday.Policy

	mu         sync.Mutex
	remembered map[[sha256.Size]byte]sanitized
	size       int
}

// sanitized is a remembered result; clean is empty when the text was
// already clean (the caller has it).
type sanitized struct {
	changed bool
	clean   string
	removed bool
}

// maxRemembered bounds the memory of the sanitiser: the cleaned texts it
// holds plus rememberedEntryCost per entry.
const (
	maxRemembered       = 8 << 20
	rememberedEntryCost = 96
)

func newHTMLSanitizer() *htmlSanitizer {
	p := bluemonday.NewPolicy()
	p.AllowElements("b", "i", "u", "em", "strong", "p", "br", "ul", "ol", "li")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https")
	p.RequireParseableURLs(true)
	return &htmlSanitizer{policy: p, remembered: map[[sha256.Size]byte]sanitized{}}
}

// sanitize returns the cleaned text and whether anything other than entity
// spelling changed, that is whether markup or its content was removed.
func (h *htmlSanitizer) sanitize(s string) (string, bool) {
	// A plainly clean text is known clean by a scan cheaper than its
	// digest: it is neither hashed nor remembered.
	if plainlyClean(s) {
		return s, false
	}
	key := sha256.Sum256([]byte(s))
	h.mu.Lock()
	r, ok := h.remembered[key]
	h.mu.Unlock()
	if ok {
		if !r.changed {
			return s, false
		}
		return r.clean, r.removed
	}
	clean, removed := h.sanitizeText(s)
	r = sanitized{changed: clean != s, removed: removed}
	if r.changed {
		r.clean = clean
	}
	cost := len(r.clean) + rememberedEntryCost
	if cost <= maxRemembered/64 { // one huge text must not flush the rest
		h.mu.Lock()
		if h.size+cost > maxRemembered {
			clear(h.remembered)
			h.size = 0
		}
		if _, dup := h.remembered[key]; !dup {
			h.remembered[key] = r
			h.size += cost
		}
		h.mu.Unlock()
	}
	return clean, removed
}

func (h *htmlSanitizer) sanitizeText(s string) (string, bool) {
	clean := h.policy.Sanitize(s)
	if clean == s {
		return clean, false
	}
	// bluemonday also normalises harmless spelling (& to &amp;, attribute
	// quotes, tag case); only a different token stream means removal.
	return clean, !slices.Equal(tokens(s), tokens(clean))
}

// tokens lists a fragment's tags (name and attributes) and unescaped text,
// with adjacent text merged, so equivalent spellings compare equal.
func tokens(s string) []string {
	z := html.NewTokenizer(strings.NewReader(s))
	var out []string
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, "text:"+text.String())
			text.Reset()
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				out = append(out, "error")
			}
			flush()
			return out
		case html.TextToken:
			text.WriteString(html.UnescapeString(string(z.Text())))
		default:
			flush()
			t := z.Token()
			var b strings.Builder
			b.WriteString(tt.String() + ":" + t.Data)
			for _, a := range t.Attr {
				b.WriteString(" " + a.Key + "=" + a.Val)
			}
			out = append(out, b.String())
		}
	}
}

// plainTags are the allowed tags, which plainlyClean accepts bare.
var plainTags = map[string]bool{"b": true, "i": true, "u": true, "em": true, "strong": true,
	"p": true, "br": true, "ul": true, "ol": true, "li": true}

// plainlyClean reports whether s is text the policy would leave exactly as
// it is: its only markup is bare allowed tags (<p>, </b>, ...: lower case, no
// attributes, no spaces), and it holds no character the sanitiser would
// escape, rewrite or read as markup (&, quotes, a < or > outside such a tag,
// a carriage return, which HTML reads as a newline, NUL).
// Most job texts are like that, and for them this scan replaces a parse that
// costs a quarter of a post's CPU. Anything else, or anything in doubt, goes
// to bluemonday; FuzzPlainlyClean checks that the two agree.
func plainlyClean(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&', '"', '\'', '>', '\r', 0:
			return false
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return false
			}
			name := strings.TrimPrefix(s[i+1:i+end], "/")
			if !plainTags[name] {
				return false
			}
			i += end
		}
	}
	return true
}

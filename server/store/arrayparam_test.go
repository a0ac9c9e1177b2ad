package store

import (
	"database/sql"
	"database/sql/driver"
	"runtime"
	"strings"
	"testing"

	"github.com/lib/pq"
)

// TestTextArraysAsLibPQ: each batch column's parameter is the text lib/pq's
// Array writes for the same elements, which PostgreSQL reads back as them.
func TestTextArraysAsLibPQ(t *testing.T) {
	texts := [][]string{
		{},
		{""},
		{"plain", "two words", "a,comma", "{braces}", "NULL", "null"},
		{`a "quote"`, `back\slash`, `both \" at once`, `\\`, `""`, `"`},
		{"Ünïcode — ✓", "tab\tand\nnewline", " leading and trailing "},
		{"<p>Route: home <b>every weekend</b>.</p><ul><li>No touch freight</li></ul>"},
	}
	for _, values := range texts {
		checkArrayText(t, stringArray(values), pq.StringArray(values))
		nulls := []sql.NullString{{}}
		for _, v := range values {
			nulls = append(nulls, sql.NullString{String: v, Valid: true}, sql.NullString{})
		}
		checkArrayText(t, nullStringArray(nulls), pq.Array(nulls))
	}
	for _, values := range [][]bool{{}, {true}, {false, true, true, false}} {
		checkArrayText(t, boolArray(values), pq.BoolArray(values))
	}
	checkArrayText(t, nullStringArray(nil), pq.Array([]sql.NullString{}))
}

func checkArrayText(t *testing.T, got, want driver.Valuer) {
	t.Helper()
	g, err := got.Value()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.Value()
	if err != nil {
		t.Fatal(err)
	}
	if g != w {
		t.Errorf("array %q, lib/pq writes %q", g, w)
	}
}

// TestTextArraySizedOnce: the text is built in one buffer of its size,
// where lib/pq's Array grows its buffer as it appends and copies it to a
// string at the end.
func TestTextArraySizedOnce(t *testing.T) {
	values := make([]string, 1000)
	for i := range values {
		values[i] = strings.Repeat(`a "quoted" description with a back\slash `, 8)
	}
	a := stringArray(values)
	v, _ := a.Value()
	size := len(v.(string))
	perValue := allocatedBytes(func() { _, _ = a.Value() })
	lib := allocatedBytes(func() { _, _ = pq.StringArray(values).Value() })
	t.Logf("%d bytes of text: %d bytes allocated a value, lib/pq %d", size, perValue, lib)
	// A large buffer is rounded up to whole pages: 10% covers that.
	if perValue > uint64(size)*11/10 {
		t.Errorf("%d bytes allocated for %d bytes of text, want one buffer of about its size", perValue, size)
	}
}

// allocatedBytes is what f allocates a call, over 20 calls.
func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / 20
}

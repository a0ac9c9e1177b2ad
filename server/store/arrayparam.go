package store

import (
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
)

// textArray is a batch column as a statement parameter: PostgreSQL's text
// form of a one-dimensional array, the form lib/pq's Array writes, built
// in one buffer sized before it is written. lib/pq grows its buffer as it
// appends and then copies it to a string; for the columns of a post of
// 1,000 jobs (about 800 KB in all) that was most of the bytes the post
// allocated, and so of the server's garbage collections (the server's
// allocation profile over the bench's scenario 1).
type textArray[E any] struct {
	values []E
	// size is an element's length as written, at most; put writes it.
	size func(E) int
	put  func(*strings.Builder, E)
}

func (a textArray[E]) Value() (driver.Value, error) {
	n := 2 + max(len(a.values)-1, 0) // braces and commas
	for _, v := range a.values {
		n += a.size(v)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('{')
	for i, v := range a.values {
		if i > 0 {
			b.WriteByte(',')
		}
		a.put(&b, v)
	}
	b.WriteByte('}')
	return b.String(), nil
}

func stringArray(values []string) textArray[string] {
	return textArray[string]{values: values, size: quotedSize, put: putQuoted}
}

func nullStringArray(values []sql.NullString) textArray[sql.NullString] {
	return textArray[sql.NullString]{values: values,
		size: func(v sql.NullString) int {
			if !v.Valid {
				return len("NULL")
			}
			return quotedSize(v.String)
		},
		put: func(b *strings.Builder, v sql.NullString) {
			if !v.Valid {
				b.WriteString("NULL")
				return
			}
			putQuoted(b, v.String)
		}}
}

func nullInt64Array(values []sql.NullInt64) textArray[sql.NullInt64] {
	return textArray[sql.NullInt64]{values: values,
		size: func(v sql.NullInt64) int {
			if !v.Valid {
				return len("NULL")
			}
			return 20 // the longest int64, sign included
		},
		put: func(b *strings.Builder, v sql.NullInt64) {
			if !v.Valid {
				b.WriteString("NULL")
				return
			}
			b.WriteString(strconv.FormatInt(v.Int64, 10))
		}}
}

func boolArray(values []bool) textArray[bool] {
	return textArray[bool]{values: values,
		size: func(bool) int { return 1 },
		put: func(b *strings.Builder, v bool) {
			if v {
				b.WriteByte('t')
			} else {
				b.WriteByte('f')
			}
		}}
}

// quotedSize is the length of s double-quoted, with each " and \ escaped.
func quotedSize(s string) int {
	return 2 + len(s) + strings.Count(s, `"`) + strings.Count(s, `\`)
}

// putQuoted writes s double-quoted, so that no element is read as NULL or
// split at a comma or brace, with each " and \ escaped by a backslash.
func putQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for {
		i := strings.IndexAny(s, `"\`)
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteByte('\\')
		b.WriteByte(s[i])
		s = s[i+1:]
	}
	b.WriteString(s)
	b.WriteByte('"')
}

package domain

import "unsafe"

// Names returns values of a type of words as plain strings, in their
// order: for messages and for columns that hold text.
func Names[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// NamesView is values as plain strings without a copy: the result shares
// values' array. A word type's underlying type is string, so both slices
// have one layout. It is for a job's words on their way to an answer,
// which nothing writes to once they are read; use Names for a list that
// either side may change.
func NamesView[T ~string](values []T) []string {
	return unsafe.Slice((*string)(unsafe.Pointer(unsafe.SliceData(values))), len(values))
}

// WordsView is names as words without a copy, sharing names' array, as
// NamesView: for a list read from the store and not written to again.
func WordsView[T ~string](names []string) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(names))), len(names))
}

package domain

// Names returns values of a type of words as plain strings, in their
// order: for messages and for columns that hold text.
func Names[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

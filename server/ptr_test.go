package server

// ptr is a pointer to a copy of v: for the optional fields of messages.
func ptr[T any](v T) *T { return &v }

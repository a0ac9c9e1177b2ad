package store

import "context"

// MigrateUpTo applies the embedded migrations up to version upTo only.
func (s *Store) MigrateUpTo(ctx context.Context, upTo int) ([]string, error) {
	return s.migrate(ctx, upTo)
}

package store

import (
	"context"
	"time"
)

// MigrateUpTo applies the embedded migrations up to version upTo only.
func (s *Store) MigrateUpTo(ctx context.Context, upTo int) ([]string, error) {
	return s.migrate(ctx, upTo)
}

// SetReadClock sets the clock the read database's retries go by.
func (s *Store) SetReadClock(now func() time.Time) { s.reads.now = now }

package store

import (
	"context"
	"fmt"
)

// PageTokenKey is the key that signs list page tokens, the same on every
// replica of the database (migration 0012 creates it).
func (s *Store) PageTokenKey(ctx context.Context) ([]byte, error) {
	var key []byte
	if err := s.db.QueryRowContext(ctx, `SELECT key FROM page_token_key`).Scan(&key); err != nil {
		return nil, fmt.Errorf("read the page token key: %w", err)
	}
	return key, nil
}

package store

import (
	"context"
	"fmt"
	"time"
)

// retentionStatements remove at most $2 rows older than $1 each, oldest
// first, through the tables' time indexes.
var retentionStatements = []struct{ what, sql string }{
	{"events", `DELETE FROM events WHERE id IN
		(SELECT id FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2)`},
	{"webhook attempts", `DELETE FROM webhook_attempts WHERE id IN
		(SELECT id FROM webhook_attempts WHERE attempted_at < $1 ORDER BY attempted_at LIMIT $2)`},
}

// RemoveOldEvents deletes the events and webhook delivery attempts created
// before cutoff, batch rows per statement, each statement its own
// transaction so that none grows large or holds locks for long. It returns
// how many rows it removed in all.
func (s *Store) RemoveOldEvents(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	var removed int64
	for _, st := range retentionStatements {
		for {
			res, err := s.db.ExecContext(ctx, st.sql, cutoff, batch)
			if err != nil {
				return removed, fmt.Errorf("remove old %s: %w", st.what, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return removed, fmt.Errorf("remove old %s: %w", st.what, err)
			}
			removed += n
			if n < int64(batch) {
				break
			}
		}
	}
	return removed, nil
}

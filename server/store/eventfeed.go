package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// EventSeq is the position in its account's feed of the event with UUID
// id, or ErrNotFound when the account has no such event (never had it, or
// the clean-up removed it).
func (s *Store) EventSeq(ctx context.Context, accountID int64, id string) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM events WHERE id = $1 AND account_id = $2`, id, accountID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("find event: %w", err)
	}
	return seq, nil
}

// Feed statements: the account's events after a position, oldest first
// (by type, through the (account_id, type, seq) index), at most $3 of
// them and only as many as fit in $4 bytes of data, the first always.
const feedPage = `SELECT id, seq, type, created_at, data FROM (
	SELECT c.*, sum(size) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - size AS before
	FROM (SELECT id, seq, type, created_at, data, octet_length(data::text) AS size FROM events
		WHERE %s ORDER BY seq LIMIT $3) c
) p WHERE before = 0 OR before + size <= $4 ORDER BY seq`

var (
	feedAll    = fmt.Sprintf(feedPage, `account_id = $1 AND seq > $2`)
	feedOfType = fmt.Sprintf(feedPage, `account_id = $1 AND type = $5 AND seq > $2`)
)

// EventFeed returns events of the account after position afterSeq (0: from
// the oldest kept), oldest first, of type eventType when it is not empty:
// at most limit of them, and no more than fit in about maxBytes of data
// (at least one, whatever its size), so that a page of large drivers stays
// within what a client takes in one answer. It reads the primary: a poller
// that has just seen an event must find it again as its after.
func (s *Store) EventFeed(ctx context.Context, accountID, afterSeq int64, eventType string, limit, maxBytes int) ([]Event, error) {
	query, args := feedAll, []any{accountID, afterSeq, limit, maxBytes}
	if eventType != "" {
		query, args = feedOfType, append(args, eventType)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	events := []Event{}
	for rows.Next() {
		e := Event{AccountID: accountID}
		var id string
		var created time.Time
		if err := rows.Scan(&id, &e.Seq, &e.Type, &created, &e.Data); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		e.ID, e.CreatedAt = EventID(id), created
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return events, nil
}

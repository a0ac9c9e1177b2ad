package call

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/server/store"
)

// AccountRecord reads one record of the calling account with read. A record
// the account does not have is NotFound, named by what() ("job 7"), whether
// it does not exist or belongs to another account. The name is made only
// then: formatting it on every found record cost a read an allocation.
func AccountRecord[T any](ctx context.Context, what func() string, read func(accountID int64) (T, error)) (T, error) {
	var none T
	caller, err := From(ctx)
	if err != nil {
		return none, err
	}
	rec, err := read(caller.AccountID)
	if errors.Is(err, store.ErrNotFound) {
		return none, status.Errorf(codes.NotFound, "%s not found", what())
	}
	if err != nil {
		return none, Internal(ctx, err)
	}
	return rec, nil
}

package call

import (
	"context"

	"github.com/truckjobs/jobboard/internal/boundary"
	"github.com/truckjobs/jobboard/server/store"
)

// Boundary maps what the services return without a gRPC code; a database
// that cannot be reached makes a call Unavailable. The gRPC adapters and
// the REST gateway, which calls the services in-process, map through it
// alike.
var Boundary = boundary.Boundary{Unavailable: store.IsUnavailable}

// Internal logs err and returns the detail-free status clients see:
// Unavailable when the database cannot be reached (the client may retry),
// Canceled when the client went away, Internal otherwise.
func Internal(ctx context.Context, err error) error {
	return Boundary.Unexpected(ctx, err)
}

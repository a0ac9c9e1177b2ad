package drivers

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// Erase removes everything the caller's account holds about the driver
// (store.EraseDriver), or answers NOT_FOUND. The log line says who erased
// which driver id and in which request, nothing the driver sent.
func (s *Service) Erase(ctx context.Context, driverID int64) error {
	caller, err := call.From(ctx)
	if err != nil {
		return err
	}
	var erased store.Erased
	err = s.store.InRetriedTx(ctx, "erase driver", func(tx *store.Tx) error {
		var txErr error
		erased, txErr = tx.EraseDriver(ctx, caller.AccountID, driverID)
		return txErr
	})
	if errors.Is(err, store.ErrNotFound) {
		return status.Errorf(codes.NotFound, "driver %d not found", driverID)
	}
	if err != nil {
		return call.Internal(ctx, err)
	}
	slog.InfoContext(ctx, "driver erased", "account", caller.AccountID, "driver", driverID,
		"request_id", call.RequestID(ctx), "job_applications", erased.JobApplications,
		"earlier_statuses", erased.Statuses, "events", erased.Events, "person_removed", erased.Person)
	return nil
}

// DeleteDriver is DELETE /api/v2.0/drivers/{id}: 204, no body.
func (s *Service) DeleteDriver(ctx context.Context, req *restv2.DeleteDriverRequest) (*restv2.DeleteDriverResponse, error) {
	if err := s.Erase(ctx, req.GetId()); err != nil {
		return nil, err
	}
	return &restv2.DeleteDriverResponse{}, nil
}

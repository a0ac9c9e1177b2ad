package drivers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// UseEvents has the status changes write their events through ob
// (NewServices gives it the outbox). Without it a change is refused: a
// stored change always has its event.
func (s *Service) UseEvents(ob Events) { s.events = ob }

// Status is the lead status of the caller's driver driverID, or NOT_FOUND.
func (s *Service) Status(ctx context.Context, driverID int64) (store.DriverStatus, error) {
	return call.AccountRecord(ctx, func() string { return fmt.Sprintf("driver %d", driverID) }, func(accountID int64) (store.DriverStatus, error) {
		return s.store.DriverStatus(ctx, accountID, driverID)
	})
}

// SetStatus applies c, checked, to the caller's driver driverID and writes
// its event in the same transaction. It answers the status afterwards and
// whether c was stale (older than the stored status, so nothing changed).
func (s *Service) SetStatus(ctx context.Context, driverID int64, c domain.StatusChange) (store.DriverStatus, bool, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return store.DriverStatus{}, false, err
	}
	if s.events == nil {
		return store.DriverStatus{}, false, call.Internal(ctx, errors.New("driver statuses: no outbox for their events"))
	}
	var result store.StatusResult
	err = s.store.InRetriedTx(ctx, "set driver status", func(tx *store.Tx) error {
		results, err := tx.SetDriverStatuses(ctx, caller.AccountID, []store.StatusUpdate{{DriverID: driverID, StatusChange: c}})
		if err != nil {
			return err
		}
		result = results[0]
		if result.Outcome != store.StatusApplied {
			return nil
		}
		return s.events.StatusesChanged(ctx, tx, caller.AccountID,
			[]store.StatusChanged{{DriverID: driverID, StatusChange: c, Previous: result.Previous}})
	})
	if err != nil {
		return store.DriverStatus{}, false, call.Internal(ctx, err)
	}
	if result.Outcome == store.StatusNoDriver {
		return store.DriverStatus{}, false, status.Errorf(codes.NotFound, "driver %d not found", driverID)
	}
	if result.Outcome == store.StatusApplied {
		slog.InfoContext(ctx, "driver status changed", "account", caller.AccountID, "driver", driverID,
			"status", c.Status, "previous", result.Previous)
	}
	st, err := s.Status(ctx, driverID)
	return st, result.Outcome == store.StatusStale, err
}

// CheckStatusChange checks a change as sent against the rules at now (at
// nil: now), after the violations bad an adapter found first. The problems
// are INVALID_ARGUMENT naming each field as named says.
func CheckStatusChange(status, reason, note string, at *time.Time, now time.Time, bad []call.FieldViolation,
	named func(string) string) (domain.StatusChange, error) {
	c, problems := domain.ReadStatusChange(status, reason, note, at, now)
	for _, p := range problems {
		f := named(p.Field)
		bad = append(bad, call.FieldViolation{Field: f, Label: f, Description: fmt.Sprintf("%q %s", call.Truncate(p.Value, call.MaxEchoed), p.Rule)})
	}
	if len(bad) > 0 {
		return c, call.InvalidArgument(bad...)
	}
	return c, nil
}

// notATime is the rule a changedAt that is no time breaks.
const notATime = "is not a time in RFC 3339 form, such as 2026-11-02T14:05:09Z"

// restChangedAt reads the REST body's changedAt: nil when absent, a
// violation when it is not an RFC 3339 time.
func restChangedAt(text *string) (*time.Time, []call.FieldViolation) {
	if text == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *text)
	if err != nil {
		return nil, []call.FieldViolation{{Field: "changedAt", Label: "changedAt",
			Description: fmt.Sprintf("%q %s", call.Truncate(*text, call.MaxEchoed), notATime)}}
	}
	return &t, nil
}

// GetDriverStatus is GET /api/v2.0/drivers/{id}/status.
func (s *Service) GetDriverStatus(ctx context.Context, req *restv2.GetDriverStatusRequest) (*restv2.GetDriverStatusResponse, error) {
	st, err := s.Status(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &restv2.GetDriverStatusResponse{Data: RESTStatus(st)}, nil
}

// SetDriverStatus is PUT /api/v2.0/drivers/{id}/status.
func (s *Service) SetDriverStatus(ctx context.Context, req *restv2.SetDriverStatusRequest) (*restv2.SetDriverStatusResponse, error) {
	in := req.GetStatus()
	if in == nil {
		return nil, call.InvalidFieldText("", "the body must be a JSON object with a status")
	}
	at, bad := restChangedAt(in.ChangedAt)
	c, err := CheckStatusChange(in.GetStatus(), in.GetReason(), in.GetNote(), at, time.Now(), bad, sameName)
	if err != nil {
		return nil, err
	}
	st, stale, err := s.SetStatus(ctx, req.GetId(), c)
	if err != nil {
		return nil, err
	}
	return &restv2.SetDriverStatusResponse{Data: RESTStatus(st), Stale: stale}, nil
}

// RESTStatus is a status as the REST API shows it.
func RESTStatus(st store.DriverStatus) *restv2.DriverStatus {
	out := &restv2.DriverStatus{DriverId: st.DriverID, Status: string(st.Status), Reason: natural.NonEmpty(string(st.Reason)),
		Note: natural.NonEmpty(st.Note), ChangedAt: st.ChangedAt.UTC().Format(call.TimeFormat),
		History: make([]*restv2.DriverStatusEntry, len(st.History))}
	for i, h := range st.History {
		out.History[i] = &restv2.DriverStatusEntry{Status: string(h.Status), Reason: natural.NonEmpty(string(h.Reason)),
			ChangedAt: h.ChangedAt.UTC().Format(call.TimeFormat)}
	}
	return out
}

package grpcapi

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/drivers"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// GetDriverStatus answers the driver's lead status.
func (g *grpcDrivers) GetDriverStatus(ctx context.Context, req *jobboardv2.GetDriverStatusRequest) (*jobboardv2.GetDriverStatusResponse, error) {
	if err := requiredID("driver_id", req.GetDriverId()); err != nil {
		return nil, err
	}
	st, err := g.core.Status(ctx, req.GetDriverId())
	if err != nil {
		return nil, err
	}
	return &jobboardv2.GetDriverStatusResponse{Status: naturalStatus(st)}, nil
}

// SetDriverStatus sets the driver's lead status, under the rules of the
// REST PUT, its problems named by the gRPC fields.
func (g *grpcDrivers) SetDriverStatus(ctx context.Context, req *jobboardv2.SetDriverStatusRequest) (*jobboardv2.SetDriverStatusResponse, error) {
	if err := requiredID("driver_id", req.GetDriverId()); err != nil {
		return nil, err
	}
	var at *time.Time
	var bad []call.FieldViolation
	if ts := req.GetChangedAt(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			bad = append(bad, call.FieldViolation{Field: "changed_at", Label: "changed_at", Description: "is not a valid time: " + err.Error()})
		} else {
			at = new(ts.AsTime())
		}
	}
	c, err := drivers.CheckStatusChange(natural.EnumText(natural.LeadStatuses, req.GetStatus()),
		natural.EnumText(natural.RejectionReasons, req.GetReason()), req.GetNote(), at, time.Now(), bad, grpcStatusField)
	if err != nil {
		return nil, err
	}
	st, stale, err := g.core.SetStatus(ctx, req.GetDriverId(), c)
	if err != nil {
		return nil, err
	}
	return &jobboardv2.SetDriverStatusResponse{Status: naturalStatus(st), Stale: stale}, nil
}

// naturalStatus is a status as gRPC answers it.
func naturalStatus(st store.DriverStatus) *jobboardv2.DriverStatus {
	status, _ := natural.LeadStatuses.Value(string(st.Status))
	reason, _ := natural.RejectionReasons.Value(string(st.Reason))
	out := &jobboardv2.DriverStatus{DriverId: st.DriverID, Status: status, Reason: reason, Note: st.Note,
		ChangedAt: timestamppb.New(st.ChangedAt), History: make([]*jobboardv2.DriverStatusEntry, len(st.History))}
	for i, h := range st.History {
		hs, _ := natural.LeadStatuses.Value(string(h.Status))
		hr, _ := natural.RejectionReasons.Value(string(h.Reason))
		out.History[i] = &jobboardv2.DriverStatusEntry{Status: hs, Reason: hr, ChangedAt: timestamppb.New(h.ChangedAt)}
	}
	return out
}

// DeleteDriver erases what the account holds about the driver.
func (g *grpcDrivers) DeleteDriver(ctx context.Context, req *jobboardv2.DeleteDriverRequest) (*jobboardv2.DeleteDriverResponse, error) {
	if err := requiredID("driver_id", req.GetDriverId()); err != nil {
		return nil, err
	}
	if err := g.core.Erase(ctx, req.GetDriverId()); err != nil {
		return nil, err
	}
	return &jobboardv2.DeleteDriverResponse{}, nil
}

// SetDriverStatuses applies a batch of statuses under the REST batch's
// rules, its problems named by the gRPC fields.
func (g *grpcDrivers) SetDriverStatuses(ctx context.Context, req *jobboardv2.SetDriverStatusesRequest) (*jobboardv2.SetDriverStatusesResponse, error) {
	entries := make([]drivers.StatusBatchEntry, len(req.GetStatuses()))
	for i, in := range req.GetStatuses() {
		e := drivers.StatusBatchEntry{DriverID: in.GetDriverId(), Email: in.GetEmail(),
			Status: natural.EnumText(natural.LeadStatuses, in.GetStatus()),
			Reason: natural.EnumText(natural.RejectionReasons, in.GetReason()), Note: in.GetNote()}
		if ts := in.GetChangedAt(); ts != nil {
			if err := ts.CheckValid(); err != nil {
				e.Problems = append(e.Problems, drivers.BatchProblem{Field: "changed_at",
					Value: fmt.Sprintf("seconds: %d, nanos: %d", ts.GetSeconds(), ts.GetNanos()), Message: "is not a valid time: " + err.Error()})
			} else {
				e.ChangedAt = new(ts.AsTime())
			}
		}
		entries[i] = e
	}
	r, err := g.core.SetStatuses(ctx, entries, time.Now(), grpcStatusField)
	if err != nil {
		return nil, err
	}
	out := &jobboardv2.SetDriverStatusesResponse{Updated: int32(r.Updated), Unchanged: int32(r.Unchanged), Stale: int32(r.Stale),
		Errors: int32(r.Errors), ErrorMessages: make([]*jobboardv2.DriverStatusBatchError, len(r.Problems))}
	for k, p := range r.Problems {
		out.ErrorMessages[k] = &jobboardv2.DriverStatusBatchError{Index: int32(p.Index), DriverId: p.DriverID, Email: p.Email,
			Field: p.Field, Value: p.Value, Message: p.Message}
	}
	return out, nil
}

// grpcStatusField names a field of a status change as SetDriverStatusRequest
// and DriverStatusBatchEntry do.
func grpcStatusField(f string) string {
	switch f {
	case "driverId":
		return "driver_id"
	case "changedAt":
		return "changed_at"
	}
	return f
}

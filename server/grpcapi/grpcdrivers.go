package grpcapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/truckjobs/jobboard/server/drivers"

	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// grpcDrivers serves jobboard.v2.DriverService over the core DriverService.
type grpcDrivers struct {
	jobboardv2.UnimplementedDriverServiceServer
	core *drivers.Service
}

// ListDrivers answers a page of the filtered list. The filters are checked
// by the core in their lenient form; the page is where the token says.
func (g *grpcDrivers) ListDrivers(ctx context.Context, req *jobboardv2.ListDriversRequest) (*jobboardv2.ListDriversResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	// Named by the gRPC fields, before the core names the lenient ones.
	if err := call.CheckText(req); err != nil {
		return nil, err
	}
	size, err := call.PageSize(req.GetPageSize(), drivers.DefaultPage, drivers.MaxPage, "drivers")
	if err != nil {
		return nil, err
	}
	lenient := natural.ListDriversFilter(req)
	f, err := g.core.DriverFilter(ctx, lenient)
	if err != nil {
		return nil, namedForGRPC(err)
	}
	scope, err := driversTokenScope(lenient)
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	if token := req.GetPageToken(); token != "" {
		if f.After, err = g.cursor(token, caller.AccountID, scope); err != nil {
			return nil, err
		}
	}
	// One row more than the page tells whether another page follows.
	f.Offset, f.Limit = 0, size+1
	items, total, err := g.core.List(ctx, caller.AccountID, f)
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	more := len(items) > size
	items = items[:min(len(items), size)]
	out := &jobboardv2.ListDriversResponse{TotalSize: total}
	if out.Drivers, more = driversPage(items, more); more {
		position, err := json.Marshal(store.CursorOf(items[len(out.Drivers)-1]))
		if err != nil {
			return nil, call.Internal(ctx, err)
		}
		out.NextPageToken = g.core.Tokens().Encode(caller.AccountID, scope, position)
	}
	return out, nil
}

// DriversPageBytes bounds the encoded drivers of one gRPC page, so that a
// page stays under the 4 MiB a client takes by default. The validation
// limits no text field's length (a name is only what the request's size
// limit lets through), so a thousand rows are not bounded by the fields:
// the page is cut instead, and next_page_token continues after its last row.
const DriversPageBytes = 2 << 20

// driversPage converts the rows of a page, as many as fit DriversPageBytes
// (at least one); more is true when rows follow, including those cut.
func driversPage(items []store.DriverListItem, more bool) ([]*jobboardv2.DriverSummary, bool) {
	out := make([]*jobboardv2.DriverSummary, 0, len(items))
	size := 0
	for i := range items {
		d := natural.DriverSummary(drivers.Summary(&items[i], drivers.Include{Status: true}))
		if size += proto.Size(d); i > 0 && size > DriversPageBytes {
			return out, true
		}
		out = append(out, d)
	}
	return out, more
}

// cursor reads where a page token says the page starts: after the row of
// the order it names (keyset paging, so a page costs the same at any depth).
func (g *grpcDrivers) cursor(token string, accountID int64, scope string) (*store.DriverCursor, error) {
	position, err := g.core.Tokens().Decode(token, accountID, scope)
	var c store.DriverCursor
	if err == nil {
		err = json.Unmarshal(position, &c)
	}
	if err != nil {
		return nil, call.InvalidFieldText("page_token", call.Quoted(token)+" is not a next_page_token answered for these filters and this order")
	}
	return &c, nil
}

// namedForGRPC names, in an error of the core, the gRPC field rather than
// the REST parameter it was given as ("min_experience_years: ...").
func namedForGRPC(err error) error {
	return call.RenameFields(err, natural.FilterField)
}

// driversTokenScope ties a token to the filters and order that decide the
// list: the lenient request, paging left out, in deterministic binary.
func driversTokenScope(lenient *restv2.ListDriversRequest) (string, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(lenient)
	if err != nil {
		return "", fmt.Errorf("drivers page token scope: %w", err)
	}
	return "drivers|" + hex.EncodeToString(b), nil
}

func (g *grpcDrivers) GetDriver(ctx context.Context, req *jobboardv2.GetDriverRequest) (*jobboardv2.GetDriverResponse, error) {
	if err := requiredID("id", req.GetId()); err != nil {
		return nil, err
	}
	resp, err := g.core.GetDriver(ctx, &restv2.GetDriverRequest{Id: req.GetId(), Include: "status"})
	if err != nil {
		return nil, err
	}
	return &jobboardv2.GetDriverResponse{Driver: natural.DriverDetail(resp.GetDriver())}, nil
}

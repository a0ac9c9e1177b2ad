package call

import (
	"context"

	"google.golang.org/grpc/metadata"

	"github.com/truckjobs/jobboard/internal/calllog"
	"github.com/truckjobs/jobboard/internal/requestid"
)

// RequestID is the id of ctx's call: the one its access log line has, or
// a valid x-request-id the caller sent, or "".
func RequestID(ctx context.Context) string {
	if id := calllog.RequestID(ctx); id != "" {
		return id
	}
	if id := FirstValue(Metadata(ctx), "x-request-id"); requestid.Valid(id) {
		return id
	}
	return ""
}

// Metadata is ctx's incoming gRPC metadata; nil when it has none.
func Metadata(ctx context.Context) metadata.MD {
	md, _ := metadata.FromIncomingContext(ctx)
	return md
}
